// The volume without a mount: the striped read path (cache units, read-ahead staging, small
// reads around the cache, writes), the logical-partition loader over a small indexed graph,
// and an index that went stale while files were open. Disks are temp directories.
#include "volume/internal/volume_core.h"
#include "volume/internal/volume_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "chunkindex/chunk_index.h"
#include "chunkindex/index_builder.h"
#include "chunkindex/read_cost.h"
#include "striping/io_engine.h"
#include "striping/restripe.h"
#include "tests/chunkindex/chunkindex_test_util.h"
#include "tests/testutil/file_bytes.h"
#include "tests/testutil/striped_files.h"
#include "volume/internal/graph_schedule.h"
#include "volume/internal/striped_source.h"

namespace graphfs::volume {
namespace {

using graphfs::testing::ReadFile;
using chunkindex::testing::TempDir;
using graphfs::testing::WriteFile;
using graphfs::testing::RandomBytes;
// The scheduler's own types: these tests look behind the jobs API (volume/graph_jobs.h).
using chunkindex::LogicalPartition;
using chunkindex::LpAnswer;
using chunkindex::LpGrant;
using chunkindex::ViewPiece;

constexpr uint64_t kUnit = 256 << 10;  // stripe unit
constexpr uint32_t kDisks = 4;

// SOURCE with the given files striped over four temp-dir disks.
struct StripedTree {
  TempDir tmp;
  std::string source, graph;
  std::vector<std::string> disks;

  explicit StripedTree(const std::string& graph_name = "g") {
    source = tmp.path() + "/source";
    graph = source + "/" + graph_name;
    std::filesystem::create_directories(graph);
    for (uint32_t d = 0; d < kDisks; ++d) {
      disks.push_back(tmp.path() + "/disk" + std::to_string(d));
      std::filesystem::create_directories(disks.back());
    }
  }
  std::string Stripe(uint64_t min_size) {
    StripeRequest r = testing::TestStripeRequest(graph, disks, kUnit);
    r.min_size = min_size;
    auto done = StripeFiles(r);
    return done.ok() ? "" : done.error().message();
  }
};

VolumeOptions Options(const std::string& source, uint64_t cache_bytes, uint64_t staging) {
  VolumeOptions o;
  o.source = source;
  o.cache_bytes = cache_bytes;
  o.read_ahead.staging_limit = staging;
  return o;
}

std::unique_ptr<Volume> StartVolume(const VolumeOptions& o) {
  auto v = Volume::Open(o);
  EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.error().message());
  if (!v.ok()) return nullptr;
  Status s = (*v)->Start();
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
  return std::move(*v);
}

// The file as the volume's core sees it (the volume makes every VolumeFile a StripedVolumeFile).
std::shared_ptr<StripedVolumeFile> OpenFile(Volume& v, const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  auto m = StripedStub::Read(path, st);
  EXPECT_TRUE(m.ok() && m->has_value()) << path << " is not striped";
  if (!m.ok() || !m->has_value()) return nullptr;
  auto f = v.OpenStriped(UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)), **m, path);
  EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error().message());
  return f.ok() ? std::static_pointer_cast<StripedVolumeFile>(*f) : nullptr;
}

std::string Joined(const PinnedRead& r) {
  std::string s;
  for (const iovec& p : r.pieces()) s.append(static_cast<const char*>(p.iov_base), p.iov_len);
  return s;
}

// A file's first `size` bytes read unit by unit, as one reader streams them (empty after a read
// that failed, which the test is told of).
template <typename VolumePtr, typename FilePtr>
std::string ReadByUnits(VolumePtr& v, FilePtr& f, uint64_t size) {
  ReadStreams streams;
  AlignedBuffer scratch;
  std::string all;
  for (uint64_t off = 0; off < size; off += kUnit) {
    auto got = v.Read(f, streams, off, kUnit, 100, scratch);
    if (!got.ok()) {
      ADD_FAILURE() << "read at " << off << ": " << got.error().message();
      return {};
    }
    all += Joined(*got);
  }
  return all;
}

TEST(Volume, OpenRefusesADiskOfTheSetThatIsMissing) {
  StripedTree t;
  WriteFile(t.graph + "/data", RandomBytes(1 << 20, 1));
  ASSERT_EQ(t.Stripe(4096), "");
  std::filesystem::remove_all(t.disks[2]);
  auto v = Volume::Open(Options(t.source, 0, 1 << 20));
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message().find("cannot mount " + t.source), std::string::npos) << v.error().message();
  EXPECT_NE(v.error().message().find(t.disks[2]), std::string::npos) << v.error().message();
}

TEST(Volume, StreamsThroughCacheUnitsWithReadAheadAndServesSmallReadsAroundThem) {
  StripedTree t;
  const std::string bytes = RandomBytes(8 << 20, 2);
  WriteFile(t.graph + "/data", bytes);
  ASSERT_EQ(t.Stripe(4096), "");
  auto v = StartVolume(Options(t.source, 2 << 20, 4 << 20));
  ASSERT_NE(v, nullptr);
  auto f = OpenFile(*v, t.graph + "/data");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->size(), bytes.size());
  EXPECT_EQ(f->shared_source()->layout_note(), "stripe-aligned blocks");  // not a graph's partition file

  // A sequential reader: every byte right, units pinned while read, read-ahead staged.
  ReadStreams streams;
  AlignedBuffer scratch;
  for (uint64_t off = 0; off < bytes.size(); off += 1 << 20) {
    auto got = v->Read(*f, streams, off, 1 << 20, /*pid=*/100, scratch);
    ASSERT_TRUE(got.ok()) << got.error().message();
    ASSERT_EQ(Joined(*got), bytes.substr(off, 1 << 20)) << "at " << off;
  }
  cache::CacheStats s = v->core().cache()->Stats();
  EXPECT_GT(s.prefetches, 0u);              // units were loaded ahead of the stream
  EXPECT_GT(s.bytes_from_cache, 0u);        // and the stream found them in memory
  EXPECT_EQ(s.bytes_served, bytes.size());  // every byte came from cache units
  EXPECT_EQ(s.bypassed, 0u);

  // Past the end: short, then empty.
  auto tail = v->Read(*f, streams, bytes.size() - 100, 1 << 20, 100, scratch);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(Joined(*tail), bytes.substr(bytes.size() - 100));
  auto past = v->Read(*f, streams, bytes.size() + 5, 4096, 100, scratch);
  ASSERT_TRUE(past.ok());
  EXPECT_EQ(past->bytes(), 0u);

  // A small random read of a unit not in memory goes around the cache (no 256 KiB load).
  v->core().cache()->Invalidate(f->shared_source()->key());
  ReadStreams other;
  const uint64_t before = v->core().cache()->Stats().bytes_loaded;
  auto small = v->Read(*f, other, 3 * kUnit + 8192, 4096, 200, scratch);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(Joined(*small), bytes.substr(3 * kUnit + 8192, 4096));
  EXPECT_EQ(v->core().cache()->Stats().bytes_loaded, before);
  EXPECT_EQ(v->core().cache()->Stats().bypassed, 1u);

  // A write drops the file's units: the next read sees the new bytes.
  const std::string fresh = RandomBytes(10000, 3);
  ASSERT_TRUE(v->Read(*f, other, 0, 1 << 20, 200, scratch).ok());  // units in memory now
  auto wrote = f->Write(5000, fresh.data(), fresh.size());
  ASSERT_TRUE(wrote.ok());
  auto again = v->Read(*f, other, 0, 1 << 20, 200, scratch);
  ASSERT_TRUE(again.ok());
  std::string expect = bytes.substr(0, 1 << 20);
  expect.replace(5000, fresh.size(), fresh);
  EXPECT_EQ(Joined(*again), expect);
}

// A compressed file (graphfs-stripe --compress): its size is its own, its cache units are its
// compressed units, and every range — whole units, pieces of them, across them, past the
// end — decodes to the original bytes, through the cache and around it.
TEST(Volume, DecodesACompressedFileAtAnyRange) {
  StripedTree t;
  std::string bytes(3 << 20, '\0');
  std::mt19937_64 fill(9);
  for (char& c : bytes) c = static_cast<char>(fill() & 0x0f);  // 4 bits of entropy a byte: about half the size
  WriteFile(t.graph + "/data", bytes);
  StripeRequest r = testing::TestStripeRequest(t.graph, t.disks, kUnit);
  r.min_size = 4096;
  r.compress = "zstd:1";
  r.compress_unit = 300001;  // neither a multiple of 4 KiB nor of the stripe unit
  auto done = StripeFiles(r);
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_LT(done->stored, bytes.size() * 3 / 4);
  auto v = StartVolume(Options(t.source, 1 << 20, 2 << 20));
  ASSERT_NE(v, nullptr);
  auto f = OpenFile(*v, t.graph + "/data");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->size(), bytes.size());
  EXPECT_EQ(f->shared_source()->layout_note(), "compressed units (zstd:1)");
  EXPECT_TRUE(f->shared_source()->compressed());
  EXPECT_EQ(f->shared_source()->layout()->Count(bytes.size()), 11u);  // ceil(3 MiB / 300001)
  std::mt19937_64 rng(4);
  ReadStreams streams;
  AlignedBuffer scratch;
  std::string buf;
  for (int i = 0; i < 200; ++i) {
    const uint64_t off = rng() % (bytes.size() + 1000), len = rng() % 700000 + 1;
    const uint64_t want = off >= bytes.size() ? 0 : std::min<uint64_t>(len, bytes.size() - off);
    buf.assign(len, '\0');
    auto loaded = f->shared_source()->Load(off, len, buf.data());  // around the cache: pieces of units decoded
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
    ASSERT_EQ(*loaded, want) << off << "+" << len;
    ASSERT_TRUE(buf.compare(0, want, bytes, std::min<uint64_t>(off, bytes.size()), want) == 0) << off << "+" << len;
    auto read = v->Read(*f, streams, off, len, 300, scratch);  // through the cache
    ASSERT_TRUE(read.ok()) << read.error().message();
    ASSERT_EQ(Joined(*read), bytes.substr(std::min<uint64_t>(off, bytes.size()), want)) << off << "+" << len;
  }
  // Every disk holds some of its frames.
  std::vector<uint64_t> share(kDisks, 0);
  f->shared_source()->DiskShare(0, bytes.size(), share);
  for (uint32_t d = 0; d < kDisks; ++d) EXPECT_GT(share[d], 0u) << "disk " << d;
  // The frames' bytes, less than the file's and about what was stored (the directory aside).
  const uint64_t frames = share[0] + share[1] + share[2] + share[3];
  EXPECT_LT(frames, done->stored);
  EXPECT_GT(frames, done->stored * 9 / 10);
  EXPECT_GT(v->core().packed_counters().units_decoded.load(), 11u);

  // The first write makes it a plain striped file (Unpack): same bytes plus the write, the
  // stub's manifest switched to the new parts, the compressed parts gone.
  const StripeManifest packed = **ReadManifest(t.graph + "/data");
  auto wrote = f->Write(1000, "written", 7);
  ASSERT_TRUE(wrote.ok()) << wrote.error().message();
  EXPECT_FALSE(f->shared_source()->compressed());
  EXPECT_EQ(f->size(), bytes.size());
  bytes.replace(1000, 7, "written");
  buf.assign(bytes.size(), '\0');
  ASSERT_EQ(*f->shared_source()->Load(0, bytes.size(), buf.data()), bytes.size());
  EXPECT_TRUE(buf == bytes);
  ASSERT_TRUE(f->Sync().ok());
  const StripeManifest now = **ReadManifest(t.graph + "/data");
  EXPECT_FALSE(now.packed.has_value());
  EXPECT_NE(now.file_id, packed.file_id);
  EXPECT_EQ(now.size, bytes.size());
  for (uint32_t d = 0; d < kDisks; ++d) {
    EXPECT_FALSE(std::filesystem::exists(t.disks[d] + "/parts/" + packed.file_id)) << "disk " << d;
  }
  auto grown = f->Write(bytes.size(), "tail", 4);  // later writes are ordinary ones
  ASSERT_TRUE(grown.ok());
  EXPECT_EQ(f->size(), bytes.size() + 4);
}

// Frames of both versions in one mount (compress/unit_frame.h): a file striped with version 1
// frames (graphfs-stripe --compress-block 0, what builds before frames cut into blocks wrote)
// beside one of version 2, each read at any range, through the cache and around it.
TEST(Volume, ReadsVersionOneAndTwoFramesInOneMount) {
  StripedTree t;
  std::mt19937_64 fill(19);
  std::string bytes(2 << 20, '\0');
  for (char& c : bytes) c = static_cast<char>(fill() & 0x0f);
  struct File {
    std::string name;
    uint64_t block;
    uint8_t version;
  } files[] = {{"v1", 0, 1}, {"v2", 64 << 10, 2}, {"v2small", 3000, 2}};
  for (const File& file : files) {
    WriteFile(t.graph + "/" + file.name, bytes);
    StripeRequest r = testing::TestStripeRequest(t.graph + "/" + file.name, t.disks, kUnit);
    r.compress = "shuffle-zstd:1";
    r.record_size = 12;
    r.compress_unit = 300000;
    r.compress_block = file.block;
    r.parity = 0;
    const StripeManifest m = testing::StripeAndRead(r, t.graph + "/" + file.name);
    ASSERT_TRUE(m.packed.has_value()) << file.name;
    // The stream's first frame starts at byte 0: the first disk's part, at its start.
    const std::string head = ReadFile(t.disks[m.layout.first_disk] + "/parts/" + m.file_id).substr(0, 40);
    ASSERT_EQ(head.substr(0, 4), "GFZU") << file.name;
    EXPECT_EQ(static_cast<uint8_t>(head[4]), file.version) << file.name;
    if (file.version == 2) {
      uint32_t block = 0;
      std::memcpy(&block, head.data() + 32, 4);
      EXPECT_EQ(block, file.block / 12 * 12) << file.name << ": blocks of whole records";
    }
  }
  auto v = StartVolume(Options(t.source, 1 << 20, 2 << 20));
  ASSERT_NE(v, nullptr);
  std::mt19937_64 rng(20);
  ReadStreams streams;
  AlignedBuffer scratch;
  std::string buf;
  for (const File& file : files) {
    auto f = OpenFile(*v, t.graph + "/" + file.name);
    ASSERT_NE(f, nullptr) << file.name;
    ASSERT_TRUE(f->shared_source()->compressed()) << file.name;
    EXPECT_EQ(f->size(), bytes.size());
    for (int i = 0; i < 60; ++i) {
      const uint64_t off = rng() % bytes.size(), len = rng() % 400000 + 1;
      const uint64_t want = std::min<uint64_t>(len, bytes.size() - off);
      buf.assign(len, '\0');
      auto loaded = f->shared_source()->Load(off, len, buf.data());
      ASSERT_TRUE(loaded.ok()) << file.name << ": " << loaded.error().message();
      ASSERT_EQ(*loaded, want);
      ASSERT_TRUE(buf.compare(0, want, bytes, off, want) == 0) << file.name << " " << off << "+" << len;
      auto read = v->Read(*f, streams, off, len, 300, scratch);
      ASSERT_TRUE(read.ok()) << file.name << ": " << read.error().message();
      ASSERT_EQ(Joined(*read), bytes.substr(off, want)) << file.name << " " << off << "+" << len;
    }
  }
  EXPECT_EQ(v->core().packed_counters().checksum_errors.load(), 0u);
}

TEST(Volume, ReadsReachEveryDiskAndNameTheFailingOne) {
  StripedTree t;
  const std::string bytes = RandomBytes(4 << 20, 4);
  WriteFile(t.graph + "/data", bytes);
  ASSERT_EQ(t.Stripe(4096), "");
  auto v = StartVolume(Options(t.source, 0, 1 << 20));  // no cache budget: staging only
  ASSERT_NE(v, nullptr);
  auto f = OpenFile(*v, t.graph + "/data");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(v->disk_count(), kDisks);
  const uint32_t disk = f->shared_source()->file().map().Split(kUnit, kUnit).at(0).disk;  // of the second unit
  v->InjectFault(disk, EIO);
  ReadStreams streams;
  AlignedBuffer scratch;
  auto bad = v->Read(*f, streams, kUnit, kUnit, 1, scratch);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), EIO);
  EXPECT_NE(bad.error().message().find("disk " + std::to_string(disk)), std::string::npos) << bad.error().message();
  v->InjectFault(disk, 0);
  auto good = v->Read(*f, streams, kUnit, kUnit, 1, scratch);
  ASSERT_TRUE(good.ok()) << good.error().message();
  EXPECT_EQ(Joined(*good), bytes.substr(kUnit, kUnit));
}

// A small source-sorted graph, indexed, with `column` and `row` striped.
struct IndexedGraph : StripedTree {
  std::string column;  // its bytes before striping
  std::string error;
  uint64_t vertices = 3000;

  IndexedGraph() {
    chunkindex::testing::GraphSpec spec;
    spec.vertices = static_cast<uint32_t>(vertices);
    spec.partitions = 4;
    spec.sorted = true;
    spec.edges = chunkindex::testing::RandomEdges(2500, 60000, 5);
    std::filesystem::remove_all(graph);
    error = chunkindex::testing::MakeGraph(spec, graph);
    if (!error.empty()) return;
    chunkindex::BuildOptions b;
    b.graph_dir = graph;
    b.chunk_size = 16 << 10;
    auto built = chunkindex::BuildIndex(b);
    if (!built.ok()) error = built.error().message();
    column = ReadFile(graph + "/column");
    if (error.empty()) error = Stripe(64 << 10);  // column and row (480 KB each), not the blocks
  }
};

// A volume over IndexedGraph with its `column` open.
class IndexedVolume : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(g.error, "");
    VolumeOptions o = Options(g.source, 8 << 20, 4 << 20);
    o.lp_loading = direct_loader ? LpLoading::kDirect : LpLoading::kThroughCache;
    v = StartVolume(o);
    ASSERT_NE(v, nullptr);
    f = OpenFile(*v, g.graph + "/column");
    ASSERT_NE(f, nullptr);
  }
  bool direct_loader = true;  // the mount's default, -o lp_loader=direct
  IndexedGraph g;
  std::unique_ptr<Volume> v;
  std::shared_ptr<StripedVolumeFile> f;
};

// The same with -o lp_loader=cache: whole chunks loaded unit by unit through the cache.
class IndexedVolumeCacheLoader : public IndexedVolume {
 protected:
  void SetUp() override {
    direct_loader = false;
    IndexedVolume::SetUp();
  }
};

TEST_F(IndexedVolume, CachesAnIndexedGraphsFilesInItsChunks) {
  EXPECT_EQ(f->shared_source()->layout_note().rfind("chunks of the index (", 0), 0u) << f->shared_source()->layout_note();
  ASSERT_EQ(v->core().indexes().List().size(), 1u);
  EXPECT_TRUE(v->core().indexes().List()[0].loaded);
  ReadStreams streams;
  AlignedBuffer scratch;
  std::string all;
  for (uint64_t off = 0; off < g.column.size(); off += 1 << 20) {
    auto got = v->Read(*f, streams, off, 1 << 20, 7, scratch);
    ASSERT_TRUE(got.ok()) << got.error().message();
    all += Joined(*got);
  }
  EXPECT_EQ(all, g.column);
}

// A graph's shared LP memory (jobs/NAME/memory) is as large as volume_options.h's rule says, which
// lp_memory='s help prints: kSharedLpMemoryBytes, or kSharedLpMemoryPerLpMemory x lp_memory if more.
TEST_F(IndexedVolume, TheGraphsSharedMemoryIsAsLargeAsTheRuleSays) {
  auto schedule = v->schedules().Get(v->core(), g.graph);
  ASSERT_TRUE(schedule.ok()) << schedule.error().message();
  ASSERT_NE((*schedule)->memory(), nullptr);
  const uint64_t rule = SharedLpMemoryBytes(v->core().options().lp_memory);
  EXPECT_EQ((*schedule)->memory()->virtual_bytes(), rule / SharedArena::kGranule * SharedArena::kGranule);
  EXPECT_EQ(SharedLpMemoryBytes(kDefaultLpMemory), kSharedLpMemoryBytes);
  EXPECT_EQ(SharedLpMemoryBytes(kSharedLpMemoryBytes), kSharedLpMemoryPerLpMemory * kSharedLpMemoryBytes);
  EXPECT_EQ(SharedLpMemoryBytes(UINT64_MAX / 2), UINT64_MAX) << "lp_memory= takes any size: no wrap-around";
}

uint64_t DiskReads(Volume& v) {
  uint64_t n = 0;
  for (uint32_t d = 0; d < v.disk_count(); ++d) n += v.core().io()->counters(d).reads.load();
  return n;
}

// A miss of one 16 KiB chunk reads the rest of its stripe unit in one disk request (plus the
// piece of the chunk that crosses into the next stripe unit, on the next disk), straight into
// the cache's chunk buffers — coarse disk reads whatever the cache's unit is.
TEST(IndexedVolumeCoarse, AChunkMissReadsTheRestOfItsStripeUnitInOneRequest) {
  IndexedGraph g;
  ASSERT_EQ(g.error, "");
  VolumeOptions o = Options(g.source, 8 << 20, 4 << 20);
  o.read_ahead.off = true;  // only the miss itself reads
  auto v = StartVolume(o);
  ASSERT_NE(v, nullptr);
  auto f = OpenFile(*v, g.graph + "/column");
  ASSERT_NE(f, nullptr);
  const std::shared_ptr<StripedSource> src = f->shared_source();
  const auto layout = src->layout();
  ASSERT_STREQ(layout->kind(), "chunk");
  ReadStreams streams;
  AlignedBuffer scratch;
  const uint64_t reads_before = DiskReads(*v);  // opening checked the index against the file
  auto got = v->Read(*f, streams, 0, 4096, 7, scratch);  // offset 0: a stream, through the cache
  ASSERT_TRUE(got.ok()) << got.error().message();
  EXPECT_EQ(Joined(*got), g.column.substr(0, 4096));
  // Every chunk that starts in stripe unit 0 is in memory now, none after it.
  uint64_t chunks = 0;
  cache::UnitExtent u = layout->Find(0, f->size());
  for (; u.length > 0 && u.offset < kUnit; u = layout->At(u.index + 1, f->size()), ++chunks)
    EXPECT_TRUE(v->core().cache()->Contains({src->key(), u.index})) << "chunk " << u.index;
  ASSERT_GT(u.length, 0u);
  EXPECT_FALSE(v->core().cache()->Contains({src->key(), u.index}));
  EXPECT_GT(chunks, 10u);  // 16 KiB chunks of a 256 KiB stripe unit
  const ExtentReads::Stats e = v->core().extent_reads()->stats();
  EXPECT_EQ(e.extents, 1u);
  EXPECT_EQ(e.units, chunks);
  EXPECT_EQ(e.urgent, 1u);
  EXPECT_LE(DiskReads(*v) - reads_before, 2u);  // one request, and the last chunk's tail on the next disk
  EXPECT_EQ(v->core().cache()->Stats().misses, 1u);
  // The bytes of every chunk are right, also across the shared pages at chunk boundaries.
  std::string all;
  for (uint64_t off = 0; off < kUnit; off += 64 << 10) {
    auto more = v->Read(*f, streams, off, 64 << 10, 7, scratch);
    ASSERT_TRUE(more.ok()) << more.error().message();
    all += Joined(*more);
  }
  EXPECT_EQ(all, g.column.substr(0, kUnit));
  EXPECT_EQ(v->core().cache()->Stats().misses, 1u);  // all of it came from that one request
  // Requests by size: every request counted in one bucket.
  uint64_t counted = 0;
  for (uint32_t d = 0; d < v->disk_count(); ++d)
    for (const auto& n : v->core().io()->counters(d).read_sizes) counted += n.load();
  EXPECT_EQ(counted, DiskReads(*v));
}

// A sequential reader's read-ahead reaches the other disks even when the staging area has no
// room at all: a disk with nothing to do gets its extent beyond the limit (no prefetch is
// dropped while its disk idles), and each disk's requests are whole stripe units.
TEST(Volume, ReadAheadFeedsIdleDisksBeyondAFullStagingArea) {
  StripedTree t;
  const std::string bytes = RandomBytes(16 * kUnit, 4);
  WriteFile(t.graph + "/data", bytes);
  ASSERT_EQ(t.Stripe(4096), "");
  auto v = StartVolume(Options(t.source, 0, /*staging=*/4096));
  ASSERT_NE(v, nullptr);
  auto f = OpenFile(*v, t.graph + "/data");
  ASSERT_NE(f, nullptr);
  const std::shared_ptr<StripedSource> src = f->shared_source();
  ReadStreams streams;
  AlignedBuffer scratch;
  auto got = v->Read(*f, streams, 0, 64 << 10, 100, scratch);
  ASSERT_TRUE(got.ok()) << got.error().message();
  EXPECT_EQ(Joined(*got), bytes.substr(0, 64 << 10));
  // Units 1-3 lie on the three other disks: each was read ahead although staging is full.
  for (uint64_t unit = 1; unit < kDisks; ++unit)
    EXPECT_NE(v->core().cache()->Find({src->key(), unit}), cache::ChunkCache::Presence::kAbsent) << "unit " << unit;
  EXPECT_GE(v->core().cache()->Stats().prefetches, kDisks - 1);
  // The whole file, every byte right; every disk request one stripe unit.
  std::string all = Joined(*got);
  for (uint64_t off = 64 << 10; off < bytes.size(); off += 64 << 10) {
    auto more = v->Read(*f, streams, off, 64 << 10, 100, scratch);
    ASSERT_TRUE(more.ok()) << more.error().message();
    all += Joined(*more);
  }
  EXPECT_EQ(all, bytes);
  for (uint32_t d = 0; d < kDisks; ++d) {
    const DiskCounters& c = v->core().io()->counters(d);
    EXPECT_EQ(c.read_sizes[RequestSizeBucket(kUnit)].load(), c.reads.load()) << "disk " << d;
    EXPECT_GE(c.reads.load(), 4u) << "disk " << d;
  }
}

// A file with parity whose part on one disk is gone, read as a stream: every byte right, each unit
// read once through an extent in its own disk's queue, and the lost disk's queue — whose units are
// rebuilt from D units of their rows, on as many disks — keeps several of them in flight at once
// (at most D), where it kept one: one rebuild at a time, each waiting on a parity read behind
// another disk's own extent, fell behind the present disks' reads of the same rows (whose blocks
// the rebuilds were to share: row_share.h). Disks without a calibration: one extent at a time each.
TEST(Volume, ALostDisksQueueKeepsARebuildInFlightPerDiskThatServesIt) {
  StripedTree t;
  constexpr uint32_t kLost = 1;
  const std::string bytes = RandomBytes(16 * (kDisks - 1) * kUnit, 12);  // 16 rows of 3 data units
  const StripeManifest m = graphfs::testing::WriteAndStripe(t.graph + "/data", bytes, t.disks, 1, kUnit);
  ASSERT_TRUE(std::filesystem::remove(graphfs::testing::PartPath(t.disks[kLost], m)));
  auto v = StartVolume(Options(t.source, 64 << 20, 64 << 20));
  ASSERT_NE(v, nullptr);
  auto f = OpenFile(*v, t.graph + "/data");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(ReadByUnits(*v, *f, bytes.size()) == bytes);
  const StripeMap& map = f->shared_source()->file().map();
  std::vector<uint64_t> want(kDisks, 0);
  for (uint64_t u = 0; u * kUnit < bytes.size(); ++u) want[map.Locate(u * kUnit).disk] += kUnit;
  const ExtentReads::Stats e = v->core().extent_reads()->stats();
  EXPECT_EQ(e.bytes, bytes.size());  // every unit read once, through an extent
  for (uint32_t d = 0; d < kDisks; ++d) {
    EXPECT_EQ(e.disk_bytes[d], want[d]) << "disk " << d;
    EXPECT_LE(e.disk_peak_in_flight[d], d == kLost ? map.data_units() : 1u) << "disk " << d;
  }
  EXPECT_GE(e.disk_peak_in_flight[kLost], 2u);
  EXPECT_GT(v->core().io()->counters(kLost).rebuilt_bytes.load(), 0u);
}

// Under a memory budget (memory=), what degraded files keep of their rows' blocks for each other
// (volume/internal/degraded_share.h) is set aside in the budget when the first degraded file
// opens — the cache shrinks by it — and held within it; a healthy mount sets nothing aside.
TEST(Volume, ADegradedFilesSharedBlocksAreChargedToTheMemoryBudget) {
  for (bool lost : {false, true}) {
    SCOPED_TRACE(lost ? "a disk lost" : "healthy");
    StripedTree t;
    const std::string bytes = RandomBytes(16 * (kDisks - 1) * kUnit, 13);
    const StripeManifest m = graphfs::testing::WriteAndStripe(t.graph + "/data", bytes, t.disks, 1, kUnit);
    if (lost) {
      ASSERT_TRUE(std::filesystem::remove(graphfs::testing::PartPath(t.disks[1], m)));
    }
    VolumeOptions o = Options(t.source, 0, 32 << 20);
    o.memory_bytes = 512 << 20;
    auto v = StartVolume(o);
    ASSERT_NE(v, nullptr);
    const uint64_t cache_before = v->core().budget().state().cache_capacity;
    auto f = OpenFile(*v, t.graph + "/data");
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(ReadByUnits(*v, *f, bytes.size()) == bytes);
    nlohmann::json j;
    v->AddStats(j);
    const nlohmann::json& share = j["degraded_share"];
    const uint64_t want = lost ? DegradedShare::BudgetedBytes(32 << 20) : 0;
    EXPECT_EQ(share["reserved"].get<uint64_t>(), want) << share.dump();
    EXPECT_EQ(share["capacity"].get<uint64_t>(), want) << share.dump();
    EXPECT_EQ(share["files"].get<uint64_t>(), lost ? 1u : 0u) << share.dump();
    EXPECT_LE(share["peak_held_bytes"].get<uint64_t>(), want + kUnit) << share.dump();
    EXPECT_EQ(v->core().budget().state().reserved, want);
    EXPECT_EQ(v->core().budget().state().cache_capacity, cache_before - want);
  }
}

// When the daemon's rebuild (Volume::StartRebuild) has switched the lost disk in and every open
// file took it, the degraded share's reservation goes back to the budget (the cache grows by it)
// and the pool keeps nothing; the file open across the switch (written degraded before it) writes
// through it. A degraded file opened afterwards (its part on another disk gone) takes the
// reservation again.
TEST(Volume, TheDegradedShareGoesBackToTheBudgetOnceTheRebuiltDiskIsSwitchedIn) {
  StripedTree t;
  std::string bytes = RandomBytes(8 * (kDisks - 1) * kUnit, 14);
  graphfs::testing::WriteAndStripe(t.graph + "/data", bytes, t.disks, 1, kUnit);
  const std::string other = RandomBytes(4 * (kDisks - 1) * kUnit, 15);
  const StripeManifest om = graphfs::testing::WriteAndStripe(t.graph + "/other", other, t.disks, 1, kUnit);
  std::filesystem::remove_all(t.disks[1]);
  VolumeOptions o = Options(t.source, 0, 32 << 20);
  o.memory_bytes = 512 << 20;
  auto v = StartVolume(o);
  ASSERT_NE(v, nullptr);
  auto f = OpenFile(*v, t.graph + "/data");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(ReadByUnits(*v, *f, bytes.size()) == bytes);
  const uint64_t want = DegradedShare::BudgetedBytes(32 << 20);
  ASSERT_EQ(v->core().budget().state().reserved, want) << "no reservation to give back: the test proves nothing";
  const uint64_t cache_degraded = v->core().budget().state().cache_capacity;
  // A write with the disk lost lands degraded (docs/parity.md, "Writes with a disk lost").
  auto degraded = f->Write(0, "z", 1);
  ASSERT_TRUE(degraded.ok()) << degraded.error().message();
  bytes[0] = 'z';

  const std::string to = t.tmp.path() + "/new-disk";
  std::filesystem::create_directories(to);
  ASSERT_TRUE(v->StartRebuild(1, to, 0).ok());
  nlohmann::json task;
  for (int i = 0; i < 1200; ++i) {
    task = v->DisksJson()["task"];
    if (task.is_object() && task["state"] != "running" && task["state"] != "starting") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(task["state"], "done") << task.dump();
  nlohmann::json j;
  v->AddStats(j);
  EXPECT_EQ(j["degraded"], nlohmann::json::array());
  EXPECT_EQ(j["degraded_share"]["reserved"].get<uint64_t>(), 0u) << j["degraded_share"].dump();
  EXPECT_EQ(j["degraded_share"]["capacity"].get<uint64_t>(), 0u) << j["degraded_share"].dump();
  EXPECT_EQ(j["degraded_share"]["held_bytes"].get<uint64_t>(), 0u) << j["degraded_share"].dump();
  EXPECT_EQ(v->core().budget().state().reserved, 0u);
  // Nothing was read meanwhile, so staging's charge did not grow: the cache has the share's bytes.
  EXPECT_GE(v->core().budget().state().cache_capacity, cache_degraded + want);

  // The same open file writes again, and reads its writes back.
  const std::string hello = "written after the switch";
  auto w = f->Write(kUnit - 3, hello.data(), hello.size());
  ASSERT_TRUE(w.ok()) << w.error().message();
  bytes.replace(kUnit - 3, hello.size(), hello);
  ASSERT_TRUE(f->Sync().ok());
  EXPECT_TRUE(ReadByUnits(*v, *f, bytes.size()) == bytes);

  // A file degraded for itself (its part on disk 2 gone) opened now takes the reservation again.
  ASSERT_TRUE(std::filesystem::remove(graphfs::testing::PartPath(t.disks[2], om)));
  auto g = OpenFile(*v, t.graph + "/other");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(ReadByUnits(*v, *g, other.size()) == other);
  EXPECT_EQ(v->core().budget().state().reserved, want);
}

TEST(Volume, StatsShowEachDisksBusyTimeIdleWhileWaitingAndRequestSizes) {
  StripedTree t;
  const std::string bytes = RandomBytes(8 * kUnit, 5);
  WriteFile(t.graph + "/data", bytes);
  ASSERT_EQ(t.Stripe(4096), "");
  auto v = StartVolume(Options(t.source, 8 << 20, 4 << 20));
  ASSERT_NE(v, nullptr);
  auto f = OpenFile(*v, t.graph + "/data");
  ASSERT_NE(f, nullptr);
  ReadStreams streams;
  AlignedBuffer scratch;
  for (uint64_t off = 0; off < bytes.size(); off += 1 << 20) ASSERT_TRUE(v->Read(*f, streams, off, 1 << 20, 1, scratch).ok());
  nlohmann::json j;
  v->AddStats(j);
  ASSERT_EQ(j["disks"].size(), kDisks);
  uint64_t requests = 0;
  for (const auto& d : j["disks"]) {
    EXPECT_GT(d["busy_seconds"].get<double>(), 0.0);
    EXPECT_GE(d["idle_while_waiting_seconds"].get<double>(), 0.0);
    ASSERT_EQ(d["request_sizes"]["counts"].size(), d["request_sizes"]["le_bytes"].size() + 1);
    for (const auto& n : d["request_sizes"]["counts"]) requests += n.get<uint64_t>();
  }
  EXPECT_EQ(requests, DiskReads(*v));
  EXPECT_GE(j["read_path"]["waits"].get<uint64_t>(), 1u);  // the first read missed
  EXPECT_GT(j["read_path"]["reader_wait_seconds"].get<double>(), 0.0);
  EXPECT_GE(j["read_path"]["extents"].get<uint64_t>(), 8u);
}

// The read-ahead has no disk model of its own: it is given the read-cost model's, which is
// chunkindex::ReadCost's defaults on uncalibrated disks and the mount options over them.
TEST(Volume, TheReadAheadsDiskModelIsTheReadCostModels) {
  StripedTree t;
  WriteFile(t.graph + "/data", RandomBytes(4 * kUnit, 6));
  ASSERT_EQ(t.Stripe(4096), "");
  const chunkindex::ReadCost defaults;
  const auto in_flight = [](double bytes_per_second, double seconds_per_request) {
    return static_cast<uint64_t>(bytes_per_second * (seconds_per_request + kTurnaroundSeconds));
  };
  {
    auto v = StartVolume(Options(t.source, 8 << 20, 4 << 20));
    ASSERT_NE(v, nullptr);
    nlohmann::json j;
    v->AddStats(j);
    EXPECT_DOUBLE_EQ(j["read_path"]["disk_bytes_per_second"].get<double>(), defaults.bytes_per_second);
    EXPECT_EQ(j["read_path"]["disk_in_flight_bytes"].get<uint64_t>(),
              in_flight(defaults.bytes_per_second, defaults.seconds_per_request));
  }
  VolumeOptions o = Options(t.source, 8 << 20, 4 << 20);
  o.seq_bytes_per_second = 300e6;
  o.seconds_per_request = 1e-3;
  auto v = StartVolume(o);
  ASSERT_NE(v, nullptr);
  nlohmann::json j;
  v->AddStats(j);
  EXPECT_DOUBLE_EQ(j["read_path"]["disk_bytes_per_second"].get<double>(), 300e6);
  EXPECT_EQ(j["read_path"]["disk_in_flight_bytes"].get<uint64_t>(), in_flight(300e6, 1e-3));
}

// The mount's I/O defaults are the engine's own constants (striping/io_engine.h), which the
// volume's options hand up to the option table.
TEST(Volume, TheMountsIoDefaultsAreTheEngines) {
  const IoEngineOptions engine;
  EXPECT_EQ(VolumeOptions().queue_depth, engine.queue_depth);
  EXPECT_EQ(DefaultIoWorkersPerDisk(), engine.workers_per_disk);
  EXPECT_EQ(MaxQueueDepth(), graphfs::kMaxQueueDepth);
}

// io=shared's pool is as large as the per-disk queues' workers in all unless io_workers= says
// otherwise, by the engine's one rule (DefaultSharedWorkers); io_workers= sets either model's.
TEST(Volume, TheSharedPoolHasTheEnginesDefaultWorkersForItsDisks) {
  StripedTree t;
  WriteFile(t.graph + "/data", RandomBytes(1 << 20, 1));
  ASSERT_EQ(t.Stripe(4096), "");
  VolumeOptions o = Options(t.source, 1 << 20, 1 << 20);
  o.io_queues = IoQueues::kShared;
  {
    auto v = StartVolume(o);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->core().io()->options().shared_workers, graphfs::DefaultSharedWorkers(kDisks));
    EXPECT_EQ(graphfs::DefaultSharedWorkers(kDisks), kDisks * DefaultIoWorkersPerDisk());
  }
  o.io_workers = 3;
  {
    auto v = StartVolume(o);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->core().io()->options().shared_workers, 3u);
  }
  o.io_queues = IoQueues::kPerDisk;
  auto v = StartVolume(o);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->core().io()->options().workers_per_disk, 3u);
}

// One job, every vertex active, LPs of 64 KiB: every chunk of `column` is handed out once, its
// bytes as in the file.
// Asks for the job's next LP as the front end does: the answer now, or the one the scheduler
// pushes to the mount's queue (one job asks at a time here, so the next answer is its).
Result<LpGrant> AskNext(GraphSchedule& s, uint64_t job) {
  const uint64_t ticket = s.scheduler().answers()->NewTicket();
  if (std::optional<Result<LpGrant>> now = s.scheduler().Next(job, ticket)) return std::move(*now);
  std::optional<LpAnswer> a = s.scheduler().answers()->WaitFor(std::chrono::seconds(30));
  if (!a) return Error(ETIMEDOUT, "no answer in 30 s");
  if (a->ticket != ticket) return Error(EPROTO, "an answer to ticket " + std::to_string(a->ticket));
  return std::move(a->result);
}

void LoadEveryChunkOnce(Volume& v, const IndexedGraph& g) {
  auto schedule = v.schedules().Get(v.core(), g.graph);
  ASSERT_TRUE(schedule.ok()) << schedule.error().message();
  GraphSchedule& s = **schedule;
  EXPECT_TRUE(s.striped());
  EXPECT_EQ(s.vertices(), g.vertices);
  ASSERT_TRUE(s.scheduler().AddJob(1, 64 << 10).ok());
  std::vector<uint64_t> words((g.vertices + 63) / 64, ~0ull);
  words.back() = (1ull << (g.vertices % 64)) - 1;
  auto active = s.SetActive(1, words);
  ASSERT_TRUE(active.ok()) << active.error().message();
  EXPECT_EQ(active->chunks, s.table().chunks(chunkindex::ChunkFile::kColumn).size());
  EXPECT_EQ(active->vertices, g.vertices);
  uint64_t handed = 0, lps = 0;
  for (;;) {
    Result<LpGrant> grant = AskNext(s, 1);
    ASSERT_TRUE(grant.ok()) << grant.error().message();
    if (grant->end) break;
    ++lps;
    const LogicalPartition& lp = *grant->held.lp;
    for (const ViewPiece& c : grant->held.pieces) {
      ASSERT_EQ(lp.memory.Copy(c.lp_offset, c.length), g.column.substr(c.file_offset, c.length))
          << "chunk " << c.chunk;
      handed += c.length;
    }
  }
  EXPECT_EQ(handed, g.column.size());
  EXPECT_GT(lps, 1u);  // 64 KiB partitions of a 480 KB column
  s.scheduler().RemoveJob(1);
}

// The jobs API as the control directory uses it: a job's LPs come through JobGraph::Next or
// the mount's JobAnswers, its view is gathered from the LP's memory at the offsets its map
// names, and every byte of `column` is handed out once.
TEST_F(IndexedVolume, AJobReadsEveryChunkOnceThroughTheJobsApi) {
  auto graph = v->JobGraphFor(g.graph);
  ASSERT_TRUE(graph.ok()) << graph.error().message();
  auto again = v->JobGraphFor(g.graph);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(*graph == *again) << "jobs of one graph share its schedule";
  EXPECT_EQ(graph->vertices(), g.vertices);
  EXPECT_EQ(graph->dir(), g.graph);
  ASSERT_TRUE(graph->AddJob(1, 64 << 10).ok());
  EXPECT_FALSE(graph->AddJob(1, 64 << 10).ok()) << "a job is added once";
  std::vector<uint64_t> words((g.vertices + 63) / 64, ~0ull);
  words.back() = (1ull << (g.vertices % 64)) - 1;
  auto active = graph->SetActive(1, words);
  ASSERT_TRUE(active.ok()) << active.error().message();
  EXPECT_EQ(active->vertices, g.vertices);
  JobAnswers& answers = v->job_answers();
  std::string handed(g.column.size(), '\0');
  uint64_t bytes = 0, lps = 0;
  for (;;) {
    const uint64_t ticket = answers.NewTicket();
    std::optional<Result<NextLp>> next = graph->Next(1, ticket);
    if (!next) {
      std::optional<JobAnswer> a = answers.WaitFor(std::chrono::seconds(30));
      ASSERT_TRUE(a.has_value()) << "no answer in 30 s";
      ASSERT_EQ(a->ticket, ticket);
      next.emplace(std::move(a->result));
    }
    ASSERT_TRUE(next->ok()) << next->error().message();
    if ((*next)->end) break;
    const uint64_t seq = (*next)->seq;
    ++lps;
    EXPECT_EQ(graph->HeldSeqs(1), std::vector<uint64_t>{seq});
    EXPECT_FALSE(graph->Held(1, seq + 1)) << "only the LP it holds";
    const LpView view = graph->Held(1, seq);
    ASSERT_TRUE(view);
    EXPECT_EQ(view.seq(), seq);
    EXPECT_EQ(graph->HeldBytes(1, seq), view.bytes());
    // The map: "CHUNK FILE_OFFSET LENGTH VIEW_OFFSET" per piece; each piece's bytes, gathered
    // from the view, are the file's there.
    std::optional<std::string> map = graph->Describe(1, seq, JobGraph::HeldText::kMap);
    ASSERT_TRUE(map.has_value());
    std::istringstream lines(*map);
    uint64_t chunk, file_offset, length, view_offset, mapped = 0;
    while (lines >> chunk >> file_offset >> length >> view_offset) {
      std::vector<iovec> iov;
      view.Gather(view_offset, length, &iov);
      std::string got;
      for (const iovec& p : iov) got.append(static_cast<const char*>(p.iov_base), p.iov_len);
      ASSERT_EQ(got, g.column.substr(file_offset, length)) << "chunk " << chunk;
      ASSERT_LE(file_offset + length, handed.size());
      handed.replace(file_offset, length, got);
      mapped += length;
    }
    EXPECT_EQ(mapped, view.bytes());
    bytes += mapped;
    // The pieces file: its header names the memory's id and the view's bytes.
    std::optional<std::string> pieces = graph->Describe(1, seq, JobGraph::HeldText::kPieces);
    ASSERT_TRUE(pieces.has_value());
    ASSERT_GE(pieces->size(), 32u);
    EXPECT_EQ(pieces->substr(0, 8), "GFSPIEC1");
    uint64_t header[4];
    std::memcpy(header, pieces->data(), sizeof header);
    EXPECT_EQ(pieces->size(), 32 + 24 * header[1]);
    EXPECT_EQ(header[2], graph->memory() ? graph->memory()->id() : 0);
    EXPECT_EQ(header[3], view.bytes());
  }
  EXPECT_EQ(bytes, g.column.size()) << "every byte once";
  EXPECT_EQ(handed, g.column);
  EXPECT_GT(lps, 1u);
  EXPECT_TRUE(graph->HeldSeqs(1).empty()) << "the end holds no LP";
  nlohmann::json status;
  graph->AddJobStatus(1, status);
  EXPECT_EQ(status["total"]["bytes_delivered"].get<uint64_t>(), g.column.size()) << status.dump();
  const nlohmann::json schedules = v->SchedulesJson();
  ASSERT_EQ(schedules.size(), 1u);
  EXPECT_EQ(schedules[0]["graph"], g.graph);
  EXPECT_GE(schedules[0]["bytes_delivered"].get<uint64_t>(), g.column.size());

  // A parked ask is cancelled with EINTR, through the queue.
  ASSERT_TRUE(graph->AddJob(2, 64 << 10).ok());
  std::vector<uint64_t> none(words.size(), 0);
  none[0] = 1;  // vertex 0 only: its edges are in some chunk, and nothing is loaded for job 2 yet
  ASSERT_TRUE(graph->SetActive(2, none).ok());
  const uint64_t ticket = answers.NewTicket();
  std::optional<Result<NextLp>> now = graph->Next(2, ticket);
  if (!now) {
    graph->Cancel(2, ticket);
    std::optional<JobAnswer> a = answers.WaitFor(std::chrono::seconds(30));
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->ticket, ticket);
    // Cancelled while it waited, or answered by a loader just before.
    if (!a->result.ok()) {
      EXPECT_EQ(a->result.error().code(), EINTR);
    }
  }

  // Leaving: the jobs are dropped; the handles keep the schedule until they go.
  v->LeaveGraph(*again, 1);
  v->LeaveGraph(std::move(*graph), 2);
  EXPECT_EQ(v->SchedulesJson()[0]["jobs"].get<uint64_t>(), 0u);
}

TEST_F(IndexedVolume, LoadsLogicalPartitionsOfActiveChunksFromTheDisksAndOffersThemToTheCache) {
  LoadEveryChunkOnce(*v, g);
  const cache::CacheStats cs = v->core().cache()->Stats();
  EXPECT_GE(cs.bytes_loaded, g.column.size());  // read from the disks, counted as the loader's
  EXPECT_EQ(cs.prefetches, 0u);                 // not unit by unit through the cache
  EXPECT_GT(cs.offers_admitted, 0u);            // the cache kept what its budget holds
  EXPECT_GT(cs.units, 0u);
}

TEST_F(IndexedVolumeCacheLoader, LoadsLogicalPartitionsOfActiveChunksThroughTheCache) {
  LoadEveryChunkOnce(*v, g);
  const cache::CacheStats cs = v->core().cache()->Stats();
  EXPECT_GE(cs.bytes_loaded, g.column.size());  // loaded from the disks through the cache
  EXPECT_GT(cs.prefetches, 0u);                 // with the loader's read-ahead
  EXPECT_EQ(cs.offers, 0u);
  // The units were loaded into the graph's shared memory and the LPs are made of them: every LP
  // byte borrowed from a cached unit, none copied.
  auto schedule = v->schedules().Get(v->core(), g.graph);
  ASSERT_TRUE(schedule.ok());
  ASSERT_NE((*schedule)->memory(), nullptr);
  const GraphSchedule::LoaderStats loader = (*schedule)->loader_stats();
  EXPECT_EQ(loader.borrowed_bytes, loader.lp_bytes) << "every LP byte (a guessed next LP's too)";
  EXPECT_GE(loader.borrowed_bytes, g.column.size());
  EXPECT_EQ(cs.staged, 0u) << "units an LP took leave staging at once";
}

// The scheduler is told which chunks of `column` the cache holds decoded (they are then read
// whole from fewer active sources: LpScheduler::Options::resident_scan_edges_per_run; at every
// SetActive): none before anything was read, every one once the cache holds the column.
TEST_F(IndexedVolumeCacheLoader, TheSchedulerIsToldWhichChunksTheCacheHolds) {
  auto schedule = v->schedules().Get(v->core(), g.graph);
  ASSERT_TRUE(schedule.ok()) << schedule.error().message();
  GraphSchedule& s = **schedule;
  const uint64_t chunks = s.table().chunks(chunkindex::ChunkFile::kColumn).size();
  ASSERT_GT(chunks, 1u);
  s.RefreshResident();
  EXPECT_EQ(s.scheduler().Stats().resident_chunks, 0u);
  LoadEveryChunkOnce(*v, g);
  ASSERT_GE(v->core().cache()->used(), g.column.size()) << "the cache does not hold the column: the test proves nothing";
  s.RefreshResident();
  EXPECT_EQ(s.scheduler().Stats().resident_chunks, chunks);
}

// Every leaf of `part` is in `whole` at the same place, with the same value (`where`: its path).
void ExpectWithin(const nlohmann::json& part, const nlohmann::json& whole, const std::string& where) {
  if (part.is_object()) {
    ASSERT_TRUE(whole.is_object()) << where;
    for (const auto& [key, value] : part.items()) {
      ASSERT_TRUE(whole.contains(key)) << where << "." << key << " is not in the full stats";
      ExpectWithin(value, whole[key], where + "." + key);
    }
  } else if (part.is_array()) {
    ASSERT_TRUE(whole.is_array()) << where;
    ASSERT_EQ(part.size(), whole.size()) << where;
    for (size_t i = 0; i < part.size(); ++i) ExpectWithin(part[i], whole[i], where + "[" + std::to_string(i) + "]");
  } else {
    EXPECT_EQ(part, whole) << where;
  }
}

std::set<std::string> KeysOf(const nlohmann::json& o) {
  std::set<std::string> keys;
  for (const auto& [key, value] : o.items()) keys.insert(key);
  return keys;
}

// The daemon's memory sampler prices memory from Volume::AddMemoryStats, `stats.memory` from the
// full stats (AddStats and SchedulesJson): the sampler's figures are the full stats' own, under
// the same names with the same values — and nothing more, so a sample builds none of the disks',
// the cache counters' or the schedulers' other stats.
TEST_F(IndexedVolumeCacheLoader, TheMemoryFiguresAreTheFullStatsOwnAndNothingMore) {
  // The cache holding chunks of `column`, and a job holding an LP made of cached units.
  ReadStreams streams;
  AlignedBuffer scratch;
  for (uint64_t off = 0; off < g.column.size(); off += 1 << 20) ASSERT_TRUE(v->Read(*f, streams, off, 1 << 20, 7, scratch).ok());
  auto schedule = v->schedules().Get(v->core(), g.graph);
  ASSERT_TRUE(schedule.ok()) << schedule.error().message();
  GraphSchedule& s = **schedule;
  ASSERT_TRUE(s.scheduler().AddJob(1, 64 << 10).ok());
  std::vector<uint64_t> words((g.vertices + 63) / 64, ~0ull);
  words.back() = (1ull << (g.vertices % 64)) - 1;
  ASSERT_TRUE(s.SetActive(1, words).ok());
  Result<LpGrant> grant = AskNext(s, 1);
  ASSERT_TRUE(grant.ok()) << grant.error().message();
  ASSERT_FALSE(grant->end);
  // The loaders may still be loading the job's next LPs ahead: the figures are compared once
  // two samples taken around the full stats agree.
  nlohmann::json lean, full;
  for (int tries = 0; tries < 500 && lean.is_null(); ++tries) {
    nlohmann::json before, after;
    v->AddMemoryStats(before);
    full = nlohmann::json::object();
    v->AddStats(full);
    full["schedulers"] = v->SchedulesJson();
    v->AddMemoryStats(after);
    if (before == after) lean = std::move(before);
    else std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_FALSE(lean.is_null()) << "the volume's memory never held still";
  EXPECT_GT(lean["cache"]["used"].get<uint64_t>(), 0u) << lean.dump();
  ASSERT_EQ(lean["schedulers"].size(), 1u);
  EXPECT_GT(lean["schedulers"][0]["window"]["live_bytes"].get<uint64_t>(), 0u) << "the LP the job holds";
  EXPECT_GT(lean["schedulers"][0]["memory"]["index_bytes"].get<uint64_t>(), 0u);
  ExpectWithin(lean, full, "stats");
  EXPECT_EQ(KeysOf(lean), (std::set<std::string>{"cache", "degraded_share", "frames", "memory_budget", "schedulers"}));
  EXPECT_EQ(KeysOf(lean["cache"]), (std::set<std::string>{"buffers_idle_bytes", "held", "staged", "used"}))
      << "the cache's resident bytes, not its counters or its processes";
  EXPECT_EQ(KeysOf(lean["schedulers"][0]), (std::set<std::string>{"graph", "memory", "shared_memory", "window"}))
      << "no scheduler's or loader's counts";
  s.scheduler().RemoveJob(1);
}

// Asks for the job's LPs until the end of its iteration; every piece's bytes are checked
// against `column`. Returns the pieces (file offset -> length).
std::map<uint64_t, uint64_t> DrainIteration(GraphSchedule& s, uint64_t job, const std::string& column) {
  std::map<uint64_t, uint64_t> pieces;
  for (;;) {
    Result<LpGrant> grant = AskNext(s, job);
    if (!grant.ok()) {
      ADD_FAILURE() << grant.error().message();
      return pieces;
    }
    if (grant->end) return pieces;
    const LogicalPartition& lp = *grant->held.lp;
    for (const ViewPiece& p : grant->held.pieces) {
      EXPECT_EQ(lp.memory.Copy(p.lp_offset, p.length), column.substr(p.file_offset, p.length))
          << "piece at " << p.file_offset;
      pieces[p.file_offset] = p.length;
    }
  }
}

TEST_F(IndexedVolume, VertexGranularLpsReadOnlyTheActiveSourcesRuns) {
  auto schedule = v->schedules().Get(v->core(), g.graph);
  ASSERT_TRUE(schedule.ok()) << schedule.error().message();
  GraphSchedule& s = **schedule;
  const nlohmann::json granularity = s.GranularityJson(s.scheduler().Stats());
  ASSERT_EQ(granularity["mode"], "vertex") << granularity.dump();
  EXPECT_EQ(granularity["sorted_chunks"].get<uint64_t>(), s.table().chunks(chunkindex::ChunkFile::kColumn).size());
  EXPECT_EQ(granularity["unsorted_chunks"].get<uint64_t>(), 0u);
  ASSERT_TRUE(s.scheduler().AddJob(1, 1 << 20).ok());
  // Every 50th vertex active: each view piece holds only edges of active sources, and all of them.
  std::vector<uint64_t> words((g.vertices + 63) / 64, 0);
  for (uint64_t u = 0; u < g.vertices; u += 50) words[u / 64] |= uint64_t{1} << (u % 64);
  auto is_active = [&](int32_t u) { return (words[static_cast<uint32_t>(u) / 64] >> (u % 64)) & 1; };
  ASSERT_TRUE(s.SetActive(1, words).ok());
  const std::map<uint64_t, uint64_t> pieces = DrainIteration(s, 1, g.column);
  uint64_t delivered = 0, active_edges = 0;
  for (const auto& [at, length] : pieces) {
    for (uint64_t k = at; k < at + length; k += 8) {
      int32_t src;
      std::memcpy(&src, g.column.data() + k, 4);
      EXPECT_TRUE(is_active(src)) << "edge at " << k << " has inactive source " << src;
    }
    delivered += length;
  }
  for (uint64_t k = 0; k < g.column.size(); k += 8) {
    int32_t src;
    std::memcpy(&src, g.column.data() + k, 4);
    active_edges += is_active(src);
  }
  EXPECT_EQ(delivered, active_edges * 8);
  s.scheduler().WaitIdle();  // a dense iteration: the next one's first LP is preloaded on a guess
  GraphSchedule::LoaderStats l = s.loader_stats();
  EXPECT_GT(l.run_bytes, 0u);
  EXPECT_GT(l.run_disk_bytes, 0u);  // read around the cache: nothing was cached yet
  EXPECT_GT(l.busiest_disk_bytes, 0u);
  EXPECT_LE(l.busiest_disk_bytes, l.run_disk_bytes);
  auto view = s.scheduler().View(1);
  ASSERT_TRUE(view.ok());
  EXPECT_LT(view->recent.back().lp_bytes, g.column.size()) << "its LPs held less than the column";
  const uint64_t cache_loaded = v->core().cache()->Stats().bytes_loaded;
  EXPECT_LE(cache_loaded, l.whole_bytes) << "runs never enter the cache (only whole chunks do)";

  // Once the chunks are cached (a reader streamed the file), they come from memory: whole where
  // the rule for chunks in memory takes them whole (an active source per 1024 edges or more:
  // LpScheduler::Options::resident_scan_edges_per_run), elsewhere the same runs, from the cache.
  ReadStreams streams;
  AlignedBuffer scratch;
  for (uint64_t off = 0; off < g.column.size(); off += 1 << 20) ASSERT_TRUE(v->Read(*f, streams, off, 1 << 20, 7, scratch).ok());
  ASSERT_TRUE(s.SetActive(1, words).ok());
  const std::map<uint64_t, uint64_t> again = DrainIteration(s, 1, g.column);
  auto within = [](const std::map<uint64_t, uint64_t>& p, uint64_t from, uint64_t to) {
    std::map<uint64_t, uint64_t> in;
    for (const auto& [at, length] : p)
      if (std::max(at, from) < std::min(at + length, to)) in[std::max(at, from)] = std::min(at + length, to) - std::max(at, from);
    return in;
  };
  uint64_t whole = 0, cut = 0;
  for (const chunkindex::Chunk& c : s.table().chunks(chunkindex::ChunkFile::kColumn)) {
    const std::map<uint64_t, uint64_t> got = within(again, c.offset, c.offset + c.length);
    if (got == std::map<uint64_t, uint64_t>{{c.offset, c.length}}) {
      ++whole;
    } else {
      ++cut;
      EXPECT_EQ(got, within(pieces, c.offset, c.offset + c.length)) << "chunk at " << c.offset;
    }
  }
  EXPECT_GT(whole, 0u) << "no chunk in memory was read whole";
  EXPECT_GT(s.scheduler().Stats().resident_whole, 0u);
  s.scheduler().WaitIdle();
  const GraphSchedule::LoaderStats l2 = s.loader_stats();
  if (cut > 0) {
    EXPECT_GT(l2.run_bytes_cached, l.run_bytes_cached);
  }
  EXPECT_EQ(l2.run_disk_bytes, l.run_disk_bytes);  // no disk read for them
  s.scheduler().RemoveJob(1);
}

// The loader's direct path: a range over several chunks takes the cached ones from the cache
// and reads the rest from the disks; whole chunks read that way are offered to the cache (a
// second copy reads nothing from the disks), a run inside a chunk is not (no holes).
TEST_F(IndexedVolume, CopyRunsMixesCachedAndDiskUnitsAndOffersWholeOnes) {
  const auto layout = f->shared_source()->layout();
  const uint64_t size = f->size();
  std::vector<cache::UnitExtent> u;
  for (uint64_t i = 0; i < 6; ++i) u.push_back(layout->At(i, size));
  ASSERT_GT(u[5].length, 0u);
  const uint64_t key = f->shared_source()->key();
  VolumeCore::RunsReport first;
  std::string one(u[1].length, '\0');
  ASSERT_TRUE(v->core().CopyRuns(f->shared_source(), size, {{u[1].offset, u[1].length, 0}}, one.data(), 9, &first).ok());
  EXPECT_EQ(one, g.column.substr(u[1].offset, u[1].length));
  EXPECT_EQ(first.from_cache, 0u);
  ASSERT_TRUE(v->core().cache()->Contains({key, 1})) << "a whole unit read from the disks is offered";

  // Units 0-3 whole (from mid-unit 0 to the end of 3), and a run inside unit 5.
  const uint64_t begin = u[0].offset + 5000, end = u[3].offset + u[3].length;  // past unit 0's first block
  const uint64_t run_at = u[5].offset + u[5].length / 2, run_len = 48;  // its block inside unit 5
  std::vector<CopyRange> ranges{{begin, end - begin, 0}, {run_at, run_len, end - begin}};
  std::string out(end - begin + run_len, '\0');
  VolumeCore::RunsReport report;
  ASSERT_TRUE(v->core().CopyRuns(f->shared_source(), size, ranges, out.data(), 9, &report).ok());
  EXPECT_EQ(out, g.column.substr(begin, end - begin) + g.column.substr(run_at, run_len));
  EXPECT_EQ(report.from_cache, u[1].length);
  EXPECT_GE(report.disk_bytes, end - begin - u[1].length + run_len);
  uint64_t by_disk = 0;
  for (uint64_t b : report.per_disk) by_disk += b;
  EXPECT_EQ(by_disk, report.disk_bytes);
  EXPECT_EQ(report.per_disk.size(), v->disk_count());
  EXPECT_FALSE(v->core().cache()->Contains({key, 0})) << "unit 0 was read only in part";
  EXPECT_TRUE(v->core().cache()->Contains({key, 2}));
  EXPECT_TRUE(v->core().cache()->Contains({key, 3}));
  EXPECT_FALSE(v->core().cache()->Contains({key, 5})) << "a run must not enter the cache";
  EXPECT_EQ(v->core().cache()->Stats().offers_admitted, 3u);

  VolumeCore::RunsReport again;
  std::string out2(u[3].offset + u[3].length - u[1].offset, '\0');
  ASSERT_TRUE(v->core().CopyRuns(f->shared_source(), size, {{u[1].offset, out2.size(), 0}}, out2.data(), 9, &again).ok());
  EXPECT_EQ(out2, g.column.substr(u[1].offset, out2.size()));
  EXPECT_EQ(again.from_cache, out2.size());
  EXPECT_EQ(again.disk_bytes, 0u);
}

// With an LP's memory (the graph's shared memory, where the file's units are loaded while the
// graph has jobs): a cached unit the LP takes at least half of is borrowed where it lies — no
// copy, the LP pins it and counts its memory —; so are a few bytes of a unit the cache keeps
// (admitted), counted as those bytes alone: the pin costs nothing the cache does not hold.
// (A unit the cache does not keep is copied for a few runs of it: a pin would hold all of it.)
TEST_F(IndexedVolume, AnLpBorrowsTheCachedUnitsItTakesMostOfAndTheRunsOfAdmittedOnes) {
  const auto layout = f->shared_source()->layout();
  const uint64_t size = f->size();
  const cache::UnitExtent u1 = layout->At(1, size), u2 = layout->At(2, size);
  SharedArena::Options ao;
  ao.virtual_bytes = 256ull << 20;
  auto arena = SharedArena::Create("volume-test", ao);
  ASSERT_TRUE(arena.ok()) << arena.error().message();
  f->shared_source()->SetArena(*arena);
  // A reader streams the file: its units are cached, and so loaded into the arena.
  ReadStreams streams;
  AlignedBuffer scratch;
  for (uint64_t off = 0; off < size; off += 1 << 20) ASSERT_TRUE(v->Read(*f, streams, off, 1 << 20, 7, scratch).ok());
  ASSERT_TRUE(v->core().cache()->Contains({f->shared_source()->key(), 1}));
  ASSERT_TRUE(v->core().cache()->Contains({f->shared_source()->key(), 2}));
  {
    chunkindex::LpMemory lp(*arena);
    const uint64_t run = 96;  // a few records of unit 2
    std::vector<CopyRange> ranges{{u1.offset, u1.length, 0}, {u2.offset + 4096, run, u1.length}};
    VolumeCore::RunsReport report;
    ASSERT_TRUE(v->core().CopyRuns(f->shared_source(), size, ranges, nullptr, 9, &report, nullptr, &lp).ok());
    ASSERT_TRUE(lp.Seal(u1.length + run));
    EXPECT_EQ(lp.Copy(0, u1.length + run), g.column.substr(u1.offset, u1.length) + g.column.substr(u2.offset + 4096, run));
    EXPECT_EQ(report.from_cache, u1.length + run);
    EXPECT_EQ(report.borrowed, u1.length + run) << "unit 1 whole and the run of admitted unit 2: borrowed";
    EXPECT_EQ(lp.borrowed_bytes(), u1.length + run);
    EXPECT_EQ(lp.pinned_bytes(), u1.length + run) << "unit 1 counted whole, unit 2 as the run taken";
    EXPECT_EQ(lp.bytes(), 0u) << "nothing copied";
    const char* run_at = lp.At(u1.length);  // where the unit lies in the arena, not a block of the LP
    EXPECT_TRUE(run_at >= (*arena)->base() && run_at < (*arena)->base() + (*arena)->virtual_bytes());
    EXPECT_TRUE(lp.shared());
    EXPECT_EQ(v->core().cache()->Stats().staged, 0u) << "the borrowed unit left staging; the read one was served";
  }
  f->shared_source()->SetArena(nullptr);
}

// Batches far smaller than the copy: many more batches than are in flight, each waited for,
// copied out and its buffer reused for a later one; every byte lands where it belongs.
TEST(Volume, CopyRunsPipelinesManySmallBatches) {
  IndexedGraph g;
  ASSERT_EQ(g.error, "");
  VolumeOptions o = Options(g.source, 0, 4 << 20);  // no cache: everything from the disks
  o.runs_batch_bytes = 4096;  // a batch per range (each spans 2 blocks at least)
  auto v = StartVolume(o);
  ASSERT_NE(v, nullptr);
  auto f = OpenFile(*v, g.graph + "/column");
  ASSERT_NE(f, nullptr);
  // Every other 3000-byte range, packed in `out`.
  std::vector<CopyRange> ranges;
  uint64_t packed = 0;
  for (uint64_t at = 1000; at + 3000 <= g.column.size(); at += 6000) {
    ranges.push_back({at, 3000, packed});
    packed += 3000;
  }
  ASSERT_GT(ranges.size(), 4 * kRunsBatchesInFlight) << "several rounds of batches";
  std::string out(packed, '\0'), want;
  for (const CopyRange& r : ranges) want += g.column.substr(r.offset, r.length);
  std::vector<AlignedBuffer> scratch;
  for (int round = 0; round < 2; ++round) {  // the second reuses the kept buffers
    VolumeCore::RunsReport report;
    std::fill(out.begin(), out.end(), '\0');
    ASSERT_TRUE(v->core().CopyRuns(f->shared_source(), f->size(), ranges, out.data(), 9, &report, &scratch).ok());
    EXPECT_EQ(out, want) << "round " << round;
    EXPECT_GE(report.disk_bytes, packed);
    EXPECT_EQ(report.from_cache, 0u);
  }
  EXPECT_EQ(scratch.size(), kRunsBatchesInFlight);
}

TEST_F(IndexedVolume, AStaleIndexIsSeenWhenTheFileIsOpenedAgain) {
  ASSERT_EQ(f->shared_source()->layout_note().rfind("chunks of the index", 0), 0u);
  ASSERT_TRUE(v->schedules().Get(v->core(), g.graph).ok());

  // The graph's `column` changes behind the index (its stub's times move, as a rewrite does).
  struct timespec times[2] = {{0, UTIME_NOW}, {12345, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (g.graph + "/column").c_str(), times, 0), 0);

  // Reopened: its units go back to stripe-aligned blocks, with the reason.
  v->RefreshLayout(*f, g.graph + "/column");
  const std::string note = f->shared_source()->layout_note();
  EXPECT_EQ(note.rfind("stripe-aligned blocks: ", 0), 0u) << note;
  EXPECT_NE(note.find("graphfs-index"), std::string::npos) << note;
  ASSERT_EQ(v->core().indexes().List().size(), 1u);
  EXPECT_FALSE(v->core().indexes().List()[0].loaded);
  // A new schedule of the graph is refused with the same advice.
  auto schedule = v->schedules().Get(v->core(), g.graph);
  ASSERT_FALSE(schedule.ok());
  EXPECT_NE(schedule.error().message().find("graphfs-index"), std::string::npos) << schedule.error().message();
  // The bytes are still served right.
  ReadStreams streams;
  AlignedBuffer scratch;
  auto got = v->Read(*f, streams, 0, 1 << 20, 7, scratch);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(Joined(*got), g.column.substr(0, 1 << 20));
}

}  // namespace
}  // namespace graphfs::volume
