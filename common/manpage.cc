#include "common/manpage.h"

#include <cctype>
#include <cstdint>
#include <cstdio>

#ifndef GRAPHFS_VERSION
#error "GRAPHFS_VERSION is set by common/CMakeLists.txt from the project's version"
#endif

namespace graphfs::man {

namespace {

// The code point of the UTF-8 sequence at s[i] (advancing i past it); U+FFFD for a broken one.
uint32_t NextCodePoint(std::string_view s, size_t& i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  size_t length = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  uint32_t cp = c & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07);
  if (c < 0xC0 || i + length > s.size()) {
    ++i;
    return 0xFFFD;
  }
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      ++i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  i += length;
  return cp;
}

std::string Escaped(std::string_view text, bool literal) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      char code[16];
      std::snprintf(code, sizeof code, "\\[u%04X]", static_cast<unsigned>(NextCodePoint(text, i)));
      out += code;
      continue;
    }
    if (c == '\\') out += "\\e";
    else if (c == '-' && literal) out += "\\-";
    else out += static_cast<char>(c);
    ++i;
  }
  return out;
}

}  // namespace

const char* Version() { return GRAPHFS_VERSION; }

std::string Escape(std::string_view text) { return Escaped(text, false); }

std::string Literal(std::string_view text) { return Escaped(text, true); }

std::string FromMarkdown(std::string_view markdown) {
  std::string out;
  bool code = false;
  size_t start = 0;
  for (size_t i = 0; i <= markdown.size(); ++i) {
    if (i < markdown.size() && markdown[i] != '`') continue;
    const std::string_view piece = markdown.substr(start, i - start);
    out += code ? "\\fB" + Literal(piece) + "\\fR" : Escape(piece);
    code = !code;
    start = i + 1;
  }
  return out;
}

std::string Lines(std::string_view roff) {
  std::string out;
  size_t start = 0;
  while (start <= roff.size()) {
    size_t end = roff.find('\n', start);
    if (end == std::string_view::npos) end = roff.size();
    std::string_view line = roff.substr(start, end - start);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty()) {
      if (end < roff.size()) out += ".PP\n";  // a blank line inside: a new paragraph
    } else {
      if (line.front() == '.' || line.front() == '\'') out += "\\&";
      out += std::string(line) + "\n";
    }
    start = end + 1;
  }
  return out;
}

std::string TitleLine(std::string_view name, int section) {
  std::string upper;
  for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const char* manual = section == 1 ? "User Commands" : section == 8 ? "System Administration" : "graphfs";
  return ".TH \"" + Literal(upper) + "\" \"" + std::to_string(section) + "\" \"\" \"graphfs " + Version() +
         "\" \"" + manual + "\"\n";
}

}  // namespace graphfs::man
