// A batch of edge additions and deletions for a grid graph, applied block by block so that each
// block comes out exactly as `preprocess` would have written it for the updated edge list:
//
//   updated list = the graph's edges (in any order that keeps each block's own order, e.g. `row`)
//                  minus the deleted ones, then the added ones in batch order.
//
// Per block that is the old records minus the deletions, then the additions; for a graph
// preprocessed with --sort-sources, that sequence stably sorted by source — the old records of a
// source before the added ones, additions in batch order — which is a merge of the sorted old
// block with the stably sorted additions.
//
// Deletions (the multigraph rule): a deletion record removes one record of the old block equal
// to it (source, target and, weighted, the weight's bits), the first one in block order; deleting
// an edge twice removes two copies. Deletions apply to the graph before the batch: an edge added
// by a batch cannot be deleted by the same batch. A deletion matching no record is an error
// unless the caller allows it (then it is counted). Ids must be < V: growing V would move the
// partition ranges and so every block (preprocess the whole list again for that).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "grid/edge.h"
#include "grid/grid_layout.h"
#include "grid/partition_range.h"

namespace graphfs::grid {

class EdgeBatch {
 public:
  // Reads binary edge lists in the graph's record format (either path may be empty: none).
  // Refuses a size that is not whole records and an id >= V, naming the file and the record.
  static Result<EdgeBatch> Load(const GridMeta& meta, const std::string& add_path, const std::string& delete_path);
  // The same from bytes (`what` names them in errors).
  static Result<EdgeBatch> FromBytes(const GridMeta& meta, std::string_view add, std::string_view remove,
                                     const std::string& what = "batch");

  uint64_t additions() const { return additions_; }
  uint64_t deletions() const { return deletions_; }
  // Blocks (i * P + j) the batch adds to or deletes from, ascending.
  std::vector<uint64_t> TouchedBlocks() const;

  struct BlockResult {
    std::string bytes;     // the block's new records
    uint64_t added = 0;
    uint64_t deleted = 0;  // records removed
    uint64_t missing = 0;  // deletions that matched no record
  };
  // Block `block`'s new bytes from its old ones. `sorted`: the graph's blocks are sorted by source.
  BlockResult Apply(uint64_t block, std::string_view old, bool sorted) const;
  // The smallest and largest source among the block's additions and deletions (false: none). In
  // a sorted block only the records with a source in that span change: Apply on just that run of
  // the old block gives the new run (graphfs-update writes only it).
  bool SourceSpan(uint64_t block, uint32_t* low, uint32_t* high) const;

 private:
  EdgeBatch(EdgeType type, uint64_t partitions) : type_(type), partitions_(partitions) {}
  Status Add(std::string_view bytes, bool deletion, const std::string& what, const PartitionRange& ranges,
             uint64_t vertices);

  EdgeType type_;
  uint64_t partitions_;
  uint64_t additions_ = 0, deletions_ = 0;
  std::unordered_map<uint64_t, std::string> add_, remove_;  // per block: records in batch order
};

// Whether a block's records are in source order (ties in any order).
bool SortedBySource(std::string_view block, EdgeType type);

}  // namespace graphfs::grid
