// The texts made from the mount-option table (mount_option_kinds.h): --help, README.md's
// table (--help-markdown) and the rows the manual page is made of (command_line_help.cc, --help-man).
#include <string>
#include <vector>

#include "fusefs/mount_option_kinds.h"
#include "fusefs/mount_options.h"

namespace graphfs {

namespace {

// Markdown to terminal text: backquotes dropped.
std::string Plain(const std::string& markdown) {
  std::string s;
  for (char c : markdown)
    if (c != '`') s += c;
  return s;
}

// `text` wrapped at `width` columns from `column` on; every line after the first is indented
// by `indent`.
std::string Wrap(const std::string& text, size_t column, size_t indent, size_t width) {
  std::string out, word;
  bool line_empty = true;
  auto place = [&] {
    if (word.empty()) return;
    if (!line_empty && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    line_empty = false;
    word.clear();
  };
  for (char c : text) {
    if (c == ' ') place();
    else word += c;
  }
  place();
  return out;
}

std::string EscapeBars(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

using mount_option::DefaultOf;
using mount_option::OptionSpec;
using mount_option::Table;

std::vector<MountOptionDoc> MountOptionDocs() {
  std::vector<MountOptionDoc> docs;
  for (const OptionSpec& spec : Table())
    docs.push_back({spec.key, spec.value, DefaultOf(spec), spec.help, spec.default_rule.empty()});
  return docs;
}

std::string MountOptionsHelp() {
  constexpr size_t kHelpColumn = 28, kWidth = 100;
  std::string help = "graphfs options (-o key=value, also in fstab):\n";
  for (const OptionSpec& spec : Table()) {
    std::string head = "    -o " + spec.key + "=" + spec.value;
    if (head.size() + 1 > kHelpColumn) {
      head += "\n" + std::string(kHelpColumn, ' ');
    } else {
      head.resize(kHelpColumn, ' ');
    }
    const std::string text = Plain(spec.help) + " (default: " + Plain(DefaultOf(spec)) + ")";
    help += head + Wrap(text, kHelpColumn, kHelpColumn, kWidth) + "\n";
  }
  help += "graphfs always adds default_permissions: the kernel checks permissions as ext4 would.\n";
  return help;
}

std::string MountOptionsMarkdown() {
  std::string md = "| option | meaning | default |\n|---|---|---|\n";
  for (const OptionSpec& spec : Table())
    md += "| `" + spec.key + "=" + EscapeBars(spec.value) + "` | " + EscapeBars(spec.help) + " | " +
          EscapeBars(DefaultOf(spec)) + " |\n";
  return md;
}

}  // namespace graphfs
