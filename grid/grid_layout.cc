#include "grid/grid_layout.h"

#include <sys/stat.h>
#include <sys/xattr.h>

#include <cctype>
#include <charconv>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>

#include "grid/graph_file.h"
#include "grid/posix_io.h"

namespace graphfs::grid {

std::string GridMeta::Format() const {
  char text[128];
  std::snprintf(text, sizeof(text), "%d %d %ld %d", static_cast<int>(edge_type),
                static_cast<int>(vertices), static_cast<long>(edges), static_cast<int>(partitions));
  return text;
}

Result<GridMeta> GridMeta::Parse(const std::string& text, const std::string& where) {
  // Four blank-separated decimal integers, read strictly. (sscanf's %lld was undefined on
  // overflow -- glibc saturates, so 99999999999999999999 edges read as 2^63 - 1 -- and
  // stopped at a NUL byte, taking "0 10 10 1\0junk" for a good meta file.)
  const std::string shown = text.size() > 200 ? text.substr(0, 200) + "..." : text;
  const Error malformed(EINVAL, where + ": expected \"EDGE_TYPE VERTICES EDGES PARTITIONS\", got '" + shown + "'");
  int64_t field[4];
  size_t n = 0;
  for (size_t i = 0;;) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i == text.size()) break;
    const size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (n == 4) return malformed;
    const char* end = text.data() + i;
    auto [ptr, ec] = std::from_chars(text.data() + start, end, field[n++]);
    if (ec == std::errc::result_out_of_range)
      return Error(EINVAL, where + ": number out of range in '" + shown + "'");
    if (ec != std::errc() || ptr != end) return malformed;
  }
  if (n != 4) return malformed;
  const int64_t type = field[0], vertices = field[1], edges = field[2], partitions = field[3];
  if (type != 0 && type != 1) return Error(EINVAL, where + ": edge type must be 0 or 1, got " + std::to_string(type));
  if (vertices < 1 || vertices > INT_MAX) return Error(EINVAL, where + ": bad vertex count " + std::to_string(vertices));
  // The edge files are edges * edge size bytes, with int64 offsets into them.
  const int64_t max_edges = INT64_MAX / static_cast<int64_t>(EdgeSize(static_cast<EdgeType>(type)));
  if (edges < 0 || edges > max_edges)
    return Error(EINVAL, where + ": bad edge count " + std::to_string(edges) + " (0 to " + std::to_string(max_edges) +
                             " for this edge type)");
  if (partitions < 1 || partitions > INT_MAX) {
    return Error(EINVAL, where + ": bad partition count " + std::to_string(partitions));
  }
  GridMeta meta;
  meta.edge_type = static_cast<EdgeType>(type);
  meta.vertices = static_cast<uint64_t>(vertices);
  meta.edges = static_cast<uint64_t>(edges);
  meta.partitions = static_cast<uint64_t>(partitions);
  return meta;
}

bool IsGridFileName(const std::string& name) {
  return name.rfind("block-", 0) == 0 || name == kMetaFile || name == kColumnFile || name == kColumnOffsetFile ||
         name == kRowFile || name == kRowOffsetFile;
}

std::string BlockFileName(uint64_t i, uint64_t j) {
  return "block-" + std::to_string(i) + "-" + std::to_string(j);
}

namespace {

// GridGraph writes meta as one short line; anything much longer is not a meta.
constexpr uint64_t kMaxMetaBytes = 4096;

// Said when a file's size is wrong because it is a graphfs stripe stub (a striped
// file seen outside the mount): its bytes are on the disks, not in the stub.
std::string StubHint(const std::string& path) {
  if (::getxattr(path.c_str(), "user.graphfs.stripe", nullptr, 0) < 0) return "";
  return "; it is a graphfs stripe stub: read the graph through the graphfs mount, or graphfs-unstripe it";
}

Result<std::vector<int64_t>> ReadOffsets(const std::string& path, uint64_t count, uint64_t file_bytes) {
  // The size is checked before reading, so a huge file in its place costs nothing.
  auto fd = OpenRegularFile(path, O_RDONLY);
  if (!fd.ok()) return fd.error();
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return Error::FromErrno("stat " + path);
  if (static_cast<uint64_t>(st.st_size) != count * sizeof(int64_t)) {
    return Error(EINVAL, path + ": has " + std::to_string(st.st_size) + " bytes, expected " +
                             std::to_string(count * sizeof(int64_t)) + " (P*P+1 int64 offsets)" + StubHint(path));
  }
  std::vector<int64_t> offsets(count);
  GRAPHFS_RETURN_IF_ERROR(PreadExact(fd->get(), offsets.data(), count * sizeof(int64_t), 0, path));
  if (offsets.front() != 0 || offsets.back() < 0 || static_cast<uint64_t>(offsets.back()) != file_bytes) {
    return Error(EINVAL, path + ": offsets span " + std::to_string(offsets.front()) + ".." +
                             std::to_string(offsets.back()) + ", expected 0.." + std::to_string(file_bytes) +
                             " (the size of the edge files)");
  }
  for (size_t k = 1; k < count; ++k) {
    if (offsets[k] < offsets[k - 1]) {
      return Error(EINVAL, path + ": offsets decrease at entry " + std::to_string(k) + " (" +
                               std::to_string(offsets[k - 1]) + " then " + std::to_string(offsets[k]) + ")");
    }
  }
  return offsets;
}

// `column` and `row` must be regular files of exactly the size meta gives them.
// Checked at open (a stat), so a truncated or swapped file is named before any
// stream starts instead of failing (or being misread) halfway through.
Status CheckEdgeFile(const std::string& path, const GridMeta& meta, const StubFiles* stubs) {
  // An extent map (a version's `column`, graph_file.h) has the size of its extents.
  auto file_size = GraphFileSize(path, stubs);
  if (!file_size.ok()) return file_size.error();
  const uint64_t size = *file_size;
  const uint64_t edge = EdgeSize(meta.edge_type);
  const uint64_t expected = meta.edges * edge;
  if (size == expected) return Status::Ok();
  std::string why;
  const uint64_t other = EdgeSize(meta.edge_type == EdgeType::kWeighted ? EdgeType::kUnweighted : EdgeType::kWeighted);
  if (meta.edges != 0 && size == meta.edges * other) {
    why = "; that is " + std::to_string(meta.edges) + " edges of " + std::to_string(other) +
          " B: is the edge type in meta wrong?";
  } else if (size % edge != 0) {
    why = "; not even a whole number of " + std::to_string(edge) + "-byte records";
  } else {
    why = size < expected ? " (truncated?)" : " (longer than meta says)";
  }
  return Error(EINVAL, path + ": has " + std::to_string(size) + " bytes, but meta says " + std::to_string(meta.edges) +
                           " edges of " + std::to_string(edge) + " B (edge type " +
                           std::to_string(static_cast<int>(meta.edge_type)) + ") = " + std::to_string(expected) +
                           " bytes" + why + StubHint(path));
}

}  // namespace

Result<GridLayout> GridLayout::Open(const std::string& dir, const StubFiles* stubs) {
  GridLayout layout;
  layout.dir_ = dir;
  layout.stubs_ = stubs;
  auto meta_text = ReadRegularFile(layout.Path(kMetaFile), kMaxMetaBytes);
  if (!meta_text.ok()) return meta_text.error().Wrap("opening graph " + dir);
  auto meta = GridMeta::Parse(*meta_text, layout.Path(kMetaFile));
  if (!meta.ok()) return meta.error();
  layout.meta_ = *meta;
  const uint64_t p = layout.meta_.partitions;
  if (p > 65536) {
    return Error(EINVAL, layout.Path(kMetaFile) + ": too many partitions (" + std::to_string(p) + ", at most 65536)");
  }
  GRAPHFS_RETURN_IF_ERROR(CheckEdgeFile(layout.Path(kColumnFile), layout.meta_, stubs));
  GRAPHFS_RETURN_IF_ERROR(CheckEdgeFile(layout.Path(kRowFile), layout.meta_, stubs));

  auto col = ReadOffsets(layout.Path(kColumnOffsetFile), p * p + 1, layout.FileBytes());
  if (!col.ok()) return col.error();
  auto row = ReadOffsets(layout.Path(kRowOffsetFile), p * p + 1, layout.FileBytes());
  if (!row.ok()) return row.error();
  layout.column_offset_ = std::move(*col);
  layout.row_offset_ = std::move(*row);

  layout.block_bytes_.resize(p * p);
  for (uint64_t i = 0; i < p; ++i) {
    for (uint64_t j = 0; j < p; ++j) {
      std::string path = layout.Path(BlockFileName(i, j));
      auto size = GraphFileSize(path, stubs);  // a version's changed block may be an extent map
      if (!size.ok()) return size.error();
      const uint64_t bytes = *size;
      uint64_t col_bytes = static_cast<uint64_t>(layout.column_offset_[j * p + i + 1] - layout.column_offset_[j * p + i]);
      uint64_t row_bytes = static_cast<uint64_t>(layout.row_offset_[i * p + j + 1] - layout.row_offset_[i * p + j]);
      if (bytes != col_bytes || bytes != row_bytes || bytes % layout.edge_size() != 0) {
        return Error(EINVAL, path + ": size " + std::to_string(bytes) + " disagrees with column_offset (" +
                                 std::to_string(col_bytes) + ") or row_offset (" + std::to_string(row_bytes) + ")");
      }
      layout.block_bytes_[i * p + j] = bytes;
    }
  }
  return layout;
}

uint64_t GridLayout::BlockBegin(EdgeOrder order, uint64_t i, uint64_t j) const {
  const uint64_t p = meta_.partitions;
  return order == EdgeOrder::kColumn ? column_offset_[j * p + i] : row_offset_[i * p + j];
}

uint64_t GridLayout::BlockEnd(EdgeOrder order, uint64_t i, uint64_t j) const {
  const uint64_t p = meta_.partitions;
  return order == EdgeOrder::kColumn ? column_offset_[j * p + i + 1] : row_offset_[i * p + j + 1];
}

}  // namespace graphfs::grid
