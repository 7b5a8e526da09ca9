#include "engines/core/grid_layout.h"

#include <sys/stat.h>

#include <cctype>
#include <charconv>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>

#include "engines/core/posix_io.h"

namespace graphfs::engine {

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

std::string BlockFileName(uint64_t i, uint64_t j) {
  return "block-" + std::to_string(i) + "-" + std::to_string(j);
}

namespace {

Result<std::vector<int64_t>> ReadOffsets(const std::string& path, uint64_t count, uint64_t file_bytes) {
  auto data = ReadWholeFile(path);
  if (!data.ok()) return data.error();
  if (data->size() != count * sizeof(int64_t)) {
    return Error(EINVAL, path + ": has " + std::to_string(data->size()) + " bytes, expected " +
                             std::to_string(count * sizeof(int64_t)) + " (P*P+1 int64 offsets)");
  }
  std::vector<int64_t> offsets(count);
  std::memcpy(offsets.data(), data->data(), data->size());
  if (offsets.front() != 0 || static_cast<uint64_t>(offsets.back()) != file_bytes) {
    return Error(EINVAL, path + ": offsets do not span 0.." + std::to_string(file_bytes));
  }
  for (size_t k = 1; k < count; ++k) {
    if (offsets[k] < offsets[k - 1]) return Error(EINVAL, path + ": offsets decrease at entry " + std::to_string(k));
  }
  return offsets;
}

}  // namespace

Result<GridLayout> GridLayout::Open(const std::string& dir) {
  GridLayout layout;
  layout.dir_ = dir;
  auto meta_text = ReadWholeFile(layout.Path(kMetaFile));
  if (!meta_text.ok()) return meta_text.error().Wrap("opening graph " + dir);
  auto meta = GridMeta::Parse(*meta_text, layout.Path(kMetaFile));
  if (!meta.ok()) return meta.error();
  layout.meta_ = *meta;
  const uint64_t p = layout.meta_.partitions;
  if (p > 65536) return Error(EINVAL, layout.Path(kMetaFile) + ": too many partitions");

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
      struct stat st;
      if (::stat(path.c_str(), &st) != 0) return Error::FromErrno("stat " + path);
      uint64_t bytes = static_cast<uint64_t>(st.st_size);
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

}  // namespace graphfs::engine
