// Edge records of GridGraph's on-disk format: little-endian int32 source,
// int32 target and, for weighted graphs, a float32 weight. Records are packed
// back to back with no header, in every edge file (input lists, blocks,
// `column`, `row`).
#pragma once

#include <cstddef>
#include <cstdint>

namespace graphfs::grid {

// Vertex ids are int32 on disk; valid ids are non-negative, so every id
// fits a uint32 and a negative one becomes a huge uint32 that fails `< V`.
using VertexId = uint32_t;

enum class EdgeType : int { kUnweighted = 0, kWeighted = 1 };

struct UnweightedEdge {
  int32_t source;
  int32_t target;
};

struct WeightedEdge {
  int32_t source;
  int32_t target;
  float weight;
};

static_assert(sizeof(UnweightedEdge) == 8);
static_assert(sizeof(WeightedEdge) == 12);

inline constexpr size_t EdgeSize(EdgeType type) {
  return type == EdgeType::kWeighted ? sizeof(WeightedEdge) : sizeof(UnweightedEdge);
}

// GridGraph's I/O granularity: offsets are rounded down and lengths up to
// this unit. 12288 = 3 pages is the smallest page multiple that is also a
// multiple of the 12-byte weighted record, so reads never split a record.
inline constexpr uint64_t IoPage(EdgeType type) {
  return type == EdgeType::kWeighted ? 12288 : 4096;
}

// Largest single read (GridGraph's IOSIZE): a multiple of both 4096 and 12288.
inline constexpr uint64_t kMaxIoBytes = 24ull << 20;

}  // namespace graphfs::grid
