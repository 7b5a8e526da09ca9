// Property checks for the fuzz targets. A failed check prints what was expected and
// aborts, which libFuzzer reports as a crash and saves the input (crash-<sha1>). assert()
// is not used: it vanishes under NDEBUG, and a fuzz target whose checks can vanish cannot fail.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/result.h"

#define FUZZ_CHECK(cond, ...)                                                              \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::fprintf(stderr, "%s:%d: property failed: %s\n  ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                                   \
      std::fprintf(stderr, "\n");                                                          \
      std::abort();                                                                        \
    }                                                                                      \
  } while (0)

namespace graphfs::fuzz {

// A refused input must come back as an Error that says something, with an errno the
// daemon can answer with (or `want`, when the parser promises one).
inline void CheckRefusal(const Error& e, int want = 0) {
  FUZZ_CHECK(e.code() > 0 && e.code() < 4096, "errno %d out of range (message: %s)", e.code(), e.message().c_str());
  FUZZ_CHECK(want == 0 || e.code() == want, "errno %d, want %d (message: %s)", e.code(), want, e.message().c_str());
  FUZZ_CHECK(!e.message().empty(), "empty error message");
}

inline bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// The input of most targets, readable in a text editor so that seeds can be written by
// hand: "K PARAM\nPAYLOAD". K (the first byte) picks the parser, PARAM (the decimal digits
// after it, saturating; 0 if none) a parameter, PAYLOAD (after the first newline) is what
// the parser reads.
struct Frame {
  char kind = 0;
  uint64_t param = 0;
  std::string payload;
};

inline Frame ParseFrame(const uint8_t* data, size_t size) {
  Frame f;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  if (in.empty()) return f;
  f.kind = in[0];
  const size_t eol = in.find('\n');
  const std::string_view header = in.substr(1, eol == std::string_view::npos ? std::string_view::npos : eol - 1);
  for (char c : header) {
    if (c < '0' || c > '9') continue;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    f.param = f.param > (UINT64_MAX - d) / 10 ? UINT64_MAX : f.param * 10 + d;
  }
  if (eol != std::string_view::npos) f.payload = std::string(in.substr(eol + 1));
  return f;
}

// Printable form of fuzz input for check messages.
inline std::string Shown(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 200)) {
    if (c >= 0x20 && c < 0x7f) {
      out += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
      out += hex;
    }
  }
  return out;
}

}  // namespace graphfs::fuzz
