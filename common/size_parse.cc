#include "common/size_parse.h"

#include <cctype>
#include <cstdio>
#include <limits>

namespace graphfs {

namespace {

Error BadSize(std::string_view text, const char* why) {
  return Error(EINVAL, "invalid size '" + std::string(text) + "': " + why);
}

}  // namespace

Result<uint64_t> ParseSize(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i == text.size()) return BadSize(text, "empty");
  if (text[i] == '-') return BadSize(text, "negative");
  if (text[i] == '+') ++i;
  if (i == text.size() || !std::isdigit(static_cast<unsigned char>(text[i])))
    return BadSize(text, "expected a number");
  uint64_t value = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10)
      return BadSize(text, "too large");
    value = value * 10 + digit;
  }
  std::string suffix;
  for (; i < text.size(); ++i) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) continue;
    suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  }
  int shift = 0;
  if (suffix.empty() || suffix == "B") {
    shift = 0;
  } else {
    switch (suffix[0]) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      case 'P': shift = 50; break;
      default: return BadSize(text, "unknown unit (use K, M, G, T)");
    }
    std::string rest = suffix.substr(1);
    if (!(rest.empty() || rest == "B" || rest == "IB")) return BadSize(text, "unknown unit (use K, M, G, T)");
  }
  if (shift > 0 && value > (std::numeric_limits<uint64_t>::max() >> shift)) return BadSize(text, "too large");
  return value << shift;
}

Result<SizeOrPercent> ParseSizeOrPercentSpec(std::string_view text) {
  SizeOrPercent spec;
  spec.text = std::string(text);
  std::string_view trimmed = text;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back()))) trimmed.remove_suffix(1);
  if (!trimmed.empty() && trimmed.back() == '%') {
    auto pct = ParseSize(trimmed.substr(0, trimmed.size() - 1));
    if (!pct.ok()) return BadSize(text, "expected N%");
    if (*pct > 100) return BadSize(text, "percentage above 100");
    spec.value = *pct;
    spec.percent = true;
    return spec;
  }
  auto bytes = ParseSize(text);
  if (!bytes.ok()) return bytes.error();
  spec.value = *bytes;
  return spec;
}

uint64_t SizeOrPercent::Of(uint64_t whole) const {
  if (!percent) return value;
  // whole * pct / 100 without overflow for whole up to 2^64/100.
  return static_cast<uint64_t>(static_cast<unsigned __int128>(whole) * value / 100);
}

SizeOrPercent SizeOrPercent::Percent(uint64_t pct) {
  return SizeOrPercent{pct, true, std::to_string(pct) + "%"};
}

Result<uint64_t> ParseSizeOrPercent(std::string_view text, uint64_t whole) {
  auto spec = ParseSizeOrPercentSpec(text);
  if (!spec.ok()) return spec.error();
  return spec->Of(whole);
}

std::vector<std::string> SplitList(std::string_view text, char separator) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(separator, start);
    items.emplace_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return items;
    start = at + 1;
  }
}

std::string SizeText(uint64_t bytes) {
  static constexpr char kUnits[] = "KMGT";
  int unit = -1;
  while (unit < 3 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + (unit >= 0 ? std::string(1, kUnits[unit]) : "");
}

std::string FormatSize(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0 || v == static_cast<double>(static_cast<uint64_t>(v)))
    std::snprintf(buf, sizeof buf, "%llu %s", static_cast<unsigned long long>(v), kUnits[u]);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

}  // namespace graphfs
