// graphfs-stripe --parity K (StripeFiles with StripeRequest::parity) and graphfs-unstripe of what it
// made: the parts hold the data where the layout says, each row's parity is what its data encodes
// to, every unit's blocks have their sums; a lost disk's units are rebuilt from the rest (row
// repair), a flipped byte is caught by the sums, and unstriping restores the file and leaves no
// part or sums file behind. Bad input is refused with the messages of docs/parity.md.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "striping/disk_set.h"
#include "striping/local_disk_backend.h"
#include "striping/manifest.h"
#include "striping/parity_codec.h"
#include "striping/part_io.h"
#include "striping/restripe.h"
#include "striping/row_repair.h"
#include "striping/unit_sums.h"
#include "tests/engines/run_binary.h"
#include "tests/testutil/temp_dir.h"

namespace graphfs {
namespace {

using testing::TempDir;

std::string Random(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t v = rng();
    std::memcpy(&s[i], &v, std::min<size_t>(8, n - i));
  }
  return s;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The bytes of slot `slot` of row `row` as stored on its disk (its part file, read directly).
std::string StoredUnit(const std::vector<std::string>& disks, const StripeMap& map, const StripeManifest& m,
                       uint64_t row, uint32_t slot) {
  const std::string part = Slurp(disks[map.SlotDisk(row, slot)] + "/parts/" + m.file_id);
  const uint64_t length = map.RowUnitLength(row, slot, m.size);
  EXPECT_LE(row * map.unit() + length, part.size());
  return part.substr(row * map.unit(), length);
}

struct Striped {
  TempDir tmp;
  std::vector<std::string> disks;
  std::string graph;
  std::string data;
};

void StripeWithParity(Striped& s, uint32_t n, uint32_t k, uint64_t size, uint64_t checkpoint) {
  for (uint32_t i = 0; i < n; ++i) s.disks.push_back(s.tmp.Sub("d" + std::to_string(i)));
  s.graph = s.tmp.Sub("graph");
  s.data = Random(size, size + k);
  Spit(s.graph + "/column", s.data);
  StripeRequest req;
  req.path = s.graph;
  req.disks = s.disks;
  req.unit = 64 * 1024;
  req.min_size = 1;
  req.progress = false;
  req.checkpoint = checkpoint;
  req.parity = k;
  auto report = StripeFiles(req);
  ASSERT_TRUE(report.ok()) << report.error().message();
  ASSERT_EQ(report->converted.size(), 1u);
}

TEST(ParityStripe, PartsHoldDataParityAndSumsAndUnstripeRestoresTheFile) {
  for (uint32_t k : {1u, 2u}) {
    Striped s;
    const uint32_t n = 4;
    // 3 rows of 2 or 3 data units of 64 KiB, then a short row; copied in 2-row checkpoints.
    const uint64_t size = 7 * 64 * 1024 + 12345;
    ASSERT_NO_FATAL_FAILURE(StripeWithParity(s, n, k, size, 2 * 64 * 1024 * (n - k)));
    auto read = ReadManifest(s.graph + "/column");
    ASSERT_TRUE(read.ok() && read->has_value());
    const StripeManifest m = **read;
    EXPECT_EQ(m.version(), 2u);
    EXPECT_EQ(m.layout.parity, k);
    EXPECT_EQ(m.sum_block, 64u * 1024);
    EXPECT_EQ(m.size, size);
    auto map = StripeMap::Create(m.layout);
    auto codec = ParityCodec::Create(n, k);
    ASSERT_TRUE(map.ok() && codec.ok());
    const uint32_t d = n - k;

    for (uint64_t row = 0; row < map->Rows(size); ++row) {
      const uint64_t len = map->RowUnitLength(row, 0, size);
      std::vector<std::string> units;
      for (uint32_t c = 0; c < d; ++c) {
        // Data: the file's own bytes, at the layout's place.
        const std::string stored = StoredUnit(s.disks, *map, m, row, c);
        const uint64_t at = map->SlotFileOffset(row, c);
        ASSERT_EQ(stored, at < size ? s.data.substr(at, stored.size()) : "") << "row " << row << " slot " << c;
        units.push_back(stored + std::string(len - stored.size(), '\0'));
      }
      // Parity: what the data encodes to.
      std::vector<std::string> parity(k, std::string(len, '\0'));
      std::vector<std::span<const char>> in(units.begin(), units.end());
      std::vector<std::span<char>> out(parity.begin(), parity.end());
      ASSERT_TRUE(codec->Encode(in, out).ok());
      for (uint32_t j = 0; j < k; ++j)
        ASSERT_EQ(StoredUnit(s.disks, *map, m, row, d + j), parity[j]) << "row " << row << " parity " << j;
      // Sums: every unit's, on its own disk.
      for (uint32_t slot = 0; slot < n; ++slot) {
        const uint32_t disk = map->SlotDisk(row, slot);
        auto backend = LocalDiskBackend::Open(s.disks[disk]);
        ASSERT_TRUE(backend.ok());
        SumsHeader h{m.file_id, disk, m.layout, m.sum_block, 0};
        auto sums = UnitSums::Open(**backend, h, false);
        ASSERT_TRUE(sums.ok()) << sums.error().message();
        EXPECT_EQ(sums->header().part_length, map->PartSize(disk, size));
        const std::string stored = StoredUnit(s.disks, *map, m, row, slot);
        auto got = sums->Read(row, 0, (stored.size() + m.sum_block - 1) / m.sum_block);
        ASSERT_TRUE(got.ok());
        EXPECT_EQ(*got, BlockSums(stored, m.sum_block)) << "row " << row << " slot " << slot;
      }
    }
    for (uint32_t disk = 0; disk < n; ++disk)
      EXPECT_EQ(std::filesystem::file_size(s.disks[disk] + "/parts/" + m.file_id), map->PartSize(disk, size));

    // Disk 1 lost: each of its units comes back from the other disks.
    auto set = DiskSet::Open(*ReadRegistry(s.graph));
    ASSERT_TRUE(set.ok());
    auto parts = OpenParts(*set, m.file_id, O_RDONLY);
    ASSERT_TRUE(parts.ok());
    const uint32_t lost_disk = 1;
    auto read_unit = [&](const RowSource& src, std::span<char> into) -> Status {
      if (src.disk == lost_disk) return Error(EIO, "disk 1 is lost");
      auto got = ReadFull((*parts)[src.disk].get(), into.data(), into.size(), src.disk_offset, "read");
      if (!got.ok()) return got.error();
      return *got == into.size() ? Status::Ok() : Error(EIO, "short part");
    };
    for (uint64_t row = 0; row < map->Rows(size); ++row) {
      const uint32_t slot = map->DiskSlot(row, lost_disk);
      std::string rebuilt(map->unit(), '\0');
      std::vector<std::span<char>> into = {std::span<char>(rebuilt)};
      const std::vector<uint32_t> want = {slot};
      Status r = RepairRange(*map, *codec, size, row, want, {}, 0, into, read_unit);
      ASSERT_TRUE(r.ok()) << r.error().message();
      const std::string stored = StoredUnit(s.disks, *map, m, row, slot);
      EXPECT_EQ(rebuilt.substr(0, stored.size()), stored) << "row " << row;
    }

    // A flipped byte in a part: its block no longer matches its sum.
    {
      const std::string path = s.disks[2] + "/parts/" + m.file_id;
      std::string part = Slurp(path);
      part[70000] ^= 0x20;  // row 1, block 0 of disk 2's unit
      Spit(path, part);
      auto backend = LocalDiskBackend::Open(s.disks[2]);
      auto sums = UnitSums::Open(**backend, {m.file_id, 2, m.layout, m.sum_block, 0}, false);
      ASSERT_TRUE(sums.ok());
      Status v = VerifyBlockSums(std::string_view(part).substr(65536, 65536), m.sum_block, *sums->Read(1, 0, 1), 0,
                                 "disk 2, row 1");
      ASSERT_FALSE(v.ok());
      EXPECT_EQ(v.error().code(), EIO);
      part[70000] ^= 0x20;
      Spit(path, part);
    }

    // graphfs-unstripe: the plain file back, no part or sums file left.
    UnstripeRequest u;
    u.path = s.graph;
    u.progress = false;
    auto back = UnstripeFiles(u);
    ASSERT_TRUE(back.ok()) << back.error().message();
    ASSERT_EQ(back->converted.size(), 1u);
    EXPECT_FALSE((*ReadManifest(s.graph + "/column")).has_value());
    EXPECT_TRUE(Slurp(s.graph + "/column") == s.data);
    for (const std::string& disk : s.disks) {
      EXPECT_FALSE(std::filesystem::exists(disk + "/parts/" + m.file_id));
      EXPECT_FALSE(std::filesystem::exists(disk + "/parts/" + m.file_id + ".sums"));
    }
  }
}

// The striped copy is checked before it replaces the file: unstriping a parity file whose data
// was changed on a disk behind graphfs's back fails on the recorded checksum and keeps it.
TEST(ParityStripe, UnstripeRefusesDamagedDataAndKeepsTheStripedFile) {
  Striped s;
  ASSERT_NO_FATAL_FAILURE(StripeWithParity(s, 3, 1, 5 * 64 * 1024, 1 << 30));
  const StripeManifest m = **ReadManifest(s.graph + "/column");
  auto map = StripeMap::Create(m.layout);
  ASSERT_TRUE(map.ok());
  const DiskLocation byte10 = map->Locate(10);  // a data byte, not parity
  const std::string path = s.disks[byte10.disk] + "/parts/" + m.file_id;
  std::string part = Slurp(path);
  part[byte10.disk_offset] ^= 1;
  Spit(path, part);
  UnstripeRequest u;
  u.path = s.graph;
  u.progress = false;
  auto back = UnstripeFiles(u);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.error().code(), EIO);
  EXPECT_TRUE((*ReadManifest(s.graph + "/column")).has_value());
}

TEST(ParityStripe, RefusesWhatTheLayoutCannotHold) {
  TempDir tmp;
  const std::string graph = tmp.Sub("graph");
  Spit(graph + "/column", Random(256 * 1024, 1));
  StripeRequest req;
  req.path = graph;
  req.disks = {tmp.Sub("d0"), tmp.Sub("d1")};
  req.unit = 64 * 1024;
  req.min_size = 1;
  req.progress = false;
  req.parity = 2;
  auto r = StripeFiles(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), EINVAL);
  EXPECT_EQ(r.error().message(), "--parity 2 needs at least 3 disks (got 2): every row must keep a data unit");
  req.parity = 3;
  EXPECT_EQ(StripeFiles(req).error().message(), "--parity 3: 0, 1 or 2");
  req.parity = 1;
  req.compress = "zstd:1";
  EXPECT_NE(StripeFiles(req).error().message().find("add --compress none"), std::string::npos);
  req.compress.clear();
  req.unit = 32 * 1024;  // smaller than a 64 KiB checksum block
  EXPECT_EQ(StripeFiles(req).error().code(), EINVAL);
  EXPECT_FALSE((*ReadManifest(graph + "/column")).has_value());  // nothing was striped

  // The tool: usage errors exit 2 with the same words.
  const std::string list = req.disks[0] + "," + req.disks[1];
  auto run = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "-q", "--parity", "2", "--disks", list, graph});
  EXPECT_TRUE(run.exited && run.exit_code == 2) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("--parity 2 needs at least 3 disks (got 2)"), std::string::npos) << run.output;
  run = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "-q", "--parity", "3", "--disks", list, graph});
  EXPECT_TRUE(run.exited && run.exit_code == 2) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("--parity 3: 0, 1 or 2"), std::string::npos) << run.output;
  // --parity 1 over 2 disks (a mirror) is allowed when asked for, and implies raw units.
  run = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "--parity", "1", "--unit", "64K", "--min-size", "1", "--disks", list, graph});
  ASSERT_TRUE(run.exited && run.exit_code == 0) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("parity 1 over 2 disks: 50% of the disks' space (100% of the data)"), std::string::npos)
      << run.output;
  auto m = ReadManifest(graph + "/column");
  ASSERT_TRUE(m.ok() && m->has_value());
  EXPECT_EQ((*m)->layout.parity, 1u);
  EXPECT_FALSE((*m)->packed.has_value());
}

}  // namespace
}  // namespace graphfs
