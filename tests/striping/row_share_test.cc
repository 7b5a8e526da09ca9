// RowShare (striping/row_share.h): blocks a degraded read leaves for the other read of its row.
#include "striping/row_share.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

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

// The shares of one pool (row_share_pool.h: every degraded file of a mount) hold at most its
// capacity together: a share that puts beyond it drops the other shares' oldest blocks first (a
// file no longer read gives way), then its own; a smaller capacity drops at once; a share that
// goes gives its bytes back.
TEST(RowSharePool, SharesHoldAtMostThePoolsCapacityTogether) {
  auto pool = std::make_shared<RowSharePool>(4 * kBlock);
  auto idle = std::make_unique<RowShare>(kBlock, pool);
  RowShare busy(kBlock, pool);
  for (uint64_t row = 0; row < 3; ++row) idle->Put(row, 0, 0, Bytes(kBlock, 'i'), kBlock);
  EXPECT_EQ(pool->stats().held_bytes, 3 * kBlock);
  for (uint64_t row = 0; row < 3; ++row) busy.Put(row, 0, 0, Bytes(kBlock, static_cast<char>('0' + row)), kBlock);
  RowSharePool::Stats s = pool->stats();
  EXPECT_EQ(s.held_bytes, 4 * kBlock);
  EXPECT_EQ(s.shares, 2u);
  EXPECT_EQ(busy.stats().held_bytes, 3 * kBlock) << "the busy share kept all it put";
  EXPECT_EQ(idle->stats().held_bytes, kBlock) << "the idle share gave way, oldest first";
  std::string out(kBlock, '\0');
  EXPECT_FALSE(idle->Take(0, 0, 0, kBlock, out.data()));
  EXPECT_TRUE(idle->Take(2, 0, 0, kBlock, out.data()));
  // Beyond the capacity with the other share empty: its own oldest go.
  for (uint64_t row = 3; row < 6; ++row) busy.Put(row, 0, 0, Bytes(kBlock, static_cast<char>('0' + row)), kBlock);
  EXPECT_EQ(pool->stats().held_bytes, 4 * kBlock);
  EXPECT_FALSE(busy.Take(0, 0, 0, kBlock, out.data()));
  ASSERT_TRUE(busy.Take(5, 0, 0, kBlock, out.data()));
  EXPECT_EQ(out, Bytes(kBlock, '5'));
  // A smaller capacity drops at once; a share that goes gives its bytes back.
  pool->SetCapacity(kBlock);
  EXPECT_EQ(pool->stats().held_bytes, kBlock);
  idle->Put(9, 0, 0, Bytes(kBlock, 'i'), kBlock);
  EXPECT_LE(pool->stats().held_bytes, kBlock);
  idle.reset();
  EXPECT_EQ(pool->stats().shares, 1u);
  EXPECT_EQ(pool->stats().held_bytes, busy.stats().held_bytes);
  // At most one put's bytes over the capacity, and only while that put runs.
  EXPECT_LE(pool->stats().peak_held_bytes, 4 * kBlock + kBlock);
}

// A pool of capacity 0 (a budget too small to give degraded reads any) keeps nothing, yet reads
// in flight still hand their blocks to the reads that wait for them: that costs no memory beyond
// the waiters' own.
TEST(RowSharePool, NoCapacityKeepsNothingButStillHandsBlocksInFlight) {
  auto pool = std::make_shared<RowSharePool>(0);
  RowShare share(kBlock, pool);
  share.Put(0, 0, 0, Bytes(2 * kBlock, 'a'), 2 * kBlock);
  EXPECT_EQ(pool->stats().held_bytes, 0u);
  std::string out(kBlock, '\0');
  EXPECT_FALSE(share.Take(0, 0, 0, kBlock, out.data()));
  int first = 0, second = 0;
  std::string got(kBlock, '\0');
  const RowShare::Want a{1, 0, 0, kBlock, kBlock, out.data()};
  const RowShare::Want b{1, 0, 0, kBlock, kBlock, got.data()};
  ASSERT_EQ(share.Claim(&first, {&a, 1}, nullptr).got[0], RowShare::Got::kRead);
  struct Waiter : RowShare::Waiter {
    bool delivered = false;
    void Arrived(size_t, bool d) override { delivered = d; }
  } waiter;
  ASSERT_EQ(share.Claim(&second, {&b, 1}, &waiter).got[0], RowShare::Got::kAwaited);
  const std::string bytes = Bytes(kBlock, 'b');
  share.Deliver(&first, 1, 0, 0, kBlock, bytes.data(), /*keep=*/true);
  EXPECT_TRUE(waiter.delivered);
  EXPECT_EQ(got, bytes);
  EXPECT_EQ(pool->stats().held_bytes, 0u);
  EXPECT_EQ(pool->stats().peak_held_bytes, 2 * kBlock) << "the put, dropped as it came";
}

// Records what a waiter hears (RowShare::Waiter).
struct Heard : RowShare::Waiter {
  std::vector<std::pair<size_t, bool>> arrived;
  void Arrived(size_t want, bool delivered) override { arrived.emplace_back(want, delivered); }
};

TEST(RowShare, BlocksInFlightAreAwaitedAndCopiedWhenTheirReadDelivers) {
  RowShare share(kBlock, 1 << 20);
  int a = 0, b = 0;  // two reads, told apart by address
  Heard heard_a, heard_b;
  std::string a_out(2 * kBlock, '\0'), b_out(2 * kBlock, '\0');
  // A claims row 2's slot 0 first: nobody has it, so A reads it and it is in flight for A.
  const RowShare::Want a_want{2, 0, 0, 2 * kBlock, 4 * kBlock, a_out.data()};
  RowShare::Claimed ca = share.Claim(&a, {&a_want, 1}, &heard_a);
  ASSERT_EQ(ca.got.size(), 1u);
  EXPECT_EQ(ca.got[0], RowShare::Got::kRead);
  EXPECT_EQ(ca.awaited, 0u);
  // B wants the same blocks while A reads them: it awaits them instead of reading them.
  const RowShare::Want b_want{2, 0, 0, 2 * kBlock, 4 * kBlock, b_out.data()};
  RowShare::Claimed cb = share.Claim(&b, {&b_want, 1}, &heard_b);
  EXPECT_EQ(cb.got[0], RowShare::Got::kAwaited);
  EXPECT_EQ(cb.awaited, 2u);
  // A read never awaits itself.
  RowShare::Claimed again = share.Claim(&a, {&a_want, 1}, &heard_a);
  EXPECT_EQ(again.got[0], RowShare::Got::kRead);
  EXPECT_TRUE(heard_b.arrived.empty());
  const std::string bytes = Bytes(kBlock, 'p') + Bytes(kBlock, 'q');
  share.Deliver(&a, 2, 0, 0, 2 * kBlock, bytes.data(), /*keep=*/true);
  EXPECT_EQ(b_out, bytes);
  ASSERT_EQ(heard_b.arrived.size(), 2u);
  EXPECT_EQ(heard_b.arrived[0], std::make_pair(size_t{0}, true));
  EXPECT_TRUE(heard_a.arrived.empty());
  // Given to B, so not kept for a third read.
  std::string out(2 * kBlock, '\0');
  EXPECT_FALSE(share.Take(2, 0, 0, 2 * kBlock, out.data()));
  EXPECT_EQ(share.stats().awaited_bytes, 2 * kBlock);
  EXPECT_EQ(share.stats().held_bytes, 0u);
}

TEST(RowShare, DeliveredWithNoOneWaitingIsKeptAndHeldAndInFlightMix) {
  RowShare share(kBlock, 1 << 20);
  int a = 0, b = 0, c = 0;
  Heard heard;
  std::string out(3 * kBlock, '\0');
  // A reads blocks 0-1 of row 0's slot 1 and delivers them with no one waiting: kept.
  const RowShare::Want a_want{0, 1, 0, 2 * kBlock, 3 * kBlock, out.data()};
  ASSERT_EQ(share.Claim(&a, {&a_want, 1}, &heard).got[0], RowShare::Got::kRead);
  const std::string first = Bytes(2 * kBlock, 'h');
  share.Deliver(&a, 0, 1, 0, 2 * kBlock, first.data(), true);
  EXPECT_EQ(share.stats().held_bytes, 2 * kBlock);
  // B reads block 2 (the unit's short end: half a block): in flight.
  const RowShare::Want b_want{0, 1, 2 * kBlock, kBlock / 2, 2 * kBlock + kBlock / 2, out.data()};
  ASSERT_EQ(share.Claim(&b, {&b_want, 1}, &heard).got[0], RowShare::Got::kRead);
  // C wants the whole unit: two blocks taken now, one awaited.
  std::string c_out(3 * kBlock, '\0');
  const RowShare::Want c_want{0, 1, 0, 2 * kBlock + kBlock / 2, 2 * kBlock + kBlock / 2, c_out.data()};
  RowShare::Claimed cc = share.Claim(&c, {&c_want, 1}, &heard);
  EXPECT_EQ(cc.got[0], RowShare::Got::kAwaited);
  EXPECT_EQ(cc.awaited, 1u);
  EXPECT_EQ(c_out.substr(0, 2 * kBlock), first);
  // B's read failed: C hears it was not delivered (and reads that block itself).
  share.Deliver(&b, 0, 1, 2 * kBlock, kBlock / 2, nullptr, true);
  ASSERT_EQ(heard.arrived.size(), 1u);
  EXPECT_EQ(heard.arrived[0], std::make_pair(size_t{0}, false));
  EXPECT_EQ(share.stats().held_bytes, 0u);
  // All held: taken whole.
  const std::string row5 = Bytes(kBlock, 'z');
  share.Put(5, 0, 0, row5, kBlock);
  const RowShare::Want d_want{5, 0, 0, kBlock, kBlock, out.data()};
  EXPECT_EQ(share.Claim(&a, {&d_want, 1}, &heard).got[0], RowShare::Got::kTaken);
  EXPECT_EQ(out.substr(0, kBlock), row5);
}

TEST(RowShare, AWantSharedInPartReadsOnlyTheBlocksNobodyHas) {
  RowShare share(kBlock, 1 << 20);
  int a = 0, b = 0;
  Heard heard;
  std::string a_out(2 * kBlock, '\0'), b_out(4 * kBlock, '\0');
  // A reads blocks 0-1; B wants 0-3 (its extent is cut elsewhere): it awaits 0-1, reads 2-3.
  const RowShare::Want a_want{7, 2, 0, 2 * kBlock, 4 * kBlock, a_out.data()};
  ASSERT_EQ(share.Claim(&a, {&a_want, 1}, &heard).got[0], RowShare::Got::kRead);
  const RowShare::Want b_want{7, 2, 0, 4 * kBlock, 4 * kBlock, b_out.data()};
  RowShare::Claimed cb = share.Claim(&b, {&b_want, 1}, &heard);
  ASSERT_EQ(cb.got[0], RowShare::Got::kRead);
  ASSERT_EQ(cb.read[0].size(), 1u);
  EXPECT_EQ(cb.read[0][0].begin, 2 * kBlock);
  EXPECT_EQ(cb.read[0][0].length, 2 * kBlock);
  EXPECT_EQ(cb.awaited, 2u);
  const std::string bytes = Bytes(2 * kBlock, 'r');
  share.Deliver(&a, 7, 2, 0, 2 * kBlock, bytes.data(), true);
  EXPECT_EQ(b_out.substr(0, 2 * kBlock), bytes);
  EXPECT_EQ(heard.arrived.size(), 2u);
  // A third read of blocks 1-3 awaits B's 2-3, and block 1 (given to B, not kept) it reads.
  int c = 0;
  std::string c_out(3 * kBlock, '\0');
  const RowShare::Want c_want{7, 2, kBlock, 3 * kBlock, 4 * kBlock, c_out.data()};
  RowShare::Claimed cc = share.Claim(&c, {&c_want, 1}, &heard);
  ASSERT_EQ(cc.got[0], RowShare::Got::kRead);
  ASSERT_EQ(cc.read[0].size(), 1u);
  EXPECT_EQ(cc.read[0][0].begin, kBlock);
  EXPECT_EQ(cc.read[0][0].length, kBlock);
  EXPECT_EQ(cc.awaited, 2u);
}

// Blocks others have between blocks nobody has are taken or awaited, not read again: the claimer
// reads each run of missing blocks on its own.
TEST(RowShare, BlocksOthersHaveBetweenMissingOnesAreNotReadAgain) {
  RowShare share(kBlock, 1 << 20);
  int a = 0, b = 0, c = 0;
  Heard heard;
  std::string out(6 * kBlock, '\0');
  // Block 1 held (put by an earlier read), blocks 3-4 in flight for A; C wants 0-5.
  share.Put(3, 1, kBlock, Bytes(kBlock, 'h'), 6 * kBlock);
  const RowShare::Want a_want{3, 1, 3 * kBlock, 2 * kBlock, 6 * kBlock, out.data()};
  ASSERT_EQ(share.Claim(&a, {&a_want, 1}, &heard).got[0], RowShare::Got::kRead);
  const RowShare::Want c_want{3, 1, 0, 6 * kBlock, 6 * kBlock, out.data()};
  RowShare::Claimed cc = share.Claim(&c, {&c_want, 1}, &heard);
  ASSERT_EQ(cc.got[0], RowShare::Got::kRead);
  ASSERT_EQ(cc.read[0].size(), 3u);
  EXPECT_EQ(cc.read[0][0].begin, 0u);
  EXPECT_EQ(cc.read[0][0].length, kBlock);
  EXPECT_EQ(cc.read[0][1].begin, 2 * kBlock);
  EXPECT_EQ(cc.read[0][1].length, kBlock);
  EXPECT_EQ(cc.read[0][2].begin, 5 * kBlock);
  EXPECT_EQ(cc.read[0][2].length, kBlock);
  EXPECT_EQ(cc.awaited, 2u);
  EXPECT_EQ(out.substr(kBlock, kBlock), Bytes(kBlock, 'h'));
  EXPECT_EQ(share.stats().held_bytes, 0u);
  // The blocks C reads are in flight for it: B awaits them.
  const RowShare::Want b_want{3, 1, 0, kBlock, 6 * kBlock, out.data()};
  EXPECT_EQ(share.Claim(&b, {&b_want, 1}, &heard).got[0], RowShare::Got::kAwaited);
}

TEST(RowShare, ABlockReadOnlyInPartIsNotPutInFlight) {
  RowShare share(kBlock, 1 << 20);
  int a = 0, b = 0;
  Heard heard;
  std::string out(2 * kBlock, '\0');
  // A reads 1.5 blocks inside a longer unit: only block 0 is whole, so only it is in flight.
  const RowShare::Want a_want{0, 0, 0, kBlock + kBlock / 2, 4 * kBlock, out.data()};
  ASSERT_EQ(share.Claim(&a, {&a_want, 1}, &heard).got[0], RowShare::Got::kRead);
  const RowShare::Want b_whole{0, 0, 0, 2 * kBlock, 4 * kBlock, out.data()};
  EXPECT_EQ(share.Claim(&b, {&b_whole, 1}, &heard).got[0], RowShare::Got::kRead);
  const RowShare::Want b_first{0, 0, 0, kBlock, 4 * kBlock, out.data()};
  EXPECT_EQ(share.Claim(&b, {&b_first, 1}, &heard).got[0], RowShare::Got::kAwaited);
}

}  // namespace
}  // namespace graphfs
