#include "common/shared_arena.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace graphfs {
namespace {

constexpr uint64_t kMiB = 1 << 20;

std::shared_ptr<SharedArena> MakeArena(uint64_t virtual_bytes, uint64_t resident_limit) {
  auto arena = SharedArena::Create("graphfs-test", {virtual_bytes, resident_limit});
  EXPECT_TRUE(arena.ok()) << (arena.ok() ? "" : arena.error().message());
  return arena.ok() ? *arena : nullptr;
}

// Bytes of the memfd in memory, as the kernel counts them (its blocks).
uint64_t MemfdBlocksBytes(int fd) {
  struct stat st;
  EXPECT_EQ(::fstat(fd, &st), 0);
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

TEST(SharedArena, SlicesAreGranuleAlignedDisjointAndReusedFirstFit) {
  auto arena = MakeArena(64 * kMiB, 64 * kMiB);
  ASSERT_NE(arena, nullptr);
  auto a = arena->Take(1);
  auto b = arena->Take(SharedArena::kGranule + 1);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->offset, 0u);
  EXPECT_EQ(a->length, SharedArena::kGranule);
  EXPECT_EQ(b->offset, SharedArena::kGranule);
  EXPECT_EQ(b->length, 2 * SharedArena::kGranule);
  EXPECT_EQ(b->data, arena->base() + b->offset);
  arena->Give(*a);
  auto c = arena->Take(100);  // the freed low slice first
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->offset, 0u);
  EXPECT_EQ(arena->stats().slices, 2u);
  EXPECT_EQ(arena->stats().used_bytes, 3 * SharedArena::kGranule);
  arena->Give(*b);
  arena->Give(*c);
  // Everything coalesced back: the whole size is one slice again.
  auto all = arena->Take(64 * kMiB);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->offset, 0u);
  EXPECT_FALSE(arena->Take(1).ok());
  EXPECT_EQ(arena->stats().take_failures, 1u);
  arena->Give(*all);
}

TEST(SharedArena, BadSizesAreRefusedWithAMessage) {
  auto arena = SharedArena::Create("graphfs-test", {12345, 0});
  ASSERT_FALSE(arena.ok());
  EXPECT_NE(arena.error().message().find("multiple of"), std::string::npos);
}

TEST(SharedArena, FreedSlicesStayResidentUpToTheLimitAndArePunchedBeyondIt) {
  auto arena = MakeArena(256 * kMiB, 8 * kMiB);
  ASSERT_NE(arena, nullptr);
  auto a = arena->Take(8 * kMiB);
  auto b = arena->Take(8 * kMiB);
  auto c = arena->Take(8 * kMiB);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  std::memset(a->data, 1, a->length);
  std::memset(b->data, 2, b->length);
  EXPECT_EQ(arena->stats().resident_bytes, 24 * kMiB);
  EXPECT_GE(MemfdBlocksBytes(arena->fd()), 24 * kMiB);
  arena->Give(*a);  // 8 MiB idle, not above the limit: kept for reuse
  EXPECT_EQ(arena->stats().resident_bytes, 24 * kMiB);
  EXPECT_EQ(arena->stats().punched_bytes, 0u);
  arena->Give(*b);  // 16 MiB idle > 8 MiB: the highest free bytes (b) are punched
  EXPECT_EQ(arena->stats().resident_bytes, 16 * kMiB);
  EXPECT_EQ(arena->stats().punched_bytes, 8 * kMiB);
  EXPECT_LT(MemfdBlocksBytes(arena->fd()), 17 * kMiB);
  auto again = arena->Take(8 * kMiB);  // a's pages, kept: reused without a fault
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->offset, 0u);
  EXPECT_EQ(again->data[0], 1);
  auto d = arena->Take(8 * kMiB);  // b's punched slice: zeros again
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->offset, 8 * kMiB);
  EXPECT_EQ(d->data[0], 0);
  EXPECT_EQ(d->data[d->length - 1], 0);
  arena->Give(*again);
  arena->Give(*d);
  arena->Give(*c);
  EXPECT_EQ(arena->stats().resident_bytes, 8 * kMiB) << "all free: only the idle limit stays";
}

// The limit bounds the idle bytes, not what is in use: slices in use never cause a punch,
// and only the excess of idle bytes goes, highest first.
TEST(SharedArena, OnlyTheExcessIsPunchedHighestFirstAndTheRestReusedAsItIs) {
  auto arena = MakeArena(256 * kMiB, 12 * kMiB);
  ASSERT_NE(arena, nullptr);
  auto a = arena->Take(8 * kMiB);
  auto b = arena->Take(8 * kMiB);
  auto c = arena->Take(8 * kMiB);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  std::memset(a->data, 1, a->length);
  std::memset(c->data, 3, c->length);
  arena->Give(*c);  // 8 MiB idle: kept
  EXPECT_EQ(arena->stats().punched_bytes, 0u);
  arena->Give(*a);  // 16 MiB idle, 12 allowed: c's top 4 MiB go, the rest stays
  EXPECT_EQ(arena->stats().resident_bytes, 20 * kMiB);
  EXPECT_EQ(arena->stats().punched_bytes, 4 * kMiB);
  EXPECT_EQ(c->data[0], 3);
  EXPECT_EQ(c->data[4 * kMiB - 1], 3);
  EXPECT_EQ(c->data[4 * kMiB], 0);
  EXPECT_EQ(c->data[8 * kMiB - 1], 0);
  auto again = arena->Take(8 * kMiB);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->offset, 0u);
  EXPECT_EQ(again->data[0], 1) << "a's pages were kept: reused without a fault";
  EXPECT_EQ(arena->stats().resident_bytes, 20 * kMiB);
  arena->Give(*again);
  arena->Give(*b);
  EXPECT_EQ(arena->stats().resident_bytes, 12 * kMiB);
}

// Budgeted slices (an LP's own blocks) and idle bytes share the budget: idle memory fills only
// what the budgeted slices leave, never less than idle_limit; other slices (cached units) are
// outside it.
TEST(SharedArena, IdleBytesFillWhatTheBudgetedSlicesLeave) {
  auto made = SharedArena::Create("graphfs-test", {64 * kMiB, 4 * kMiB, 16 * kMiB});
  ASSERT_TRUE(made.ok());
  auto arena = *made;
  using Use = SharedArena::Use;
  auto unit = arena->Take(8 * kMiB);  // not budgeted
  auto a = arena->Take(8 * kMiB, Use::kBudgeted);
  auto b = arena->Take(8 * kMiB, Use::kBudgeted);
  ASSERT_TRUE(unit.ok() && a.ok() && b.ok());
  EXPECT_TRUE(a->budgeted);
  EXPECT_FALSE(unit->budgeted);
  EXPECT_EQ(arena->stats().budgeted_bytes, 16 * kMiB);
  arena->Give(*a);  // 8 idle; the budget leaves 16 - 8 = 8: kept
  EXPECT_EQ(arena->stats().resident_bytes, 24 * kMiB);
  arena->Give(*b);  // 16 idle; nothing budgeted is in use: 16 allowed, kept
  EXPECT_EQ(arena->stats().resident_bytes, 24 * kMiB);
  EXPECT_EQ(arena->stats().budgeted_bytes, 0u);
  arena->Give(*unit);  // 24 idle > 16: 8 punched, the highest first
  EXPECT_EQ(arena->stats().resident_bytes, 16 * kMiB);
  // Taking budgeted bytes shrinks the idle allowance at once: 12 in use leave 4 (the floor).
  auto c = arena->Take(12 * kMiB, Use::kBudgeted);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->offset, 0u) << "the resident low bytes are reused first";
  EXPECT_EQ(arena->stats().resident_bytes, 16 * kMiB) << "12 in use + 4 idle";
  auto d = arena->Take(4 * kMiB, Use::kBudgeted);  // 16 budgeted: past the budget, the floor stays
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(arena->stats().resident_bytes, 16 * kMiB);
  arena->Give(*d);
  arena->Give(*c);
  EXPECT_EQ(arena->stats().resident_bytes, 16 * kMiB);
  EXPECT_EQ(arena->stats().used_bytes, 0u);
}

// A take reuses resident free bytes wherever they lie in a free range, not the lowest bytes
// that fit: a hole punched below a freed slice that was kept used to be taken (and faulted in
// fresh) while the kept slice stayed idle above it.
TEST(SharedArena, ATakeReusesKeptBytesAboveAPunchedHole) {
  auto made = SharedArena::Create("graphfs-test", {64 * kMiB, 0, 1 * kMiB});
  ASSERT_TRUE(made.ok());
  auto arena = *made;
  using Use = SharedArena::Use;
  auto low = arena->Take(kMiB);
  auto lp = arena->Take(kMiB, Use::kBudgeted);  // the budget's whole 1 MiB: nothing idle allowed
  auto high = arena->Take(kMiB);                // bounds the free range below
  ASSERT_TRUE(low.ok() && lp.ok() && high.ok());
  arena->Give(*low);  // idle beyond the allowance: punched
  EXPECT_EQ(arena->stats().punched_bytes, kMiB);
  std::memset(lp->data, 7, lp->length);
  arena->Give(*lp);  // nothing budgeted now: 1 MiB idle allowed, kept; free [0, 2 MiB)
  EXPECT_EQ(arena->stats().resident_bytes, 2 * kMiB);
  const uint64_t populated = SharedArena::ProcessChurn().populated_bytes;
  auto again = arena->Take(kMiB);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->offset, kMiB) << "the kept slice, not the punched hole below it";
  EXPECT_EQ(again->data[0], 7);
  EXPECT_EQ(SharedArena::ProcessChurn().populated_bytes, populated) << "no fresh page";
  // The hole is still free and is used next (fresh: nothing else is).
  auto hole = arena->Take(kMiB);
  ASSERT_TRUE(hole.ok());
  EXPECT_EQ(hole->offset, 0u);
  EXPECT_EQ(SharedArena::ProcessChurn().populated_bytes, populated + kMiB);
}

// The idle bytes an arena keeps are added to its counter as they change, and taken out again as
// they are reused, punched, or the arena goes: the volume charges them to the decoded units.
TEST(SharedArena, ItsIdleBytesAreReportedToTheCounterAsTheyChange) {
  auto idle = std::make_shared<std::atomic<uint64_t>>(5);  // another arena's 5 bytes
  SharedArena::Options o{64 * kMiB, 4 * kMiB, 0, idle};
  {
    auto made = SharedArena::Create("graphfs-test", o);
    ASSERT_TRUE(made.ok());
    auto arena = *made;
    auto a = arena->Take(2 * kMiB);
    auto b = arena->Take(4 * kMiB);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(idle->load(), 5u);
    arena->Give(*a);
    EXPECT_EQ(idle->load(), 5 + 2 * kMiB);
    arena->Give(*b);  // 6 idle, 4 allowed: 2 punched
    EXPECT_EQ(idle->load(), 5 + 4 * kMiB);
    auto c = arena->Take(kMiB);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(idle->load(), 5 + 3 * kMiB) << "reused";
    EXPECT_EQ(idle->load() - 5, arena->stats().resident_bytes - arena->stats().used_bytes);
  }
  EXPECT_EQ(idle->load(), 5u) << "the arena took its own out when it went";
}

TEST(SharedArena, AnotherProcessMappingTheMemfdSeesTheDaemonsBytesReadOnly) {
  auto arena = MakeArena(16 * kMiB, 16 * kMiB);
  ASSERT_NE(arena, nullptr);
  auto s = arena->Take(kMiB);
  ASSERT_TRUE(s.ok());
  std::memcpy(s->data, "graph bytes", 11);
  // What a job does: open the file read-only and map it shared.
  const std::string path = "/proc/self/fd/" + std::to_string(arena->fd());
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) ::_exit(2);
    void* m = ::mmap(nullptr, 16 * kMiB, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) ::_exit(3);
    if (std::memcmp(static_cast<char*>(m) + s->offset, "graph bytes", 11) != 0) ::_exit(4);
    // Writable shared mappings need a writable open.
    if (::mmap(nullptr, kMiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) != MAP_FAILED) ::_exit(5);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  arena->Give(*s);
}

TEST(SharedBytes, FallsBackToTheHeapWithoutAnArenaOrWhenItIsFull) {
  SharedBytes heap = SharedBytes::Allocate(nullptr, 100);
  ASSERT_NE(heap.get(), nullptr);
  EXPECT_EQ(heap.offset(), SharedBytes::kNotShared);
  auto arena = MakeArena(SharedArena::kGranule * 2, 0);
  ASSERT_NE(arena, nullptr);
  {
    SharedBytes a = SharedBytes::Allocate(arena, SharedArena::kGranule);
    EXPECT_EQ(a.offset(), 0u);
    SharedBytes b = SharedBytes::Allocate(arena, SharedArena::kGranule * 2);  // no room
    EXPECT_EQ(b.offset(), SharedBytes::kNotShared);
    b.get()[SharedArena::kGranule * 2 - 1] = 1;  // the heap bytes are usable
    SharedBytes moved = std::move(a);
    EXPECT_EQ(moved.offset(), 0u);
    EXPECT_EQ(arena->stats().slices, 1u);
  }
  EXPECT_EQ(arena->stats().slices, 0u);
  EXPECT_EQ(arena->stats().used_bytes, 0u);
}

TEST(SharedArena, ConcurrentTakesAndGivesNeverOverlap) {
  auto arena = MakeArena(64 * kMiB, 4 * kMiB);
  ASSERT_NE(arena, nullptr);
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto s = arena->Take(static_cast<uint64_t>((i % 7 + 1)) * 100000);
        if (!s.ok()) continue;
        std::memset(s->data, t + 1, s->length);
        for (uint64_t k = 0; k < s->length; k += 4096)
          if (s->data[k] != t + 1) errors.fetch_add(1);
        arena->Give(*s);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(arena->stats().used_bytes, 0u);
  EXPECT_LE(arena->stats().resident_bytes, 4 * kMiB + 7 * 100000 + SharedArena::kGranule * 4);
}

}  // namespace
}  // namespace graphfs
