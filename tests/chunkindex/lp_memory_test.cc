// Where an LP's bytes lie: blocks it owns (placed where a loader put them, or packed), and bytes
// it borrows from the graph's shared memory (cached units), whose owners it keeps alive.
#include "chunkindex/lp_memory.h"

#include <gtest/gtest.h>

#include <cstring>

namespace graphfs::chunkindex {
namespace {

std::shared_ptr<SharedArena> Arena(const char* name) {
  SharedArena::Options o;
  o.virtual_bytes = 64ull << 20;
  auto a = SharedArena::Create(name, o);
  EXPECT_TRUE(a.ok()) << a.error().message();
  return a.ok() ? *a : nullptr;
}

TEST(LpMemory, PlacedPiecesAreSealedInOrderAndMustCoverTheLpOnce) {
  LpMemory m(Arena("lp-memory-test"));
  LpMemory::Block b = m.Allocate(100);
  ASSERT_NE(b.data, nullptr);
  ASSERT_NE(b.memory_offset, SharedBytes::kNotShared);
  std::memcpy(b.data, "0123456789", 10);
  m.Place(5, 5, b.data + 5);  // out of order
  m.Place(0, 5, b.data);
  ASSERT_TRUE(m.Seal(10));
  EXPECT_EQ(m.segments(), 1u) << "adjacent in the LP and in memory: merged";
  EXPECT_EQ(m.Copy(0, 10), "0123456789");
  EXPECT_TRUE(m.shared());
  LpMemory gap;
  char* p = gap.Packed(10);
  ASSERT_NE(p, nullptr);
  gap.Place(0, 0, p);
  EXPECT_FALSE(LpMemory().Seal(1)) << "nothing placed";
}

// Bytes of the LP's own shared memory are borrowed where they lie: no copy, their owner (a
// cached unit's pin) lives as long as the LP; bytes elsewhere are refused (the caller copies).
TEST(LpMemory, BorrowedBytesStayWhereTheyLieAndKeepTheirOwnerAlive) {
  std::shared_ptr<SharedArena> arena = Arena("lp-memory-borrow");
  ASSERT_NE(arena, nullptr);
  auto slice = arena->Take(1 << 16);
  ASSERT_TRUE(slice.ok());
  std::memcpy(slice->data, "abcdefghij", 10);
  auto owner = std::make_shared<int>(7);
  std::weak_ptr<int> watch = owner;
  {
    LpMemory m(arena);
    LpMemory::Block own = m.Allocate(4);
    std::memcpy(own.data, "WXYZ", 4);
    m.Place(0, 4, own.data);
    ASSERT_TRUE(m.Borrow(4, 3, slice->data + 2, arena.get(), slice->offset + 2, owner, 1 << 16));
    ASSERT_TRUE(m.Borrow(7, 3, slice->data + 5, arena.get(), slice->offset + 5, owner, 1 << 16));  // the same owner
    // Refused: another arena, the heap, no owner.
    std::shared_ptr<SharedArena> other = Arena("lp-memory-other");
    EXPECT_FALSE(m.Borrow(10, 1, slice->data, other.get(), 0, owner, 1));
    EXPECT_FALSE(m.Borrow(10, 1, slice->data, arena.get(), SharedBytes::kNotShared, owner, 1));
    EXPECT_FALSE(m.Borrow(10, 1, slice->data, arena.get(), slice->offset, nullptr, 1));
    owner.reset();
    ASSERT_TRUE(m.Seal(10));
    EXPECT_EQ(m.Copy(0, 10), "WXYZcdefgh");
    EXPECT_EQ(m.At(4), slice->data + 2) << "not a copy";
    EXPECT_EQ(m.borrowed_bytes(), 6u);
    EXPECT_EQ(m.pinned_bytes(), 1u << 16) << "the owner's memory, once";
    EXPECT_EQ(m.segments(), 2u) << "the two borrowed pieces are adjacent: merged";
    EXPECT_EQ(m.bytes(), 4u) << "only its own block counts as its memory";
    EXPECT_TRUE(m.shared());
    std::vector<uint64_t> offsets;
    m.ForEach(2, 6, [&](const char*, uint64_t memory_offset, uint64_t) { offsets.push_back(memory_offset); });
    ASSERT_EQ(offsets.size(), 2u);
    EXPECT_EQ(offsets[0], own.memory_offset + 2);
    EXPECT_EQ(offsets[1], slice->offset + 2);
    EXPECT_FALSE(watch.expired()) << "the LP keeps the owner alive";
  }
  EXPECT_TRUE(watch.expired()) << "released with the LP";
  arena->Give(*slice);
}

}  // namespace
}  // namespace graphfs::chunkindex
