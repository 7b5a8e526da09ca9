// The active-chunk query against a brute force, for sorted and unsorted graphs
// and every in-memory form.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "chunkindex/active_chunk_finder.h"
#include "chunkindex/index_builder.h"
#include "chunkindex_test_util.h"

namespace graphfs::chunkindex {
namespace {

using testing::GraphSpec;
using testing::MakeGraph;
using testing::RandomEdges;
using testing::TempDir;

std::vector<uint64_t> RandomActive(uint64_t vertices, double density, bool contiguous, std::mt19937_64& rng) {
  std::vector<uint64_t> words((vertices + 63) / 64, 0);
  uint64_t n = static_cast<uint64_t>(density * static_cast<double>(vertices));
  uint64_t start = contiguous && n < vertices ? rng() % (vertices - n) : 0;
  for (uint64_t k = 0; k < n; ++k) {
    uint64_t v = contiguous ? start + k : rng() % vertices;
    words[v / 64] |= uint64_t{1} << (v % 64);
  }
  return words;
}

struct FinderCase {
  const char* name;
  bool sorted;
  bool weighted;
  uint32_t partitions;
  uint64_t chunk;
};

class FinderTest : public ::testing::TestWithParam<FinderCase> {};

TEST_P(FinderTest, MatchesBruteForce) {
  const FinderCase& fc = GetParam();
  TempDir tmp;
  const std::string dir = tmp.File("g");
  GraphSpec g;
  g.vertices = 5000;
  g.partitions = fc.partitions;
  g.sorted = fc.sorted;
  g.weighted = fc.weighted;
  g.edges = RandomEdges(4500, 60000, 21);
  // A dense run of consecutive sources so that some sorted chunks are exact ranges.
  for (int32_t v = 0; v < 1000; ++v) g.edges.push_back({v, (v * 13) % 5000});
  ASSERT_EQ(MakeGraph(g, dir), "");
  BuildOptions o;
  o.graph_dir = dir;
  o.chunk_size = fc.chunk;
  auto r = BuildIndex(o);
  ASSERT_TRUE(r.ok()) << r.error().message();
  auto table = ChunkTable::Open(dir);
  ASSERT_TRUE(table.ok()) << table.error().message();

  // Brute force: every chunk's source set from the table's own records was
  // checked against the files in index_build_test; here sets come from the files.
  testing::Reference ref;
  ASSERT_EQ(ref.Load(dir), "");
  std::vector<std::vector<uint32_t>> sources[2];
  for (int f = 0; f < 2; ++f) {
    for (const Chunk& c : table->chunks(static_cast<ChunkFile>(f))) {
      std::vector<uint32_t> s;
      for (auto [v, n] : ref.Sources(f == 0, c.offset, c.offset + c.length)) s.push_back(v);
      sources[f].push_back(s);
    }
  }

  std::mt19937_64 rng(99);
  for (auto form : {ActiveChunkFinder::Form::kAuto, ActiveChunkFinder::Form::kList, ActiveChunkFinder::Form::kBitmap}) {
   for (auto path : {ActiveChunkFinder::Path::kCheapest, ActiveChunkFinder::Path::kForward,
                     ActiveChunkFinder::Path::kInverted}) {
    SCOPED_TRACE("form " + std::to_string(static_cast<int>(form)) + " path " + std::to_string(static_cast<int>(path)));
    auto finder = ActiveChunkFinder::Load(*table, form);
    ASSERT_TRUE(finder.ok()) << finder.error().message();
    finder->set_path(path);
    if (form == ActiveChunkFinder::Form::kAuto && fc.sorted && fc.chunk <= 2048) {
      EXPECT_GT(finder->count(ActiveChunkFinder::Form::kAuto), 0u) << "no chunk stored as a plain range";
    }
    for (double density : {0.0, 0.0002, 0.001, 0.01, 0.1, 0.5, 1.0}) {
      for (bool contiguous : {false, true}) {
        auto active = RandomActive(table->vertices(), density, contiguous, rng);
        for (int f = 0; f < 2; ++f) {
          std::vector<ActiveChunk> got;
          ASSERT_TRUE(finder->Find(static_cast<ChunkFile>(f), active, &got).ok());
          std::vector<ActiveChunk> want;
          auto chunks = table->chunks(static_cast<ChunkFile>(f));
          for (uint64_t id = 0; id < chunks.size(); ++id) {
            uint32_t n = 0;
            for (uint32_t v : sources[f][id]) n += (active[v / 64] >> (v % 64)) & 1;
            if (n > 0) want.push_back({id, n, chunks[id].mean_source_degree()});
          }
          ASSERT_EQ(got.size(), want.size()) << "density " << density << " contiguous " << contiguous;
          for (size_t k = 0; k < got.size(); ++k) {
            EXPECT_EQ(got[k].id, want[k].id);
            EXPECT_EQ(got[k].active_sources, want[k].active_sources);
            EXPECT_DOUBLE_EQ(got[k].mean_source_degree, want[k].mean_source_degree);
          }
        }
      }
    }
    std::vector<uint64_t> short_set(1);
    std::vector<ActiveChunk> out;
    EXPECT_FALSE(finder->Find(ChunkFile::kColumn, short_set, &out).ok()) << "too-short active set accepted";
   }
  }
}

INSTANTIATE_TEST_SUITE_P(Graphs, FinderTest,
                         ::testing::Values(FinderCase{"unsorted", false, false, 4, 2048},
                                           FinderCase{"sorted", true, false, 4, 2048},
                                           FinderCase{"sorted_weighted", true, true, 3, 1200},
                                           FinderCase{"unsorted_one_partition", false, false, 1, 8192},
                                           FinderCase{"sorted_big_chunks", true, false, 5, 1 << 20}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace graphfs::chunkindex

namespace graphfs::chunkindex {
namespace {

// The cache calls these from many FUSE threads at once (run under TSan by scripts/test --sanitize thread).
TEST(ConcurrentReaders, TableAndFinderFromManyThreads) {
  TempDir tmp;
  const std::string dir = tmp.File("g");
  GraphSpec g;
  g.vertices = 3000;
  g.partitions = 3;
  g.edges = RandomEdges(3000, 30000, 8);
  ASSERT_EQ(MakeGraph(g, dir), "");
  BuildOptions o;
  o.graph_dir = dir;
  o.chunk_size = 4096;
  ASSERT_TRUE(BuildIndex(o).ok());
  auto table = ChunkTable::Open(dir);
  ASSERT_TRUE(table.ok());
  auto finder = ActiveChunkFinder::Load(*table);
  ASSERT_TRUE(finder.ok());
  std::vector<uint64_t> all((3000 + 63) / 64, ~uint64_t{0});
  std::vector<ActiveChunk> expect;
  ASSERT_TRUE(finder->Find(ChunkFile::kRow, all, &expect).ok());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<ActiveChunk> out;
      for (int k = 0; k < 30; ++k) {
        if (!finder->Find(ChunkFile::kRow, all, &out).ok() || out.size() != expect.size()) failures++;
        uint64_t id = static_cast<uint64_t>(t * 31 + k) % table->chunks(ChunkFile::kRow).size();
        auto s = table->Sources(ChunkFile::kRow, id);
        if (!s.ok() || s->size() != table->chunks(ChunkFile::kRow)[id].num_sources) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace graphfs::chunkindex
