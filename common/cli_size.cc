#include "common/cli_size.h"

#include <CLI/CLI.hpp>

#include "common/size_parse.h"

namespace graphfs {

namespace {

// The option's long name ("--rate" of "-r,--rate"), for messages.
std::string LongName(const std::string& names) {
  const size_t comma = names.rfind(',');
  return comma == std::string::npos ? names : names.substr(comma + 1);
}

CLI::Option* AddSize(CLI::App& app, const std::string& name, uint64_t& bytes, const std::string& help,
                     SizeRule rule, const std::string& expected) {
  CLI::Option* option = app.add_option_function<std::string>(
      name,
      [&bytes, long_name = LongName(name), rule, expected](const std::string& text) {
        const std::string what = long_name + " " + text + ": ";
        auto v = ParseSize(text);
        if (!v.ok()) throw CLI::ValidationError(what + "expected " + expected + " (" + v.error().message() + ")");
        if (*v < rule.min)
          throw CLI::ValidationError(what +
                                     (rule.min == 1 ? std::string("more than 0") : "at least " + SizeText(rule.min)));
        if (rule.multiple > 1 && *v % rule.multiple != 0)
          throw CLI::ValidationError(what + "a multiple of " + SizeText(rule.multiple));
        bytes = *v;
      },
      help);
  option->type_name("SIZE");
  return option;
}

}  // namespace

CLI::Option* AddSizeOption(CLI::App& app, const std::string& name, uint64_t& bytes, const std::string& help,
                           SizeRule rule, bool show_default) {
  CLI::Option* option = AddSize(app, name, bytes, help, rule, "a size such as 64M");
  if (show_default) option->default_str(SizeText(bytes));
  return option;
}

CLI::Option* AddRateOption(CLI::App& app, const std::string& name, uint64_t& bytes_per_second,
                           const std::string& help) {
  return AddSize(app, name, bytes_per_second, help, SizeRule{1, 1}, "bytes per second such as 100M");
}

std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --help-man end here with 0; whatever CLI11 refused is a usage error.
    return app.exit(e) == 0 ? 0 : 2;
  }
  return std::nullopt;
}

}  // namespace graphfs
