// Fuzzes what users write into MOUNTPOINT/.graphfs/ (fusefs/control_parse.h): the job
// files active, active.list, partition_size, graph, the LP file names looked up in a job
// directory, `fault` and `disks`. Input: a Frame (fuzz_check.h), kinds listed at the bottom.
// Each parser is checked against a plain reference of its documented grammar.
#include <bit>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common/size_parse.h"
#include "fusefs/control_parse.h"
#include "tests/fuzz/fuzz_check.h"

namespace graphfs::fuzz {
namespace {

bool Blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool ListSpace(char c) { return Blank(c) || c == '\v' || c == '\f'; }

bool Bit(const std::vector<uint64_t>& words, uint64_t v) { return (words[v / 64] >> (v % 64)) & 1; }

void CheckNoBitsPast(const std::vector<uint64_t>& words, uint64_t vertices) {
  FUZZ_CHECK(words.size() == (vertices + 63) / 64, "%zu words for %llu vertices", words.size(),
             static_cast<unsigned long long>(vertices));
  if (vertices % 64 != 0)
    FUZZ_CHECK((words.back() >> (vertices % 64)) == 0, "bits set past vertex %llu",
               static_cast<unsigned long long>(vertices));
}

void FuzzTrim(const std::string& text) {
  const std::string t = TrimBlanks(text);
  FUZZ_CHECK(text.find(t) != std::string::npos, "trim is not a substring");
  FUZZ_CHECK(t.empty() || (!Blank(t.front()) && !Blank(t.back())), "blanks left: '%s'", Shown(t).c_str());
  bool all_blank = true;
  for (char c : text) all_blank = all_blank && Blank(c);
  FUZZ_CHECK(t.empty() == all_blank, "trim of '%s' is '%s'", Shown(text).c_str(), Shown(t).c_str());
}

void FuzzBitmap(uint64_t vertices, const std::string& bytes) {
  auto words = ParseActiveBitmap(bytes, vertices);
  bool fits = bytes.size() == (vertices + 7) / 8;
  for (uint64_t b = vertices; fits && b < bytes.size() * 8; ++b)
    fits = ((static_cast<unsigned char>(bytes[b / 8]) >> (b % 8)) & 1) == 0;
  FUZZ_CHECK(words.ok() == fits, "bitmap of %zu bytes for V=%llu: ok=%d", bytes.size(),
             static_cast<unsigned long long>(vertices), words.ok());
  if (!words.ok()) {
    CheckRefusal(words.error(), EINVAL);
    FUZZ_CHECK(StartsWith(words.error().message(), "active: "), "%s", words.error().message().c_str());
    return;
  }
  CheckNoBitsPast(*words, vertices);
  for (uint64_t v = 0; v < vertices; ++v)
    FUZZ_CHECK(Bit(*words, v) == (((static_cast<unsigned char>(bytes[v / 8]) >> (v % 8)) & 1) != 0),
               "bit %llu differs", static_cast<unsigned long long>(v));
}

void FuzzList(uint64_t vertices, const std::string& text) {
  // Reference: whitespace-separated tokens, each `all` or a decimal id below V.
  std::set<uint64_t> ids;
  bool all = false, valid = true;
  size_t i = 0;
  while (valid) {
    while (i < text.size() && ListSpace(text[i])) ++i;
    if (i == text.size()) break;
    size_t start = i;
    while (i < text.size() && !ListSpace(text[i])) ++i;
    const std::string token = text.substr(start, i - start);
    if (token == "all") {
      all = true;
      continue;
    }
    unsigned __int128 id = 0;
    for (char c : token) {
      valid = valid && c >= '0' && c <= '9';
      if (valid) id = id * 10 + static_cast<unsigned>(c - '0');
      if (id > UINT64_MAX) id = UINT64_MAX;  // saturate: only "below V" matters
    }
    // Longer tokens are refused even as ids below V ("000...01"): at most 19 characters.
    valid = valid && token.size() <= 19 && id < vertices;
    if (valid) ids.insert(static_cast<uint64_t>(id));
  }
  auto words = ParseActiveList(text, vertices);
  FUZZ_CHECK(words.ok() == valid, "list '%s' for V=%llu: ok=%d, reference %d", Shown(text).c_str(),
             static_cast<unsigned long long>(vertices), words.ok(), valid);
  if (!words.ok()) {
    CheckRefusal(words.error(), EINVAL);
    FUZZ_CHECK(StartsWith(words.error().message(), "active.list: "), "%s", words.error().message().c_str());
    return;
  }
  CheckNoBitsPast(*words, vertices);
  uint64_t count = 0;
  for (uint64_t w : *words) count += static_cast<uint64_t>(std::popcount(w));
  FUZZ_CHECK(count == (all ? vertices : ids.size()), "%llu active, want %llu", static_cast<unsigned long long>(count),
             static_cast<unsigned long long>(all ? vertices : ids.size()));
  for (uint64_t id : ids) FUZZ_CHECK(Bit(*words, id), "id %llu not set", static_cast<unsigned long long>(id));
}

void FuzzPartitionSize(const std::string& text) {
  auto bytes = ParsePartitionSize(text);
  auto plain = ParseSize(TrimBlanks(text));
  const bool in_range = plain.ok() && *plain > 0 && *plain <= kMaxPartitionBytes;
  FUZZ_CHECK(bytes.ok() == in_range, "'%s': ok=%d", Shown(text).c_str(), bytes.ok());
  if (!bytes.ok()) {
    CheckRefusal(bytes.error(), EINVAL);
    FUZZ_CHECK(StartsWith(bytes.error().message(), "partition_size: "), "%s", bytes.error().message().c_str());
    return;
  }
  FUZZ_CHECK(*bytes == *plain, "differs from ParseSize");
  auto again = ParsePartitionSize(std::to_string(*bytes) + "\n");
  FUZZ_CHECK(again.ok() && *again == *bytes, "does not round-trip");
}

void FuzzFault(uint64_t disks, const std::string& text) {
  auto f = ParseFaultLine(text, disks);
  if (!f.ok()) {
    CheckRefusal(f.error(), EINVAL);
    return;
  }
  FUZZ_CHECK(f->disk < disks, "disk %u of %llu", f->disk, static_cast<unsigned long long>(disks));
  FUZZ_CHECK(f->error >= 0 && f->error <= 4095, "errno %d", f->error);
  auto again = ParseFaultLine(std::to_string(f->disk) + " " + std::to_string(f->error) + "\n", disks);
  FUZZ_CHECK(again.ok() && again->disk == f->disk && again->error == f->error, "does not round-trip");
}

void FuzzDisks(uint64_t disks, const std::string& text) {
  auto c = ParseDisksLine(text, disks);
  if (!c.ok()) {
    CheckRefusal(c.error(), EINVAL);
    FUZZ_CHECK(StartsWith(c.error().message(), "disks: "), "%s", c.error().message().c_str());
    return;
  }
  if (c->kind == DisksCommand::Kind::kRebuild) {
    FUZZ_CHECK(c->disk < disks, "disk %u of %llu", c->disk, static_cast<unsigned long long>(disks));
    FUZZ_CHECK(!c->dir.empty() && c->dir[0] == '/', "'%s' is not absolute", Shown(c->dir).c_str());
    for (char ch : c->dir) FUZZ_CHECK(!Blank(ch) && ch != '\0', "a blank in '%s'", Shown(c->dir).c_str());
    FUZZ_CHECK(c->dir.find("/../") == std::string::npos && !c->dir.ends_with("/.."), "'..' in '%s'",
               Shown(c->dir).c_str());
    FUZZ_CHECK(text.find(c->dir) != std::string::npos, "the directory is not a word of the line");
  } else {
    FUZZ_CHECK(c->dir.empty(), "scrub with a directory");
  }
  // The line made of what was parsed parses to the same.
  const std::string line = c->kind == DisksCommand::Kind::kRebuild
                               ? "rebuild " + std::to_string(c->disk) + " " + c->dir + " " + std::to_string(c->rate)
                               : "scrub " + std::to_string(c->rate);
  auto again = ParseDisksLine(line + "\n", disks);
  FUZZ_CHECK(again.ok() && again->kind == c->kind && again->disk == c->disk && again->dir == c->dir &&
                 again->rate == c->rate,
             "'%s' does not round-trip", Shown(line).c_str());
}

void FuzzGraphPath(int where, const std::string& text) {
  static const std::pair<const char*, const char*> kMounts[] = {
      {"/mnt/graphs", "/srv/graphs"}, {"/mnt", "/mnt/src"}, {"/a", "/a/b/c"}, {"", ""}};
  const std::string mountpoint = kMounts[where % 4].first, source = kMounts[where % 4].second;
  auto rel = MountRelative(text, mountpoint, source);
  if (!rel.ok()) {
    CheckRefusal(rel.error(), EINVAL);
    return;
  }
  const std::string& out = *rel;
  FUZZ_CHECK(out.empty() || (out.front() != '/' && out.back() != '/'), "'%s'", Shown(out).c_str());
  const std::vector<std::string> parts = out.empty() ? std::vector<std::string>() : SplitList(out, '/');
  for (const std::string& p : parts)
    FUZZ_CHECK(!p.empty() && p != "." && p != "..", "component '%s' in '%s'", Shown(p).c_str(), Shown(out).c_str());
  FUZZ_CHECK(parts.empty() || parts[0] != ".graphfs", "the control directory: '%s'", Shown(out).c_str());
  auto again = MountRelative(out, mountpoint, source);
  FUZZ_CHECK(again.ok() && *again == out, "not idempotent on '%s'", Shown(out).c_str());
  if (text.empty() || text[0] != '/') {
    // A relative path keeps exactly its real components.
    std::string want;
    for (const std::string& p : SplitList(text, '/'))
      if (!p.empty() && p != ".") want += (want.empty() ? "" : "/") + p;
    FUZZ_CHECK(out == want, "'%s' -> '%s', want '%s'", Shown(text).c_str(), Shown(out).c_str(), Shown(want).c_str());
  } else {
    // An absolute one was inside the mount point or the source directory.
    const bool inside = [&] {
      for (const std::string& prefix : {mountpoint, source})
        if (!prefix.empty() && (text == prefix || StartsWith(text, prefix + "/"))) return true;
      return false;
    }();
    FUZZ_CHECK(inside, "'%s' accepted outside the mount", Shown(text).c_str());
  }
}

void FuzzLpName(const std::string& name) {
  LpFile kind = LpFile::kView;
  const uint64_t seq = ParseLpFileName(name, &kind);
  if (seq == 0) {
    // Refused: then it is not "lp-" + a canonical positive number (+ ".map" or ".pieces").
    std::string digits = StartsWith(name, "lp-") ? name.substr(3) : "";
    for (const std::string suffix : {".map", ".pieces"}) {
      if (digits.size() > suffix.size() && digits.substr(digits.size() - suffix.size()) == suffix) {
        digits.resize(digits.size() - suffix.size());
        break;
      }
    }
    bool canonical = !digits.empty() && digits.size() <= 19 && digits[0] != '0';
    for (char c : digits) canonical = canonical && c >= '0' && c <= '9';
    FUZZ_CHECK(!canonical, "'%s' refused", Shown(name).c_str());
    return;
  }
  const char* suffix = kind == LpFile::kMap ? ".map" : kind == LpFile::kPieces ? ".pieces" : "";
  const std::string want = "lp-" + std::to_string(seq) + suffix;
  FUZZ_CHECK(name == want, "'%s' read as %s", Shown(name).c_str(), want.c_str());
}

}  // namespace
}  // namespace graphfs::fuzz

// Kinds: t trim, b active (PARAM = V), l active.list (PARAM = V), p partition_size,
// f fault (PARAM = disks), d disks (PARAM = disks), g graph (PARAM picks mount point and source), n LP file name.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphfs::fuzz;
  const Frame f = ParseFrame(data, size);
  // Bitmaps of up to 2^20 vertices: larger ones only cost time per input.
  const uint64_t vertices = f.param % ((1u << 20) + 1);
  switch (f.kind) {
    case 't': FuzzTrim(f.payload); break;
    case 'b': FuzzBitmap(vertices, f.payload); break;
    case 'l': FuzzList(vertices, f.payload); break;
    case 'p': FuzzPartitionSize(f.payload); break;
    case 'f': FuzzFault(f.param % 64, f.payload); break;
    case 'd': FuzzDisks(f.param % 64, f.payload); break;
    case 'g': FuzzGraphPath(static_cast<int>(f.param % 4), f.payload); break;
    case 'n': FuzzLpName(f.payload); break;
    default: break;
  }
  return 0;
}
