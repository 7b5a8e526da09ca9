// The layout with parity (docs/parity.md, "Layout on the disks") against a naive model: a walk
// that deals the data units onto the disks one after the other, as without parity, puts each
// row's K parity units on the K disks after its last data unit, and appends every unit to its
// disk's part. Every byte of several files is located both ways; part sizes, per-disk shares,
// splits and the row geometry are checked against it.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "striping/stripe_map.h"

namespace graphfs {
namespace {

struct NaiveUnit {
  bool parity;
  uint64_t row;
  uint32_t slot;    // data column, or D + parity index
  uint64_t length;  // bytes stored
};

struct NaiveLayout {
  std::vector<std::vector<NaiveUnit>> parts;  // per disk, in the order the walk appended them
  // Data unit u: its disk and its position in that disk's part.
  std::vector<std::pair<uint32_t, uint64_t>> data_at;
  // (row, slot) -> disk
  std::vector<std::vector<uint32_t>> slot_disk;
};

NaiveLayout Walk(uint64_t unit, uint32_t n, uint32_t k, uint32_t first, uint64_t size) {
  const uint32_t d = n - k;
  NaiveLayout m;
  m.parts.resize(n);
  uint64_t units = (size + unit - 1) / unit;
  uint64_t rows = (units + d - 1) / d;
  uint32_t cursor = first;  // where the next data unit goes
  for (uint64_t r = 0; r < rows; ++r) {
    m.slot_disk.emplace_back();
    uint64_t first_length = 0;
    for (uint32_t c = 0; c < n; ++c) {
      const uint64_t u = r * d + c;
      uint64_t length;
      uint32_t disk;
      if (c < d) {
        disk = cursor;
        cursor = (cursor + 1) % n;
        length = u * unit >= size ? 0 : std::min(unit, size - u * unit);
        if (c == 0) first_length = length;
        if (u < units) m.data_at.push_back({disk, m.parts[disk].size()});
      } else {
        disk = (cursor + (c - d)) % n;  // after the row's data; the next row's data starts there too
        length = first_length;
      }
      m.parts[disk].push_back({c >= d, r, c, length});
      m.slot_disk.back().push_back(disk);
    }
  }
  return m;
}

uint64_t NaivePartSize(const NaiveLayout& m, uint32_t disk, uint64_t unit) {
  uint64_t end = 0;
  for (uint64_t i = 0; i < m.parts[disk].size(); ++i)
    if (m.parts[disk][i].length > 0) end = i * unit + m.parts[disk][i].length;
  return end;
}

TEST(StripeMapParity, RejectsBadParity) {
  EXPECT_EQ(StripeMap::Create({4096, 2, 0, 2}).error().code(), EINVAL);  // no data unit left
  EXPECT_NE(StripeMap::Create({4096, 2, 0, 2}).error().message().find("needs at least 3 disks (got 2)"),
            std::string::npos);
  EXPECT_FALSE(StripeMap::Create({4096, 1, 0, 1}).ok());
  EXPECT_FALSE(StripeMap::Create({4096, 8, 0, 3}).ok());  // the codec offers 1 or 2
  EXPECT_TRUE(StripeMap::Create({4096, 3, 2, 2}).ok());
  EXPECT_TRUE(StripeMap::Create({4096, 2, 1, 1}).ok());  // a mirror
}

// The table of docs/parity.md: N = 4, K = 1, first = 0.
TEST(StripeMapParity, LeftSymmetricTableOfTheDesign) {
  auto m = StripeMap::Create({100, 4, 0, 1});
  ASSERT_TRUE(m.ok());
  const uint32_t parity_disk[] = {3, 2, 1, 0};
  for (uint64_t r = 0; r < 4; ++r) EXPECT_EQ(m->SlotDisk(r, 3), parity_disk[r]) << "row " << r;
  // D5 on disk 1 at 1*S, D3 on disk 3 at 1*S, D10 on disk 2 at 3*S.
  EXPECT_EQ(m->Locate(5 * 100).disk, 1u);
  EXPECT_EQ(m->Locate(5 * 100 + 7).disk_offset, 107u);
  EXPECT_EQ(m->Locate(3 * 100).disk, 3u);
  EXPECT_EQ(m->Locate(3 * 100).disk_offset, 100u);
  EXPECT_EQ(m->Locate(10 * 100).disk, 2u);
  EXPECT_EQ(m->Locate(10 * 100).disk_offset, 300u);
  EXPECT_EQ(m->RowOf(11 * 100 + 99), 3u);
  EXPECT_EQ(m->DiskSlot(1, 3), 0u);  // D3 is row 1's first data unit
}

TEST(StripeMapParity, EveryByteMatchesTheNaiveWalk) {
  std::mt19937_64 rng(44);
  for (uint64_t unit : std::vector<uint64_t>{1, 3, 8, 13}) {
    for (uint32_t n : {1u, 2u, 3u, 4u, 5u, 7u}) {
      for (uint32_t k = 0; k <= std::min(2u, n - 1); ++k) {
        const uint32_t d = n - k;
        for (uint32_t first = 0; first < n; ++first) {
          auto map = StripeMap::Create({unit, n, first, k});
          ASSERT_TRUE(map.ok());
          const uint64_t row_bytes = unit * d;
          for (uint64_t size : std::vector<uint64_t>{0, 1, unit - 1, unit, unit + 1, row_bytes, row_bytes + 1,
                                                     3 * row_bytes - 1, 5 * row_bytes + unit / 2 + 1,
                                                     9 * row_bytes + 2 * unit}) {
            const NaiveLayout naive = Walk(unit, n, k, first, size);
            const std::string where = "S=" + std::to_string(unit) + " N=" + std::to_string(n) + " K=" +
                                      std::to_string(k) + " first=" + std::to_string(first) +
                                      " size=" + std::to_string(size);
            // Every row puts one unit on every disk.
            for (const auto& row : naive.slot_disk) ASSERT_EQ(std::set<uint32_t>(row.begin(), row.end()).size(), n);
            // Every byte.
            std::vector<uint64_t> share(n, 0);
            for (uint64_t o = 0; o < size; ++o) {
              const auto [disk, index] = naive.data_at[o / unit];
              const DiskLocation got = map->Locate(o);
              ASSERT_EQ(got.disk, disk) << where << " o=" << o;
              ASSERT_EQ(got.disk_offset, index * unit + o % unit) << where << " o=" << o;
              ASSERT_EQ(map->RowOf(o), o / unit / d) << where << " o=" << o;
              ++share[disk];
            }
            std::vector<uint64_t> got_share(n, 0);
            map->AddDiskShare(0, size, got_share);
            EXPECT_EQ(got_share, share) << where;
            // Parts: their sizes, and their units' rows, slots and lengths.
            ASSERT_EQ(map->Rows(size), naive.slot_disk.size()) << where;
            for (uint32_t disk = 0; disk < n; ++disk) {
              EXPECT_EQ(map->PartSize(disk, size), NaivePartSize(naive, disk, unit)) << where << " disk " << disk;
              for (uint64_t i = 0; i < naive.parts[disk].size(); ++i) {
                const NaiveUnit& nu = naive.parts[disk][i];
                ASSERT_EQ(nu.row, i) << "the walk put two units of a row on one disk: " << where;
                ASSERT_EQ(map->SlotDisk(nu.row, nu.slot), disk) << where << " row " << nu.row;
                ASSERT_EQ(map->DiskSlot(nu.row, disk), nu.slot) << where << " row " << nu.row;
                ASSERT_EQ(map->RowUnitLength(nu.row, nu.slot, size), nu.length) << where << " row " << nu.row;
                if (!nu.parity) {
                  ASSERT_EQ(map->SlotFileOffset(nu.row, nu.slot), (nu.row * d + nu.slot) * unit);
                }
              }
            }
            EXPECT_EQ(map->RowUnitLength(naive.slot_disk.size(), 0, size), 0u) << where;
            // Random ranges split into pieces that agree with Locate, within a unit each.
            for (int t = 0; t < 8 && size > 0; ++t) {
              const uint64_t a = rng() % size, len = rng() % (size - a + 1);
              uint64_t at = a;
              for (const StripeExtent& e : map->Split(a, len)) {
                ASSERT_EQ(e.file_offset, at) << where;
                ASSERT_EQ(e.file_offset / unit, (e.file_offset + e.length - 1) / unit) << where;
                const DiskLocation loc = map->Locate(at);
                ASSERT_EQ(e.disk, loc.disk) << where;
                ASSERT_EQ(e.disk_offset, loc.disk_offset) << where;
                at += e.length;
              }
              ASSERT_EQ(at, a + len) << where;
            }
          }
        }
      }
    }
  }
}

// Huge rows and disk counts: the row geometry must not wrap.
TEST(StripeMapParity, RowGeometryDoesNotWrap) {
  auto m = StripeMap::Create({1ull << 20, 6, 5, 2});
  ASSERT_TRUE(m.ok());
  const uint64_t row = UINT64_MAX / 3;  // row*D wraps 64 bits
  // (5 + row*4 + slot) % 6 computed with 128 bits, for every slot: a permutation of the disks.
  std::set<uint32_t> disks;
  for (uint32_t slot = 0; slot < 6; ++slot) {
    const unsigned __int128 want = (5 + static_cast<unsigned __int128>(row) * 4 + slot) % 6;
    EXPECT_EQ(m->SlotDisk(row, slot), static_cast<uint32_t>(want));
    EXPECT_EQ(m->DiskSlot(row, m->SlotDisk(row, slot)), slot);
    disks.insert(m->SlotDisk(row, slot));
  }
  EXPECT_EQ(disks.size(), 6u);
  EXPECT_EQ(m->RowUnitLength(row, 0, INT64_MAX), 0u);
  EXPECT_EQ(m->Rows(INT64_MAX), (((uint64_t{INT64_MAX} >> 20) + 1) + 3) / 4);
}

}  // namespace
}  // namespace graphfs
