// Manual pages (roff, man(7)) that the programs print themselves (`--help-man`), from the same
// tables that print their --help: the daemon's mount options (fusefs/mount_options.cc) and the
// tools' CLI11 apps (cli_manpage.h). packaging/ runs every packaged program's --help-man at build
// time; nothing of a page is kept in git. Pieces of text go through these helpers so that a
// backslash, a hyphen of an option or a non-ASCII character reaches groff and mandoc as meant.
#pragma once

#include <string>
#include <string_view>

namespace graphfs::man {

// The package's version (CMake's PROJECT_VERSION), for --version and the pages' footers.
const char* Version();

// Plain text as roff text: backslashes as \e, every non-ASCII character as \[uXXXX] (the page
// stays ASCII, whatever the reader's locale).
std::string Escape(std::string_view text);

// A literal (option, file name, command): escaped as Escape does, and every '-' as \- so that it
// reads and copies as the ASCII hyphen-minus.
std::string Literal(std::string_view text);

// One line of inline markdown as roff: `code` in bold (as Literal), the rest as Escape.
std::string FromMarkdown(std::string_view markdown);

// Text lines for the page body: each line of `roff` that starts with '.' or '\'' (which roff would
// take for a request) is guarded with \&; leading blanks are dropped; a blank line becomes .PP.
// Ends with a newline.
std::string Lines(std::string_view roff);

// The title line: .TH NAME SECTION "" "graphfs VERSION" MANUAL, NAME in capitals.
std::string TitleLine(std::string_view name, int section);

}  // namespace graphfs::man
