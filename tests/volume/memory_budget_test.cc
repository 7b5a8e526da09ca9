#include "volume/internal/memory_budget.h"

#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "cache/chunk_cache.h"

namespace graphfs::volume {
namespace {

constexpr uint64_t kMiB = 1 << 20;

cache::CacheOptions SmallCache(uint64_t capacity) {
  cache::CacheOptions o;
  o.capacity = capacity;
  o.prefetch_threads = 1;
  o.reader_window_ns = 600'000'000'000;
  return o;
}

TEST(MemoryBudget, WithoutATotalReservationsCostNothing) {
  MemoryBudget budget(0, 8 * kMiB);
  cache::ChunkCache cache(SmallCache(100 * kMiB));
  budget.Attach(&cache);
  EXPECT_FALSE(budget.enabled());
  MemoryBudget::Reservation r = budget.Reserve(50 * kMiB);
  EXPECT_EQ(r.bytes(), 0u);
  EXPECT_EQ(cache.capacity(), 100 * kMiB) << "cache_size alone sets the cache";
  EXPECT_EQ(budget.state().reserved, 0u);
}

TEST(MemoryBudget, TheCacheGetsWhatStagingAndTheReservationsLeaveAndItsFloor) {
  MemoryBudget budget(800 * kMiB, 100 * kMiB);
  EXPECT_EQ(budget.CacheCapacity(0), 700 * kMiB);
  cache::ChunkCache cache(SmallCache(budget.CacheCapacity(0)));
  budget.Attach(&cache);
  {
    MemoryBudget::Reservation a = budget.Reserve(300 * kMiB);
    EXPECT_EQ(cache.capacity(), 400 * kMiB);
    MemoryBudget::Reservation b = budget.Reserve(350 * kMiB);
    EXPECT_EQ(cache.capacity(), 100 * kMiB) << "the floor: an eighth of the total, though 50 are left";
    MemoryBudget::State s = budget.state();
    EXPECT_EQ(s.reserved, 650 * kMiB);
    EXPECT_EQ(s.reservations, 2u);
    EXPECT_EQ(s.cache_capacity, 100 * kMiB);
    MemoryBudget::Reservation moved = std::move(b);  // one reservation, not two
    EXPECT_EQ(budget.state().reservations, 2u);
    b = MemoryBudget::Reservation();
    EXPECT_EQ(budget.state().reserved, 650 * kMiB);
    a.Release();
    EXPECT_EQ(cache.capacity(), 350 * kMiB);
    a.Release();  // twice is once
    EXPECT_EQ(budget.state().reservations, 1u);
  }
  EXPECT_EQ(budget.state().reserved, 0u);
  EXPECT_EQ(cache.capacity(), 700 * kMiB);
  budget.Attach(nullptr);
}

// Resident memory outside everything the budget counts (allocator, threads, libraries) is the
// budget's too beyond an allowance: the cache makes room for it, and gets it back when it goes.
TEST(MemoryBudget, UnaccountedMemoryBeyondTheAllowanceComesOutOfTheCache) {
  MemoryBudget budget(800 * kMiB, 100 * kMiB);
  cache::ChunkCache cache(SmallCache(budget.CacheCapacity(0)));
  budget.Attach(&cache);
  budget.SetUnaccounted(MemoryBudget::kUnaccountedAllowance);
  EXPECT_EQ(cache.capacity(), 700 * kMiB) << "within the allowance";
  budget.SetUnaccounted(MemoryBudget::kUnaccountedAllowance + 50 * kMiB);
  EXPECT_EQ(cache.capacity(), 650 * kMiB);
  EXPECT_EQ(budget.state().unaccounted, 50 * kMiB);
  EXPECT_EQ(budget.state().reserved, 0u) << "not a reservation";
  budget.SetUnaccounted(10 * kMiB);
  EXPECT_EQ(cache.capacity(), 700 * kMiB);
  EXPECT_EQ(budget.state().unaccounted, 0u);
  budget.Attach(nullptr);
  MemoryBudget none(0, 0, 100 * kMiB);
  none.SetUnaccounted(500 * kMiB);
  EXPECT_EQ(none.state().unaccounted, 0u) << "without memory= there is no budget to charge";
}

// Compressed files' frames come first (they keep more of the graph per byte); the decoded units
// get what they leave, never less than an eighth of the cache (what readers decode into).
TEST(MemoryBudget, FramesComeFirstAndDecodedUnitsGetWhatTheyLeave) {
  EXPECT_EQ(MemoryBudget::FramesCapacity(800 * kMiB), 700 * kMiB);
  EXPECT_EQ(MemoryBudget::UnitsCapacity(800 * kMiB, 0), 800 * kMiB);
  EXPECT_EQ(MemoryBudget::UnitsCapacity(800 * kMiB, 500 * kMiB), 300 * kMiB);
  EXPECT_EQ(MemoryBudget::UnitsCapacity(800 * kMiB, 750 * kMiB), 100 * kMiB) << "the floor";
  // Decoded units LPs pin after the decoded tier let them go cannot be evicted: beyond the
  // eighth, the frames make room for them.
  EXPECT_EQ(MemoryBudget::FramesCapacity(800 * kMiB, 50 * kMiB), 700 * kMiB) << "within the eighth";
  EXPECT_EQ(MemoryBudget::FramesCapacity(800 * kMiB, 300 * kMiB), 500 * kMiB);
  EXPECT_EQ(MemoryBudget::UnitsCapacity(800 * kMiB, 750 * kMiB, 300 * kMiB), 300 * kMiB);
  EXPECT_EQ(MemoryBudget::FramesCapacity(800 * kMiB, 900 * kMiB), 0u) << "never below nothing";
  MemoryBudget budget(900 * kMiB, 100 * kMiB);
  cache::ChunkCache units(SmallCache(budget.CacheCapacity(0)));
  cache::ChunkCache frames(SmallCache(0));
  budget.Attach(&units, &frames);
  EXPECT_EQ(frames.capacity(), 700 * kMiB);
  EXPECT_EQ(units.capacity(), 800 * kMiB) << "no frames in memory yet";
  MemoryBudget::Reservation r = budget.Reserve(400 * kMiB);
  EXPECT_EQ(frames.capacity(), 350 * kMiB) << "a reservation shrinks both tiers";
  r.Resize(0);
  EXPECT_EQ(frames.capacity(), 700 * kMiB) << "and gives back what it no longer holds";
  const MemoryBudget::State s = budget.state();
  EXPECT_EQ(s.cache_capacity, 800 * kMiB);
  EXPECT_EQ(s.frames_capacity, 700 * kMiB);
  EXPECT_EQ(s.units_capacity, 800 * kMiB);
  budget.Attach(nullptr);
}

// A file of zeros, for units the test pins.
class ZeroSource final : public cache::UnitSource {
 public:
  Result<uint64_t> Load(uint64_t, uint64_t length, char* buf) override {
    std::memset(buf, 0, length);
    return length;
  }
  void DiskShare(uint64_t, uint64_t length, std::vector<uint64_t>& per_disk) const override { per_disk[0] += length; }
};

// Unit `index` (of `unit` bytes) of file 1, read from `source`.
cache::UnitRequest UnitOf(const std::shared_ptr<ZeroSource>& source, uint64_t index, uint64_t unit) {
  cache::UnitRequest r;
  r.key = {1, index};
  r.offset = index * unit;
  r.length = unit;
  r.source = source;
  return r;
}

// Decoded units LPs pin after the decoded tier let them go (held) are resident until the LPs let
// them go: the frames make room for them, but only for what the RSS target (1.05 x total + 64 MiB)
// does not already leave above the budget once the unaccounted allowance is taken: frames given up
// for short-lived held units are read from the disks again (docs/memory-as-cache.md).
TEST(MemoryBudget, HeldUnitsBeyondTheRssTargetsSlackComeOutOfTheFrames) {
  constexpr uint64_t kTotal = 64 * kMiB, kUnit = 4 * kMiB;
  MemoryBudget budget(kTotal, 0);
  cache::CacheOptions lru = SmallCache(budget.CacheCapacity(0));
  lru.policy = "lru";  // admits every unit read
  cache::ChunkCache units(lru);
  cache::ChunkCache frames(SmallCache(0));
  budget.Attach(&units, &frames);
  ASSERT_EQ(frames.capacity(), kTotal - kTotal / 8);
  auto source = std::make_shared<ZeroSource>();
  std::vector<cache::UnitRef> pins;
  auto pin = [&](uint64_t index) {
    const cache::UnitRequest r = UnitOf(source, index, kUnit);
    {
      auto read = units.Get(r, 1);  // read once: admitted as its pin goes
      ASSERT_TRUE(read.ok()) << read.error().message();
      read->NoteServed(kUnit);
    }
    auto unit = units.Get(r, 1);        // pinned, as an LP holds it
    ASSERT_TRUE(unit.ok()) << unit.error().message();
    pins.push_back(std::move(*unit));
  };
  // Held units beyond the decoded tier's eighth but within the slack: the frames keep their share.
  for (uint64_t i = 0; i < 7; ++i) pin(i);
  {
    MemoryBudget::Reservation squeeze = budget.Reserve(kTotal);  // the decoded tier lets them go
  }
  const uint64_t slack = kTotal / 20 + (MemoryBudget::kRssAllowance - MemoryBudget::kUnaccountedAllowance);
  ASSERT_GT(units.held(), kTotal / 8);
  ASSERT_LE(units.held(), slack);
  budget.Rebalance();
  EXPECT_EQ(frames.capacity(), kTotal - kTotal / 8) << "held " << units.held();
  // Many: the frames make room for those beyond the slack.
  for (uint64_t i = 7; i < 16; ++i) pin(i);
  {
    MemoryBudget::Reservation squeeze = budget.Reserve(kTotal);
  }
  const uint64_t held = units.held();
  ASSERT_GT(held, slack + kTotal / 8) << "the test needs held units beyond the slack and the eighth";
  budget.Rebalance();
  EXPECT_EQ(frames.capacity(), kTotal - (held - slack));
  EXPECT_EQ(budget.state().frames_capacity, kTotal - (held - slack));
  pins.clear();
  budget.Rebalance();
  EXPECT_EQ(units.held(), 0u);
  EXPECT_EQ(frames.capacity(), kTotal - kTotal / 8) << "the frames get it back when the LPs let go";
  budget.Attach(nullptr);
}

// Staging is charged what it holds, not its ceiling: the samples take the charge down to the
// window's peak and the headroom, and a load that takes staging past its charge takes the room
// from the frames before its bytes are read (the RSS target holds), whether or not it is a
// prefetch within the ceiling.
TEST(MemoryBudget, StagingIsChargedWhatItHoldsAndTheFramesGiveWayAtOnceWhenItGrows) {
  constexpr uint64_t kTotal = 256 * kMiB, kCeiling = 32 * kMiB, kUnit = 4 * kMiB;
  MemoryBudget budget(kTotal, kCeiling);
  EXPECT_EQ(budget.CacheCapacity(0), kTotal - kCeiling) << "before any sample: the ceiling";
  cache::CacheOptions o = SmallCache(budget.CacheCapacity(0));
  o.staging_limit = kCeiling;
  o.on_staged = [&budget](uint64_t staged) { budget.StagingGrew(staged); };
  cache::ChunkCache units(o);
  cache::ChunkCache frames(SmallCache(0));
  budget.Attach(&units, &frames);
  const uint64_t frames_at_ceiling = frames.capacity();
  budget.FollowStaging();
  MemoryBudget::State s = budget.state();
  EXPECT_EQ(s.staging, MemoryBudget::kStagingHeadroom) << "nothing staged: the headroom";
  EXPECT_EQ(s.staging_ceiling, kCeiling);
  EXPECT_EQ(s.cache_capacity, kTotal - MemoryBudget::kStagingHeadroom);
  EXPECT_EQ(frames.capacity(), MemoryBudget::FramesCapacity(s.cache_capacity));
  EXPECT_GT(frames.capacity(), frames_at_ceiling);

  // Loads a reader has not taken yet stay staged: past the headroom, the frames shrink as each
  // load is reserved, before the caller reads into it.
  auto source = std::make_shared<ZeroSource>();
  std::vector<cache::UnitLoad> loads;
  for (uint64_t i = 0; i < 5; ++i) {
    loads.push_back(units.Reserve(UnitOf(source, i, kUnit), 1, cache::ChunkCache::ReserveFor::kPrefetch));
    ASSERT_TRUE(loads.back());
    const uint64_t staged = units.staged();
    s = budget.state();
    EXPECT_GE(s.staging, staged) << "charged before the bytes are read, load " << i;
    EXPECT_EQ(frames.capacity(), MemoryBudget::FramesCapacity(kTotal - s.staging)) << "load " << i;
  }
  EXPECT_EQ(budget.state().staging, 20 * kMiB) << "when the third load took it past the headroom: 12 MiB and the headroom";
  // Past the ceiling too (an idle disk's loads may go beyond it): charged what they hold.
  for (uint64_t i = 5; i < 10; ++i) {
    loads.push_back(units.Reserve(UnitOf(source, i, kUnit), 1, cache::ChunkCache::ReserveFor::kPrefetch, /*over_limit=*/true));
    ASSERT_TRUE(loads.back());
  }
  EXPECT_EQ(budget.state().staging, 40 * kMiB) << "the 40 MiB staged, no headroom beyond the ceiling";

  // Done: the charge follows the samples down once the window no longer holds the peak.
  for (cache::UnitLoad& l : loads) units.Complete(l, l.skew() + l.length());
  units.Settle();
  for (size_t i = 0; i < MemoryBudget::kStagingWindow; ++i) budget.FollowStaging();
  EXPECT_LT(budget.state().staging, 40 * kMiB);
  units.Invalidate(1);  // staged units nobody took: dropped
  for (size_t i = 0; i < MemoryBudget::kStagingWindow; ++i) budget.FollowStaging();
  EXPECT_EQ(units.staged(), 0u);
  EXPECT_EQ(budget.state().staging, MemoryBudget::kStagingHeadroom);
  budget.Attach(nullptr);

  // A ceiling below the headroom is charged no more than the ceiling.
  MemoryBudget small(kTotal, 2 * kMiB);
  cache::ChunkCache small_units(SmallCache(small.CacheCapacity(0)));
  small.Attach(&small_units);
  small.FollowStaging();
  EXPECT_EQ(small.state().staging, 2 * kMiB);
  small.Attach(nullptr);
}

// Without memory= the cache_size cache is split the same way.
TEST(MemoryBudget, WithoutATotalTheCacheSizeIsSplitTheSameWay) {
  MemoryBudget budget(0, 8 * kMiB, 160 * kMiB);
  cache::ChunkCache units(SmallCache(160 * kMiB));
  cache::ChunkCache frames(SmallCache(0));
  budget.Attach(&units, &frames);
  EXPECT_EQ(frames.capacity(), 140 * kMiB);
  EXPECT_EQ(units.capacity(), 160 * kMiB);
  budget.Attach(nullptr);
}

// Without memory= a graph with jobs lends the cache the part of its LP window that would sit
// idle: even at cache_size=0 its LPs' frames stay for the next LPs. With a total the window's
// idle memory is the budget's already: nothing is lent.
TEST(MemoryBudget, WithoutATotalAGraphsLpWindowLendsTheCacheItsIdlePart) {
  MemoryBudget budget(0, 8 * kMiB, 0);
  cache::ChunkCache units(SmallCache(0));
  cache::ChunkCache frames(SmallCache(0));
  budget.Attach(&units, &frames);
  ASSERT_EQ(units.capacity(), 0u) << "cache_size=0";
  {
    MemoryBudget::Reservation loan = budget.Lend(32 * kMiB);
    EXPECT_EQ(loan.bytes(), 32 * kMiB);
    EXPECT_EQ(budget.state().lent, 32 * kMiB);
    EXPECT_EQ(budget.state().cache_capacity, 32 * kMiB);
    EXPECT_EQ(frames.capacity(), 28 * kMiB) << "split as the cache is";
    EXPECT_EQ(units.capacity(), 32 * kMiB) << "no frames in memory yet";
    EXPECT_EQ(budget.state().reserved, 0u) << "a loan is not a reservation";
    EXPECT_EQ(budget.state().reservations, 0u);
    loan.Resize(16 * kMiB);
    EXPECT_EQ(frames.capacity(), 14 * kMiB);
  }
  EXPECT_EQ(budget.state().lent, 0u);
  EXPECT_EQ(frames.capacity(), 0u) << "given back when the graph's schedule goes";
  EXPECT_EQ(units.capacity(), 0u);
  budget.Attach(nullptr);

  MemoryBudget total(800 * kMiB, 100 * kMiB);
  cache::ChunkCache cache(SmallCache(total.CacheCapacity(0)));
  total.Attach(&cache);
  MemoryBudget::Reservation none = total.Lend(32 * kMiB);
  EXPECT_EQ(none.bytes(), 0u);
  EXPECT_EQ(cache.capacity(), 700 * kMiB) << "the budget has the window's idle memory already";
  total.Attach(nullptr);
}

}  // namespace
}  // namespace graphfs::volume
