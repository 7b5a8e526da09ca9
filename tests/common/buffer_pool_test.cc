#include "common/buffer_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace graphfs {
namespace {

TEST(BufferPool, GivenBuffersAreTakenAgainForRequestsOfAboutTheirSize) {
  BufferPool pool(64 << 20);
  AlignedBuffer a = pool.Take(2 << 20);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.size(), size_t{2} << 20);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % kDirectAlign, 0u);
  char* const first = a.data();
  pool.Give(std::move(a));
  EXPECT_EQ(pool.stats().idle_bytes, uint64_t{2} << 20);

  // Up to 1/8 smaller than the idle buffer: reused.
  AlignedBuffer b = pool.Take((2 << 20) - (200 << 10));
  EXPECT_EQ(b.data(), first);
  EXPECT_EQ(b.size(), size_t{2} << 20);
  EXPECT_EQ(pool.stats().idle_buffers, 0u);
  pool.Give(std::move(b));

  // Much smaller, or larger: a new buffer; the idle one stays.
  AlignedBuffer small = pool.Take(1 << 20);
  EXPECT_NE(small.data(), first);
  AlignedBuffer large = pool.Take((2 << 20) + 4096);
  EXPECT_NE(large.data(), first);
  EXPECT_EQ(pool.stats().idle_buffers, 1u);
  EXPECT_EQ(pool.stats().reused, 1u);
  EXPECT_EQ(pool.stats().created, 3u);
}

// Slices of a graph's shared memory come back to the pool, not to their arena (which would
// punch them beyond its idle allowance), and are handed out again only for the same arena.
TEST(BufferPool, ArenaSlicesAreKeptForTheirOwnArena) {
  SharedArena::Options ao;
  ao.virtual_bytes = 64 << 20;  // idle_limit 0: a slice given back to the arena is punched
  auto a = SharedArena::Create("pool-test-a", ao);
  auto b = SharedArena::Create("pool-test-b", ao);
  ASSERT_TRUE(a.ok() && b.ok());
  BufferPool pool(4 << 20);
  EXPECT_EQ(pool.TakeShared(*a, 1 << 20).get(), nullptr) << "nothing idle yet: the caller allocates";
  SharedBytes s = SharedBytes::Allocate(*a, 1 << 20);
  ASSERT_NE(s.offset(), SharedBytes::kNotShared);
  std::memset(s.get(), 7, 1 << 20);
  char* const at = s.get();
  pool.GiveShared(std::move(s));
  EXPECT_EQ(pool.stats().idle_bytes, uint64_t{1} << 20);
  EXPECT_EQ((*a)->stats().punched_bytes, 0u) << "kept resident by the pool";
  EXPECT_EQ((*a)->stats().used_bytes, uint64_t{1} << 20);

  EXPECT_EQ(pool.TakeShared(*b, 1 << 20).get(), nullptr) << "another arena's slice is not handed out";
  EXPECT_FALSE(pool.Take(1 << 20).data() == at) << "nor for a heap buffer";
  SharedBytes again = pool.TakeShared(*a, (1 << 20) - (64 << 10));
  EXPECT_EQ(again.get(), at) << "up to 1/8 smaller: reused";
  EXPECT_EQ(again.arena().get(), a->get());
  EXPECT_EQ(again.get()[0], 7) << "its bytes are whatever the last user left (no fresh page)";
  EXPECT_EQ(pool.stats().idle_bytes, 0u);

  // Over the limit, the longest idle go back to their arena, which punches them.
  pool.GiveShared(std::move(again));
  for (int i = 0; i < 4; ++i) pool.GiveShared(SharedBytes::Allocate(*b, 1 << 20));
  EXPECT_EQ(pool.stats().idle_bytes, uint64_t{4} << 20);
  EXPECT_EQ((*a)->stats().used_bytes, 0u) << "a's slice was the longest idle";
  EXPECT_EQ((*a)->stats().punched_bytes, uint64_t{1} << 20);
  pool.TrimTo(0);
  EXPECT_EQ((*b)->stats().used_bytes, 0u);
  // Heap bytes (an arena that was full) are not kept as slices.
  pool.GiveShared(SharedBytes::Allocate(nullptr, 1 << 20));
  EXPECT_EQ(pool.stats().idle_bytes, 0u);
}

TEST(BufferPool, TheSmallestFittingBufferIsTaken) {
  BufferPool pool(64 << 20);
  AlignedBuffer big = pool.Take(1100 << 10), fit = pool.Take(1024 << 10);
  char* const fit_data = fit.data();
  pool.Give(std::move(big));
  pool.Give(std::move(fit));
  AlignedBuffer got = pool.Take(1000 << 10);
  EXPECT_EQ(got.data(), fit_data);
}

TEST(BufferPool, TheLongestIdleGoOverTheLimit) {
  BufferPool pool(3 << 20);  // room for three 1 MiB buffers
  std::vector<AlignedBuffer> held;
  std::vector<char*> order;
  for (int i = 0; i < 5; ++i) {
    held.push_back(pool.Take(1 << 20));
    order.push_back(held.back().data());
  }
  for (AlignedBuffer& b : held) pool.Give(std::move(b));
  const BufferPool::Stats s = pool.stats();
  EXPECT_EQ(s.idle_buffers, 3u);
  EXPECT_EQ(s.idle_bytes, uint64_t{3} << 20);
  EXPECT_EQ(s.released, 2u);
  // The three given last are the ones kept.
  std::vector<char*> kept;
  for (int i = 0; i < 3; ++i) kept.push_back(pool.Take(1 << 20).data());
  for (int i = 2; i < 5; ++i) EXPECT_NE(std::find(kept.begin(), kept.end(), order[i]), kept.end()) << i;
}

TEST(BufferPool, ALimitOfZeroKeepsNothing) {
  BufferPool pool(0);
  pool.Give(pool.Take(1 << 20));
  EXPECT_EQ(pool.stats().idle_buffers, 0u);
  EXPECT_EQ(pool.stats().released, 1u);
}

TEST(BufferPool, ConcurrentTakesAndGivesKeepEveryBufferWhole) {
  BufferPool pool(8 << 20);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        AlignedBuffer b = pool.Take((1 << 20) - (i % 7) * 4096);
        std::memset(b.data(), t, b.size());
        for (size_t k = 0; k < b.size(); k += 4096)
          if (b.data()[k] != static_cast<char>(t)) ++bad;
        pool.Give(std::move(b));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  const BufferPool::Stats s = pool.stats();
  EXPECT_EQ(s.reused + s.created, 800u);
  EXPECT_LE(s.idle_bytes, uint64_t{8} << 20);
}

}  // namespace
}  // namespace graphfs
