// A tool's manual page from its CLI11 app, the table that prints its --help, so that `man TOOL`
// and `TOOL --help` say the same and no text is kept twice. Every tool calls AddManPageFlag on its
// app before parsing; packaging/ runs `TOOL --help-man` at build time and installs the page.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace graphfs {

// The page of `app` as roff: NAME and DESCRIPTION from the app's description (a leading "NAME: "
// dropped; NAME's summary is its first clause), SYNOPSIS, ARGUMENTS (the positionals), OPTIONS
// (every visible option with its value's type, its help and its default, as --help shows them),
// the app's footer, SEE ALSO graphfs(1).
std::string CliManPage(const CLI::App& app, const std::string& name, int section = 1);

// Gives `app` a hidden flag --help-man that prints CliManPage (named after the program's file name)
// and exits with status 0 before anything else is checked (required arguments among it).
void AddManPageFlag(CLI::App& app, int section = 1);

}  // namespace graphfs
