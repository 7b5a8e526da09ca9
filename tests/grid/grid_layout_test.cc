#include "grid/grid_layout.h"

#include <gtest/gtest.h>

#include <string>

namespace graphfs::grid {
namespace {

TEST(GridMeta, FormatsLikeGridGraph) {
  GridMeta meta;
  meta.edge_type = EdgeType::kWeighted;
  meta.vertices = 16777216;
  meta.edges = 268435456;
  meta.partitions = 32;
  EXPECT_EQ(meta.Format(), "1 16777216 268435456 32");
  auto parsed = GridMeta::Parse(meta.Format(), "meta");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->edges, 268435456u);
  EXPECT_FALSE(GridMeta::Parse("2 10 10 1", "meta").ok());
  EXPECT_FALSE(GridMeta::Parse("0 10 10", "meta").ok());
  EXPECT_FALSE(GridMeta::Parse("0 10 10 0", "meta").ok());
}

// Found by tests/fuzz/grid_meta_fuzz.cc: sscanf saturated an edge count that overflows, let
// edges * edge size wrap (GridLayout::Open then accepted 2^61 edges in empty files), and
// stopped reading at a NUL byte.
TEST(GridMeta, RefusesCountsThatOverflowAndTrailingJunk) {
  auto wrap = GridMeta::Parse("0 10 2305843009213693952 1", "meta");  // 2^61 edges of 8 bytes = 2^64
  ASSERT_FALSE(wrap.ok());
  EXPECT_NE(wrap.error().message().find("bad edge count"), std::string::npos) << wrap.error().message();
  EXPECT_FALSE(GridMeta::Parse("1 10 768614336404564651 1", "meta").ok());  // one 12-byte edge too many
  EXPECT_TRUE(GridMeta::Parse("1 10 768614336404564650 1", "meta").ok());
  EXPECT_TRUE(GridMeta::Parse("0 10 1152921504606846975 1", "meta").ok());  // (2^63 - 1) / 8
  auto saturated = GridMeta::Parse("0 10 99999999999999999999 1", "meta");
  ASSERT_FALSE(saturated.ok());
  EXPECT_NE(saturated.error().message().find("out of range"), std::string::npos) << saturated.error().message();
  EXPECT_FALSE(GridMeta::Parse(std::string("0 10 10 1\0junk", 14), "meta").ok());
  EXPECT_FALSE(GridMeta::Parse("0 10 10 1 5", "meta").ok());
  EXPECT_FALSE(GridMeta::Parse("0 10 1O 1", "meta").ok());
  // Blanks around and a trailing newline are fine, as before.
  auto padded = GridMeta::Parse("  0 10 10 1 \n", "meta");
  ASSERT_TRUE(padded.ok());
  EXPECT_EQ(padded->Format(), "0 10 10 1");
}

}  // namespace
}  // namespace graphfs::grid
