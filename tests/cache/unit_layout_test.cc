#include "cache/unit_layout.h"

#include <gtest/gtest.h>

namespace graphfs::cache {
namespace {

TEST(BlockLayout, UnitsAtBoundariesAndPastTheEnd) {
  BlockLayout b(100);
  EXPECT_EQ(b.Find(0, 250).index, 0u);
  EXPECT_EQ(b.Find(99, 250).index, 0u);
  EXPECT_EQ(b.Find(100, 250).index, 1u);
  UnitExtent last = b.Find(249, 250);
  EXPECT_EQ(last.index, 2u);
  EXPECT_EQ(last.offset, 200u);
  EXPECT_EQ(last.length, 50u);
  EXPECT_EQ(b.Find(250, 250).length, 0u);
  EXPECT_EQ(b.At(7, 250).length, 0u);
  EXPECT_EQ(b.At(1, 250).weight, 1.0);
}

TEST(ChunkLayout, FindsTheChunkHoldingAnOffset) {
  auto l = ChunkLayout::Create({{0, 12, 2.0}, {12, 24, 3.5}, {36, 12, 1.0}}, 48);
  ASSERT_TRUE(l.ok()) << l.error().message();
  EXPECT_EQ((*l)->Find(0, 48).index, 0u);
  EXPECT_EQ((*l)->Find(11, 48).index, 0u);
  UnitExtent mid = (*l)->Find(12, 48);
  EXPECT_EQ(mid.index, 1u);
  EXPECT_EQ(mid.offset, 12u);
  EXPECT_EQ(mid.length, 24u);
  EXPECT_EQ(mid.weight, 3.5);
  EXPECT_EQ((*l)->Find(47, 48).index, 2u);
  EXPECT_EQ((*l)->Find(48, 48).length, 0u);
  EXPECT_EQ((*l)->At(3, 48).length, 0u);
  // A file of another size than the one indexed has no chunks at all.
  EXPECT_EQ((*l)->Find(0, 60).length, 0u);
}

TEST(ChunkLayout, RefusesGapsOverlapsAndShortCover) {
  EXPECT_FALSE(ChunkLayout::Create({{0, 12, 1}, {24, 12, 1}}, 36).ok());   // gap
  EXPECT_FALSE(ChunkLayout::Create({{0, 12, 1}, {6, 12, 1}}, 18).ok());    // overlap
  EXPECT_FALSE(ChunkLayout::Create({{0, 12, 1}}, 24).ok());                // does not reach the end
  EXPECT_FALSE(ChunkLayout::Create({{0, 0, 1}}, 0).ok());                  // empty chunk
  EXPECT_TRUE(ChunkLayout::Create({}, 0).ok());
}

}  // namespace
}  // namespace graphfs::cache
