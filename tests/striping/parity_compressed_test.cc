// graphfs-stripe --parity K --compress CODEC (issue 44; docs/parity.md, "The default K"): a
// compressed file's packed stream is laid out in parity rows as a raw file's bytes are — every
// row's parity what its data encodes to, every block's sum on its disk (a scrub that only reports
// finds nothing) — and, read as the mount reads it (StripedFile under the packed reader), it
// gives the original bytes with a disk's directory gone, and with a flipped byte in a frame
// (repaired from parity, healed on the disk, counted); more lost disks than K are EIO naming
// them. graphfs-unstripe restores it with a disk missing, graphfs-rebuild gives the lost disk's
// parts and sums back byte for byte, and a killed graphfs-stripe resumes into the same stream.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>

#include "striping/disk_set.h"
#include "striping/packed_stream.h"
#include "striping/rebuild.h"
#include "striping/scrub.h"
#include "tests/engines/run_binary.h"
#include "tests/striping/parity_graph.h"

namespace graphfs {
namespace {

namespace fs = std::filesystem;
using testing::CompressibleBytes;
using testing::ParityGraph;
using testing::ReadFile;
using testing::WriteFile;

constexpr uint64_t kUnit = ParityGraph::kUnit;

// Frames of both versions (compress/unit_frame.h): 0, version 1 (one block a unit, what builds
// before frames cut into blocks wrote), and version 2 in blocks of 8 KiB (a unit of 50,000
// bytes in 7 blocks). Blocks live inside the frames' bytes: parity, sums, scrub, rebuild and
// unstripe see a stream either way.
constexpr uint64_t kFrameBlocks[] = {0, 8 << 10};

// `name` written with `data`, then compressed with zstd:1 in units of 50,000 bytes (frames in
// blocks of `block` raw bytes, 0: version 1) and parity `k` (sums of the fixture's block); its
// manifest.
StripeManifest CompressWithParity(ParityGraph& g, const std::string& name, const std::string& data, uint32_t k,
                                  uint64_t block = 8 << 10) {
  const std::string path = g.graph + "/" + name;
  WriteFile(path, data);
  StripeRequest req = testing::TestStripeRequest(path, g.disks);
  req.sum_block = ParityGraph::kBlock;
  req.parity = k;
  req.compress = "zstd:1";
  req.compress_unit = 50000;
  req.compress_block = block;
  const StripeManifest m = testing::StripeAndRead(req, path);
  EXPECT_TRUE(m.packed.has_value()) << name << " was not compressed";
  EXPECT_EQ(m.layout.parity, k);
  return m;
}

// `name` read whole as the mount reads a compressed file: its packed stream through StripedFile
// (verified, rebuilt through parity), each frame decoded.
Result<std::string> ReadDecoded(ParityGraph& g, const std::string& name, bool reopen_set = false) {
  auto f = g.OpenFile(name, reopen_set);
  if (!f.ok()) return f.error();
  auto reader = PackedFileReader::Open(*f);
  if (!reader.ok()) return reader.error();
  std::string out((*reader)->size(), '\0');
  auto n = (*reader)->Read(0, out.size(), out.data());
  if (!n.ok()) return n.error();
  if (*n != out.size()) return Error(EIO, "short read");
  return out;
}

uint64_t Total(const ParityGraph& g, std::atomic<uint64_t> DiskCounters::*counter) {
  uint64_t sum = 0;
  for (uint32_t d = 0; d < g.disks.size(); ++d) sum += (g.io->counters(d).*counter).load();
  return sum;
}

Result<ScrubReport> ReportOnly(const ParityGraph& g) {
  ScrubRequest req;
  req.paths = {g.graph};
  req.progress = false;
  req.repair = false;
  return Scrub(req);
}

// Every file under DIR/parts and its bytes.
std::map<std::string, std::string> PartsOf(const std::string& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir + "/parts", ec)) out[e.path().filename()] = ReadFile(e.path());
  return out;
}

TEST(ParityCompressed, StreamIsCodedInRowsAndReadsBack) {
  for (uint32_t k : {1u, 2u})
  for (uint64_t block : kFrameBlocks) {
    SCOPED_TRACE("parity " + std::to_string(k) + ", frame blocks " + std::to_string(block));
    ParityGraph g(5);
    const std::string data = CompressibleBytes(1500 * 1000 + 77, 10 + k);
    const StripeManifest m = CompressWithParity(g, "column", data, k, block);
    ASSERT_TRUE(m.packed.has_value());
    EXPECT_EQ(m.version(), 2u);
    EXPECT_EQ(m.sum_block, ParityGraph::kBlock);
    EXPECT_EQ(m.size, data.size());
    EXPECT_LT(m.packed->stream_size, data.size() * 3 / 4) << "the stream did not get smaller";
    // More rows than one, the last short: the rows the writer held and wrote as frames filled them.
    const StripeMap map = *StripeMap::Create(m.layout);
    EXPECT_GE(map.Rows(m.packed->stream_size), 3u);
    for (uint32_t d = 0; d < g.disks.size(); ++d) {
      EXPECT_EQ(fs::file_size(g.PartPath(d, m)), map.PartSize(d, m.packed->stream_size)) << "disk " << d;
      EXPECT_TRUE(fs::exists(g.SumsPath(d, m))) << "disk " << d;
    }
    // Every block matches its sum and every row's parity its data: a scrub finds nothing.
    auto scrub = ReportOnly(g);
    ASSERT_TRUE(scrub.ok()) << scrub.error().message();
    ASSERT_EQ(scrub->files.size(), 1u);
    EXPECT_EQ(scrub->files[0].rows, map.Rows(m.packed->stream_size));
    EXPECT_EQ(scrub->total.checksum_errors + scrub->total.parity_rewrites + scrub->total.unrepaired_blocks, 0u);
    EXPECT_FALSE(scrub->damage_left());
    auto read = ReadDecoded(g, "column");
    ASSERT_TRUE(read.ok()) << read.error().message();
    EXPECT_TRUE(*read == data);
    EXPECT_EQ(Total(g, &DiskCounters::checksum_errors) + Total(g, &DiskCounters::rebuilt_bytes), 0u);
    // Unstriped, the plain file is back, and no part or sums file is left.
    auto back = testing::Unstripe(g.graph);
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_TRUE(ReadFile(g.graph + "/column") == data);
    EXPECT_TRUE(back->notes.empty());
    for (const std::string& d : g.disks) EXPECT_TRUE(PartsOf(d).empty()) << d;
  }
}

TEST(ParityCompressed, DiskGoneReadsTheOriginalBytesAndMoreThanKIsEioNamingThem) {
  for (uint64_t block : kFrameBlocks) {
  SCOPED_TRACE("frame blocks " + std::to_string(block));
  ParityGraph g(4);
  const std::string data = CompressibleBytes(1200 * 1000 + 3, 21);
  const StripeManifest m = CompressWithParity(g, "column", data, 1, block);
  fs::remove_all(g.disks[2]);
  auto read = ReadDecoded(g, "column", /*reopen_set=*/true);
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_TRUE(*read == data) << "the bytes read through parity differ";
  EXPECT_GT(g.io->counters(2).rebuilt_bytes.load(), 0u);
  EXPECT_EQ(g.io->counters(0).rebuilt_bytes + g.io->counters(1).rebuilt_bytes + g.io->counters(3).rebuilt_bytes, 0u);

  // Disk 0's part gone too: two disks lost for a file that survives one.
  fs::remove(g.PartPath(0, m));
  auto two = ReadDecoded(g, "column", /*reopen_set=*/true);
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.error().code(), EIO) << two.error().message();
  EXPECT_NE(two.error().message().find("disk 0"), std::string::npos) << two.error().message();
  EXPECT_NE(two.error().message().find("disk 2"), std::string::npos) << two.error().message();
  }
}

TEST(ParityCompressed, FlippedByteInAFrameIsRepairedHealedAndCounted) {
  for (uint64_t block : kFrameBlocks) {
  SCOPED_TRACE("frame blocks " + std::to_string(block));
  ParityGraph g(4);
  const std::string data = CompressibleBytes(900 * 1000, 31);
  const StripeManifest m = CompressWithParity(g, "column", data, 1, block);
  // A byte inside the first frame (the stream's first bytes are its header and compressed data).
  const uint64_t at = kUnit + 4321;  // stream offset: data unit 1, inside a frame
  const DiskLocation where = StripeMap::Create(m.layout)->Locate(at);
  const std::string part = g.PartPath(where.disk, m);
  const char original = testing::ByteAt(part, where.disk_offset);
  testing::FlipByte(part, where.disk_offset, 0x5a);
  auto read = ReadDecoded(g, "column");
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_TRUE(*read == data) << "a flipped byte was served";
  EXPECT_EQ(g.io->counters(where.disk).checksum_errors.load(), 1u);
  EXPECT_EQ(g.io->counters(where.disk).healed_blocks.load(), 1u);
  EXPECT_GT(g.io->counters(where.disk).rebuilt_bytes.load(), 0u);
  EXPECT_EQ(testing::ByteAt(part, where.disk_offset), original) << "not healed on the disk";

  // Without the repair the frame's own checksum would have failed: the same flip with K + 1 bad
  // units in that block (the row's parity unit damaged too) is EIO, never wrong bytes.
  testing::FlipByte(part, where.disk_offset, 0x5a);
  const StripeMap map = *StripeMap::Create(m.layout);
  const uint64_t row = map.RowOf(at);
  g.FlipInUnit(m, row, map.data_units(), where.disk_offset - row * kUnit);
  g.set.reset();
  auto bad = ReadDecoded(g, "column");
  ASSERT_FALSE(bad.ok()) << "bytes served with K + 1 bad units";
  EXPECT_EQ(bad.error().code(), EIO) << bad.error().message();
  }
}

TEST(ParityCompressed, UnstripeWithADiskMissingRestoresTheBytes) {
  for (uint64_t block : kFrameBlocks) {
  SCOPED_TRACE("frame blocks " + std::to_string(block));
  ParityGraph g(5);
  const std::string data = CompressibleBytes(1300 * 1000 + 11, 41);
  CompressWithParity(g, "column", data, 1, block);
  fs::remove_all(g.disks[3]);
  auto back = testing::Unstripe(g.graph);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_TRUE(ReadFile(g.graph + "/column") == data) << "the plain file differs from the original";
  ASSERT_EQ(back->notes.size(), 1u);
  EXPECT_NE(back->notes[0].find("of its packed stream rebuilt from parity"), std::string::npos) << back->notes[0];
  }
}

TEST(ParityCompressed, RebuildGivesTheLostDisksPartsBack) {
  ParityGraph g(5);
  // One file of each frame version in the set.
  CompressWithParity(g, "column", CompressibleBytes(1400 * 1000 + 5, 51), 1, kFrameBlocks[0]);
  CompressWithParity(g, "row", CompressibleBytes(700 * 1000 + 999, 52), 1, kFrameBlocks[1]);
  const uint32_t lost = 1;
  const auto before = PartsOf(g.disks[lost]);
  ASSERT_EQ(before.size(), 4u);  // two parts, two sums files
  fs::remove_all(g.disks[lost]);
  const RebuildRequest req = g.RebuildOf(lost, g.tmp.Sub("new-disk"));
  auto r = Rebuild(req);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->files, 2u);
  EXPECT_EQ(PartsOf(req.to), before) << "the rebuilt parts and sums differ from the lost disk's";
  auto scrub = ReportOnly(g);
  ASSERT_TRUE(scrub.ok()) << scrub.error().message();
  EXPECT_FALSE(scrub->damage_left());
  EXPECT_EQ(scrub->total.checksum_errors + scrub->total.parity_rewrites, 0u);
}

// graphfs-stripe --compress zstd:1 --parity 1 killed at points spread over a run: the file is
// still the plain original, and a rerun — from the last row checkpoint when one was reached —
// ends with a stream whose rows, sums and frames are all right, and no part of a killed run left.
TEST(ParityCompressed, KilledRunsResumeIntoTheSameStream) {
  ParityGraph g(4);
  const std::string data = CompressibleBytes(16 * 1000 * 1000 + 4321, 61);
  const std::string& graph = g.graph;
  const std::string list = g.disks[0] + "," + g.disks[1] + "," + g.disks[2] + "," + g.disks[3];
  const std::vector<std::string> stripe = {
      GRAPHFS_STRIPE_TOOL, "-q",          "--parity",   "1",      "--compress", "zstd:1", "--compress-unit", "100K",
      "--unit",            "64K",         "--min-size", "1M",     "--checkpoint", "256K", "--disks",         list,
      graph};
  auto check = [&](const std::string& when) {
    auto m = ReadManifest(graph + "/column");
    ASSERT_TRUE(m.ok() && m->has_value() && (*m)->packed) << when;
    EXPECT_EQ((*m)->layout.parity, 1u) << when;
    auto scrub = ReportOnly(g);
    ASSERT_TRUE(scrub.ok()) << scrub.error().message();
    EXPECT_EQ(scrub->total.checksum_errors + scrub->total.parity_rewrites + scrub->total.unrepaired_blocks, 0u)
        << when;
    g.set.reset();
    auto read = ReadDecoded(g, "column");
    ASSERT_TRUE(read.ok()) << read.error().message();
    EXPECT_TRUE(*read == data) << when;
    for (const std::string& d : g.disks) EXPECT_EQ(PartsOf(d).size(), 2u) << when << ": " << d;
    auto back = testing::Unstripe(graph);
    ASSERT_TRUE(back.ok()) << back.error().message();
    ASSERT_TRUE(ReadFile(graph + "/column") == data) << when;
  };
  WriteFile(graph + "/column", data);
  const auto start = std::chrono::steady_clock::now();
  auto full = testing::RunBinary(stripe, 120);
  ASSERT_TRUE(full.exited && full.exit_code == 0) << full.How() << "\n" << full.output;
  const auto run_time = std::chrono::steady_clock::now() - start;
  ASSERT_NO_FATAL_FAILURE(check("a whole run"));

  int resumed = 0, inside_row = 0;
  for (int tenth = 1; tenth <= 9; ++tenth) {
    const std::string when = "after a kill at " + std::to_string(tenth) + "/10";
    int status = 0;
    (void)testing::RunAndKill(stripe, std::chrono::duration_cast<std::chrono::microseconds>(run_time * tenth / 10),
                              &status);
    auto m = ReadManifest(graph + "/column");
    ASSERT_TRUE(m.ok());
    if (!m->has_value()) {
      ASSERT_TRUE(ReadFile(graph + "/column") == data) << "the plain file changed, " << when;
      const std::string record = ReadFile(graph + "/.graphfs/pending-compress/column.json");
      // No record: killed before it was written (records are written whole, by rename).
      const nlohmann::json r = nlohmann::json::parse(record, nullptr, /*allow_exceptions=*/false);
      if (r.is_object() && r.value("parity", 0u) == 1 && !r["frames"].empty()) {
        ++resumed;  // frames were made durable with their rows: the rerun continues after them
        // ... inside a row, whose bytes before the last durable frame's end it reads back.
        const auto& last = r["frames"].back();
        const uint64_t end = (last[1].get<uint64_t>() + last[2].get<uint64_t>() + 4095) / 4096 * 4096;
        inside_row += end % (3 * kUnit) != 0;
      }
    }
    auto again = testing::RunBinary(stripe, 120);
    ASSERT_TRUE(again.exited && again.exit_code == 0) << again.How() << "\n" << again.output;
    ASSERT_NO_FATAL_FAILURE(check(when));
  }
  RecordProperty("resumed", resumed);
  RecordProperty("resumed_inside_a_row", inside_row);
  EXPECT_GT(inside_row, 0);
}

}  // namespace
}  // namespace graphfs
