#include "striping/stripe_map.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <vector>

namespace graphfs {
namespace {

StripeMap Make(uint64_t unit, uint32_t disks, uint32_t first = 0) {
  auto m = StripeMap::Create({unit, disks, first});
  EXPECT_TRUE(m.ok());
  return *m;
}

// Reference: walk the file unit by unit and count where each unit lands.
DiskLocation Brute(uint64_t unit, uint32_t disks, uint32_t first, uint64_t o) {
  uint64_t u = o / unit;
  uint32_t disk = static_cast<uint32_t>((u + first) % disks);
  uint64_t units_before_on_disk = 0;
  for (uint64_t k = 0; k < u; ++k)
    if ((k + first) % disks == disk) ++units_before_on_disk;
  return {disk, units_before_on_disk * unit + o % unit};
}

TEST(StripeMap, RejectsBadLayouts) {
  EXPECT_FALSE(StripeMap::Create({0, 4, 0}).ok());
  EXPECT_FALSE(StripeMap::Create({4096, 0, 0}).ok());
  EXPECT_FALSE(StripeMap::Create({4096, 4, 4}).ok());
  EXPECT_EQ(StripeMap::Create({4096, 4, 7}).error().code(), EINVAL);
  // unit x disks past 2^64: PartSize's row size wrapped to 0 and it divided by zero.
  EXPECT_FALSE(StripeMap::Create({1ull << 63, 2, 0}).ok());
  EXPECT_FALSE(StripeMap::Create({UINT64_MAX / 3 + 1, 3, 0}).ok());
  EXPECT_TRUE(StripeMap::Create({UINT64_MAX / 3, 3, 0}).ok());
}

TEST(StripeMap, FormulaAtBoundaries) {
  const uint64_t s = 16u << 20;
  StripeMap m = Make(s, 4);
  auto at = [&](uint64_t o) { return m.Locate(o); };
  EXPECT_EQ(at(0).disk, 0u);
  EXPECT_EQ(at(0).disk_offset, 0u);
  EXPECT_EQ(at(s - 1).disk, 0u);
  EXPECT_EQ(at(s - 1).disk_offset, s - 1);
  EXPECT_EQ(at(s).disk, 1u);
  EXPECT_EQ(at(s).disk_offset, 0u);
  EXPECT_EQ(at(4 * s).disk, 0u);
  EXPECT_EQ(at(4 * s).disk_offset, s);  // second row: (o/(S*N))*S, not *N
  EXPECT_EQ(at(7 * s + 5).disk, 3u);
  EXPECT_EQ(at(7 * s + 5).disk_offset, s + 5);
}

TEST(StripeMap, MatchesBruteForceIncludingOddUnitsAndRotation) {
  for (unsigned long long unit : {1ull, 3ull, 4096ull, 12288ull, 5000ull}) {
    for (uint32_t disks : {1u, 2u, 3u, 4u, 6u}) {
      for (uint32_t first = 0; first < disks; ++first) {
        StripeMap m = Make(unit, disks, first);
        for (uint64_t o : {0ull, 1ull, unit - 1, unit, unit + 1, 3 * unit - 1, 7 * unit + unit / 2, 50 * unit + 2}) {
          DiskLocation got = m.Locate(o), want = Brute(unit, disks, first, o);
          ASSERT_EQ(got.disk, want.disk) << unit << "/" << disks << "/" << first << " o=" << o;
          ASSERT_EQ(got.disk_offset, want.disk_offset) << unit << "/" << disks << "/" << first << " o=" << o;
        }
      }
    }
  }
}

TEST(StripeMap, SingleDiskIsIdentity) {
  StripeMap m = Make(4096, 1);
  for (uint64_t o : {0ull, 4095ull, 4096ull, 1ull << 40}) {
    EXPECT_EQ(m.Locate(o).disk, 0u);
    EXPECT_EQ(m.Locate(o).disk_offset, o);
  }
  EXPECT_EQ(m.PartSize(0, 123457), 123457u);
}

// The bytes of a range per disk, added to what the vector holds; disks past its size left out.
TEST(StripeMap, AddDiskShareCountsEachDisksBytesOfARange) {
  StripeMap m = Make(1000, 3, 1);
  std::vector<uint64_t> share = {5, 0, 0};
  m.AddDiskShare(900, 2300, share);  // 100 on disk 1, 1000 on 2, 1000 on 0, 200 on 1
  EXPECT_EQ(share, (std::vector<uint64_t>{1005, 300, 1000}));
  std::vector<uint64_t> two(2, 0);
  m.AddDiskShare(900, 2300, two);
  EXPECT_EQ(two, (std::vector<uint64_t>{1000, 300}));
}

TEST(StripeMap, SplitAtUnitBoundaries) {
  const uint64_t s = 1000;  // not a power of two
  StripeMap m = Make(s, 3, 1);
  // Spans 4 units: tail of unit 0, units 1 and 2 whole, head of unit 3.
  auto pieces = m.Split(900, 2300);
  ASSERT_EQ(pieces.size(), 4u);
  EXPECT_EQ(pieces[0].file_offset, 900u);
  EXPECT_EQ(pieces[0].length, 100u);
  EXPECT_EQ(pieces[0].disk, 1u);
  EXPECT_EQ(pieces[1].length, 1000u);
  EXPECT_EQ(pieces[1].disk, 2u);
  EXPECT_EQ(pieces[2].disk, 0u);
  EXPECT_EQ(pieces[3].file_offset, 3000u);
  EXPECT_EQ(pieces[3].length, 200u);
  EXPECT_EQ(pieces[3].disk, 1u);
  EXPECT_EQ(pieces[3].disk_offset, 1000u);
  uint64_t total = 0;
  for (auto& p : pieces) total += p.length;
  EXPECT_EQ(total, 2300u);
  EXPECT_TRUE(m.Split(5, 0).empty());
  // Exactly one unit, aligned: one piece.
  EXPECT_EQ(m.Split(2000, 1000).size(), 1u);
  // Last byte of a unit.
  auto last = m.Split(999, 1);
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].disk_offset, 999u);
}

TEST(StripeMap, PartSizesAddUpAndMatchLocate) {
  for (uint32_t disks : {1u, 3u, 4u}) {
    for (uint32_t first = 0; first < disks; ++first) {
      StripeMap m = Make(4096, disks, first);
      for (uint64_t size : {0ull, 1ull, 4095ull, 4096ull, 4097ull, 3ull * 4096 * disks + 17, 100000ull}) {
        uint64_t sum = 0;
        std::map<uint32_t, uint64_t> max_end;
        for (auto& p : m.Split(0, size)) max_end[p.disk] = std::max(max_end[p.disk], p.disk_offset + p.length);
        for (uint32_t d = 0; d < disks; ++d) {
          sum += m.PartSize(d, size);
          EXPECT_EQ(m.PartSize(d, size), max_end[d]) << "disk " << d << " size " << size;
        }
        EXPECT_EQ(sum, size);
      }
    }
  }
}

TEST(StripeMap, MergeRunsJoinsTouchingPiecesOnOneDisk) {
  StripeMap m = Make(100, 2);
  // 0..600 covers units 0..5: disk0 gets units 0,2,4 at disk offsets 0,100,200 - touching.
  auto runs = StripeMap::MergeRuns(m.Split(0, 600), 1 << 20);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].disk, 0u);
  EXPECT_EQ(runs[0].disk_offset, 0u);
  EXPECT_EQ(runs[0].length, 300u);
  EXPECT_EQ(runs[0].pieces.size(), 3u);
  EXPECT_EQ(runs[0].pieces[1].file_offset, 200u);
  EXPECT_EQ(runs[1].disk, 1u);
  EXPECT_EQ(runs[1].length, 300u);
  // The cap splits runs.
  auto capped = StripeMap::MergeRuns(m.Split(0, 600), 200);
  EXPECT_EQ(capped.size(), 4u);
  // Pieces that do not touch are not merged.
  std::vector<StripeExtent> apart = {{0, 0, 0, 10}, {0, 20, 200, 10}};
  EXPECT_EQ(StripeMap::MergeRuns(apart, 1 << 20).size(), 2u);
}

}  // namespace
}  // namespace graphfs
