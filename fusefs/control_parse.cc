#include "fusefs/control_parse.h"

#include <algorithm>
#include <utility>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "common/size_parse.h"
#include "fusefs/control_dir.h"

namespace graphfs {

namespace {

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// What `istream >> std::string` skips in the C locale: the list form was read that way.
bool IsListSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// At most 19 digits: below 10^19 < 2^64, so the sum cannot overflow.
uint64_t DecimalValue(std::string_view digits) {
  uint64_t v = 0;
  for (char c : digits) v = v * 10 + static_cast<uint64_t>(c - '0');
  return v;
}

}  // namespace

std::string TrimBlanks(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

Result<std::vector<uint64_t>> ParseActiveBitmap(std::string_view bytes, uint64_t v) {
  const uint64_t want = (v + 7) / 8;
  if (bytes.size() != want)
    return Error(EINVAL, "active: expected a bitmap of " + std::to_string(want) + " bytes (" + std::to_string(v) +
                             " vertices), got " + std::to_string(bytes.size()));
  std::vector<uint64_t> words((v + 63) / 64, 0);
  // Little-endian words, truncated. (No memcpy into the empty vector of V = 0: its data() may be null.)
  if (!bytes.empty()) std::memcpy(words.data(), bytes.data(), bytes.size());
  if (v % 64 != 0 && (words.back() >> (v % 64)) != 0)
    return Error(EINVAL, "active: bits set past the last vertex (" + std::to_string(v - 1) + ")");
  return words;
}

Result<std::vector<uint64_t>> ParseActiveList(std::string_view text, uint64_t v) {
  std::vector<uint64_t> words((v + 63) / 64, 0);
  size_t i = 0;
  while (true) {
    while (i < text.size() && IsListSpace(text[i])) ++i;
    if (i == text.size()) break;
    const size_t start = i;
    while (i < text.size() && !IsListSpace(text[i])) ++i;
    const std::string_view token = text.substr(start, i - start);
    if (token == "all") {
      std::fill(words.begin(), words.end(), ~uint64_t{0});
      if (v % 64 != 0) words.back() = (uint64_t{1} << (v % 64)) - 1;
      continue;
    }
    const bool ok = token.size() <= 19 && IsDigits(token);
    const uint64_t id = ok ? DecimalValue(token) : 0;
    if (!ok || id >= v)
      return Error(EINVAL, "active.list: '" + std::string(token.substr(0, 32)) + "' is not a vertex id below " +
                               std::to_string(v));
    words[id / 64] |= uint64_t{1} << (id % 64);
  }
  return words;
}

Result<uint64_t> ParsePartitionSize(std::string_view text) {
  auto bytes = ParseSize(TrimBlanks(text));
  if (!bytes.ok()) return bytes.error().Wrap("partition_size");
  if (*bytes == 0 || *bytes > kMaxPartitionBytes)
    return Error(EINVAL, "partition_size: " + std::to_string(*bytes) + " is not in (0, 64G]");
  return *bytes;
}

Result<FaultRequest> ParseFaultLine(std::string_view text, uint64_t disks) {
  // Read as `stream >> long >> long`, as it always was: blanks around, a sign, and anything
  // after the second number are accepted.
  std::istringstream in{std::string(text)};
  long disk = -1, err = -1;
  if (!(in >> disk >> err) || disk < 0 || err < 0 || err > 4095 || static_cast<uint64_t>(disk) >= disks)
    return Error(EINVAL, "fault: expected 'DISK ERRNO' with DISK below the disk count");
  return FaultRequest{static_cast<uint32_t>(disk), static_cast<int>(err)};
}

namespace {

// The words of `text`, split at blanks (space, tab, CR, LF).
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  size_t i = 0;
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (i < text.size()) {
    while (i < text.size() && blank(text[i])) ++i;
    const size_t start = i;
    while (i < text.size() && !blank(text[i])) ++i;
    if (i > start) words.emplace_back(text.substr(start, i - start));
  }
  return words;
}

Result<uint64_t> ParseRate(std::string word) {
  if (word.size() > 2 && word.compare(word.size() - 2, 2, "/s") == 0) word.resize(word.size() - 2);
  auto rate = ParseSize(word);
  if (!rate.ok()) return Error(EINVAL, "disks: rate '" + word + "': " + rate.error().message());
  return rate;
}

}  // namespace

Result<DisksCommand> ParseDisksLine(std::string_view text, uint64_t disks) {
  static const std::string kUsage = "expected 'rebuild DISK DIR [RATE]' or 'scrub [RATE]'";
  if (text.find('\0') != std::string_view::npos) return Error(EINVAL, "disks: a NUL byte in the line; " + kUsage);
  const std::vector<std::string> w = Words(text);
  if (w.empty()) return Error(EINVAL, "disks: empty line; " + kUsage);
  DisksCommand c;
  if (w[0] == "scrub") {
    if (w.size() > 2) return Error(EINVAL, "disks: too many words after 'scrub'; " + kUsage);
    c.kind = DisksCommand::Kind::kScrub;
    if (w.size() == 2) {
      auto rate = ParseRate(w[1]);
      if (!rate.ok()) return rate.error();
      c.rate = *rate;
    }
    return c;
  }
  if (w[0] != "rebuild") return Error(EINVAL, "disks: unknown command '" + w[0].substr(0, 64) + "'; " + kUsage);
  if (w.size() < 3 || w.size() > 4) return Error(EINVAL, "disks: 'rebuild' takes 2 or 3 words; " + kUsage);
  c.kind = DisksCommand::Kind::kRebuild;
  uint64_t disk = 0;
  for (char ch : w[1]) {
    if (ch < '0' || ch > '9' || disk > UINT32_MAX) return Error(EINVAL, "disks: disk '" + w[1].substr(0, 64) + "' is not a disk index");
    disk = disk * 10 + static_cast<uint64_t>(ch - '0');
  }
  if (w[1].size() > 10 || disk >= disks)
    return Error(EINVAL, "disks: disk " + w[1].substr(0, 64) + ": the set has disks 0.." +
                             (disks == 0 ? std::string("(none)") : std::to_string(disks - 1)));
  c.disk = static_cast<uint32_t>(disk);
  c.dir = w[2];
  if (c.dir.size() > 4096) return Error(EINVAL, "disks: directory longer than 4096 bytes");
  if (c.dir[0] != '/') return Error(EINVAL, "disks: directory '" + c.dir + "' is not an absolute path");
  for (const std::string& part : SplitList(c.dir, '/'))
    if (part == "..") return Error(EINVAL, "disks: directory '" + c.dir + "' must not contain '..'");
  if (w.size() == 4) {
    auto rate = ParseRate(w[3]);
    if (!rate.ok()) return rate.error();
    c.rate = *rate;
  }
  return c;
}

Result<std::string> MountRelative(std::string_view text_view, const std::string& mountpoint,
                                  const std::string& source) {
  const std::string text(text_view);
  std::string path = text;
  for (const std::string& prefix : {mountpoint, source}) {
    if (prefix.empty() || path.empty() || path[0] != '/') continue;
    if (path == prefix) path = "";
    else if (path.rfind(prefix + "/", 0) == 0) path = path.substr(prefix.size() + 1);
  }
  if (!path.empty() && path[0] == '/')
    return Error(EINVAL, "graph " + text + " is not inside the mount " + mountpoint);
  std::string out;
  for (const std::string& part : SplitList(path, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return Error(EINVAL, "graph path " + text + " must not contain '..'");
    if (part == kControlDirName && out.empty()) return Error(EINVAL, "graph path " + text + " is the control directory");
    out += (out.empty() ? "" : "/") + part;
  }
  return out;
}

uint64_t ParseLpFileName(std::string_view name, LpFile* kind) {
  if (name.substr(0, 3) != "lp-") return 0;
  std::string_view digits = name.substr(3);
  *kind = LpFile::kView;
  for (auto [suffix, k] : {std::pair<std::string_view, LpFile>{".map", LpFile::kMap}, {".pieces", LpFile::kPieces}}) {
    if (digits.size() > suffix.size() && digits.substr(digits.size() - suffix.size()) == suffix) {
      *kind = k;
      digits.remove_suffix(suffix.size());
      break;
    }
  }
  if (digits.empty() || digits.size() > 19 || digits[0] == '0' || !IsDigits(digits)) return 0;
  return DecimalValue(digits);
}

}  // namespace graphfs
