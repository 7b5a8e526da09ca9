#include "grid/partition_range.h"

#include <gtest/gtest.h>

namespace graphfs::grid {
namespace {

// GridGraph's get_partition_id, transcribed as the oracle.
uint64_t GridGraphPartitionId(uint64_t vertices, uint64_t partitions, uint64_t v) {
  if (vertices % partitions == 0) return v / (vertices / partitions);
  const uint64_t size = vertices / partitions + 1;
  const uint64_t split = vertices % partitions * size;
  return v < split ? v / size : (v - split) / (size - 1) + vertices % partitions;
}

TEST(PartitionRange, FirstRemainderRangesGetOneExtraVertex) {
  PartitionRange r(10, 4);  // 3 3 2 2
  EXPECT_EQ(r.Range(0).begin, 0u);
  EXPECT_EQ(r.Range(0).end, 3u);
  EXPECT_EQ(r.Range(1).end, 6u);
  EXPECT_EQ(r.Range(2).end, 8u);
  EXPECT_EQ(r.Range(3).end, 10u);
}

TEST(PartitionRange, MatchesGridGraphAndTilesAllVertices) {
  for (uint64_t v = 1; v <= 70; ++v) {
    for (uint64_t p = 1; p <= 12; ++p) {
      PartitionRange r(v, p);
      uint64_t next = 0;
      for (uint64_t i = 0; i < p; ++i) {
        VertexRange range = r.Range(i);
        ASSERT_EQ(range.begin, next) << v << "/" << p;
        ASSERT_EQ(range.size(), v / p + (i < v % p ? 1 : 0)) << v << "/" << p << " part " << i;
        next = range.end;
        for (uint64_t x = range.begin; x < range.end; ++x) {
          ASSERT_EQ(r.PartitionOf(x), i);
          if (p <= v) {
            ASSERT_EQ(GridGraphPartitionId(v, p, x), i) << v << "/" << p << " vertex " << x;
          }
        }
      }
      ASSERT_EQ(next, v);
    }
  }
}

}  // namespace
}  // namespace graphfs::grid
