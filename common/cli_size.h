// Size options of the tools' CLI11 command lines (--rate 100M, --checkpoint 1G, --probe-size 256M):
// one parser for all of them, so that each tool neither parses a size by hand nor writes its
// default twice, and a status for what CLI11 refuses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace graphfs {

// What a size option accepts beyond a size (common/size_parse.h: 4096, 64K, 16M, 1G): at least
// `min`, a multiple of `multiple`.
struct SizeRule {
  uint64_t min = 0;
  uint64_t multiple = 1;
};

// `name` (e.g. "--checkpoint") takes a SIZE and stores it in `bytes`. Its default is `bytes` as
// it is now, shown in --help and the manual page as an option writes it (SizeText: 1G), so it is
// written once, where the field is declared; `show_default` false where the field's value is not
// what the help says happens by default (a rule, said in `help`). A value that is not a size, or
// breaks `rule`, is a usage error naming the option and the value: ParseCommandLine's status 2.
CLI::Option* AddSizeOption(CLI::App& app, const std::string& name, uint64_t& bytes, const std::string& help,
                           SizeRule rule = {}, bool show_default = true);

// A byte rate, `name` (e.g. "--rate") SIZE: bytes per second, more than 0. `bytes_per_second` is
// untouched unless the option is given (its default, such as "as fast as the disks go", is a rule
// the help says in words).
CLI::Option* AddRateOption(CLI::App& app, const std::string& name, uint64_t& bytes_per_second,
                           const std::string& help);

// Parses the command line. nullopt: go on; otherwise the status to exit with: 0 after --help (or
// --help-man), 2 for anything CLI11 refused (the message on stderr) — the tools' usage status.
std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv);

}  // namespace graphfs
