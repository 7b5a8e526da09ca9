// Parsing of human-written sizes in options and command lines.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace graphfs {

// "4096", "16M", "16MiB", "1G", "512k", "2T". Suffixes are binary (K = 1024).
// Rejects empty strings, negative numbers, junk and values that overflow 64 bits.
Result<uint64_t> ParseSize(std::string_view text);

// Like ParseSize, but also accepts "N%" meaning N percent of `whole`.
Result<uint64_t> ParseSizeOrPercent(std::string_view text, uint64_t whole);

// A size as written in an option: bytes, or a percentage of a whole known later (RAM at mount).
// Parsed once; Of() resolves it.
struct SizeOrPercent {
  uint64_t value = 0;    // bytes, or percent (0..100)
  bool percent = false;
  std::string text;      // as written, for messages

  uint64_t Of(uint64_t whole) const;
  static SizeOrPercent Percent(uint64_t pct);
};

// "16G", "25%" (at most 100). Errors as ParseSizeOrPercent.
Result<SizeOrPercent> ParseSizeOrPercentSpec(std::string_view text);

// "a,b,c" -> {"a", "b", "c"}; empty items are kept, so callers can refuse them.
std::vector<std::string> SplitList(std::string_view text, char separator);

// 16777216 -> "16 MiB", 1500 -> "1.5 KiB".
std::string FormatSize(uint64_t bytes);

// A size as options write it: the largest unit that divides it (512M, 1G, 64K, 4097), so that
// ParseSize reads the text back as the same number. The defaults --help, the manual pages and
// README.md show are their fields' values written this way.
std::string SizeText(uint64_t bytes);

}  // namespace graphfs
