#include "volume/internal/run_grains.h"

#include <gtest/gtest.h>

#include <vector>

namespace graphfs::volume {
namespace {

using chunkindex::LpExtent;

LpExtent RunAt(uint64_t offset, uint64_t length) { return LpExtent{0, offset, length, 0, false}; }

// Units of 1 MiB, blocks of 64 KiB: runs that share a unit or a block count it once; a run
// across a boundary counts both sides; whole chunks count nothing (they are not runs).
TEST(RunGrains, CountsEachUnitAndBlockTheRunsTouchOnce) {
  const cache::BlockLayout layout(1 << 20);
  const uint64_t size = 4 << 20;
  const uint64_t k64 = 64 << 10;
  std::vector<LpExtent> extents = {
      RunAt(100, 12),                 // unit 0, block 0
      RunAt(200, 12),                 // the same unit and block
      RunAt(k64 - 6, 12),             // blocks 0 and 1, unit 0
      LpExtent{1, 1 << 20, 1 << 20, 0, true},  // unit 1 whole: not a run
      RunAt((3 << 20) - 6, 12),       // units 2 and 3, blocks 47 and 48
  };
  const RunGrains g = CountRunGrains(layout, size, extents);
  EXPECT_EQ(g.units, 3u);  // 0, 2, 3
  EXPECT_EQ(g.unit_bytes, 3u << 20);
  EXPECT_EQ(g.blocks, 4u);  // 0, 1, 47, 48
}

// Chunks of uneven sizes (an indexed file's units), a run past the file's end reads nothing,
// and a run longer than a block counts every block it covers.
TEST(RunGrains, FollowsTheLayoutsChunksAndCountsLongRunsBlocks) {
  auto layout = cache::ChunkLayout::Create({{0, 300000}, {300000, 500000}, {800000, 200000}}, 1000000);
  ASSERT_TRUE(layout.ok()) << layout.error().message();
  std::vector<LpExtent> extents = {RunAt(299990, 20), RunAt(310000, 200000), RunAt(1000000, 12)};
  const RunGrains g = CountRunGrains(**layout, 1000000, extents);
  EXPECT_EQ(g.units, 2u);
  EXPECT_EQ(g.unit_bytes, 800000u);
  // 299990..300010 lies in block 4; 310000..510000 in blocks 4..7; past the end: block 15.
  EXPECT_EQ(g.blocks, 5u);
  EXPECT_EQ(CountRunGrains(**layout, 1000000, {}).units, 0u);
}

}  // namespace
}  // namespace graphfs::volume
