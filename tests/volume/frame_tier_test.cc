// The cache's frame tier (volume/internal/frame_tier.h) under one memory budget: compressed files'
// frames stay in memory as the disks hold them, so a budget that holds a file's stored bytes
// reads each frame from the disks once however many passes read it, and a smaller one keeps a
// fixed part across passes (a pass reads about what is not kept; an LRU would read it all).
#include <fcntl.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "chunkindex/lp_memory.h"
#include "striping/restripe.h"
#include "tests/chunkindex/chunkindex_test_util.h"
#include "tests/testutil/file_bytes.h"
#include "tests/testutil/striped_files.h"
#include "volume/internal/volume_core.h"
#include "volume/internal/run_batches.h"
#include "volume/internal/volume_file.h"

namespace graphfs::volume {
namespace {

using chunkindex::testing::TempDir;
using graphfs::testing::WriteFile;

constexpr uint64_t kMiB = 1 << 20;
constexpr uint32_t kDisks = 4;

// SOURCE/g/data: `raw` bytes of 4 bits of entropy each (about half stored), striped over four
// temp-dir disks in 256 KiB units and compressed in units of 1 MiB, in frames cut into blocks
// of `block` bytes (0: version 1 frames, one block a unit).
struct CompressedFile {
  TempDir tmp;
  std::string source, path, bytes;
  uint64_t stored = 0;  // the frames' bytes on the disks

  explicit CompressedFile(uint64_t raw, uint64_t block = 64 << 10) {
    source = tmp.path() + "/source";
    std::filesystem::create_directories(source + "/g");
    std::vector<std::string> disks;
    for (uint32_t d = 0; d < kDisks; ++d) {
      disks.push_back(tmp.path() + "/disk" + std::to_string(d));
      std::filesystem::create_directories(disks.back());
    }
    bytes.resize(raw);
    std::mt19937_64 fill(7);
    for (char& c : bytes) c = static_cast<char>(fill() & 0x0f);
    path = source + "/g/data";
    WriteFile(path, bytes);
    StripeRequest r = testing::TestStripeRequest(source + "/g", disks, 256 << 10);
    r.min_size = 4096;
    r.compress = "zstd:1";
    r.compress_unit = kMiB;
    r.compress_block = block;
    auto done = StripeFiles(r);
    EXPECT_TRUE(done.ok()) << done.error().message();
  }
};

struct Mounted {
  std::unique_ptr<Volume> volume;
  std::shared_ptr<StripedVolumeFile> file;  // the file the volume made, as its core sees it
};

Mounted Open(const CompressedFile& c, uint64_t memory, const std::string& policy = "priority") {
  VolumeOptions o;
  o.source = c.source;
  o.memory_bytes = memory;
  o.read_ahead.staging_limit = kMiB;
  o.cache_policy = policy;
  Mounted m;
  auto v = Volume::Open(o);
  EXPECT_TRUE(v.ok()) << v.error().message();
  if (!v.ok()) return m;
  EXPECT_TRUE((*v)->Start().ok());
  m.volume = std::move(*v);
  struct stat st;
  EXPECT_EQ(::stat(c.path.c_str(), &st), 0);
  auto stub = StripedStub::Read(c.path, st);
  EXPECT_TRUE(stub.ok() && stub->has_value());
  auto f = m.volume->OpenStriped(UniqueFd(::open(c.path.c_str(), O_RDONLY | O_CLOEXEC)), **stub, c.path);
  EXPECT_TRUE(f.ok()) << f.error().message();
  if (f.ok()) m.file = std::static_pointer_cast<StripedVolumeFile>(*f);
  return m;
}

// One sequential pass in 1 MiB reads, as a FUSE reader of the mount does; checks every byte.
void Pass(Mounted& m, const std::string& bytes, uint32_t pid) {
  ReadStreams streams;
  AlignedBuffer scratch;
  for (uint64_t off = 0; off < bytes.size(); off += kMiB) {
    auto read = m.volume->Read(*m.file, streams, off, kMiB, pid, scratch);
    ASSERT_TRUE(read.ok()) << read.error().message();
    std::string got;
    for (const iovec& p : read->pieces()) got.append(static_cast<const char*>(p.iov_base), p.iov_len);
    ASSERT_TRUE(got == bytes.substr(off, kMiB)) << "bytes differ at " << off;
  }
}

uint64_t FramesFromDisks(Mounted& m) { return m.volume->core().packed_counters().frame_bytes.load(); }

// The file's frames' bytes on the disks.
uint64_t StoredBytes(Mounted& m, const CompressedFile& c) {
  std::vector<uint64_t> share(kDisks, 0);
  m.file->shared_source()->DiskShare(0, c.bytes.size(), share);
  return share[0] + share[1] + share[2] + share[3];
}

// Where the decoded units fit, they stay: each unit is read and decoded once, and no frame is
// kept beside its decoded unit (it would only take room from the decoded units).
TEST(FrameTier, ABudgetThatHoldsTheDecodedUnitsDecodesEachOnceAndKeepsNoFrames) {
  CompressedFile c(8 * kMiB);
  Mounted m = Open(c, 16 * kMiB);  // staging 1, the cache 15: the 8 decoded units fit
  ASSERT_NE(m.file, nullptr);
  const uint64_t stored = StoredBytes(m, c);
  for (int pass = 0; pass < 4; ++pass) Pass(m, c.bytes, 100 + static_cast<uint32_t>(pass % 2));
  EXPECT_EQ(m.volume->core().packed_counters().units_decoded.load(), 8u) << "each unit decoded once";
  EXPECT_EQ(FramesFromDisks(m), stored) << "each frame read once";
  EXPECT_EQ(m.volume->core().budget().state().frames_used, 0u);
  EXPECT_EQ(m.volume->core().frames()->cache().Stats().dropped, 8u);
}

// Where the frames fit and the decoded units do not, memory holds every frame (and decoded
// units in what they leave): each frame is read from the disks once, however many passes follow.
TEST(FrameTier, ABudgetThatHoldsTheFramesReadsEachFromTheDisksOnce) {
  CompressedFile c(16 * kMiB);
  // 16 MiB: staging 1, the cache 15 — the frames (about 8.5 MiB) fit, the decoded units (16) do not.
  Mounted m = Open(c, 16 * kMiB);
  ASSERT_NE(m.file, nullptr);
  const uint64_t stored = StoredBytes(m, c);
  ASSERT_LT(stored, 12 * kMiB) << "the data did not compress as the test needs";
  for (int pass = 0; pass < 2; ++pass) Pass(m, c.bytes, 100 + static_cast<uint32_t>(pass % 2));
  const uint64_t settled = FramesFromDisks(m);
  EXPECT_LE(settled, stored + stored / 20) << "each frame once (a prefetch may read one twice)";
  for (int pass = 2; pass < 6; ++pass) Pass(m, c.bytes, 100 + static_cast<uint32_t>(pass % 2));
  EXPECT_EQ(FramesFromDisks(m), settled) << "nothing from the disks once memory holds every frame";
  EXPECT_GT(m.volume->core().packed_counters().frame_bytes_from_memory.load(), stored);
  const MemoryBudget::State b = m.volume->core().budget().state();
  EXPECT_EQ(b.frames_used, m.volume->core().frames()->cache().used());
  EXPECT_EQ(b.units_capacity, b.cache_capacity - b.frames_used) << "decoded units get what the frames leave";
  EXPECT_LE(m.volume->core().cache()->used() + b.frames_used, b.cache_capacity);
}

// Where the frames fit with room to spare and the decoded units do not, a decoded unit the
// cache keeps from the second pass on stands for its frame: the frame goes, and the decoded
// tier gets its bytes — so more of the file stays decoded and a pass decodes less than the
// (cache - frames) of decoded units beside all the frames would save, still reading nothing
// from the disks.
TEST(FrameTier, ADecodedUnitStandsForItsFrameFromTheSecondPass) {
  CompressedFile c(16 * kMiB);
  Mounted m = Open(c, 16 * kMiB);  // the cache 15 MiB: frames ~8.4 fit, the 16 decoded units do not
  ASSERT_NE(m.file, nullptr);
  const uint64_t stored = StoredBytes(m, c);
  ASSERT_LT(stored, 9 * kMiB) << "the data did not compress as the test needs";
  Pass(m, c.bytes, 100);
  EXPECT_EQ(m.volume->core().frames()->dropped_for_decoded(), 0u) << "no frame goes in the pass that reads them";
  const MemoryBudget::State first = m.volume->core().budget().state();
  EXPECT_GE(first.frames_used, stored) << "after the first pass every frame is in memory";
  for (int pass = 1; pass < 8; ++pass) Pass(m, c.bytes, 100 + static_cast<uint32_t>(pass % 2));
  const uint64_t settled = FramesFromDisks(m);
  EXPECT_LE(settled, stored + stored / 20);
  EXPECT_GT(m.volume->core().frames()->dropped_for_decoded(), 0u);
  const uint64_t decoded_before = m.volume->core().packed_counters().units_decoded.load();
  for (int pass = 8; pass < 12; ++pass) Pass(m, c.bytes, 100 + static_cast<uint32_t>(pass % 2));
  const uint64_t per_pass = (m.volume->core().packed_counters().units_decoded.load() - decoded_before) / 4;
  const MemoryBudget::State b = m.volume->core().budget().state();
  // Beside all the frames, (cache - frames) of decoded units — 6 of the 16 — would be kept: 10
  // decodes a pass (7 when frames went only for units admitted after the first pass: those
  // admitted in it are hits from then on). Standing for their frames, up to (cache - frames) /
  // (1 - ratio) — 11 kept here, the frames' last MiB of spare room left: 5 decodes a pass.
  const uint64_t beside_all_frames = 16 - (b.cache_capacity - stored) / kMiB;
  EXPECT_LT(per_pass, beside_all_frames) << "decodes a pass";
  EXPECT_LE(per_pass, 6u) << "decodes a pass";
  EXPECT_LT(b.frames_used, stored) << "frames a decoded unit stands for are gone";
  EXPECT_GT(b.standing, 6 * kMiB);
  EXPECT_EQ(b.frames_capacity + b.standing + b.cache_capacity / 8, b.cache_capacity)
      << "their bytes moved from the frames' share to the decoded tier's";
  EXPECT_EQ(FramesFromDisks(m), settled) << "and every unit is still in memory in one form";
  EXPECT_LE(m.volume->core().cache()->used() + b.frames_used, b.cache_capacity);
}

// Where the whole file, decoded, fits the cache (less a 32nd) but not beside its frames, it is
// held decoded in place of them: from the first pass every unit the cache keeps stands for its
// frame at once, the frames go, and later passes decode nothing and read nothing from the disks.
// (Beside all its frames the decoded tier would keep 15 - 6.4 = 8.6 of the 12 MiB, and units
// standing one by one, a pass after they were kept, took passes to get there.) Its units are the
// only copies: a newcomer does not evict them.
TEST(FrameTier, AFileThatFitsDecodedInPlaceOfItsFramesIsHeldDecoded) {
  CompressedFile c(12 * kMiB);
  Mounted m = Open(c, 16 * kMiB);  // the cache 15 MiB, of it 14.5 for standing units: 12 decoded fit
  ASSERT_NE(m.file, nullptr);
  const uint64_t stored = StoredBytes(m, c);
  ASSERT_LT(stored, 7 * kMiB) << "the data did not compress as the test needs";
  Pass(m, c.bytes, 100);
  EXPECT_EQ(m.volume->core().frames()->in_place_bytes(), c.bytes.size()) << "every unit held in place from the first pass";
  const uint64_t decoded_before = m.volume->core().packed_counters().units_decoded.load();
  const uint64_t from_disks = FramesFromDisks(m);
  EXPECT_LE(from_disks, stored + stored / 20) << "no frame read twice on the way";
  EXPECT_EQ(decoded_before, 12u) << "each unit decoded once";
  for (int pass = 1; pass < 6; ++pass) Pass(m, c.bytes, 100 + static_cast<uint32_t>(pass % 2));
  EXPECT_EQ(m.volume->core().packed_counters().units_decoded.load(), decoded_before) << "nothing decoded again";
  EXPECT_EQ(FramesFromDisks(m), from_disks);
  m.volume->core().frames()->Settle();  // as the front end's memory samples do
  const MemoryBudget::State b = m.volume->core().budget().state();
  EXPECT_EQ(b.frames_used, 0u) << "no frame kept beside its decoded unit";
  EXPECT_EQ(b.standing, c.bytes.size());
  EXPECT_LE(m.volume->core().cache()->used(), b.units_capacity);
  EXPECT_LE(m.volume->core().cache()->used() + b.frames_used, b.cache_capacity);
}

TEST(FrameTier, ABudgetBelowTheFramesKeepsAFixedPartAcrossPasses) {
  CompressedFile c(32 * kMiB);  // about 17 MiB of frames
  // 10 MiB: staging 1, the cache 9, of it at most 7.9 for frames.
  Mounted m = Open(c, 10 * kMiB);
  ASSERT_NE(m.file, nullptr);
  const uint64_t stored = StoredBytes(m, c);
  Pass(m, c.bytes, 100);
  const uint64_t kept = m.volume->core().budget().state().frames_used;
  EXPECT_GT(kept, 6 * kMiB);
  for (int pass = 1; pass < 4; ++pass) {
    const uint64_t before = FramesFromDisks(m);
    const uint64_t memory_before = m.volume->core().packed_counters().frame_bytes_from_memory.load();
    Pass(m, c.bytes, 100);
    // What a pass reads is about what is not kept: the kept part stays, whatever the scan does.
    EXPECT_LE(FramesFromDisks(m) - before, stored - kept + 2 * kMiB) << "pass " << pass;
    EXPECT_GE(m.volume->core().packed_counters().frame_bytes_from_memory.load() - memory_before, kept - 2 * kMiB)
        << "pass " << pass;
  }
}

// The same scan under LRU: a cyclic scan larger than the cache never hits (the reason the
// priority policy is the default).
TEST(FrameTier, AnLruOfTheSameSizeReadsEveryPassAgain) {
  CompressedFile c(32 * kMiB);
  Mounted m = Open(c, 10 * kMiB, "lru");
  ASSERT_NE(m.file, nullptr);
  const uint64_t stored = StoredBytes(m, c);
  Pass(m, c.bytes, 100);
  const uint64_t before = FramesFromDisks(m);
  Pass(m, c.bytes, 100);
  EXPECT_GT(FramesFromDisks(m) - before, stored * 9 / 10);
}

// An LP's runs: `runs` (offset, length) of the file copied into an LP's memory as the loader
// copies a compressed column's (CopyRanges with `place`), then read back.
std::string CopyRuns(Mounted& m, const std::vector<std::pair<uint64_t, uint64_t>>& runs) {
  std::vector<CopyRange> ranges;
  uint64_t lp = 0;
  for (auto [offset, length] : runs) {
    ranges.push_back({offset, length, lp});
    lp += length;
  }
  chunkindex::LpMemory memory;
  Status st = m.volume->core().CopyRanges(m.file->shared_source(), m.file->size(), ranges, nullptr, 300,
                                          /*done_with_units=*/true, &memory);
  EXPECT_TRUE(st.ok()) << st.error().message();
  if (!st.ok() || !memory.Seal(lp)) return "";  // Seal: every byte placed, in order
  return memory.Copy(0, lp);
}

// Two runs in each of the first `units` 1 MiB units, in 3 of its 16 blocks: bytes 1000+3000
// (block 0) and a run across blocks 5 and 6; and the bytes they hold.
std::pair<std::vector<std::pair<uint64_t, uint64_t>>, std::string> FewRunsOfEachUnit(const CompressedFile& c,
                                                                                    uint64_t units) {
  std::vector<std::pair<uint64_t, uint64_t>> few;
  std::string expect;
  for (uint64_t u = 0; u < units; ++u) {
    for (auto [at, n] : {std::pair<uint64_t, uint64_t>{1000, 3000}, {5 * (64 << 10) + 10, 70000}}) {
      few.push_back({u * kMiB + at, n});
      expect += c.bytes.substr(u * kMiB + at, n);
    }
  }
  return {std::move(few), std::move(expect)};
}

// Frames cut into blocks (docs/block-frames.md): an LP's few runs of a unit whose frame is in
// memory and whose decoded unit is not decode from the blocks they lie in, not the whole unit;
// runs in more than half a unit's blocks, and frames of version 1 (one block), decode the unit.
TEST(FrameTier, AnLpsFewRunsDecodeOnlyTheBlocksTheyLieIn) {
  for (uint64_t block : {uint64_t{64 << 10}, uint64_t{0}}) {
    SCOPED_TRACE("frame blocks " + std::to_string(block));
    CompressedFile c(16 * kMiB, block);
    Mounted m = Open(c, 16 * kMiB);  // the frames (about 8.5 MiB) fit, the decoded units do not
    ASSERT_NE(m.file, nullptr);
    Pass(m, c.bytes, 100);  // every frame in memory
    const PackedCounters& z = m.volume->core().packed_counters();
    // Three blocks of each unit's 16: bytes 1000+3000 (block 0) and a run across blocks 5 and 6.
    auto [few, expect] = FewRunsOfEachUnit(c, 16);
    const uint64_t decoded_before = z.bytes_decoded.load();
    EXPECT_TRUE(CopyRuns(m, few) == expect) << "the runs' bytes differ";
    const uint64_t blocks = z.run_blocks_decoded.load(), block_bytes = z.run_block_bytes_decoded.load();
    EXPECT_EQ(z.checksum_errors.load(), 0u);
    if (block == 0) {
      EXPECT_EQ(blocks, 0u) << "a version 1 frame is one block: decoded whole";
      continue;
    }
    // Units whose decoded unit the cache kept are copied from it; every other one from 3 blocks.
    EXPECT_GT(blocks, 0u);
    EXPECT_EQ(blocks % 3, 0u) << blocks;
    EXPECT_EQ(block_bytes, blocks * (64 << 10)) << "decoded for runs: their blocks' raw bytes";
    EXPECT_LE(z.bytes_decoded.load() - decoded_before, 16 * kMiB);
    // Runs in 9 of a unit's 16 blocks: the whole unit, decoded as before.
    std::vector<std::pair<uint64_t, uint64_t>> most;
    expect.clear();
    for (uint64_t b = 0; b < 9; ++b) {
      most.push_back({3 * kMiB + b * (64 << 10) + 100, 200});
      expect += c.bytes.substr(3 * kMiB + b * (64 << 10) + 100, 200);
    }
    EXPECT_TRUE(CopyRuns(m, most) == expect);
    EXPECT_EQ(z.run_blocks_decoded.load(), blocks) << "more than half the blocks: not by blocks";
  }
}

// Path 3 of docs/block-frames.md: an LP's few runs of units whose frames are not in memory read
// only the blocks they lie in from the disks, once a first pass has shown where the blocks lie;
// frames of version 1 (one block) are read whole.
TEST(FrameTier, AnLpsFewRunsOfFramesNotInMemoryReadOnlyTheirBlocks) {
  for (uint64_t block : {uint64_t{64 << 10}, uint64_t{0}}) {
    SCOPED_TRACE("frame blocks " + std::to_string(block));
    CompressedFile c(32 * kMiB, block);
    Mounted m = Open(c, 4 * kMiB);  // a few of the ~16 MiB of frames fit
    ASSERT_NE(m.file, nullptr);
    const uint64_t stored = StoredBytes(m, c);
    Pass(m, c.bytes, 100);  // the frames' layouts learned
    const PackedCounters& z = m.volume->core().packed_counters();
    auto [few, expect] = FewRunsOfEachUnit(c, 32);
    const uint64_t disk_before = FramesFromDisks(m), read_before = z.run_block_bytes_read.load();
    EXPECT_TRUE(CopyRuns(m, few) == expect) << "the runs' bytes differ";
    const uint64_t disk = FramesFromDisks(m) - disk_before, blocks = z.run_blocks_read.load();
    EXPECT_EQ(z.checksum_errors.load(), 0u);
    if (block == 0) {
      EXPECT_EQ(blocks, 0u) << "a version 1 frame is one block: read whole";
      EXPECT_GT(disk, stored / 2);
      continue;
    }
    // Units held in memory (decoded or as frames) are copied from there; each other one read
    // its 3 blocks (0, 5 and 6), in whole pages, and nothing else.
    EXPECT_GT(blocks, 3u * 16) << "most units' frames are not in memory";
    EXPECT_EQ(blocks % 3, 0u) << blocks;
    EXPECT_EQ(disk, z.run_block_bytes_read.load() - read_before) << "no frame read whole";
    EXPECT_LT(disk, stored * 3 / 10) << "3 of 16 blocks, not the frames";
  }
}

// A cold mount: no frame has been read whole yet, so an LP's few runs learn where the frames'
// blocks lie from their headers and tables alone (a page or two each, read once per unit), then
// read only those blocks — a first sparse pass does not read whole frames for a few runs. A
// version 1 frame (one block) is read whole after its header says so, and its header is not
// read again.
TEST(FrameTier, AColdLpsFewRunsReadTheFramesTablesThenOnlyTheirBlocks) {
  for (uint64_t block : {uint64_t{64 << 10}, uint64_t{0}}) {
    SCOPED_TRACE("frame blocks " + std::to_string(block));
    CompressedFile c(32 * kMiB, block);
    Mounted m = Open(c, 4 * kMiB);
    ASSERT_NE(m.file, nullptr);
    const uint64_t stored = StoredBytes(m, c);
    const PackedCounters& z = m.volume->core().packed_counters();
    auto [few, expect] = FewRunsOfEachUnit(c, 32);
    EXPECT_TRUE(CopyRuns(m, few) == expect) << "the runs' bytes differ";
    EXPECT_EQ(z.checksum_errors.load(), 0u);
    EXPECT_EQ(z.layouts_read.load(), 32u) << "each unit's header and table read once";
    EXPECT_LE(z.layout_bytes_read.load(), 32u * 8192) << "a page or two a unit";
    const uint64_t disk = FramesFromDisks(m);
    if (block == 0) {
      EXPECT_EQ(z.run_blocks_read.load(), 0u) << "a version 1 frame is one block: read whole";
      EXPECT_GT(disk, stored / 2);
    } else {
      EXPECT_EQ(z.run_blocks_read.load(), 3u * 32) << "blocks 0, 5 and 6 of every unit";
      EXPECT_EQ(disk, z.run_block_bytes_read.load() + z.layout_bytes_read.load()) << "no frame read whole";
      EXPECT_LT(disk, stored * 3 / 10) << "3 of 16 blocks and the tables, not the frames";
    }
    // Again: nothing learned twice, and the layouts read are the ones the second LP uses.
    EXPECT_TRUE(CopyRuns(m, few) == expect) << "the runs' bytes differ the second time";
    EXPECT_EQ(z.layouts_read.load(), 32u) << "no header read again";
    EXPECT_EQ(z.checksum_errors.load(), 0u);
  }
}

// A frame whose block table was damaged on the disk is not learned from it: its runs then read
// the frame whole, whose checksum fails — EIO naming the unit, never wrong bytes.
TEST(FrameTier, AColdLpsRunsOfAFrameWithADamagedTableAreAnError) {
  CompressedFile c(8 * kMiB);
  Mounted m = Open(c, 4 * kMiB);
  ASSERT_NE(m.file, nullptr);
  const std::shared_ptr<StripedSource> src = m.file->shared_source();
  ASSERT_NE(src->packed(), nullptr);
  const PackedUnit& unit = src->packed()->directory().units()[5];
  // A byte of the table: past the 32-byte header and the table's 8-byte head, in block 2's entry.
  const DiskLocation where = src->file().map().Locate(unit.frame_offset + 32 + 8 + 2 * 16 + 1);
  testing::FlipByte(c.tmp.path() + "/disk" + std::to_string(where.disk) + "/parts/" + src->file().manifest().file_id,
                    where.disk_offset, 0x5a);
  std::vector<CopyRange> ranges{{5 * kMiB + 1000, 3000, 0}};
  chunkindex::LpMemory memory;
  Status st = m.volume->core().CopyRanges(src, m.file->size(), ranges, nullptr, 300, /*done_with_units=*/true, &memory);
  ASSERT_FALSE(st.ok()) << "bytes served from a damaged frame";
  EXPECT_EQ(st.error().code(), EIO) << st.error().message();
  EXPECT_NE(st.error().message().find("compressed unit 5"), std::string::npos) << st.error().message();
  EXPECT_EQ(m.volume->core().packed_counters().layouts_read.load(), 1u);
}

// A frame is verified (its checksum) at its first use, not again at each use from memory; a
// frame its use failed on is not kept: the next use reads it from the disks again, unchecked.
class CountingSource final : public cache::UnitSource {
 public:
  Result<uint64_t> Load(uint64_t offset, uint64_t length, char* buf) override {
    ++loads;
    for (uint64_t i = 0; i < length; ++i) buf[i] = static_cast<char>((offset + i) & 0x7f);
    return length;
  }
  void DiskShare(uint64_t, uint64_t length, std::vector<uint64_t>& per_disk) const override { per_disk[0] += length; }
  bool AlignedLoads() const override { return false; }
  int loads = 0;
};

// A tier of 4 MiB without a budget, whose readers' visits never age out during a test.
cache::CacheOptions SmallTierOptions() {
  cache::CacheOptions o;
  o.capacity = 4 * kMiB;
  o.prefetch_threads = 1;
  o.reader_window_ns = 600'000'000'000;
  return o;
}

TEST(FrameTier, AFrameIsCheckedOnceAndOneAUseFailedOnIsNotKept) {
  FrameTier tier(SmallTierOptions(), /*budget=*/nullptr);
  auto source = std::make_shared<CountingSource>();
  auto request = [&](uint64_t index) {
    cache::UnitRequest r;
    r.key = {1, index};
    r.offset = index * 4096;
    r.length = 4096;
    r.file_units = 8;
    r.source = source;
    return r;
  };
  std::vector<std::pair<bool, bool>> seen;  // (from_disk, checked) per use
  auto use = [&](const char* frame, bool from_disk, bool checked) -> Status {
    seen.push_back({from_disk, checked});
    EXPECT_EQ(frame[5], 5);
    return Status::Ok();
  };
  for (int pass = 0; pass < 3; ++pass) ASSERT_TRUE(tier.With(request(0), {}, use).ok());
  EXPECT_EQ(seen, (std::vector<std::pair<bool, bool>>{{true, false}, {false, true}, {false, true}}));
  EXPECT_EQ(source->loads, 1);

  seen.clear();
  auto fail = [&](const char*, bool from_disk, bool checked) -> Status {
    seen.push_back({from_disk, checked});
    return Error(EIO, "checksum mismatch");
  };
  EXPECT_FALSE(tier.With(request(1), {}, fail).ok());
  ASSERT_TRUE(tier.With(request(1), {}, use).ok());
  EXPECT_EQ(seen, (std::vector<std::pair<bool, bool>>{{true, false}, {true, false}})) << "read again, checked again";
  EXPECT_EQ(source->loads, 3);
}

// WithHeld (for decoding some blocks of a frame, PackedFile::DecodePieces): lends a frame only
// when it is in memory — never reads one from the disks —, says whether it was verified, and
// drops a frame a use failed on.
TEST(FrameTier, WithHeldLendsOnlyAFrameInMemoryAndDropsOneAUseFailedOn) {
  FrameTier tier(SmallTierOptions(), /*budget=*/nullptr);
  auto source = std::make_shared<CountingSource>();
  cache::UnitRequest r;
  r.key = {1, 2};
  r.offset = 2 * 4096;
  r.length = 4096;
  r.file_units = 8;
  r.source = source;
  std::vector<bool> checked_seen;
  auto lend = [&](const char* frame, bool checked) -> Status {
    checked_seen.push_back(checked);
    EXPECT_EQ(frame[5], 5);
    return Status::Ok();
  };
  auto held = tier.WithHeld(r, lend);
  ASSERT_TRUE(held.ok());
  EXPECT_FALSE(*held) << "not in memory: not lent";
  EXPECT_EQ(source->loads, 0) << "never read from the disks for a lend";
  ASSERT_TRUE(tier.With(r, {}, [](const char*, bool, bool) { return Status::Ok(); }).ok());  // read, verified
  held = tier.WithHeld(r, lend);
  ASSERT_TRUE(held.ok());
  EXPECT_TRUE(*held);
  EXPECT_EQ(checked_seen, std::vector<bool>{true});
  held = tier.WithHeld(r, [](const char*, bool) -> Status { return Error(EIO, "block 3 of 10: checksum mismatch"); });
  ASSERT_FALSE(held.ok());
  EXPECT_EQ(held.error().code(), EIO);
  held = tier.WithHeld(r, lend);
  ASSERT_TRUE(held.ok());
  EXPECT_FALSE(*held) << "a frame a use failed on is not kept";
  EXPECT_EQ(source->loads, 1);
}

}  // namespace
}  // namespace graphfs::volume
