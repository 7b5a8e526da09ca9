// graphfs-stripe --parity K (StripeFiles with StripeRequest::parity) and graphfs-unstripe of what it
// made: the parts hold the data where the layout says, each row's parity is what its data encodes
// to, every unit's blocks have their sums; a lost disk's units are rebuilt from the rest (row
// repair), a flipped byte is caught by the sums, and unstriping restores the file and leaves no
// part or sums file behind. Bad input is refused with the messages of docs/parity.md.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
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
#include "tests/striping/parity_graph.h"
#include "tests/testutil/file_bytes.h"

namespace graphfs {
namespace {

using testing::RandomBytes;
using testing::ReadFile;
using testing::WriteFile;

// The bytes of slot `slot` of row `row` as stored on its disk (its part file, read directly).
std::string StoredUnit(const std::vector<std::string>& disks, const StripeMap& map, const StripeManifest& m,
                       uint64_t row, uint32_t slot) {
  std::ifstream part(testing::PartPath(disks[map.SlotDisk(row, slot)], m), std::ios::binary);
  std::string unit(map.RowUnitLength(row, slot, m.size), '\0');
  part.seekg(static_cast<std::streamoff>(row * map.unit()));
  part.read(unit.data(), static_cast<std::streamsize>(unit.size()));
  EXPECT_EQ(static_cast<uint64_t>(part.gcount()), unit.size()) << "the part ends early";
  return unit;
}

// The parts of `m` (striped with parity from `data`) hold the data where the layout says, each
// row's parity is what an independent encode of its data gives, every unit's block sums are in
// its disk's sums file, and the parts and sums headers have the layout's lengths.
void CheckParityFile(const std::vector<std::string>& disks, const StripeManifest& m, const std::string& data) {
  const uint64_t size = m.size;
  ASSERT_EQ(size, data.size());
  auto map = StripeMap::Create(m.layout);
  auto codec = ParityCodec::Create(m.layout.disks, m.layout.parity);
  ASSERT_TRUE(map.ok() && codec.ok());
  const uint32_t n = m.layout.disks, k = m.layout.parity, d = n - k;
  std::vector<std::unique_ptr<LocalDiskBackend>> backends;
  std::vector<UnitSums> sums;
  for (uint32_t disk = 0; disk < n; ++disk) {
    auto backend = LocalDiskBackend::Open(disks[disk]);
    ASSERT_TRUE(backend.ok());
    backends.push_back(std::move(*backend));
    auto opened = UnitSums::Open(*backends.back(), {m.file_id, disk, m.layout, m.sum_block, 0}, false);
    ASSERT_TRUE(opened.ok()) << opened.error().message();
    EXPECT_EQ(opened->header().part_length, map->PartSize(disk, size));
    sums.push_back(std::move(*opened));
  }
  for (uint64_t row = 0; row < map->Rows(size); ++row) {
    const uint64_t len = map->RowUnitLength(row, 0, size);
    std::vector<std::string> units;
    for (uint32_t c = 0; c < d; ++c) {
      // Data: the file's own bytes, at the layout's place.
      const std::string stored = StoredUnit(disks, *map, m, row, c);
      const uint64_t at = map->SlotFileOffset(row, c);
      ASSERT_EQ(stored, at < size ? data.substr(at, stored.size()) : "") << "row " << row << " slot " << c;
      units.push_back(stored + std::string(len - stored.size(), '\0'));
    }
    // Parity: what the data encodes to.
    std::vector<std::string> parity(k, std::string(len, '\0'));
    std::vector<std::span<const char>> in(units.begin(), units.end());
    std::vector<std::span<char>> out(parity.begin(), parity.end());
    ASSERT_TRUE(codec->Encode(in, out).ok());
    for (uint32_t j = 0; j < k; ++j)
      ASSERT_EQ(StoredUnit(disks, *map, m, row, d + j), parity[j]) << "row " << row << " parity " << j;
    // Sums: every unit's, on its own disk.
    for (uint32_t slot = 0; slot < n; ++slot) {
      const uint32_t disk = map->SlotDisk(row, slot);
      const std::string stored = StoredUnit(disks, *map, m, row, slot);
      auto got = sums[disk].Read(row, 0, (stored.size() + m.sum_block - 1) / m.sum_block);
      ASSERT_TRUE(got.ok());
      EXPECT_EQ(*got, BlockSums(stored, m.sum_block)) << "row " << row << " slot " << slot;
    }
  }
  for (uint32_t disk = 0; disk < n; ++disk)
    EXPECT_EQ(std::filesystem::file_size(testing::PartPath(disks[disk], m)), map->PartSize(disk, size));
}

// `column` of random bytes in a graph directory over N disks (tests/striping/parity_graph.h).
struct Striped : testing::ParityGraph {
  using testing::ParityGraph::ParityGraph;
  std::string data;
};

// Stripes the graph directory of `s` (its one file, `column`, of `size` random bytes) with
// parity `k`, graphfs-stripe's sum block and a checkpoint every `checkpoint` bytes.
void StripeWithParity(Striped& s, uint32_t k, uint64_t size, uint64_t checkpoint) {
  s.data = RandomBytes(size, size + k);
  WriteFile(s.graph + "/column", s.data);
  StripeRequest req = testing::TestStripeRequest(s.graph, s.disks);
  req.checkpoint = checkpoint;
  req.parity = k;
  auto report = StripeFiles(req);
  ASSERT_TRUE(report.ok()) << report.error().message();
  ASSERT_EQ(report->converted.size(), 1u);
}

TEST(ParityStripe, PartsHoldDataParityAndSumsAndUnstripeRestoresTheFile) {
  for (uint32_t k : {1u, 2u}) {
    const uint32_t n = 4;
    Striped s(n);
    // 8 data units of 64 KiB, the last short: rows of 3 (K = 1) or 2 (K = 2), the last one short;
    // copied in checkpoints of 2 rows.
    const uint64_t size = 7 * 64 * 1024 + 12345;
    ASSERT_NO_FATAL_FAILURE(StripeWithParity(s, k, size, 2 * 64 * 1024 * (n - k)));
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
    ASSERT_NO_FATAL_FAILURE(CheckParityFile(s.disks, m, s.data));

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
      const std::string path = testing::PartPath(s.disks[2], m);
      testing::FlipByte(path, 70000);  // row 1, block 0 of disk 2's unit
      const std::string part = ReadFile(path);
      auto backend = LocalDiskBackend::Open(s.disks[2]);
      auto sums = UnitSums::Open(**backend, {m.file_id, 2, m.layout, m.sum_block, 0}, false);
      ASSERT_TRUE(sums.ok());
      Status v = VerifyBlockSums(std::string_view(part).substr(65536, 65536), m.sum_block, *sums->Read(1, 0, 1), 0,
                                 "disk 2, row 1");
      ASSERT_FALSE(v.ok());
      EXPECT_EQ(v.error().code(), EIO);
      testing::FlipByte(path, 70000);  // back as it was
    }

    // graphfs-unstripe: the plain file back, no part or sums file left.
    auto back = testing::Unstripe(s.graph);
    ASSERT_TRUE(back.ok()) << back.error().message();
    ASSERT_EQ(back->converted.size(), 1u);
    EXPECT_FALSE((*ReadManifest(s.graph + "/column")).has_value());
    EXPECT_TRUE(ReadFile(s.graph + "/column") == s.data);
    for (const std::string& disk : s.disks) {
      EXPECT_FALSE(std::filesystem::exists(testing::PartPath(disk, m)));
      EXPECT_FALSE(std::filesystem::exists(testing::SumsPath(disk, m)));
    }
  }
}

// Killed at points spread over a run, graphfs-stripe --parity leaves the plain file (or, at the
// very end, the finished striped one) and a pending record; run again, it resumes from its last
// checkpoint — rows whose parity and sums were made durable by the killed run are kept — and
// the finished file's parity and sums are those of the whole file.
TEST(ParityStripe, KilledRunsResumeIntoTheSameParity) {
  const testing::ParityGraph g(4);
  const std::vector<std::string>& disks = g.disks;
  const std::string& graph = g.graph;
  const std::string data = RandomBytes(12 * 1024 * 1024 + 4321, 44);
  const std::string list = disks[0] + "," + disks[1] + "," + disks[2] + "," + disks[3];
  const std::vector<std::string> stripe = {GRAPHFS_STRIPE_TOOL, "-q",          "--parity",   "1",   "--unit",
                                           "64K",               "--min-size",  "1M",         "--checkpoint",
                                           "192K",              "--disks",     list,         graph};
  auto unstripe = [&] {
    auto r = testing::Unstripe(graph);
    ASSERT_TRUE(r.ok()) << r.error().message();
  };
  WriteFile(graph + "/column", data);
  // How long a whole run takes here, to spread the kills over it.
  const auto start = std::chrono::steady_clock::now();
  auto full = testing::RunBinary(stripe, 120);
  ASSERT_TRUE(full.exited && full.exit_code == 0) << full.How() << "\n" << full.output;
  const auto run_time = std::chrono::steady_clock::now() - start;
  ASSERT_NO_FATAL_FAILURE(CheckParityFile(disks, **ReadManifest(graph + "/column"), data));
  ASSERT_NO_FATAL_FAILURE(unstripe());

  int resumed = 0;
  for (int tenth = 1; tenth <= 9; ++tenth) {
    int status = 0;
    (void)testing::RunAndKill(stripe, std::chrono::duration_cast<std::chrono::microseconds>(run_time * tenth / 10),
                              &status);  // finished or killed: the manifest below tells which
    auto m = ReadManifest(graph + "/column");
    ASSERT_TRUE(m.ok());
    if (m->has_value()) {  // it finished before the kill
      ASSERT_NO_FATAL_FAILURE(CheckParityFile(disks, **m, data));
    } else {
      ASSERT_TRUE(ReadFile(graph + "/column") == data) << "the plain file changed, kill at " << tenth << "/10";
      const std::string record = ReadFile(graph + "/.graphfs/pending-stripe/column.json");
      if (record.find("\"parity\":1") != std::string::npos && record.find("\"done\":0,") == std::string::npos)
        ++resumed;  // a checkpoint was reached: the rerun starts from it
    }
    auto again = testing::RunBinary(stripe, 120);
    ASSERT_TRUE(again.exited && again.exit_code == 0) << again.How() << "\n" << again.output;
    auto done = ReadManifest(graph + "/column");
    ASSERT_TRUE(done.ok() && done->has_value());
    ASSERT_NO_FATAL_FAILURE(CheckParityFile(disks, **done, data)) << "after a kill at " << tenth << "/10";
    ASSERT_NO_FATAL_FAILURE(unstripe());
    ASSERT_TRUE(ReadFile(graph + "/column") == data);
  }
  // The point of the test: some reruns resumed a half-done file rather than starting over.
  RecordProperty("resumed", resumed);
  EXPECT_GT(resumed, 0);
}

// The striped copy is checked before it replaces the file: unstriping a parity file whose data
// was changed on a disk behind graphfs's back fails on the recorded checksum and keeps it.
// Unstriping reads a file with parity through it: a flipped data byte and a missing disk are
// rebuilt (the plain file is the original, whose whole checksum is checked too), and more bad
// units in a block than the parity is EIO, keeping the striped file.
TEST(ParityStripe, UnstripeRebuildsDamagedOrMissingUnitsFromParity) {
  for (uint32_t k : {1u, 2u}) {
    SCOPED_TRACE("parity " + std::to_string(k));
    Striped s(5);
    ASSERT_NO_FATAL_FAILURE(StripeWithParity(s, k, 11 * 64 * 1024 + 999, 1 << 30));
    const StripeManifest m = **ReadManifest(s.graph + "/column");
    auto map = StripeMap::Create(m.layout);
    ASSERT_TRUE(map.ok());
    const DiskLocation byte10 = map->Locate(10);  // a data byte, not parity
    const std::string path = testing::PartPath(s.disks[byte10.disk], m);
    testing::FlipByte(path, byte10.disk_offset, 1);
    // And a whole disk gone. With K = 1 it takes the redundancy the flipped byte needs: the flip
    // is undone first, and only the missing disk is rebuilt.
    const uint32_t gone = (byte10.disk + 1) % 5;
    if (k == 1) testing::FlipByte(path, byte10.disk_offset, 1);
    std::filesystem::remove_all(s.disks[gone]);
    auto back = testing::Unstripe(s.graph);
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_TRUE(ReadFile(s.graph + "/column") == s.data) << "the plain file differs from the original";
    ASSERT_EQ(back->notes.size(), 1u);
    EXPECT_NE(back->notes[0].find("rebuilt from parity"), std::string::npos) << back->notes[0];
  }
  // K + 1 bad units in a block: refused, the striped file kept.
  Striped s(3);
  ASSERT_NO_FATAL_FAILURE(StripeWithParity(s, 1, 5 * 64 * 1024, 1 << 30));
  const StripeManifest m = **ReadManifest(s.graph + "/column");
  auto map = StripeMap::Create(m.layout);
  for (uint64_t offset : {uint64_t{10}, uint64_t{64 * 1024 + 10}}) {  // data units 0 and 1 of row 0
    const DiskLocation at = map->Locate(offset);
    testing::FlipByte(testing::PartPath(s.disks[at.disk], m), at.disk_offset, 1);
  }
  auto back = testing::Unstripe(s.graph);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.error().code(), EIO);
  EXPECT_NE(back.error().message().find("cannot rebuild them"), std::string::npos) << back.error().message();
  EXPECT_TRUE((*ReadManifest(s.graph + "/column")).has_value());
}

TEST(ParityStripe, RefusesWhatTheLayoutCannotHold) {
  const testing::ParityGraph g(2);
  const std::string& graph = g.graph;
  WriteFile(graph + "/column", RandomBytes(256 * 1024, 1));
  StripeRequest req = testing::TestStripeRequest(graph, g.disks);
  req.parity = 2;
  auto r = StripeFiles(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), EINVAL);
  EXPECT_EQ(r.error().message(), "--parity 2 needs at least 3 disks (got 2): every row must keep a data unit");
  req.parity = 3;
  EXPECT_EQ(StripeFiles(req).error().message(), "--parity 3: 0, 1 or 2");
  req.parity = 1;
  req.unit = 32 * 1024;  // smaller than a 64 KiB checksum block
  EXPECT_EQ(StripeFiles(req).error().code(), EINVAL);
  req.compress = "zstd:1";  // a compressed file's packed stream is laid out in the same units
  EXPECT_NE(StripeFiles(req).error().message().find("is not a multiple of the checksum block"), std::string::npos);
  req.compress.clear();
  EXPECT_FALSE((*ReadManifest(graph + "/column")).has_value());  // nothing was striped

  // The tool: usage errors exit 2 with the same words.
  const std::string list = req.disks[0] + "," + req.disks[1];
  auto run = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "-q", "--parity", "2", "--disks", list, graph});
  EXPECT_TRUE(run.exited && run.exit_code == 2) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("--parity 2 needs at least 3 disks (got 2)"), std::string::npos) << run.output;
  run = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "-q", "--parity", "3", "--disks", list, graph});
  EXPECT_TRUE(run.exited && run.exit_code == 2) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("--parity 3: 0, 1 or 2"), std::string::npos) << run.output;
  // --parity 1 over 2 disks (a mirror) is allowed when asked for (random bytes: `auto` leaves
  // them raw).
  run = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "--parity", "1", "--unit", "64K", "--min-size", "1", "--disks", list, graph});
  ASSERT_TRUE(run.exited && run.exit_code == 0) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("parity 1 over 2 disks: 50% of the disks' space (100% of the data)"), std::string::npos)
      << run.output;
  auto m = ReadManifest(graph + "/column");
  ASSERT_TRUE(m.ok() && m->has_value());
  EXPECT_EQ((*m)->layout.parity, 1u);
  EXPECT_FALSE((*m)->packed.has_value());
}

// graphfs-stripe without --parity (docs/parity.md, "The default K"): one parity unit per row on 3
// disks or more, with the overhead said, and compression as by default (the packed stream gets the
// parity); none on 2 disks (a mirror is asked for, never the default); a --unit that the checksum
// blocks do not tile is refused naming --parity 0.
TEST(ParityStripe, TheToolDefaultsToOneParityUnitFromThreeDisks) {
  testing::ParityGraph g(3);
  std::mt19937_64 rng(7);
  std::string data(3 << 20, '\0');
  for (char& c : data) c = static_cast<char>('a' + rng() % 8);  // compressible
  WriteFile(g.graph + "/column", data);
  const std::string three = g.disks[0] + "," + g.disks[1] + "," + g.disks[2];
  auto run = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "--unit", "32K", "--min-size", "1M", "--disks", three, g.graph});
  EXPECT_TRUE(run.exited && run.exit_code == 2) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("--unit 32K is not a multiple of the 64K checksum block"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("--parity 0"), std::string::npos) << run.output;
  EXPECT_FALSE((*ReadManifest(g.graph + "/column")).has_value());

  run = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "--unit", "64K", "--min-size", "1M", "--compress", "zstd:1", "--disks",
                            three, g.graph});
  ASSERT_TRUE(run.exited && run.exit_code == 0) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("parity 1 over 3 disks: 33% of the disks' space (50% of the data)"), std::string::npos)
      << run.output;
  auto m = ReadManifest(g.graph + "/column");
  ASSERT_TRUE(m.ok() && m->has_value());
  EXPECT_EQ((*m)->layout.parity, 1u);
  EXPECT_TRUE((*m)->packed.has_value());
  EXPECT_EQ(ReadRegistry(g.graph)->parity, 1u);
  ASSERT_TRUE(testing::Unstripe(g.graph).ok());
  ASSERT_TRUE(ReadFile(g.graph + "/column") == data);

  // Two (other) disks: no parity unless asked for.
  const std::string two = g.tmp.Sub("e0") + "," + g.tmp.Sub("e1");
  run = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "--unit", "32K", "--min-size", "1M", "--disks", two, g.graph});
  ASSERT_TRUE(run.exited && run.exit_code == 0) << run.How() << "\n" << run.output;
  EXPECT_EQ(run.output.find("of the disks' space"), std::string::npos) << run.output;
  m = ReadManifest(g.graph + "/column");
  ASSERT_TRUE(m.ok() && m->has_value());
  EXPECT_EQ((*m)->layout.parity, 0u);
  EXPECT_EQ((*m)->sum_block, 0u);
}

// The ids of the files whose parts (or sums files, or journals) are on `disks`.
std::set<std::string> IdsOnDisks(const std::vector<std::string>& disks) {
  std::set<std::string> ids;
  for (const std::string& d : disks) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(d + "/parts", ec)) {
      const std::string name = e.path().filename().string();
      ids.insert(name.substr(0, name.find('.')));
    }
  }
  return ids;
}

// graphfs-stripe --parity K on a graph striped already (raw): each file gets a new copy in the
// layout with K — in its own unit, checked like a file striped afresh — the stub switches to it,
// the old parts go, and the registry's parity follows once every file has it; K = 2, and back to 0
// (no sums left), the same way. Without --parity the tool leaves striped files alone.
TEST(ParityStripe, FilesStripedAlreadyGetAnotherParityInPlace) {
  const testing::ParityGraph g(4);
  const std::string data = RandomBytes(3 * 1024 * 1024 + 4321, 45);
  WriteFile(g.graph + "/column", data);
  const std::string list = g.disks[0] + "," + g.disks[1] + "," + g.disks[2] + "," + g.disks[3];
  auto stripe = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {GRAPHFS_STRIPE_TOOL, "-q", "--compress", "none", "--unit", "64K", "--min-size", "1M"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--disks", list, g.graph});
    return testing::RunBinary(argv, 120);
  };
  auto run = stripe({"--parity", "0"});
  ASSERT_TRUE(run.exited && run.exit_code == 0) << run.How() << "\n" << run.output;
  const StripeManifest before = **ReadManifest(g.graph + "/column");
  ASSERT_EQ(before.layout.parity, 0u);
  EXPECT_EQ(ReadRegistry(g.graph)->parity, 0u);
  // The library without change_parity (and the tool without --parity) leaves it as it is.
  StripeRequest req = testing::TestStripeRequest(g.graph, g.disks);
  req.parity = 1;
  auto left = StripeFiles(req);
  ASSERT_TRUE(left.ok()) << left.error().message();
  EXPECT_TRUE(left->converted.empty());
  EXPECT_EQ((*ReadManifest(g.graph + "/column"))->file_id, before.file_id);

  for (uint32_t k : {1u, 2u, 0u}) {
    SCOPED_TRACE("to parity " + std::to_string(k));
    const StripeManifest old = **ReadManifest(g.graph + "/column");
    run = stripe({"--parity", std::to_string(k)});
    ASSERT_TRUE(run.exited && run.exit_code == 0) << run.How() << "\n" << run.output;
    const StripeManifest now = **ReadManifest(g.graph + "/column");
    EXPECT_EQ(now.layout.parity, k);
    EXPECT_NE(now.file_id, old.file_id);
    EXPECT_EQ(now.layout.unit, old.layout.unit);
    EXPECT_EQ(now.size, data.size());
    EXPECT_EQ(now.checksum, old.checksum);
    if (k > 0) {
      EXPECT_EQ(now.sum_block, 64u * 1024);
      ASSERT_NO_FATAL_FAILURE(CheckParityFile(g.disks, now, data));
    } else {
      EXPECT_EQ(now.sum_block, 0u);
    }
    EXPECT_EQ(IdsOnDisks(g.disks), std::set<std::string>{now.file_id}) << "the old parts were left behind";
    EXPECT_EQ(ReadRegistry(g.graph)->parity, k);
    EXPECT_FALSE(std::filesystem::exists(g.graph + "/.graphfs/pending-parity/column.json"));
    // The same K again: nothing to do.
    run = stripe({"--parity", std::to_string(k)});
    ASSERT_TRUE(run.exited && run.exit_code == 0) << run.How() << "\n" << run.output;
    EXPECT_EQ((*ReadManifest(g.graph + "/column"))->file_id, now.file_id);
  }
  ASSERT_TRUE(testing::Unstripe(g.graph).ok());
  EXPECT_TRUE(ReadFile(g.graph + "/column") == data);
}

// kill -9 of graphfs-stripe --parity 1 on a file striped without parity, at tenths of a run: the
// file is the old copy or the new one, never a mix; a rerun resumes from the checkpoint the
// killed run recorded (.graphfs/pending-parity/) and ends with the parity file and no part of
// either copy left over.
TEST(ParityStripe, KilledParityChangesResume) {
  const testing::ParityGraph g(4);
  const std::string data = RandomBytes(12 * 1024 * 1024 + 4321, 46);
  WriteFile(g.graph + "/column", data);
  const std::string list = g.disks[0] + "," + g.disks[1] + "," + g.disks[2] + "," + g.disks[3];
  auto argv = [&](const char* k) {
    return std::vector<std::string>{GRAPHFS_STRIPE_TOOL, "-q",      "--compress", "none",   "--parity", k,
                                    "--unit",            "64K",     "--min-size", "1M",     "--checkpoint",
                                    "192K",              "--disks", list,         g.graph};
  };
  auto plain = testing::RunBinary(argv("0"), 120);
  ASSERT_TRUE(plain.exited && plain.exit_code == 0) << plain.How() << "\n" << plain.output;
  const auto start = std::chrono::steady_clock::now();
  auto full = testing::RunBinary(argv("1"), 120);
  ASSERT_TRUE(full.exited && full.exit_code == 0) << full.How() << "\n" << full.output;
  const auto run_time = std::chrono::steady_clock::now() - start;
  ASSERT_NO_FATAL_FAILURE(CheckParityFile(g.disks, **ReadManifest(g.graph + "/column"), data));

  int resumed = 0;
  for (int tenth = 1; tenth <= 9; ++tenth) {
    SCOPED_TRACE("kill at " + std::to_string(tenth) + "/10");
    auto back = testing::RunBinary(argv("0"), 120);
    ASSERT_TRUE(back.exited && back.exit_code == 0) << back.How() << "\n" << back.output;
    const StripeManifest old = **ReadManifest(g.graph + "/column");
    ASSERT_EQ(old.layout.parity, 0u);
    int status = 0;
    (void)testing::RunAndKill(argv("1"), std::chrono::duration_cast<std::chrono::microseconds>(run_time * tenth / 10),
                              &status);
    const StripeManifest m = **ReadManifest(g.graph + "/column");
    if (m.layout.parity == 1) {  // switched before the kill
      ASSERT_NO_FATAL_FAILURE(CheckParityFile(g.disks, m, data));
    } else {
      EXPECT_EQ(m.file_id, old.file_id) << "the stub names neither copy";
      const std::string record = ReadFile(g.graph + "/.graphfs/pending-parity/column.json");
      if (record.find("\"parity\":1") != std::string::npos && record.find("\"done\":0,") == std::string::npos)
        ++resumed;
    }
    auto again = testing::RunBinary(argv("1"), 120);
    ASSERT_TRUE(again.exited && again.exit_code == 0) << again.How() << "\n" << again.output;
    const StripeManifest done = **ReadManifest(g.graph + "/column");
    ASSERT_EQ(done.layout.parity, 1u);
    ASSERT_NO_FATAL_FAILURE(CheckParityFile(g.disks, done, data));
    EXPECT_EQ(IdsOnDisks(g.disks), std::set<std::string>{done.file_id}) << "parts of a copy left over";
    EXPECT_FALSE(std::filesystem::exists(g.graph + "/.graphfs/pending-parity/column.json"));
  }
  RecordProperty("resumed", resumed);
  EXPECT_GT(resumed, 0);
  ASSERT_TRUE(testing::Unstripe(g.graph).ok());
  EXPECT_TRUE(ReadFile(g.graph + "/column") == data);
}

// Bad input to a parity change: a unit the checksum blocks do not tile, K > 2 — each
// refused with its message, the striped file as it was.
TEST(ParityStripe, ParityChangesRefuseWhatTheLayoutCannotHold) {
  const testing::ParityGraph g(3);
  const std::string data = RandomBytes(1024 * 1024 + 7, 47);
  WriteFile(g.graph + "/column", data);
  const std::string list = g.disks[0] + "," + g.disks[1] + "," + g.disks[2];
  auto stripe = [&](const char* unit, const char* k) {
    return testing::RunBinary({GRAPHFS_STRIPE_TOOL, "-q", "--compress", "none", "--parity", k, "--unit", unit,
                               "--min-size", "1M", "--disks", list, g.graph}, 120);
  };
  auto run = stripe("32K", "0");
  ASSERT_TRUE(run.exited && run.exit_code == 0) << run.How() << "\n" << run.output;
  const StripeManifest before = **ReadManifest(g.graph + "/column");
  run = stripe("64K", "1");  // the file keeps its unit, 32K: smaller than a checksum block
  EXPECT_TRUE(run.exited && run.exit_code == 1) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("column: stripe unit 32768 is not a multiple of the checksum block (65536)"),
            std::string::npos) << run.output;
  run = stripe("64K", "3");
  EXPECT_TRUE(run.exited && run.exit_code == 2) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("--parity 3: 0, 1 or 2"), std::string::npos) << run.output;
  run = stripe("64K", "2");  // K = 2 fits 3 disks (a data unit a row), the 32K unit still does not
  EXPECT_TRUE(run.exited && run.exit_code == 1) << run.How() << "\n" << run.output;
  const StripeManifest after = **ReadManifest(g.graph + "/column");
  EXPECT_EQ(after.file_id, before.file_id);
  EXPECT_EQ(IdsOnDisks(g.disks), std::set<std::string>{before.file_id});
  EXPECT_FALSE(std::filesystem::exists(g.graph + "/.graphfs/pending-parity/column.json"));
}

}  // namespace
}  // namespace graphfs
