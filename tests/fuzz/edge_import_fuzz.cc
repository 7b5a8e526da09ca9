// Fuzzes the text edge-list import (engines/core/edge_import.h: SNAP/KONECT files from
// anywhere) through its real entry point, ImportEdges, reading and writing memory files.
// A reference reading of the documented format says what must come out: the same edge
// records byte for byte, the same counts, or a refusal naming the first bad line.
// Input: a Frame (fuzz_check.h): kind 'u' unweighted, 'w' weighted with PARAM as the
// default weight; the payload is the text file.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "engines/core/edge_import.h"
#include "tests/fuzz/fuzz_check.h"

namespace graphfs::fuzz {
namespace {

int MemFile(const char* name) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC);
  FUZZ_CHECK(fd >= 0, "memfd_create: %s", std::strerror(errno));
  return fd;
}

bool Separator(char c) { return c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\n'; }

bool Id(std::string_view t, int32_t* out) {
  if (t.empty() || t.size() > 10) return false;
  long long v = 0;
  for (char c : t) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v > INT_MAX) return false;
  *out = static_cast<int32_t>(v);
  return true;
}

bool Weight(std::string_view t, float* out) {
  const std::string s(t);
  char* end = nullptr;
  errno = 0;
  const float v = std::strtof(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

struct Expected {
  std::string records;
  uint64_t lines = 0, edges = 0, max_vertex = 0;
  uint64_t bad_line = 0;  // first refused line (1-based), 0 if none
};

Expected Reference(const std::string& text, bool weighted, float default_weight) {
  Expected e;
  size_t at = 0;
  while (at < text.size()) {
    size_t eol = text.find('\n', at);
    const std::string_view line =
        std::string_view(text).substr(at, eol == std::string::npos ? std::string::npos : eol - at + 1);
    at = eol == std::string::npos ? text.size() : eol + 1;
    ++e.lines;
    const size_t first = line.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || line[first] == '#' || line[first] == '%') continue;
    std::vector<std::string_view> tokens;
    for (size_t i = 0; i < line.size();) {
      while (i < line.size() && Separator(line[i])) ++i;
      const size_t start = i;
      while (i < line.size() && !Separator(line[i])) ++i;
      if (i > start) tokens.push_back(line.substr(start, i - start));
    }
    int32_t s, t;
    float w = default_weight;
    if (tokens.size() < 2 || !Id(tokens[0], &s) || !Id(tokens[1], &t) ||
        (weighted && tokens.size() >= 3 && !Weight(tokens[2], &w))) {
      e.bad_line = e.lines;
      return e;
    }
    e.records.append(reinterpret_cast<const char*>(&s), 4);
    e.records.append(reinterpret_cast<const char*>(&t), 4);
    if (weighted) e.records.append(reinterpret_cast<const char*>(&w), 4);
    e.max_vertex = std::max<uint64_t>(e.max_vertex, static_cast<uint64_t>(std::max(s, t)));
    ++e.edges;
  }
  return e;
}

}  // namespace
}  // namespace graphfs::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphfs::fuzz;
  const Frame f = ParseFrame(data, size);
  if (f.kind != 'u' && f.kind != 'w') return 0;
  static const int in_fd = MemFile("edges.txt");
  static const int out_fd = MemFile("edges.bin");
  FUZZ_CHECK(::ftruncate(in_fd, 0) == 0 && ::ftruncate(out_fd, 0) == 0, "truncate");
  FUZZ_CHECK(::pwrite(in_fd, f.payload.data(), f.payload.size(), 0) == static_cast<ssize_t>(f.payload.size()),
             "write input");

  graphfs::engine::ImportOptions options;
  options.input = "/proc/self/fd/" + std::to_string(in_fd);
  options.output = "/proc/self/fd/" + std::to_string(out_fd);
  options.weighted = f.kind == 'w';
  options.default_weight = static_cast<float>(f.param % 1000) / 4;
  auto stats = graphfs::engine::ImportEdges(options);
  const Expected want = Reference(f.payload, options.weighted, options.default_weight);

  if (!stats.ok()) {
    CheckRefusal(stats.error(), EINVAL);
    FUZZ_CHECK(want.bad_line != 0, "refused a good file: %s", stats.error().message().c_str());
    // "<file>:<line>: why in '<line text>'": the first bad line, by number.
    const std::string where = options.input + ":" + std::to_string(want.bad_line) + ": ";
    FUZZ_CHECK(StartsWith(stats.error().message(), where), "'%s' does not start with '%s'",
               Shown(stats.error().message()).c_str(), where.c_str());
    return 0;
  }
  FUZZ_CHECK(want.bad_line == 0, "accepted bad line %llu", static_cast<unsigned long long>(want.bad_line));
  FUZZ_CHECK(stats->lines == want.lines && stats->edges == want.edges,
             "%llu lines and %llu edges, want %llu and %llu", static_cast<unsigned long long>(stats->lines),
             static_cast<unsigned long long>(stats->edges), static_cast<unsigned long long>(want.lines),
             static_cast<unsigned long long>(want.edges));
  if (want.edges > 0)
    FUZZ_CHECK(stats->max_vertex == want.max_vertex, "max vertex %llu, want %llu",
               static_cast<unsigned long long>(stats->max_vertex), static_cast<unsigned long long>(want.max_vertex));
  struct stat st;
  FUZZ_CHECK(::fstat(out_fd, &st) == 0 && static_cast<size_t>(st.st_size) == want.records.size(),
             "output of %lld bytes, want %zu", static_cast<long long>(st.st_size), want.records.size());
  std::string out(want.records.size(), '\0');
  FUZZ_CHECK(::pread(out_fd, out.data(), out.size(), 0) == static_cast<ssize_t>(out.size()), "read output");
  FUZZ_CHECK(out == want.records, "records differ");
  return 0;
}
