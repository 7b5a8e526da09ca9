// Fuzzes the reading of a GridGraph-format graph directory (grid/grid_layout.h):
// the `meta` text alone, and a whole directory (meta, column_offset, row_offset and the
// block files) opened by GridLayout::Open. Both come from disk and may be damaged or
// foreign; whatever is accepted must describe a consistent layout.
// Input: a Frame (fuzz_check.h); kinds at the bottom.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "grid/graph_file.h"
#include "grid/grid_layout.h"
#include "tests/fuzz/fuzz_check.h"

namespace graphfs::fuzz {
namespace {

using grid::EdgeOrder;
using grid::GridLayout;
using grid::GridMeta;

// Whitespace-separated tokens, each read as an exact decimal integer (128 bits: no
// saturation). False if there are not four, or one is not an integer.
bool Fields(const std::string& text, __int128 out[4]) {
  size_t n = 0, i = 0;
  while (true) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i == text.size()) break;
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (n == 4) return false;
    std::string token = text.substr(start, i - start);
    bool negative = !token.empty() && token[0] == '-';
    if (negative) token.erase(0, 1);
    if (token.empty()) return false;
    token.erase(0, std::min(token.find_first_not_of('0'), token.size() - 1));  // leading zeros
    if (token.size() > 30) return false;
    __int128 v = 0;
    for (char c : token) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    out[n++] = negative ? -v : v;
  }
  return n == 4;
}

void CheckMeta(const std::string& text, const Result<GridMeta>& meta) {
  if (!meta.ok()) {
    CheckRefusal(meta.error(), EINVAL);
    FUZZ_CHECK(StartsWith(meta.error().message(), "meta: "), "%s", meta.error().message().c_str());
    return;
  }
  // What was accepted is exactly what the text says, field by field.
  __int128 f[4];
  FUZZ_CHECK(Fields(text, f), "accepted '%s', which is not four integers", Shown(text).c_str());
  FUZZ_CHECK(f[0] == static_cast<int>(meta->edge_type) && f[1] == static_cast<__int128>(meta->vertices) &&
                 f[2] == static_cast<__int128>(meta->edges) && f[3] == static_cast<__int128>(meta->partitions),
             "'%s' read as %s", Shown(text).c_str(), meta->Format().c_str());
  FUZZ_CHECK(meta->vertices >= 1 && meta->vertices <= INT_MAX, "vertices");
  FUZZ_CHECK(meta->partitions >= 1 && meta->partitions <= INT_MAX, "partitions");
  // The edge files' size must be representable: offsets are int64 and GridLayout computes
  // edges * edge size in 64 bits.
  const unsigned __int128 bytes = static_cast<unsigned __int128>(meta->edges) * EdgeSize(meta->edge_type);
  FUZZ_CHECK(bytes <= static_cast<unsigned __int128>(INT64_MAX), "%llu edges do not fit an int64 file size",
             static_cast<unsigned long long>(meta->edges));
  auto again = GridMeta::Parse(meta->Format(), "meta");
  FUZZ_CHECK(again.ok() && again->Format() == meta->Format(), "Format() does not parse back: %s",
             meta->Format().c_str());
}

void EmptyDir(const std::string& dir) {
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ::unlink((dir + "/" + e->d_name).c_str());
    ::closedir(d);
  }
}

// One scratch directory per process, removed when libFuzzer exits.
std::string ScratchDir() {
  static const std::string dir = [] {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/grid_meta_fuzz.XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    FUZZ_CHECK(::mkdtemp(buf.data()) != nullptr, "mkdtemp %s: %s", templ.c_str(), std::strerror(errno));
    // A plain array: the handler runs after `dir`'s destructor (it was registered first).
    static char removed_at_exit[4096];
    std::snprintf(removed_at_exit, sizeof removed_at_exit, "%s", buf.data());
    std::atexit([] {
      EmptyDir(removed_at_exit);
      ::rmdir(removed_at_exit);
    });
    return std::string(buf.data());
  }();
  return dir;
}

void Write(const std::string& path, const std::string& bytes, off_t size) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  FUZZ_CHECK(fd >= 0, "create %s: %s", path.c_str(), std::strerror(errno));
  FUZZ_CHECK(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()), "write %s", path.c_str());
  if (size >= 0) FUZZ_CHECK(::ftruncate(fd, size) == 0, "truncate %s", path.c_str());
  ::close(fd);
}

// A whole directory. The payload is the meta text, a newline, and offset table bytes;
// PARAM says how row_offset and the blocks are made from them (see below), so that the
// fuzzer reaches both consistent layouts and each kind of disagreement.
void FuzzDirectory(uint64_t param, const std::string& payload) {
  const std::string dir = ScratchDir();
  EmptyDir(dir);  // nothing left from the previous input
  const size_t eol = payload.find('\n');
  const std::string meta_text = payload.substr(0, eol);
  const std::string tables = eol == std::string::npos ? "" : payload.substr(eol + 1);
  std::string column = tables, row = tables;
  if (param % 3 == 2) {  // two independent tables
    column = tables.substr(0, tables.size() / 2);
    row = tables.substr(tables.size() / 2);
  }
  Write(dir + "/meta", meta_text, -1);
  Write(dir + "/column_offset", column, -1);

  auto meta = GridMeta::Parse(meta_text, dir + "/meta");
  const uint64_t p = meta.ok() ? meta->partitions : 0;
  std::vector<int64_t> col_off(column.size() / 8);
  if (!col_off.empty()) std::memcpy(col_off.data(), column.data(), col_off.size() * 8);
  const bool table_fits = p > 0 && p <= 8 && col_off.size() == p * p + 1;
  // Block (i, j) gets the size column_offset gives it, when that is sane.
  auto block_size = [&](uint64_t i, uint64_t j) -> int64_t {
    if (!table_fits) return 0;
    const __int128 a = col_off[j * p + i], b = col_off[j * p + i + 1];
    return b >= a && b - a <= (1 << 16) ? static_cast<int64_t>(b - a) : 0;
  };
  if (param % 3 == 1 && table_fits) {  // row_offset: the same blocks in row-major order
    std::vector<int64_t> row_off(p * p + 1, 0);
    for (uint64_t i = 0; i < p; ++i)
      for (uint64_t j = 0; j < p; ++j) row_off[i * p + j + 1] = row_off[i * p + j] + block_size(i, j);
    row.assign(reinterpret_cast<const char*>(row_off.data()), row_off.size() * 8);
  }
  Write(dir + "/row_offset", row, -1);
  // column and row themselves, sparse, of the size meta gives them (GridLayout may check it).
  if (meta.ok() && meta->edges <= (uint64_t{1} << 36)) {
    const off_t bytes = static_cast<off_t>(meta->edges * grid::EdgeSize(meta->edge_type));
    Write(dir + "/column", "", bytes);
    Write(dir + "/row", "", bytes);
  }
  if (p > 0 && p <= 8) {
    for (uint64_t i = 0; i < p; ++i)
      for (uint64_t j = 0; j < p; ++j) {
        int64_t size = block_size(i, j);
        if ((param / 3) % 2 == 1 && i == 0 && j == 0) ++size;  // one block disagrees
        Write(dir + "/" + grid::BlockFileName(i, j), "", size);
      }
  }

  auto layout = GridLayout::Open(dir);
  if (!layout.ok()) {
    CheckRefusal(layout.error());
    return;
  }
  CheckMeta(meta_text, Result<GridMeta>(layout->meta()));
  const uint64_t n = layout->partitions();
  const uint64_t es = layout->edge_size();
  unsigned __int128 total = 0;
  for (uint64_t i = 0; i < n; ++i)
    for (uint64_t j = 0; j < n; ++j) {
      for (EdgeOrder order : {EdgeOrder::kColumn, EdgeOrder::kRow}) {
        const uint64_t begin = layout->BlockBegin(order, i, j), end = layout->BlockEnd(order, i, j);
        FUZZ_CHECK(begin <= end && end <= layout->FileBytes(), "block (%llu,%llu) at [%llu,%llu) of %llu",
                   static_cast<unsigned long long>(i), static_cast<unsigned long long>(j),
                   static_cast<unsigned long long>(begin), static_cast<unsigned long long>(end),
                   static_cast<unsigned long long>(layout->FileBytes()));
        FUZZ_CHECK(end - begin == layout->BlockBytes(i, j), "block size disagrees with the offsets");
      }
      FUZZ_CHECK(layout->BlockBytes(i, j) % es == 0, "block not a whole number of edges");
      total += layout->BlockBytes(i, j);
    }
  FUZZ_CHECK(total == static_cast<unsigned __int128>(layout->edges()) * es,
             "blocks hold %llu bytes, meta says %llu edges of %llu bytes", static_cast<unsigned long long>(total),
             static_cast<unsigned long long>(layout->edges()), static_cast<unsigned long long>(es));
}

// An extent map's text (grid/graph_file.h: a graph version's `column`, read from disk): an
// accepted map names valid pieces, its extents are non-empty, name pieces it lists and add up to
// its size, and it survives its own writer; a refused one says why.
void FuzzExtentMap(const std::string& text) {
  auto m = grid::ExtentMap::Decode(text, "fuzz");
  if (!m.ok()) {
    CheckRefusal(m.error(), EINVAL);
    FUZZ_CHECK(m.error().message().find("fuzz") != std::string::npos, "the error does not name the map: %s",
               m.error().message().c_str());
    return;
  }
  unsigned __int128 total = 0;
  for (const std::string& p : m->pieces()) FUZZ_CHECK(grid::ExtentMap::ValidPieceName(p), "piece %s", p.c_str());
  for (const grid::MapExtent& e : m->extents()) {
    FUZZ_CHECK(e.piece < m->pieces().size(), "extent names piece %u of %zu", e.piece, m->pieces().size());
    FUZZ_CHECK(e.length > 0, "empty extent");
    total += e.length;
  }
  FUZZ_CHECK(total == m->size(), "extents add up to another size");
  auto again = grid::ExtentMap::Decode(m->Encode(), "fuzz");
  FUZZ_CHECK(again.ok(), "the writer's text is refused: %s", again.ok() ? "" : again.error().message().c_str());
  FUZZ_CHECK(again->Encode() == m->Encode() && again->size() == m->size(), "the map does not round-trip");
}

}  // namespace
}  // namespace graphfs::fuzz

// Kinds: m meta text (the whole payload), d a directory (FuzzDirectory), x an extent map's text.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphfs::fuzz;
  const Frame f = ParseFrame(data, size);
  switch (f.kind) {
    case 'm': CheckMeta(f.payload, graphfs::grid::GridMeta::Parse(f.payload, "meta")); break;
    case 'd': FuzzDirectory(f.param, f.payload); break;
    case 'x': FuzzExtentMap(f.payload); break;
    default: break;
  }
  return 0;
}
