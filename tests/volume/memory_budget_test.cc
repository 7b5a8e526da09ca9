#include "volume/memory_budget.h"

#include <gtest/gtest.h>

#include "cache/chunk_cache.h"

namespace graphfs::volume {
namespace {

constexpr uint64_t kMiB = 1 << 20;

cache::CacheOptions SmallCache(uint64_t capacity) {
  cache::CacheOptions o;
  o.capacity = capacity;
  o.prefetch_threads = 1;
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

}  // namespace
}  // namespace graphfs::volume
