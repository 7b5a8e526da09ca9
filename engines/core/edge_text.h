// Pieces shared by the text importers (edge_import.cc: SNAP/KONECT, matrix_market.cc: Matrix
// Market): an edge as a line yields it, and the splitting of a line into fields.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace graphfs::engine {

// One edge of the output, 0-based ids; `weight` is written only to weighted records.
struct ImportedEdge {
  int32_t source;
  int32_t target;
  float weight;
};

inline bool IsFieldSeparator(char c) { return c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\n'; }

// Fields of a line, separated by runs of spaces, tabs or commas (the newline is a separator too).
inline std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && IsFieldSeparator(line[i])) ++i;
    size_t start = i;
    while (i < line.size() && !IsFieldSeparator(line[i])) ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
  return tokens;
}

// Decimal digits only (no sign), at most `max`.
inline bool ParseUnsignedField(std::string_view token, uint64_t max, uint64_t* out) {
  if (token.empty() || token.size() > 20) return false;
  uint64_t value = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (max - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *out = value;
  return true;
}

// A float32 weight written as text: the whole token, finite, in float's range (strtof's
// ERANGE, which includes underflow, is refused).
inline bool ParseWeightField(std::string_view token, float* out) {
  std::string text(token);
  char* end = nullptr;
  errno = 0;
  float value = std::strtof(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value)) return false;
  *out = value;
  return true;
}

// The first `max` characters of a line, without its line end, to quote in a message.
inline std::string ShownLine(std::string_view line, size_t max = 80) {
  std::string shown(line.substr(0, std::min(line.size(), max)));
  while (!shown.empty() && (shown.back() == '\n' || shown.back() == '\r')) shown.pop_back();
  return shown;
}

}  // namespace graphfs::engine
