// Vertex-granular reading: the index's "edges in source order" flag, SourceRuns against the
// graph's own bytes, and the per-chunk read-cost plan.
#include <gtest/gtest.h>

#include <random>

#include "chunkindex/index_builder.h"
#include "chunkindex/read_cost.h"
#include "chunkindex/source_runs.h"
#include "chunkindex_test_util.h"

namespace graphfs::chunkindex {
namespace {

using testing::GraphSpec;
using testing::MakeGraph;
using testing::RandomEdges;
using testing::TempDir;

// ---- the read-cost plan ----

ReadCost Cost(double bytes_per_second, double seconds_per_request, uint64_t align = 1) {
  ReadCost c;
  c.bytes_per_second = bytes_per_second;
  c.seconds_per_request = seconds_per_request;
  c.align = align;
  return c;
}

TEST(ReadCost, GapsCheaperThanARequestAreReadThrough) {
  // 1 MB/s and 1 ms per request: a gap up to 1000 bytes costs at most one request.
  const ReadCost cost = Cost(1e6, 1e-3);
  EXPECT_EQ(cost.GapWorthReading(), 1000u);
  const std::vector<ByteRun> runs = {{0, 100}, {1100, 100}, {2201, 100}, {100000, 50}};
  const ChunkReadPlan p = PlanChunkRead(0, 1 << 20, runs, cost);
  ASSERT_FALSE(p.whole);
  // 1100 - 100 = 1000: read through; 2201 - 1200 = 1001: skipped; the far run alone.
  EXPECT_EQ(p.extents, (std::vector<ByteRun>{{0, 1200}, {2201, 100}, {100000, 50}}));
  EXPECT_EQ(p.bytes, 1350u);
  EXPECT_NEAR(p.seconds, 3 * 1e-3 + 1350 / 1e6, 1e-12);
  EXPECT_NEAR(p.whole_seconds, 1e-3 + (1 << 20) / 1e6, 1e-12);
}

TEST(ReadCost, TheWholeChunkWhenItIsCheaper) {
  // Many scattered runs on a disk where requests are dear: one sequential read wins (64
  // requests cost 0.64 s, more than 0.9 of the whole chunk's 0.68 s).
  const ReadCost cost = Cost(100e6, 10e-3);  // HDD-like: 10 ms a request, 1 MB gap threshold
  std::vector<ByteRun> runs;
  for (uint64_t k = 0; k < 64; ++k) runs.push_back({k * (1 << 20) + 512, 4096});
  const ChunkReadPlan p = PlanChunkRead(0, 64 << 20, runs, cost);
  EXPECT_TRUE(p.whole);
  EXPECT_EQ(p.extents, (std::vector<ByteRun>{{0, 64 << 20}}));
  EXPECT_EQ(p.bytes, 64u << 20);
  // On a disk where requests are cheap the same runs are read alone.
  const ChunkReadPlan q = PlanChunkRead(0, 64 << 20, runs, Cost(100e6, 50e-6));
  EXPECT_FALSE(q.whole);
  EXPECT_EQ(q.extents.size(), 64u);
  EXPECT_EQ(q.bytes, 64u * 4096);
  EXPECT_LT(q.seconds, q.whole_seconds);
}

// A compressed chunk's frame is read and decoded whole for any run: both plans cost the frame,
// and the runs are kept while they are a small part of the chunk's bytes.
TEST(ReadCost, ACompressedChunkCostsItsFrameEitherWay) {
  const ReadCost cost = Cost(100e6, 10e-3);  // requests dear: plain, these runs would be read whole
  std::vector<ByteRun> runs;
  for (uint64_t k = 0; k < 64; ++k) runs.push_back({k * (1 << 20) + 512, 4096});
  ASSERT_TRUE(PlanChunkRead(0, 64 << 20, runs, cost).whole);
  const uint64_t frame = 20 << 20;
  const ChunkReadPlan p = PlanChunkRead(0, 64 << 20, runs, cost, frame);
  EXPECT_FALSE(p.whole);
  EXPECT_EQ(p.extents.size(), 64u);
  EXPECT_EQ(p.bytes, 64u * 4096);
  EXPECT_EQ(p.disk_bytes, frame);
  EXPECT_NEAR(p.seconds, cost.Seconds(frame, 1), 1e-12);
  EXPECT_NEAR(p.whole_seconds, cost.Seconds(frame, 1), 1e-12);
  // Runs holding most of the chunk: the whole chunk (as cheap on the disks, one copy).
  const std::vector<ByteRun> most = {{0, 60 << 20}, {62 << 20, 1 << 20}};
  const ChunkReadPlan q = PlanChunkRead(0, 64 << 20, most, Cost(100e6, 0), frame);
  EXPECT_TRUE(q.whole);
  EXPECT_EQ(q.bytes, 64u << 20);
  EXPECT_EQ(q.disk_bytes, frame);
}

TEST(ReadCost, RunsSharingAnAlignedBlockAreOneRead) {
  // No gap is worth reading (requests free), but two runs in one 4 KiB block are one read.
  const ReadCost cost = Cost(1e9, 0, 4096);
  const std::vector<ByteRun> runs = {{8, 16}, {4000, 8}, {8192 + 100, 8}};
  const ChunkReadPlan p = PlanChunkRead(4096 * 10, 1 << 20, runs, cost);
  ASSERT_FALSE(p.whole);
  EXPECT_EQ(p.extents, (std::vector<ByteRun>{{8, 4000}, {8292, 8}}));
  EXPECT_EQ(p.disk_bytes, 8192u);  // two 4 KiB blocks
  // The chunk's own offset decides the alignment: shifted by 2 KiB, the three runs fall in
  // three adjacent blocks, read as one.
  const ChunkReadPlan q = PlanChunkRead(4096 * 10 + 2048, 1 << 20, runs, cost);
  EXPECT_EQ(q.extents, (std::vector<ByteRun>{{8, 8292}}));
  EXPECT_EQ(q.disk_bytes, 3u * 4096);
}

TEST(ReadCost, NoRunsNothingToRead) {
  const ChunkReadPlan p = PlanChunkRead(0, 4096, {}, Cost(1e8, 1e-4));
  EXPECT_FALSE(p.whole);
  EXPECT_TRUE(p.extents.empty());
  EXPECT_EQ(p.bytes, 0u);
}

// ---- SourceRuns from a real index ----

struct RunsCase {
  const char* name;
  bool sorted;
  bool weighted;
  uint64_t chunk;
};

class SourceRunsTest : public ::testing::TestWithParam<RunsCase> {};

// The byte runs of `chunk` whose edges have an active source, straight from the file.
std::vector<ByteRun> BruteRuns(const testing::Reference& ref, const Chunk& c, const std::vector<const uint64_t*>& bitmaps) {
  std::vector<ByteRun> out;
  for (uint64_t off = c.offset; off < c.offset + c.length; off += ref.edge_size) {
    int32_t s;
    std::memcpy(&s, ref.column.data() + off, 4);
    bool active = false;
    for (const uint64_t* b : bitmaps) active |= b == nullptr || ((b[static_cast<uint32_t>(s) / 64] >> (s % 64)) & 1);
    if (!active) continue;
    const uint64_t at = off - c.offset;
    if (!out.empty() && out.back().end() == at) out.back().length += ref.edge_size;
    else out.push_back({at, ref.edge_size});
  }
  return out;
}

TEST_P(SourceRunsTest, RunsAreExactlyTheActiveSourcesEdges) {
  const RunsCase& rc = GetParam();
  TempDir tmp;
  const std::string dir = tmp.File("g");
  GraphSpec g;
  g.vertices = 3000;
  g.partitions = 3;
  g.sorted = rc.sorted;
  g.weighted = rc.weighted;
  g.edges = RandomEdges(2800, 40000, 5);
  ASSERT_EQ(MakeGraph(g, dir), "");
  BuildOptions o;
  o.graph_dir = dir;
  o.chunk_size = rc.chunk;
  ASSERT_TRUE(BuildIndex(o).ok());
  auto table = ChunkTable::Open(dir);
  ASSERT_TRUE(table.ok()) << table.error().message();
  testing::Reference ref;
  ASSERT_EQ(ref.Load(dir), "");

  // The flag says what the bytes show.
  for (const Chunk& c : table->chunks(ChunkFile::kColumn)) {
    bool in_order = true;
    int32_t last = INT32_MIN;
    for (uint64_t off = c.offset; off < c.offset + c.length; off += ref.edge_size) {
      int32_t s;
      std::memcpy(&s, ref.column.data() + off, 4);
      in_order &= s >= last;
      last = s;
    }
    EXPECT_EQ(c.sources_sorted, in_order) << "chunk " << c.id;
  }

  auto runs = SourceRuns::Load(*table, ChunkFile::kColumn);
  ASSERT_TRUE(runs.ok()) << runs.error().message();
  const uint64_t chunks = table->chunks(ChunkFile::kColumn).size();
  if (rc.sorted) {
    EXPECT_EQ(runs->sorted_chunks(), chunks);
  } else {
    EXPECT_LT(runs->sorted_chunks(), chunks);  // random input order: (almost) none sorted
  }
  EXPECT_GT(runs->memory_bytes(), 0u);

  std::mt19937_64 rng(17);
  const size_t words = (g.vertices + 63) / 64;
  for (double density : {0.001, 0.05, 0.4, 0.95}) {
    std::vector<uint64_t> a(words, 0), b(words, 0);
    for (uint32_t v = 0; v < g.vertices; ++v) {
      if (std::uniform_real_distribution<double>(0, 1)(rng) < density) a[v / 64] |= uint64_t{1} << (v % 64);
      if (std::uniform_real_distribution<double>(0, 1)(rng) < density / 2) b[v / 64] |= uint64_t{1} << (v % 64);
    }
    for (const Chunk& c : table->chunks(ChunkFile::kColumn)) {
      SCOPED_TRACE("density " + std::to_string(density) + " chunk " + std::to_string(c.id));
      std::vector<ByteRun> got;
      for (const std::vector<const uint64_t*>& set : {std::vector<const uint64_t*>{a.data()},
                                                      std::vector<const uint64_t*>{a.data(), b.data()},
                                                      std::vector<const uint64_t*>{b.data(), nullptr}}) {
        runs->ActiveRuns(c.id, set, &got);
        if (c.sources_sorted) {
          EXPECT_EQ(got, BruteRuns(ref, c, set));
        } else {
          EXPECT_EQ(got, (std::vector<ByteRun>{{0, c.length}}));  // unsorted: the whole chunk
        }
      }
      runs->ActiveRuns(c.id, {}, &got);
      EXPECT_TRUE(got.empty());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Graphs, SourceRunsTest,
                         ::testing::Values(RunsCase{"sorted_small_chunks", true, false, 4096},
                                           RunsCase{"sorted_weighted", true, true, 12288},
                                           RunsCase{"sorted_one_chunk_per_block", true, false, 1 << 20},
                                           RunsCase{"unsorted", false, false, 4096}),
                         [](const ::testing::TestParamInfo<RunsCase>& info) { return std::string(info.param.name); });

TEST(SourceRuns, FromChunksMatchesTheSourcesGiven) {
  // Chunk 0: sources 3 (2 edges), 5 (1), 6 (4) of 8-byte edges; chunk 1 unsorted.
  auto runs = SourceRuns::FromChunks(8, {{56, {{3, 2}, {5, 1}, {6, 4}}}, {80, {}}});
  EXPECT_TRUE(runs.sorted(0));
  EXPECT_FALSE(runs.sorted(1));
  std::vector<uint64_t> bits(1, (1ull << 3) | (1ull << 6));
  const uint64_t* b = bits.data();
  std::vector<ByteRun> got;
  runs.ActiveRuns(0, std::span<const uint64_t* const>(&b, 1), &got);
  EXPECT_EQ(got, (std::vector<ByteRun>{{0, 16}, {24, 32}}));
  bits[0] |= 1ull << 5;  // 5 joins its neighbours into one run
  runs.ActiveRuns(0, std::span<const uint64_t* const>(&b, 1), &got);
  EXPECT_EQ(got, (std::vector<ByteRun>{{0, 56}}));
  runs.ActiveRuns(1, std::span<const uint64_t* const>(&b, 1), &got);
  EXPECT_EQ(got, (std::vector<ByteRun>{{0, 80}}));
}

// Chunks of many sources (several list blocks or words each, the last one partial), ids
// `max_gap` apart at most and up to `max_edges` edges a source, against the runs computed source by
// source; bitmaps from one set bit to all set, with bits on block edges (the first and last source
// of a list block) and word edges (ids 64k and 64k + 63) where a skipped block or word would show.
// Returns how many chunks were kept in the bitmap form.
uint64_t ExpectRunsAsSourceBySource(uint32_t max_gap, uint32_t max_edges) {
  std::mt19937_64 rng(42 + max_gap * 1000 + max_edges);
  const uint64_t edge = 12;
  std::vector<SourceRuns::ChunkSources> chunks;
  uint32_t v = 0;
  for (uint32_t sources : {1u, 63u, 64u, 65u, 1000u, 4097u}) {
    SourceRuns::ChunkSources c;
    for (uint32_t k = 0; k < sources; ++k) {
      v += 1 + static_cast<uint32_t>(rng() % max_gap);
      // Mostly small counts, now and then the largest (which sets a bitmap chunk's width).
      const uint32_t edges = rng() % 16 == 0 ? max_edges : 1 + static_cast<uint32_t>(rng() % 4);
      c.sources.push_back({v, edges});
      c.length += edges * edge;
    }
    chunks.push_back(c);
  }
  const SourceRuns runs = SourceRuns::FromChunks(edge, chunks);
  const size_t words = v / 64 + 1;
  auto naive = [&](const SourceRuns::ChunkSources& c, const std::vector<uint64_t>& bits) {
    std::vector<ByteRun> out;
    uint64_t at = 0;
    for (const SourceCount& s : c.sources) {
      const uint64_t length = s.edges * edge;
      if ((bits[s.vertex / 64] >> (s.vertex % 64)) & 1) {
        if (!out.empty() && out.back().end() == at) out.back().length += length;
        else out.push_back({at, length});
      }
      at += length;
    }
    return out;
  };
  std::vector<std::vector<uint64_t>> bitmaps;
  for (double density : {0.0, 0.0005, 0.01, 0.2, 1.0}) {
    std::vector<uint64_t> bits(words, 0);
    for (uint32_t u = 0; u <= v; ++u)
      if (std::uniform_real_distribution<double>(0, 1)(rng) < density) bits[u / 64] |= uint64_t{1} << (u % 64);
    bitmaps.push_back(bits);
  }
  std::vector<uint64_t> edges_of_blocks(words, 0);
  for (const auto& c : chunks)
    for (size_t k = 0; k < c.sources.size(); ++k)
      if (k % 64 == 0 || k % 64 == 63 || k + 1 == c.sources.size())
        edges_of_blocks[c.sources[k].vertex / 64] |= uint64_t{1} << (c.sources[k].vertex % 64);
  bitmaps.push_back(edges_of_blocks);
  std::vector<uint64_t> edges_of_words(words, (uint64_t{1} << 63) | 1);
  bitmaps.push_back(edges_of_words);
  size_t nonempty = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    for (const auto& bits : bitmaps) {
      const uint64_t* b = bits.data();
      std::vector<ByteRun> got;
      runs.ActiveRuns(i, std::span<const uint64_t* const>(&b, 1), &got);
      EXPECT_EQ(got, naive(chunks[i], bits)) << "chunk " << i;
      nonempty += !got.empty();
    }
    // Two bitmaps: a source is in if either has it.
    const uint64_t* two[] = {bitmaps[1].data(), bitmaps[5].data()};
    std::vector<uint64_t> either(words);
    for (size_t w = 0; w < words; ++w) either[w] = bitmaps[1][w] | bitmaps[5][w];
    std::vector<ByteRun> got;
    runs.ActiveRuns(i, two, &got);
    EXPECT_EQ(got, naive(chunks[i], either)) << "chunk " << i;
  }
  EXPECT_GT(nonempty, chunks.size());  // the test saw runs, not only empty answers
  EXPECT_EQ(runs.sorted_chunks(), chunks.size());
  return runs.bitmap_chunks();
}

TEST(SourceRuns, DenseChunksTakeTheBitmapFormAndFindEveryActiveSource) {
  // Ids 1–3 apart: a word holds ~32 sources, less memory than their varints. Counts of 300 and
  // 70,000 (a sixteenth of the sources) are escaped; 255 is the escape byte itself.
  EXPECT_EQ(ExpectRunsAsSourceBySource(3, 4), 6u);
  EXPECT_EQ(ExpectRunsAsSourceBySource(3, 300), 6u);
  EXPECT_EQ(ExpectRunsAsSourceBySource(3, 70000), 6u);
  EXPECT_EQ(ExpectRunsAsSourceBySource(3, 255), 6u);
  EXPECT_EQ(ExpectRunsAsSourceBySource(3, 254), 6u);
  EXPECT_EQ(ExpectRunsAsSourceBySource(1, 4), 6u);  // every id a source: full words
}

TEST(SourceRuns, SparseChunksTakeTheListFormAndSkipBlocksYetFindEveryActiveSource) {
  // Ids up to 400 apart: a word holds one source at most, so the varint list is smaller (a
  // one-source chunk is one word either way and may take either form).
  EXPECT_LE(ExpectRunsAsSourceBySource(400, 4), 1u);
  EXPECT_LE(ExpectRunsAsSourceBySource(400, 70000), 1u);
}

TEST(SourceRuns, TheBitmapFormTakesLessMemoryThanTheList) {
  // The same dense sources, as one chunk (bitmap) and spread 200 ids apart (list): the form is
  // chosen by size, so the dense chunk costs at most its list's bytes.
  std::vector<SourceCount> dense, sparse;
  for (uint32_t k = 0; k < 10000; ++k) {
    dense.push_back({k * 2, 3});
    sparse.push_back({k * 200, 3});
  }
  const SourceRuns a = SourceRuns::FromChunks(8, {{10000 * 24, dense}});
  const SourceRuns b = SourceRuns::FromChunks(8, {{10000 * 24, sparse}});
  EXPECT_EQ(a.bitmap_chunks(), 1u);
  EXPECT_EQ(b.bitmap_chunks(), 0u);
  // Per source: 16 bytes a word / 32 sources + a count byte against a varint pair (2–3 bytes)
  // and a block entry every 64 sources.
  EXPECT_LT(a.memory_bytes(), b.memory_bytes());
  EXPECT_LT(a.memory_bytes(), 10000u * 2);
}

}  // namespace
}  // namespace graphfs::chunkindex
