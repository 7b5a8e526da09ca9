// Fuzzes the edge-list import (engines/core/edge_import.h: SNAP/KONECT text and Matrix
// Market files from anywhere) through its real entry point, ImportEdges, reading a memory
// file and writing to a scratch directory. A reference reading of the documented formats says
// what must come out: the same edge records byte for byte, the same counts, or a refusal
// naming the first bad line and leaving no output file.
// Input: a Frame (fuzz_check.h): kind 'u' unweighted, 'w' weighted SNAP/KONECT text, 'm'
// unweighted, 'n' weighted Matrix Market (matrix_market.h); PARAM is the default weight; the
// payload is the file.
#include <dirent.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "engines/core/edge_import.h"
#include "grid/posix_io.h"
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
  uint64_t lines = 0, edges = 0, max_vertex = 0, vertices = 0;
  uint64_t bad_line = 0;  // first refused line (1-based), 0 if none
};

std::vector<std::string_view> Lines(const std::string& text) {
  std::vector<std::string_view> lines;
  for (size_t at = 0; at < text.size();) {
    const size_t eol = text.find('\n', at);
    lines.push_back(std::string_view(text).substr(at, eol == std::string::npos ? std::string::npos : eol - at + 1));
    at = eol == std::string::npos ? text.size() : eol + 1;
  }
  return lines;
}

std::vector<std::string_view> Tokens(std::string_view line) {
  std::vector<std::string_view> tokens;
  for (size_t i = 0; i < line.size();) {
    while (i < line.size() && Separator(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !Separator(line[i])) ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
  return tokens;
}

void Record(Expected& e, bool weighted, int32_t s, int32_t t, float w) {
  e.records.append(reinterpret_cast<const char*>(&s), 4);
  e.records.append(reinterpret_cast<const char*>(&t), 4);
  if (weighted) e.records.append(reinterpret_cast<const char*>(&w), 4);
  e.max_vertex = std::max<uint64_t>(e.max_vertex, static_cast<uint64_t>(std::max(s, t)));
  ++e.edges;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Digits only, at most 20 of them, no overflow of uint64.
bool Count(std::string_view t, uint64_t* out) {
  if (t.empty() || t.size() > 20) return false;
  unsigned __int128 v = 0;
  for (char c : t) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v > UINT64_MAX) return false;
  *out = static_cast<uint64_t>(v);
  return true;
}

// Matrix Market coordinate, as engines/core/matrix_market.h documents it.
Expected ReferenceMtx(const std::string& text, bool weighted, float default_weight) {
  Expected e;
  const auto lines = Lines(text);
  e.lines = lines.size();
  auto bad = [&](uint64_t line) {
    e.bad_line = line;
    return e;
  };
  if (lines.empty()) return bad(1);
  const auto banner = Tokens(lines[0]);
  if (banner.size() != 5 || banner[0] != "%%MatrixMarket" || Lower(banner[1]) != "matrix" ||
      Lower(banner[2]) != "coordinate") {
    return bad(1);
  }
  const std::string field = Lower(banner[3]), symmetry = Lower(banner[4]);
  const bool pattern = field == "pattern", integer = field == "integer" || field == "unsigned-integer";
  if (!pattern && !integer && field != "real" && field != "double") return bad(1);
  if (symmetry != "general" && symmetry != "symmetric") return bad(1);
  const bool symmetric = symmetry == "symmetric";
  bool sized = false;
  uint64_t rows = 0, cols = 0, nnz = 0, read = 0;
  for (size_t n = 1; n < lines.size(); ++n) {
    const std::string_view line = lines[n];
    const size_t first = line.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || line[first] == '%') continue;
    const auto t = Tokens(line);
    if (!sized) {
      if (t.size() != 3 || !Count(t[0], &rows) || !Count(t[1], &cols) || !Count(t[2], &nnz)) return bad(n + 1);
      if (rows > (uint64_t{1} << 31) || cols > (uint64_t{1} << 31) || (symmetric && rows != cols)) return bad(n + 1);
      sized = true;
      continue;
    }
    uint64_t i, j;
    if (read == nnz || t.size() < (pattern ? 2u : 3u) || !Count(t[0], &i) || !Count(t[1], &j) || i == 0 ||
        i > rows || j == 0 || j > cols) {
      return bad(n + 1);
    }
    float w = default_weight;
    if (integer) {
      const std::string_view v = t[2];
      const size_t sign = field == "integer" && !v.empty() && v[0] == '-' ? 1 : 0;
      if (v.size() == sign || v.find_first_not_of("0123456789", sign) != std::string_view::npos) return bad(n + 1);
      const std::string s(v);
      errno = 0;
      const long long value = std::strtoll(s.c_str(), nullptr, 10);
      if (errno == ERANGE) return bad(n + 1);
      w = static_cast<float>(value);
    } else if (!pattern) {
      const std::string s(t[2]);
      char* end = nullptr;
      const double value = std::strtod(s.c_str(), &end);
      if (s.find_first_of("xX") != std::string::npos || end != s.c_str() + s.size()) return bad(n + 1);
      if (weighted && (!std::isfinite(value) || std::fabs(value) > FLT_MAX)) return bad(n + 1);
      w = static_cast<float>(value);
    }
    const auto r = static_cast<int32_t>(i - 1), c = static_cast<int32_t>(j - 1);
    Record(e, weighted, r, c, weighted ? w : 0.0f);
    if (symmetric && r != c) Record(e, weighted, c, r, weighted ? w : 0.0f);
    ++read;
  }
  if (!sized || read < nnz) return bad(std::max<uint64_t>(e.lines, 1));
  e.vertices = std::max(rows, cols);
  return e;
}

// SNAP/KONECT text, as engines/core/edge_import.h documents it.
Expected Reference(const std::string& text, bool weighted, float default_weight) {
  Expected e;
  for (const std::string_view line : Lines(text)) {
    ++e.lines;
    const size_t first = line.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) continue;
    if (e.lines == 1 && Lower(line.substr(first, 14)) == "%%matrixmarket") {  // an .mtx file: refused
      e.bad_line = 1;
      return e;
    }
    if (line[first] == '#' || line[first] == '%') continue;
    const auto tokens = Tokens(line);
    int32_t s, t;
    float w = default_weight;
    if (tokens.size() < 2 || !Id(tokens[0], &s) || !Id(tokens[1], &t) ||
        (weighted && tokens.size() >= 3 && !Weight(tokens[2], &w))) {
      e.bad_line = e.lines;
      return e;
    }
    Record(e, weighted, s, t, w);
  }
  e.vertices = e.edges == 0 ? 0 : e.max_vertex + 1;
  return e;
}

}  // namespace
}  // namespace graphfs::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphfs::fuzz;
  const Frame f = ParseFrame(data, size);
  if (f.kind != 'u' && f.kind != 'w' && f.kind != 'm' && f.kind != 'n') return 0;
  static const int in_fd = MemFile("edges.txt");
  // The output is renamed into place when complete, so it is a path in a scratch directory
  // (removed at exit; a crash leaves it, beside the crash input).
  static const std::string out_dir = [] {
    static std::string dir = (std::getenv("TMPDIR") != nullptr ? std::string(std::getenv("TMPDIR")) : "/tmp") +
                             "/edge-import-fuzz-XXXXXX";
    FUZZ_CHECK(::mkdtemp(dir.data()) != nullptr, "mkdtemp: %s", std::strerror(errno));
    std::atexit([] {
      ::unlink((dir + "/edges.bin").c_str());
      ::rmdir(dir.c_str());
    });
    return dir;
  }();
  const std::string out_path = out_dir + "/edges.bin";
  FUZZ_CHECK(::unlink(out_path.c_str()) == 0 || errno == ENOENT, "unlink output: %s", std::strerror(errno));
  FUZZ_CHECK(::ftruncate(in_fd, 0) == 0, "truncate");
  FUZZ_CHECK(::pwrite(in_fd, f.payload.data(), f.payload.size(), 0) == static_cast<ssize_t>(f.payload.size()),
             "write input");

  graphfs::engine::ImportOptions options;
  options.input = "/proc/self/fd/" + std::to_string(in_fd);
  options.output = out_path;
  const bool mtx = f.kind == 'm' || f.kind == 'n';
  options.format = mtx ? graphfs::engine::ImportFormat::kMatrixMarket : graphfs::engine::ImportFormat::kSnap;
  options.weighted = f.kind == 'w' || f.kind == 'n';
  options.default_weight = static_cast<float>(f.param % 1000) / 4;
  auto stats = graphfs::engine::ImportEdges(options);
  const Expected want = mtx ? ReferenceMtx(f.payload, options.weighted, options.default_weight)
                            : Reference(f.payload, options.weighted, options.default_weight);
  DIR* dir = ::opendir(out_dir.c_str());
  FUZZ_CHECK(dir != nullptr, "opendir: %s", std::strerror(errno));
  int files = 0;
  while (const dirent* entry = ::readdir(dir)) files += entry->d_name[0] != '.';
  ::closedir(dir);

  if (!stats.ok()) {
    CheckRefusal(stats.error(), EINVAL);
    FUZZ_CHECK(want.bad_line != 0, "refused a good file: %s", stats.error().message().c_str());
    // "<file>:<line>: why [in '<line text>']": the first bad line, by number.
    const std::string where = options.input + ":" + std::to_string(want.bad_line) + ": ";
    FUZZ_CHECK(StartsWith(stats.error().message(), where), "'%s' does not start with '%s'",
               Shown(stats.error().message()).c_str(), where.c_str());
    FUZZ_CHECK(files == 0, "a refused input left %d files in the output directory", files);
    return 0;
  }
  FUZZ_CHECK(want.bad_line == 0, "accepted bad line %llu", static_cast<unsigned long long>(want.bad_line));
  FUZZ_CHECK(stats->lines == want.lines && stats->edges == want.edges,
             "%llu lines and %llu edges, want %llu and %llu", static_cast<unsigned long long>(stats->lines),
             static_cast<unsigned long long>(stats->edges), static_cast<unsigned long long>(want.lines),
             static_cast<unsigned long long>(want.edges));
  FUZZ_CHECK(stats->vertices == want.vertices, "%llu vertices, want %llu",
             static_cast<unsigned long long>(stats->vertices), static_cast<unsigned long long>(want.vertices));
  if (want.edges > 0)
    FUZZ_CHECK(stats->max_vertex == want.max_vertex, "max vertex %llu, want %llu",
               static_cast<unsigned long long>(stats->max_vertex), static_cast<unsigned long long>(want.max_vertex));
  FUZZ_CHECK(files == 1, "%d files in the output directory, want the output alone", files);
  auto out = graphfs::grid::ReadWholeFile(out_path);
  FUZZ_CHECK(out.ok(), "read output: %s", out.ok() ? "" : out.error().message().c_str());
  FUZZ_CHECK(out->size() == want.records.size(), "output of %zu bytes, want %zu", out->size(), want.records.size());
  FUZZ_CHECK(*out == want.records, "records differ");
  return 0;
}
