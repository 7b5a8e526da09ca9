// Command-line parsing shared by the engine binaries: CLI11 with one exit
// convention, 0 for --help (and --help-man, the manual page) and 2 for any usage error.
#pragma once

#include <CLI/CLI.hpp>

#include "common/cli_manpage.h"

namespace graphfs::engine {

// Returns -1 when parsing succeeded and the program should go on, else the
// exit status (after CLI11 printed help or the usage error).
inline int ParseCommandLine(CLI::App& cli, int argc, char** argv) {
  AddManPageFlag(cli);
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e) == 0 ? 0 : 2;
  }
  return -1;
}

}  // namespace graphfs::engine
