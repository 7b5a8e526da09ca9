#include "grid/partition_range.h"

namespace graphfs::grid {

VertexRange PartitionRange::Range(uint64_t partition) const {
  if (partition < big_count_) {
    return {partition * (small_ + 1), (partition + 1) * (small_ + 1)};
  }
  uint64_t begin = split_point_ + (partition - big_count_) * small_;
  return {begin, begin + small_};
}

}  // namespace graphfs::grid
