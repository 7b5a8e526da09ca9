// Results of an app run on a reordered graph, taken back to the original ids (reorder
// --map-back, --map-vertex). A result file is V values of one type indexed by vertex
// (bfs.level int32, wcc.label int32, sssp.distance float32, pagerank.rank float64, ...);
// with the permutation file perm of `reorder` (perm[old] = new):
//   out[old] = in[perm[old]].
// With `labels` the values are vertex ids in the new numbering and are mapped too:
//   out[old] = old_of_new[in[perm[old]]]; a negative value (no vertex) is kept as it is.
// wcc.label is such a result, but GridGraph's label is "the smallest id that reaches the
// vertex", and which id is smallest depends on the numbering. On a symmetric graph (every
// edge in both directions, like gen-grid's) the labels are connected components and the
// mapped-back labels give the same partition of the vertices as a run on the original
// ids, only named by other members; on a directed graph even the partition can differ.
// A bfs or sssp START must be the new id of the start: MapVertex.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace graphfs::engine {

enum class ResultType { kInt32, kFloat32, kFloat64 };

// "int32", "float32", "float64".
Result<ResultType> ParseResultType(const std::string& name);

struct MapBackOptions {
  std::string permutation;
  std::string input;   // the result in new ids
  std::string output;  // written under a temporary name, renamed at the end
  ResultType type = ResultType::kInt32;
  bool labels = false;  // the values are vertex ids too (int32 only)
};

// Returns the number of vertices mapped.
Result<uint64_t> MapBack(const MapBackOptions& options);

// The new id of old vertex `old_id`.
Result<int32_t> MapVertex(const std::string& permutation, int64_t old_id);

}  // namespace graphfs::engine
