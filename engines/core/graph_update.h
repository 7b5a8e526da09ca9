// graphfs-update's core on a plain graph directory: a batch of edge additions and deletions
// (grid/edge_batch.h: the blocks come out as `preprocess` of the updated edge list would write
// them) applied to GRAPH, written as a complete graph directory OUTPUT — meta, offsets, every
// block, `column` and `row`. Touched blocks are rebuilt; the others are copied. `meta` goes last
// (a directory with `meta` is complete); a refused batch writes nothing.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace graphfs::engine {

struct UpdateOptions {
  std::string graph_dir;
  std::string add_file, delete_file;  // binary edge lists in the graph's format ("" none)
  std::string output_dir;             // must not exist yet
  // Block order: kAuto takes the graph as preprocessed with --sort-sources when every block
  // the batch touches is in source order.
  enum class Order { kAuto, kSorted, kInput } order = Order::kAuto;
  bool allow_missing = false;  // deletions matching no edge are counted, not refused
};

struct UpdateStats {
  uint64_t edges = 0;  // in the new graph
  uint64_t added = 0, deleted = 0, missing = 0;
  uint64_t blocks = 0, blocks_touched = 0;
  uint64_t touched_bytes = 0;  // the touched blocks' new bytes
  uint64_t bytes_written = 0;  // everything written into OUTPUT
  bool sorted = false;
  double seconds = 0;
};

Result<UpdateStats> UpdateGraph(const UpdateOptions& options);

}  // namespace graphfs::engine
