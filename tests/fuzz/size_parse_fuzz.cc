// Fuzzes the size parsers of options and sysfs (common/size_parse.h: ParseSize,
// ParseSizeOrPercent, SplitList, FormatSize; chunkindex/chunk_size.h: ParseCacheSize)
// against a reference of the grammar computed in 128 bits, so that overflow cannot hide.
// Input: a Frame (fuzz_check.h); kinds at the bottom.
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>

#include "chunkindex/chunk_size.h"
#include "common/size_parse.h"
#include "tests/fuzz/fuzz_check.h"

namespace graphfs::fuzz {
namespace {

bool Space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// The grammar of size_parse.h, independently: blanks, an optional '+', decimal digits,
// then a unit made of the remaining non-blank characters (any case): none or B, or
// K/M/G/T/P optionally followed by B or IB. nullopt when refused or above 2^64 - 1.
std::optional<uint64_t> Reference(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && Space(text[i])) ++i;
  if (i < text.size() && text[i] == '+') ++i;
  unsigned __int128 value = 0;
  const size_t digits_from = i;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    value = value * 10 + static_cast<unsigned>(text[i] - '0');
    if (value > UINT64_MAX) return std::nullopt;
  }
  if (i == digits_from) return std::nullopt;
  std::string unit;
  for (; i < text.size(); ++i)
    if (!Space(text[i])) unit += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  int shift = 0;
  if (!unit.empty() && unit != "B") {
    const std::string units = "KMGTP";
    const size_t at = units.find(unit[0]);
    if (at == std::string::npos) return std::nullopt;
    const std::string rest = unit.substr(1);
    if (!rest.empty() && rest != "B" && rest != "IB") return std::nullopt;
    shift = 10 * static_cast<int>(at + 1);
  }
  value <<= shift;
  if (value > UINT64_MAX) return std::nullopt;
  return static_cast<uint64_t>(value);
}

void FuzzSize(const std::string& text) {
  auto got = ParseSize(text);
  const std::optional<uint64_t> want = Reference(text);
  FUZZ_CHECK(got.ok() == want.has_value(), "'%s': ok=%d, reference %d", Shown(text).c_str(), got.ok(),
             want.has_value());
  if (!got.ok()) {
    CheckRefusal(got.error(), EINVAL);
    FUZZ_CHECK(got.error().message().find("invalid size") != std::string::npos, "%s", got.error().message().c_str());
  } else {
    FUZZ_CHECK(*got == *want, "'%s' = %llu, want %llu", Shown(text).c_str(), static_cast<unsigned long long>(*got),
               static_cast<unsigned long long>(*want));
    auto again = ParseSize(std::to_string(*got));
    FUZZ_CHECK(again.ok() && *again == *got, "decimal does not round-trip");
  }
  // sysfs cache sizes ("32768K") are ParseSize, except that empty is refused too.
  auto cache = chunkindex::ParseCacheSize(text);
  FUZZ_CHECK(cache.ok() == got.ok(), "ParseCacheSize differs on '%s'", Shown(text).c_str());
  if (cache.ok()) FUZZ_CHECK(*cache == *got, "ParseCacheSize value differs");
  if (!cache.ok()) CheckRefusal(cache.error(), EINVAL);
}

void FuzzPercent(uint64_t whole, const std::string& text) {
  auto got = ParseSizeOrPercent(text, whole);
  std::string trimmed = text;
  while (!trimmed.empty() && Space(trimmed.back())) trimmed.pop_back();
  if (trimmed.empty() || trimmed.back() != '%') {
    auto plain = ParseSize(text);
    FUZZ_CHECK(got.ok() == plain.ok() && (!got.ok() || *got == *plain), "differs from ParseSize on '%s'",
               Shown(text).c_str());
  } else {
    const std::optional<uint64_t> pct = Reference(trimmed.substr(0, trimmed.size() - 1));
    const bool valid = pct.has_value() && *pct <= 100;
    FUZZ_CHECK(got.ok() == valid, "'%s' of %llu: ok=%d", Shown(text).c_str(), static_cast<unsigned long long>(whole),
               got.ok());
    if (valid) {
      FUZZ_CHECK(*got <= whole, "%llu%% of %llu is %llu", static_cast<unsigned long long>(*pct),
                 static_cast<unsigned long long>(whole), static_cast<unsigned long long>(*got));
      const unsigned __int128 want = static_cast<unsigned __int128>(whole) * *pct / 100;
      FUZZ_CHECK(*got == static_cast<uint64_t>(want), "percentage computed wrong");
    }
  }
  if (!got.ok()) CheckRefusal(got.error(), EINVAL);
}

void FuzzFormat(const std::string& text) {
  // Any 64-bit value: the first 8 bytes, little-endian.
  uint64_t v = 0;
  for (size_t k = 0; k < 8 && k < text.size(); ++k) v |= static_cast<uint64_t>(static_cast<unsigned char>(text[k])) << (8 * k);
  const std::string shown = FormatSize(v);
  FUZZ_CHECK(!shown.empty() && shown.size() < 32, "'%s'", shown.c_str());
  // Exact whenever it prints no fraction and the value fits a double exactly.
  if (shown.find('.') == std::string::npos && v < (uint64_t{1} << 53)) {
    auto back = ParseSize(shown);
    FUZZ_CHECK(back.ok() && *back == v, "%llu shown as '%s'", static_cast<unsigned long long>(v), shown.c_str());
  }
}

void FuzzSplit(char separator, const std::string& text) {
  const std::vector<std::string> items = SplitList(text, separator);
  std::string joined;
  for (size_t k = 0; k < items.size(); ++k) {
    FUZZ_CHECK(items[k].find(separator) == std::string::npos, "separator inside an item");
    joined += (k == 0 ? "" : std::string(1, separator)) + items[k];
  }
  FUZZ_CHECK(joined == text, "split/join does not round-trip");
}

}  // namespace
}  // namespace graphfs::fuzz

// Kinds: s ParseSize and ParseCacheSize, % ParseSizeOrPercent (PARAM = the whole),
// f FormatSize (payload: 8 bytes of a value), l SplitList (PARAM: the separator's code).
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphfs::fuzz;
  const Frame f = ParseFrame(data, size);
  switch (f.kind) {
    case 's': FuzzSize(f.payload); break;
    case '%': FuzzPercent(f.param, f.payload); break;
    case 'f': FuzzFormat(f.payload); break;
    case 'l': FuzzSplit(static_cast<char>(f.param % 256), f.payload); break;
    default: break;
  }
  return 0;
}
