// RowShare (striping/row_share.h): blocks a degraded read leaves for the other read of its row.
#include "striping/row_share.h"

#include <gtest/gtest.h>

#include <string>

namespace graphfs {
namespace {

constexpr uint64_t kBlock = 16;

std::string Bytes(uint64_t n, char c) { return std::string(n, c); }

TEST(RowShare, TakeGetsWhatWasPutOnceAndOnlyWhenEveryBlockIsThere) {
  RowShare share(kBlock, 1 << 20);
  const std::string a = Bytes(2 * kBlock, 'a');
  share.Put(3, 1, 0, a, 4 * kBlock);
  std::string out(4 * kBlock, '\0');
  // Blocks 0..3 asked, 0..1 held: nothing taken.
  EXPECT_FALSE(share.Take(3, 1, 0, 4 * kBlock, out.data()));
  EXPECT_FALSE(share.Take(3, 2, 0, kBlock, out.data()));   // another slot
  EXPECT_FALSE(share.Take(4, 1, 0, kBlock, out.data()));   // another row
  EXPECT_FALSE(share.Take(3, 1, 1, kBlock, out.data()));   // not block-aligned
  ASSERT_TRUE(share.Take(3, 1, kBlock, kBlock, out.data()));
  EXPECT_EQ(out.substr(0, kBlock), Bytes(kBlock, 'a'));
  EXPECT_FALSE(share.Take(3, 1, kBlock, kBlock, out.data()));  // taken once
  ASSERT_TRUE(share.Take(3, 1, 0, kBlock, out.data()));
  const RowShare::Stats s = share.stats();
  EXPECT_EQ(s.put_bytes, 2 * kBlock);
  EXPECT_EQ(s.taken_bytes, 2 * kBlock);
  EXPECT_EQ(s.held_bytes, 0u);
}

TEST(RowShare, AShortBlockIsKeptOnlyAtTheUnitsEnd) {
  RowShare share(kBlock, 1 << 20);
  // 1.5 blocks ending inside the unit: only the whole block is kept.
  share.Put(0, 0, 0, Bytes(kBlock + kBlock / 2, 'x'), 4 * kBlock);
  std::string out(2 * kBlock, '\0');
  EXPECT_FALSE(share.Take(0, 0, 0, kBlock + kBlock / 2, out.data()));
  EXPECT_TRUE(share.Take(0, 0, 0, kBlock, out.data()));
  // The unit ends at 1.5 blocks: the short last block is kept and served.
  share.Put(1, 0, 0, Bytes(kBlock + kBlock / 2, 'y'), kBlock + kBlock / 2);
  ASSERT_TRUE(share.Take(1, 0, 0, kBlock + kBlock / 2, out.data()));
  EXPECT_EQ(out.substr(0, kBlock + kBlock / 2), Bytes(kBlock + kBlock / 2, 'y'));
}

TEST(RowShare, OldestBlocksAreDroppedBeyondTheBudgetAndClearDropsAll) {
  RowShare share(kBlock, 4 * kBlock);
  for (uint64_t row = 0; row < 6; ++row) share.Put(row, 0, 0, Bytes(kBlock, static_cast<char>('0' + row)), kBlock);
  std::string out(kBlock, '\0');
  EXPECT_FALSE(share.Take(0, 0, 0, kBlock, out.data()));
  EXPECT_FALSE(share.Take(1, 0, 0, kBlock, out.data()));
  ASSERT_TRUE(share.Take(5, 0, 0, kBlock, out.data()));
  EXPECT_EQ(out, Bytes(kBlock, '5'));
  EXPECT_EQ(share.stats().dropped_bytes, 2 * kBlock);
  EXPECT_EQ(share.stats().held_bytes, 3 * kBlock);
  share.Clear();
  EXPECT_FALSE(share.Take(4, 0, 0, kBlock, out.data()));
  EXPECT_EQ(share.stats().held_bytes, 0u);
}

}  // namespace
}  // namespace graphfs
