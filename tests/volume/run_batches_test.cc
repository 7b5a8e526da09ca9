// The direct loader's batches (volume/internal/run_batches.h): each on one disk, within the buffer
// limit, covering exactly the pieces asked for, and interleaved over the disks in proportion
// to their shares.
#include "volume/internal/run_batches.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>

namespace graphfs::volume {
namespace {

constexpr uint64_t kAlign = 4096;

StripeMap Map(uint64_t unit, uint32_t disks) {
  auto m = StripeMap::Create({unit, disks, 0});
  EXPECT_TRUE(m.ok());
  return *m;
}

// Checks the plan against its input: every piece's bytes land where asked, from a span of a
// batch on the disk that holds them; batches fit the limit; the per-disk totals add up.
void ExpectValid(const RunBatchPlan& plan, const std::vector<CopyRange>& asked, const StripeMap& map, uint64_t limit) {
  std::map<uint64_t, uint64_t> want;  // file offset -> out offset, per byte (sampled every 512 B + ends)
  for (const CopyRange& r : asked) {
    for (uint64_t k = 0; k < r.length; k += 512) want[r.offset + k] = r.out_offset + k;
    want[r.offset + r.length - 1] = r.out_offset + r.length - 1;
  }
  ASSERT_EQ(plan.origin.size(), plan.pieces.size());
  std::map<uint64_t, uint64_t> got;
  std::vector<uint64_t> disk_bytes(map.disks(), 0);
  for (const RunBatch& b : plan.batches) {
    EXPECT_LE(b.bytes, limit);
    uint64_t room = 0;
    for (const RunSpan& sp : b.spans) {
      EXPECT_EQ(sp.begin % kAlign, 0u);
      EXPECT_EQ(sp.at, room);
      room += (sp.end - sp.begin + kAlign - 1) / kAlign * kAlign;
      disk_bytes[b.disk] += sp.end - sp.begin;
      for (const StripeExtent& e : map.Split(sp.begin, sp.end - sp.begin)) EXPECT_EQ(e.disk, b.disk) << "a batch on one disk";
    }
    EXPECT_EQ(room, b.bytes);
    for (size_t i = b.first; i < b.last; ++i) {
      const CopyRange& p = plan.pieces[i];
      bool inside = false;
      for (const RunSpan& sp : b.spans) inside = inside || (sp.begin <= p.offset && p.offset + p.length <= sp.end);
      EXPECT_TRUE(inside) << "piece at " << p.offset << " outside its batch's spans";
      ASSERT_LT(plan.origin[i], asked.size());
      const CopyRange& from = asked[plan.origin[i]];
      EXPECT_TRUE(from.offset <= p.offset && p.offset + p.length <= from.offset + from.length &&
                  p.out_offset - from.out_offset == p.offset - from.offset)
          << "piece at " << p.offset << " is not a part of the range it names";
      for (uint64_t k = 0; k < p.length; ++k) {
        if (want.count(p.offset + k)) got[p.offset + k] = p.out_offset + k;
      }
    }
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(disk_bytes, plan.disk_bytes);
}

TEST(RunBatches, AContiguousRangeFeedsEveryDiskFromTheStart) {
  // 16 units of 64 KiB over 4 disks, read in batches of 16 KiB: file order would put the
  // first eight batches on two disks; interleaved, every window of four holds all four.
  const StripeMap map = Map(64 * 1024, 4);
  const uint64_t size = 16 * 64 * 1024;
  const std::vector<CopyRange> asked{{0, size, 0}};
  const RunBatchPlan plan = PlanRunBatches(asked, map, size, kAlign, 16 * 1024);
  ExpectValid(plan, asked, map, 16 * 1024);
  ASSERT_EQ(plan.batches.size(), 64u);
  for (size_t w = 0; w + 4 <= plan.batches.size(); w += 4) {
    std::set<uint32_t> disks;
    for (size_t i = w; i < w + 4; ++i) disks.insert(plan.batches[i].disk);
    EXPECT_EQ(disks.size(), 4u) << "window at batch " << w;
  }
  EXPECT_EQ(plan.disk_bytes, (std::vector<uint64_t>(4, size / 4)));
}

TEST(RunBatches, UnequalSharesAreInterleavedInProportion) {
  // Disk 0 holds twice disk 1's bytes: in any prefix of the order, its submitted fraction
  // stays within one batch of disk 1's.
  const StripeMap map = Map(64 * 1024, 2);
  const uint64_t size = 8 * 64 * 1024;
  std::vector<CopyRange> asked;
  uint64_t out = 0;
  for (uint64_t u = 0; u < 8; ++u) {
    const uint64_t length = u % 2 == 0 ? 64 * 1024 : 32 * 1024;
    asked.push_back({u * 64 * 1024, length, out});
    out += length;
  }
  const RunBatchPlan plan = PlanRunBatches(asked, map, size, kAlign, 8 * 1024);
  ExpectValid(plan, asked, map, 8 * 1024);
  ASSERT_EQ(plan.disk_bytes, (std::vector<uint64_t>{4 * 64 * 1024, 4 * 32 * 1024}));
  double done[2] = {0, 0};
  for (const RunBatch& b : plan.batches) {
    for (const RunSpan& sp : b.spans) done[b.disk] += static_cast<double>(sp.end - sp.begin) / plan.disk_bytes[b.disk];
    EXPECT_LE(std::abs(done[0] - done[1]), 8.0 * 1024 / (4 * 32 * 1024) + 1e-9);
  }
}

TEST(RunBatches, RandomRunsAreCoveredExactly) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    const uint32_t disks = 1 + rng() % 5;
    const uint64_t unit = kAlign * (1 + rng() % 8);
    const StripeMap map = Map(unit, disks);
    const uint64_t size = unit * disks * 3 + rng() % unit;  // a partial last unit
    std::vector<CopyRange> asked;
    uint64_t at = rng() % 5000, out = 0;
    while (at < size) {
      const uint64_t length = std::min<uint64_t>(size - at, 1 + rng() % (2 * unit));
      asked.push_back({at, length, out});
      out += length;
      at += length + rng() % (unit / 2);
    }
    const uint64_t limit = kAlign * (1 + rng() % 6);
    const RunBatchPlan plan = PlanRunBatches(asked, map, size, kAlign, limit);
    ExpectValid(plan, asked, map, std::max(limit, kAlign));
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace graphfs::volume
