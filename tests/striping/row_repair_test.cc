// Rebuilding ranges of a row's units (striping/row_repair.h) on a striped file held in memory:
// every pattern of up to K lost units is rebuilt byte for byte over random ranges, without
// reading a failed unit; a byte flipped on a disk is caught by the unit sums and rebuilt; more
// failures than K are EIO naming the disks; the short last row's absent units cost no read.
#include "striping/row_repair.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "striping/unit_sums.h"
#include "tests/testutil/file_bytes.h"

namespace graphfs {
namespace {

using testing::RandomBytes;

// A file striped with parity into in-memory parts, with the sums of every unit's blocks.
struct MemStripe {
  StripeMap map;
  ParityCodec codec;
  std::string file;
  std::vector<std::string> parts;
  uint64_t sum_block;
  std::vector<std::map<uint64_t, std::vector<uint64_t>>> sums;  // per disk, per row

  static MemStripe Make(uint64_t unit, uint32_t n, uint32_t k, uint32_t first, uint64_t size, uint64_t block) {
    auto map = StripeMap::Create({unit, n, first, k});
    auto codec = ParityCodec::Create(n, k);
    EXPECT_TRUE(map.ok() && codec.ok());
    MemStripe m{*map, *codec, RandomBytes(size, size * 31 + n * 7 + k), std::vector<std::string>(n), block, {}};
    m.sums.resize(n);
    for (uint32_t d = 0; d < n; ++d) m.parts[d].assign(m.map.PartSize(d, size), '\0');
    for (const StripeExtent& e : m.map.Split(0, size)) m.parts[e.disk].replace(e.disk_offset, e.length, m.file, e.file_offset, e.length);
    const uint32_t dn = n - k;
    for (uint64_t r = 0; r < m.map.Rows(size); ++r) {
      const uint64_t len = m.map.RowUnitLength(r, 0, size);
      std::vector<std::string> data(dn, std::string(len, '\0')), parity(k, std::string(len, '\0'));
      for (uint32_t c = 0; c < dn; ++c) {
        const uint64_t at = m.map.SlotFileOffset(r, c);
        if (at < size) data[c].replace(0, std::min(len, size - at), m.file, at, std::min(len, size - at));
      }
      std::vector<std::span<const char>> in(data.begin(), data.end());
      std::vector<std::span<char>> out(parity.begin(), parity.end());
      EXPECT_TRUE(m.codec.Encode(in, out).ok());
      for (uint32_t j = 0; j < k; ++j) m.parts[m.map.SlotDisk(r, dn + j)].replace(r * unit, len, parity[j]);
      for (uint32_t s = 0; s < n; ++s) {
        const uint32_t d = m.map.SlotDisk(r, s);
        m.sums[d][r] = BlockSums(std::string_view(m.parts[d]).substr(r * unit, m.map.RowUnitLength(r, s, size)), block);
      }
    }
    return m;
  }

  // What slot `slot` of row `row` holds in [begin, begin+length), zeros past its unit's end:
  // data from the file itself, parity from its part.
  std::string Truth(uint64_t row, uint32_t slot, uint64_t begin, uint64_t length) const {
    std::string out(length, '\0');
    const uint64_t unit_length = map.RowUnitLength(row, slot, file.size());
    if (unit_length <= begin) return out;
    const uint64_t n = std::min(length, unit_length - begin);
    if (slot < map.data_units())
      out.replace(0, n, file, map.SlotFileOffset(row, slot) + begin, n);
    else
      out.replace(0, n, parts[map.SlotDisk(row, slot)], row * map.unit() + begin, n);
    return out;
  }

  // Reads a source as the tools will: fails for dead disks; checks the blocks against the sums
  // when asked (the range must then start on a block).
  RowSourceReader Reader(const std::set<uint32_t>& dead, bool verify, std::vector<uint32_t>* read_slots) {
    return [this, dead, verify, read_slots](const RowSource& src, std::span<char> out) -> Status {
      if (read_slots) read_slots->push_back(src.slot);
      if (dead.count(src.disk)) return Error(EIO, "disk " + std::to_string(src.disk) + " is gone");
      const std::string& part = parts[src.disk];
      if (src.disk_offset + out.size() > part.size()) return Error(EIO, "read past the part");
      std::copy_n(part.data() + src.disk_offset, out.size(), out.data());
      if (!verify) return Status::Ok();
      const uint64_t row = src.disk_offset / map.unit(), in_unit = src.disk_offset % map.unit();
      const uint64_t first = in_unit / sum_block, count = (out.size() + sum_block - 1) / sum_block;
      const std::vector<uint64_t>& all = sums[src.disk].at(row);
      return VerifyBlockSums(out, sum_block, std::span(all).subspan(first, count), first,
                             "disk " + std::to_string(src.disk) + ", row " + std::to_string(row));
    };
  }
};

Status Repair(MemStripe& m, uint64_t row, const std::vector<uint32_t>& rebuild, const std::vector<uint32_t>& failed,
              uint64_t begin, uint64_t length, std::vector<std::string>& out, const RowSourceReader& read) {
  out.assign(rebuild.size(), std::string(length, '\xee'));
  std::vector<std::span<char>> spans(out.begin(), out.end());
  return RepairRange(m.map, m.codec, m.file.size(), row, rebuild, failed, begin, spans, read);
}

TEST(RowRepair, EveryPatternOfUpToKLostUnitsOverRandomRanges) {
  std::mt19937_64 rng(7);
  for (uint32_t n = 2; n <= 6; ++n) {
    for (uint32_t k = 1; k <= std::min(2u, n - 1); ++k) {
      const uint64_t unit = 64;
      const uint64_t size = 3 * unit * (n - k) + unit + 17;  // the last row short
      MemStripe m = MemStripe::Make(unit, n, k, n - 1, size, 16);
      std::vector<std::vector<uint32_t>> patterns;
      for (uint32_t a = 0; a < n; ++a) {
        patterns.push_back({a});
        if (k == 2)
          for (uint32_t b = a + 1; b < n; ++b) patterns.push_back({b, a});
      }
      for (uint64_t row = 0; row < m.map.Rows(size); ++row) {
        for (const auto& lost : patterns) {
          const uint64_t begin = rng() % unit, length = 1 + rng() % (unit - begin);
          std::set<uint32_t> dead;
          for (uint32_t s : lost) dead.insert(m.map.SlotDisk(row, s));
          std::vector<uint32_t> read_slots;
          std::vector<std::string> out;
          Status s = Repair(m, row, lost, {}, begin, length, out, m.Reader(dead, false, &read_slots));
          const std::string where = "N=" + std::to_string(n) + " K=" + std::to_string(k) + " row " +
                                    std::to_string(row) + " bytes " + std::to_string(begin) + "+" +
                                    std::to_string(length);
          ASSERT_TRUE(s.ok()) << where << ": " << s.error().message();
          for (size_t i = 0; i < lost.size(); ++i)
            ASSERT_EQ(out[i], m.Truth(row, lost[i], begin, length)) << where << " slot " << lost[i];
          ASSERT_LE(read_slots.size(), n - k) << where;
          for (uint32_t r : read_slots)
            ASSERT_EQ(std::count(lost.begin(), lost.end(), r), 0) << where << ": read lost slot " << r;
        }
      }
    }
  }
}

TEST(RowRepair, PlanReadsDUnitsAndSkipsTheFailed) {
  MemStripe m = MemStripe::Make(4096, 6, 2, 0, 10 * 4096, 4096);  // rows of 4 data units
  const std::vector<uint32_t> rebuild = {1}, failed = {0};
  auto plan = PlanRowRepair(m.map, m.file.size(), 0, rebuild, failed, 100, 1000);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  ASSERT_EQ(plan->sources.size(), 4u);
  std::vector<uint32_t> slots;
  for (const RowSource& s : plan->sources) {
    slots.push_back(s.slot);
    EXPECT_EQ(s.disk, m.map.SlotDisk(0, s.slot));
    EXPECT_EQ(s.disk_offset, 100u);
    EXPECT_EQ(s.read_length, 1000u);
  }
  EXPECT_EQ(slots, (std::vector<uint32_t>{2, 3, 4, 5}));
  EXPECT_EQ(plan->lost, (std::vector<uint32_t>{0, 1}));
  // Row 2 (units 8 and 9 of 10) is short: its absent units 10 and 11 are zeros, read from
  // nowhere, even when their disks are listed as failed.
  const std::vector<uint32_t> absent_failed = {2, 3};
  auto short_row = PlanRowRepair(m.map, m.file.size(), 2, rebuild, absent_failed, 0, 4096);
  ASSERT_TRUE(short_row.ok()) << short_row.error().message();
  EXPECT_EQ(short_row->sources[0].slot, 0u);
  EXPECT_EQ(short_row->sources[1].slot, 2u);
  EXPECT_EQ(short_row->sources[1].read_length, 0u);
  EXPECT_EQ(short_row->sources[2].read_length, 0u);
  EXPECT_EQ(short_row->sources[3].slot, 4u);  // P
  EXPECT_EQ(short_row->sources[3].read_length, 4096u);
}

TEST(RowRepair, AbsentUnitsOfTheLastRowCostNoRead) {
  MemStripe m = MemStripe::Make(64, 5, 1, 2, 4 * 64 + 30, 16);  // row 1 holds one unit of 30 bytes
  std::vector<uint32_t> read_slots;
  std::vector<std::string> out;
  // Data unit 0 of row 1 lost, its row mates absent: rebuilt from the parity alone.
  Status s = Repair(m, 1, {0}, {}, 0, 64, out, m.Reader({m.map.SlotDisk(1, 0)}, true, &read_slots));
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(out[0], m.Truth(1, 0, 0, 64));
  EXPECT_EQ(read_slots, (std::vector<uint32_t>{4}));
}

TEST(RowRepair, FlippedByteIsFoundBySumsAndRebuilt) {
  for (uint32_t k : {1u, 2u}) {
    MemStripe m = MemStripe::Make(256, 5, k, 1, 20 * 256, 64);
    const uint64_t row = 1;
    const uint32_t bad_slot = 1, bad_disk = m.map.SlotDisk(row, bad_slot);
    const std::string good = m.parts[bad_disk];
    m.parts[bad_disk][row * 256 + 130] ^= 0x04;  // block 2 of the unit
    // The read path's check: the unit read whole fails its sums, naming the block.
    auto reader = m.Reader({}, true, nullptr);
    std::string unit(256, '\0');
    Status check = reader({bad_slot, bad_disk, row * 256, 256}, unit);
    ASSERT_FALSE(check.ok());
    EXPECT_NE(check.error().message().find("block 2"), std::string::npos) << check.error().message();
    // Rebuilt from the row, the block (and the whole unit) is what was striped.
    std::vector<std::string> out;
    Status s = Repair(m, row, {bad_slot}, {}, 128, 64, out, reader);
    ASSERT_TRUE(s.ok()) << s.error().message();
    EXPECT_EQ(out[0], good.substr(row * 256 + 128, 64));
    EXPECT_EQ(out[0], m.Truth(row, bad_slot, 128, 64));

    // Another unit lost while this one lies: the lie is found on the way and the row re-planned
    // (K = 2), or both named (K = 1).
    const uint32_t lost_slot = 0;
    std::vector<uint32_t> read_slots;
    s = Repair(m, row, {lost_slot}, {}, 0, 256, out, m.Reader({m.map.SlotDisk(row, lost_slot)}, true, &read_slots));
    if (k == 2) {
      ASSERT_TRUE(s.ok()) << s.error().message();
      EXPECT_EQ(out[0], m.Truth(row, lost_slot, 0, 256));
      EXPECT_EQ(std::count(read_slots.begin(), read_slots.end(), bad_slot), 1);
    } else {
      ASSERT_FALSE(s.ok());
      EXPECT_EQ(s.error().code(), EIO);
      const uint32_t a = std::min(bad_disk, m.map.SlotDisk(row, lost_slot)),
                     b = std::max(bad_disk, m.map.SlotDisk(row, lost_slot));
      EXPECT_NE(s.error().message().find("row 1: disks " + std::to_string(a) + ", " + std::to_string(b) + " failed"),
                std::string::npos)
          << s.error().message();
      EXPECT_NE(s.error().message().find("checksum mismatch"), std::string::npos) << s.error().message();
      EXPECT_NE(s.error().message().find("parity 1"), std::string::npos) << s.error().message();
    }
  }
}

TEST(RowRepair, MoreFailuresThanParityIsEIONamingEveryDisk) {
  MemStripe m = MemStripe::Make(64, 4, 1, 0, 12 * 64, 16);
  const std::vector<uint32_t> rebuild = {0}, failed = {2};
  auto plan = PlanRowRepair(m.map, m.file.size(), 1, rebuild, failed, 0, 64);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().code(), EIO);
  const uint32_t a = m.map.SlotDisk(1, 0), b = m.map.SlotDisk(1, 2);
  EXPECT_NE(plan.error().message().find("row 1: disks " + std::to_string(std::min(a, b)) + ", " +
                                        std::to_string(std::max(a, b)) + " failed, parity 1"),
            std::string::npos)
      << plan.error().message();
  // Found while reading: the reader's reason is given for each disk.
  std::vector<std::string> out;
  Status s = Repair(m, 1, {0}, {}, 0, 64, out, m.Reader({a, b}, false, nullptr));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), EIO);
  EXPECT_NE(s.error().message().find("disk " + std::to_string(b) + " is gone"), std::string::npos)
      << s.error().message();
  // Nothing wrong is handed out: the output keeps what it held.
  EXPECT_EQ(out[0], std::string(64, '\xee'));
}

TEST(RowRepair, RefusesBadArguments) {
  MemStripe m = MemStripe::Make(64, 4, 1, 0, 12 * 64, 16);
  auto plan = [&](std::vector<uint32_t> rebuild, uint64_t row, uint64_t begin, uint64_t length) {
    return PlanRowRepair(m.map, m.file.size(), row, rebuild, {}, begin, length);
  };
  EXPECT_EQ(plan({4}, 0, 0, 64).error().code(), EINVAL);
  EXPECT_EQ(plan({1, 1}, 0, 0, 64).error().code(), EINVAL);
  EXPECT_EQ(plan({}, 0, 0, 64).error().code(), EINVAL);
  EXPECT_EQ(plan({0}, 4, 0, 64).error().code(), EINVAL);  // 4 rows: 0..3
  EXPECT_EQ(plan({0}, 0, 60, 5).error().code(), EINVAL);
  EXPECT_EQ(plan({0}, 0, UINT64_MAX, 2).error().code(), EINVAL);
  EXPECT_TRUE(plan({0}, 3, 60, 4).ok());
  auto plain = StripeMap::Create({64, 4, 0, 0});
  const std::vector<uint32_t> zero = {0};
  EXPECT_EQ(PlanRowRepair(*plain, 1000, 0, zero, {}, 0, 64).error().code(), EINVAL);
  // A codec that does not match the layout.
  auto other = ParityCodec::Create(5, 1);
  std::string buf(64, '\0');
  std::vector<std::span<char>> out = {std::span<char>(buf)};
  EXPECT_EQ(RepairRange(m.map, *other, m.file.size(), 0, zero, {}, 0, out, m.Reader({}, false, nullptr)).error().code(),
            EINVAL);
}

}  // namespace
}  // namespace graphfs
