// A preprocessed graph directory in GridGraph's grid format:
//   meta           "%d %d %ld %d": edge type, vertices, edges, partitions P
//   block-i-j      edges with source in range i and target in range j
//   column         blocks column-major (for j: for i: block-i-j)
//   column_offset  P*P+1 int64; entry j*P+i is where block (i,j) starts
//   row            blocks row-major; row_offset entry i*P+j
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "grid/edge.h"
#include "grid/partition_range.h"

namespace graphfs::grid {

class StubFiles;  // graph_file.h

struct GridMeta {
  EdgeType edge_type = EdgeType::kUnweighted;
  uint64_t vertices = 0;
  uint64_t edges = 0;
  uint64_t partitions = 0;

  // The exact text GridGraph writes (no trailing newline).
  std::string Format() const;
  // Parses and validates `meta` contents; `where` names the file in errors.
  static Result<GridMeta> Parse(const std::string& text, const std::string& where);
};

std::string BlockFileName(uint64_t i, uint64_t j);  // "block-i-j"
// Whether `name` is one of a graph directory's grid files (meta, block-i-j, column, row, offsets).
bool IsGridFileName(const std::string& name);
inline constexpr const char* kMetaFile = "meta";
inline constexpr const char* kColumnFile = "column";
inline constexpr const char* kColumnOffsetFile = "column_offset";
inline constexpr const char* kRowFile = "row";
inline constexpr const char* kRowOffsetFile = "row_offset";

// Which of the two concatenations an engine streams.
enum class EdgeOrder {
  kColumn,  // target-oriented: all sources of target range j together
  kRow,     // source-oriented: all targets of source range i together
};

class GridLayout {
 public:
  // Reads meta and both offset tables and stat()s column, row and every block
  // (as GridGraph does), checking that they agree with each other: every file
  // regular (never opened blocking), column and row exactly edges x record size,
  // offsets spanning them without decreasing, blocks the size the offsets say.
  // Errors name the file and what is wrong. `stubs` reads the graph's striped files (their
  // stubs; graph_file.h) — sizes here, bytes for whoever opens the layout's files with
  // `stubs()` (it must outlive the layout); null: a directory of ordinary files and extent maps
  // over them.
  static Result<GridLayout> Open(const std::string& dir, const StubFiles* stubs = nullptr);
  const StubFiles* stubs() const { return stubs_; }

  const std::string& dir() const { return dir_; }
  const GridMeta& meta() const { return meta_; }
  EdgeType edge_type() const { return meta_.edge_type; }
  uint64_t vertices() const { return meta_.vertices; }
  uint64_t edges() const { return meta_.edges; }
  uint64_t partitions() const { return meta_.partitions; }
  size_t edge_size() const { return EdgeSize(meta_.edge_type); }
  PartitionRange ranges() const { return PartitionRange(meta_.vertices, meta_.partitions); }

  // Byte range of block (i, j) inside `column` or `row`.
  uint64_t BlockBegin(EdgeOrder order, uint64_t i, uint64_t j) const;
  uint64_t BlockEnd(EdgeOrder order, uint64_t i, uint64_t j) const;
  uint64_t BlockBytes(uint64_t i, uint64_t j) const { return block_bytes_[i * meta_.partitions + j]; }
  uint64_t FileBytes() const { return meta_.edges * edge_size(); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::string OrderFile(EdgeOrder order) const {
    return Path(order == EdgeOrder::kColumn ? kColumnFile : kRowFile);
  }

 private:
  std::string dir_;
  const StubFiles* stubs_ = nullptr;
  GridMeta meta_;
  std::vector<int64_t> column_offset_;
  std::vector<int64_t> row_offset_;
  std::vector<uint64_t> block_bytes_;  // i*P+j
};

}  // namespace graphfs::grid
