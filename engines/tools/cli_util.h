// Command-line parsing shared by the engine binaries: CLI11 with one exit
// convention, 0 for --help (and --help-man, the manual page) and 2 for any usage error.
#pragma once

#include <CLI/CLI.hpp>

#include "common/cli_manpage.h"
#include "common/cli_size.h"

namespace graphfs::engine {

// Returns -1 when parsing succeeded and the program should go on, else the
// exit status (after CLI11 printed help or the usage error): common/cli_size.h's
// ParseCommandLine, with the manual-page flag added first.
inline int ParseCommandLine(CLI::App& cli, int argc, char** argv) {
  AddManPageFlag(cli);
  const std::optional<int> status = graphfs::ParseCommandLine(cli, argc, argv);
  return status ? *status : -1;
}

}  // namespace graphfs::engine
