// How GridGraph splits V vertices into P contiguous ranges: the first V % P
// ranges hold V / P + 1 vertices, the rest V / P (GridGraph's
// get_partition_range / get_partition_id in core/partition.hpp).
#pragma once

#include <cstdint>

namespace graphfs::grid {

struct VertexRange {
  uint64_t begin;  // first vertex
  uint64_t end;    // one past the last vertex
  uint64_t size() const { return end - begin; }
  bool Contains(uint64_t v) const { return v >= begin && v < end; }
};

class PartitionRange {
 public:
  PartitionRange(uint64_t vertices, uint64_t partitions)
      : vertices_(vertices),
        partitions_(partitions),
        small_(vertices / partitions),
        big_count_(vertices % partitions),
        split_point_(big_count_ * (small_ + 1)) {}

  uint64_t vertices() const { return vertices_; }
  uint64_t partitions() const { return partitions_; }

  VertexRange Range(uint64_t partition) const;

  // Partition holding vertex `v` (< vertices()).
  uint64_t PartitionOf(uint64_t v) const {
    if (v < split_point_) return v / (small_ + 1);
    return big_count_ + (v - split_point_) / small_;
  }

 private:
  uint64_t vertices_;
  uint64_t partitions_;
  uint64_t small_;        // size of the short ranges
  uint64_t big_count_;    // how many ranges have one extra vertex
  uint64_t split_point_;  // first vertex of the first short range
};

}  // namespace graphfs::grid
