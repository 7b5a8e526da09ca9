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

// "a,b,c" -> {"a", "b", "c"}; empty items are kept, so callers can refuse them.
std::vector<std::string> SplitList(std::string_view text, char separator);

// 16777216 -> "16 MiB", 1500 -> "1.5 KiB".
std::string FormatSize(uint64_t bytes);

}  // namespace graphfs
