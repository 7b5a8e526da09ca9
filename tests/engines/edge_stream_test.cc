#include "engines/core/edge_stream.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <set>

#include "engine_test_util.h"
#include "engines/core/preprocess.h"
#include "fake_partitions.h"

namespace graphfs::engine {
namespace {

using grid::EdgeOrder;
using grid::GridLayout;
using grid::IoPage;
using grid::kMaxIoBytes;
using grid::VertexId;
using testing::BuildGrid;
using testing::TempDir;
using testing::TestGraph;

// Every read is page-aligned, at most 24 MiB, reads never overlap or go
// backwards, and together they cover every byte of every used block.
void CheckPlan(const GridLayout& layout, EdgeOrder order, const std::vector<bool>& use) {
  const uint64_t page = IoPage(layout.edge_type());
  const uint64_t p = layout.partitions();
  auto reads = PlanReads(layout, order, use, 0, p);
  uint64_t last_end = 0;
  for (const ReadTask& r : reads) {
    ASSERT_EQ(r.offset % page, 0u);
    ASSERT_EQ(r.length % page, 0u);
    ASSERT_GT(r.length, 0u);
    ASSERT_LE(r.length, kMaxIoBytes);
    ASSERT_GE(r.offset, last_end);
    last_end = r.offset + r.length;
  }
  for (uint64_t i = 0; i < p; ++i) {
    if (!use[i]) continue;
    for (uint64_t j = 0; j < p; ++j) {
      for (uint64_t byte = layout.BlockBegin(order, i, j); byte < layout.BlockEnd(order, i, j);
           byte += layout.edge_size()) {
        bool covered = false;
        for (const ReadTask& r : reads) covered |= byte >= r.offset && byte + layout.edge_size() <= r.offset + r.length;
        ASSERT_TRUE(covered) << "byte " << byte << " of block " << i << "," << j;
      }
    }
  }
}

TEST(PlanReads, AlignedMonotonicAndComplete) {
  for (bool weighted : {false, true}) {
    for (uint32_t p : {1u, 3u, 4u}) {
      TempDir tmp;
      TestGraph g = testing::RandomGraph(3000, 3000, 5000, weighted, p);
      auto layout = GridLayout::Open(BuildGrid(tmp, g, p));
      ASSERT_TRUE(layout.ok());
      for (EdgeOrder order : {EdgeOrder::kColumn, EdgeOrder::kRow}) {
        CheckPlan(*layout, order, std::vector<bool>(p, true));
        std::vector<bool> some(p, false);
        some[p / 2] = true;
        CheckPlan(*layout, order, some);
        auto none = PlanReads(*layout, order, std::vector<bool>(p, false), 0, p);
        EXPECT_TRUE(none.empty());
      }
    }
  }
}

// Diagonal-first: the same reads, those starting in a diagonal block (i, i) first in file order,
// then the rest in file order; and a stream in that order still sees every edge once.
TEST(PlanReads, DiagonalFirstReordersWithoutChangingWhatIsRead) {
  TempDir tmp;
  TestGraph g = testing::RandomGraph(3000, 3000, 20000, true, 9);
  for (auto& e : g.edges) e.weight = static_cast<float>((e.source * 7 + e.target) % 5);
  auto layout = GridLayout::Open(BuildGrid(tmp, g, 4));
  ASSERT_TRUE(layout.ok());
  const std::vector<bool> all(4, true);
  const auto file_order = PlanReads(*layout, EdgeOrder::kColumn, all, 0, 4);
  auto reads = file_order;
  DiagonalFirst(reads);
  ASSERT_EQ(reads.size(), file_order.size());
  size_t diagonal = 0;
  while (diagonal < reads.size() && reads[diagonal].diagonal) ++diagonal;
  EXPECT_GT(diagonal, 0u);
  EXPECT_LT(diagonal, reads.size());
  for (size_t k = diagonal; k < reads.size(); ++k) EXPECT_FALSE(reads[k].diagonal) << "read " << k;
  for (const ReadTask& r : reads) {
    if (!r.diagonal) continue;
    bool inside = false;  // starts inside some block (i, i), or is the rounded tail of one
    for (uint64_t i = 0; i < 4; ++i) {
      const uint64_t b = layout->BlockBegin(EdgeOrder::kColumn, i, i), e = layout->BlockEnd(EdgeOrder::kColumn, i, i);
      inside |= r.offset < e && r.offset + r.length > b;
    }
    EXPECT_TRUE(inside) << "diagonal read at " << r.offset;
  }
  auto key = [](const ReadTask& r) { return std::make_pair(r.offset, r.length); };
  std::vector<std::pair<uint64_t, uint64_t>> a, b;
  for (const ReadTask& r : reads) a.push_back(key(r));
  for (const ReadTask& r : file_order) b.push_back(key(r));
  std::sort(a.begin(), a.end());
  EXPECT_EQ(a, b);

  uint64_t expect_weight = 0;
  for (const auto& e : g.edges) expect_weight += 1000 + static_cast<uint64_t>(e.weight);  // each edge once
  for (uint64_t memory : {uint64_t{8} << 30, uint64_t{1024}}) {
    EdgeStream stream(*layout, memory, 2);
    StreamOptions options;
    options.vertex_state_bytes = g.vertices * 4;
    options.diagonal_first = true;
    auto sum =
        stream.Stream<uint64_t>(options, [](VertexId, VertexId, float w) { return 1000 + static_cast<uint64_t>(w); });
    ASSERT_TRUE(sum.ok());
    EXPECT_EQ(*sum, expect_weight);
  }
}

TEST(PartitionBatch, FollowsGridGraph) {
  EXPECT_EQ(PartitionBatch(8, 0, 1000), 8u);
  EXPECT_EQ(PartitionBatch(8, 100, 1000), 8u);   // fits in 0.8 * budget
  EXPECT_EQ(PartitionBatch(8, 1600, 1000), 4u);  // two windows
  EXPECT_EQ(PartitionBatch(8, 1u << 30, 1), 1u);
}

struct Counts {
  uint64_t edges = 0;
  uint64_t weight_sum = 0;  // weights are small integers here, so sums are exact
};

TEST(EdgeStream, SeesEveryActiveEdgeOnceInAnyMode) {
  TempDir tmp;
  TestGraph g = testing::RandomGraph(5000, 4000, 40000, true, 5);
  for (auto& e : g.edges) e.weight = static_cast<float>((e.source + e.target) % 7);
  auto layout = GridLayout::Open(BuildGrid(tmp, g, 4));
  ASSERT_TRUE(layout.ok());
  Bitmap active(g.vertices);
  for (uint32_t v = 0; v < g.vertices; v += 3) active.SetUnsynchronized(v);
  uint64_t expect_all = 0, expect_active = 0, expect_active_weight = 0;
  for (const auto& e : g.edges) {
    ++expect_all;
    if (e.source % 3 == 0) {
      ++expect_active;
      expect_active_weight += static_cast<uint64_t>(e.weight);
    }
  }
  // Budgets: plenty (buffered, one pass) and tiny (O_DIRECT, one pass per source window).
  for (uint64_t memory : {uint64_t{8} << 30, uint64_t{1024}}) {
    EdgeStream stream(*layout, memory, 2);
    for (EdgeOrder order : {EdgeOrder::kColumn, EdgeOrder::kRow}) {
      StreamOptions options;
      options.order = order;
      options.vertex_state_bytes = g.vertices * 4;
      auto all = stream.Stream<uint64_t>(options, [](VertexId, VertexId, float) -> uint64_t { return 1; });
      ASSERT_TRUE(all.ok()) << all.error().message();
      EXPECT_EQ(*all, expect_all);
      options.active = &active;
      auto some = stream.Stream<uint64_t>(options, [&](VertexId s, VertexId, float) -> uint64_t {
        EXPECT_TRUE(active.Get(s));
        return 1;
      });
      ASSERT_TRUE(some.ok());
      EXPECT_EQ(*some, expect_active);
      auto weights = stream.Stream<uint64_t>(options, [](VertexId, VertexId, float w) -> uint64_t {
        return static_cast<uint64_t>(w);
      });
      ASSERT_TRUE(weights.ok());
      EXPECT_EQ(*weights, expect_active_weight);
    }
    if (memory < 4096) {
      EXPECT_GT(stream.stats().direct_streams, 0u) << "tiny budget should use O_DIRECT on ext4";
      EXPECT_GT(stream.stats().passes, stream.stats().streams) << "tiny budget should split column streams";
    } else {
      EXPECT_EQ(stream.stats().direct_streams, 0u);
    }
  }
}

TEST(EdgeStream, LargeBlockIsReadIn24MiBPieces) {
  TempDir tmp;
  TestGraph g = testing::RandomGraph(100, 100, 3'300'000, false, 9);  // 26.4 MB in one block
  auto layout = GridLayout::Open(BuildGrid(tmp, g, 1));
  ASSERT_TRUE(layout.ok());
  auto reads = PlanReads(*layout, EdgeOrder::kColumn, {true}, 0, 1);
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_EQ(reads[0].length, kMaxIoBytes);
  EdgeStream stream(*layout, 1, 2);  // O_DIRECT; the last read runs past EOF
  auto n = stream.Stream<uint64_t>(StreamOptions{}, [](VertexId, VertexId, float) -> uint64_t { return 1; });
  ASSERT_TRUE(n.ok()) << n.error().message();
  EXPECT_EQ(*n, g.edges.size());
  EXPECT_EQ(stream.stats().bytes_read, g.edges.size() * 8);
}

TEST(EdgeStream, TruncatedOrCorruptFilesAreErrorsNotCrashes) {
  TempDir tmp;
  TestGraph g = testing::RandomGraph(50, 50, 3000, false, 2);
  const std::string dir = BuildGrid(tmp, g, 2);
  auto layout = GridLayout::Open(dir);
  ASSERT_TRUE(layout.ok());
  std::filesystem::resize_file(dir + "/column", 3000 * 8 - 4096 - 8);
  EdgeStream stream(*layout, 8ull << 30, 2);
  auto n = stream.Stream<uint64_t>(StreamOptions{}, [](VertexId, VertexId, float) -> uint64_t { return 1; });
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().message().find("truncated"), std::string::npos) << n.error().message();

  // A target id >= V inside `row` (sources are checked against the window).
  std::string row = testing::ReadFile(dir + "/row");
  int32_t bad = 1000;
  std::memcpy(row.data() + 4, &bad, 4);
  testing::WriteFile(dir + "/row", row);
  StreamOptions options;
  options.order = EdgeOrder::kRow;
  auto m = stream.Stream<uint64_t>(options, [](VertexId, VertexId t, float) -> uint64_t { return t < 50 ? 1 : 1000000; });
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message().find("corrupt"), std::string::npos) << m.error().message();
}

TEST(EdgeStream, CountsEdgesReadAndEdgesOfActiveSources) {
  TempDir tmp;
  TestGraph g = testing::RandomGraph(3000, 3000, 20000, false, 6);
  auto layout = GridLayout::Open(BuildGrid(tmp, g, 4));
  ASSERT_TRUE(layout.ok());
  Bitmap active(g.vertices);
  for (uint32_t v = 0; v < g.vertices; v += 5) active.SetUnsynchronized(v);
  uint64_t expect_active = 0;
  for (const auto& e : g.edges) expect_active += e.source % 5 == 0;
  EdgeStream stream(*layout, 8ull << 30, 2);
  auto all = stream.Stream<uint64_t>(StreamOptions{}, [](VertexId, VertexId, float) -> uint64_t { return 1; });
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(stream.stats().edges_read, g.edges.size()) << "one pass, reads never overlap";
  EXPECT_EQ(stream.stats().edges_active, g.edges.size());
  StreamOptions options;
  options.active = &active;
  auto some = stream.Stream<uint64_t>(options, [](VertexId, VertexId, float) -> uint64_t { return 1; });
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(stream.stats().edges_active - g.edges.size(), expect_active);
  EXPECT_GE(stream.stats().edges_read - g.edges.size(), expect_active);
  EXPECT_EQ(stream.stats().partitions, 0u);
  EXPECT_FALSE(stream.integrated());
}

// WithPrefetch: fn sees the same edges; prefetch is called ahead with the targets of active
// sources only (a record of an inactive source repeats the last one), and covers them.
TEST(EdgeStream, PrefetchesTheTargetsOfActiveSourcesAhead) {
  TempDir tmp;
  TestGraph g = testing::RandomGraph(3000, 3000, 60000, false, 11);
  auto layout = GridLayout::Open(BuildGrid(tmp, g, 4));
  ASSERT_TRUE(layout.ok());
  Bitmap active(g.vertices);
  for (uint32_t v = 0; v < g.vertices; v += 5) active.SetUnsynchronized(v);
  std::set<VertexId> active_targets, other_targets;
  uint64_t expect_active = 0;
  for (const auto& e : g.edges) {
    if (e.source % 5 == 0) {
      ++expect_active;
      active_targets.insert(static_cast<VertexId>(e.target));
    }
  }
  for (const auto& e : g.edges) {
    if (!active_targets.contains(static_cast<VertexId>(e.target))) other_targets.insert(static_cast<VertexId>(e.target));
  }
  ASSERT_FALSE(other_targets.empty()) << "the graph should have targets only inactive sources reach";
  for (EdgeOrder order : {EdgeOrder::kColumn, EdgeOrder::kRow}) {
    EdgeStream stream(*layout, 8ull << 30, 2);
    std::vector<std::set<VertexId>> prefetched(2);  // per worker: each calls only its own
    StreamOptions options;
    options.order = order;
    options.active = &active;
    auto n = stream.Stream<uint64_t>(options, WithPrefetch([](VertexId, VertexId, float) -> uint64_t { return 1; },
                                                           [&](int worker, VertexId t) { prefetched[static_cast<size_t>(worker)].insert(t); }));
    ASSERT_TRUE(n.ok()) << n.error().message();
    EXPECT_EQ(*n, expect_active);
    std::set<VertexId> all = prefetched[0];
    all.insert(prefetched[1].begin(), prefetched[1].end());
    all.erase(0);  // before the first active record ahead, the last target prefetched is 0
    size_t covered = 0;
    for (VertexId t : all) {
      EXPECT_FALSE(other_targets.contains(t)) << "target " << t << " of inactive sources only was prefetched";
      covered += active_targets.contains(t);
    }
    // Only the last kPrefetchDistance records of each buffer are not looked at ahead.
    EXPECT_GE(covered, active_targets.size() * 9 / 10);
  }
}

TEST(PlanPartitionReads, CoversTheLpInWholePagesForEveryThread) {
  struct Case {
    uint64_t bytes;
    uint64_t page;
    int threads;
    size_t reads;
  };
  const uint64_t mib = 1 << 20;
  for (const Case& c : {Case{0, 4096, 4, 0}, Case{8, 4096, 4, 1}, Case{100 * 1000, 4096, 8, 1},
                        Case{10 * mib, 4096, 4, 4}, Case{10 * mib + 8, 4096, 4, 4}, Case{100 * mib, 4096, 2, 5},
                        Case{256 * mib, 4096, 1, 11}, Case{12 * 1000 * 1000, 12288, 3, 3}, Case{12 * mib, 12288, 64, 12}}) {
    SCOPED_TRACE(std::to_string(c.bytes) + " bytes, page " + std::to_string(c.page) + ", " +
                 std::to_string(c.threads) + " threads");
    auto reads = PlanPartitionReads(c.bytes, c.page, c.threads);
    EXPECT_EQ(reads.size(), c.reads);
    uint64_t next = 0;
    for (size_t k = 0; k < reads.size(); ++k) {
      EXPECT_EQ(reads[k].offset, next);
      EXPECT_GT(reads[k].length, 0u);
      EXPECT_LE(reads[k].length, kMaxIoBytes);
      if (k + 1 < reads.size()) {
        EXPECT_EQ(reads[k].length % c.page, 0u) << "only the last piece may be partial";
      }
      next += reads[k].length;
    }
    EXPECT_EQ(next, c.bytes);
  }
}

// Integrated mode reads the fake daemon's logical partitions (shuffled
// chunks that straddle blocks, with inactive sources' edges) and must still
// see each active edge exactly once; row streams keep reading `row`. A source
// that holds two LPs is asked for the next while the last is read (the fake
// closes the LP before the last at each ask: reading one it let go would fail).
TEST(EdgeStream, IntegratedModeSeesEveryActiveEdgeOnceFromLogicalPartitions) {
  for (const auto& [weighted, ahead] : {std::pair{false, false}, {true, false}, {false, true}, {true, true}}) {
    SCOPED_TRACE(std::string(weighted ? "weighted" : "unweighted") + (ahead ? ", asks ahead" : ""));
    TempDir tmp;
    TestGraph g = testing::RandomGraph(5000, 4000, 40000, weighted, 5);
    for (auto& e : g.edges) e.weight = weighted ? static_cast<float>((e.source + e.target) % 7) : 1.0f;
    auto layout = GridLayout::Open(BuildGrid(tmp, g, 4));
    ASSERT_TRUE(layout.ok());
    Bitmap active(g.vertices);
    for (uint32_t v = 0; v < 20; ++v) active.SetUnsynchronized(v);  // few sources: most chunks are skipped
    uint64_t expect_active = 0, expect_weight = 0, expect_all_weight = 0;
    for (const auto& e : g.edges) {
      expect_all_weight += static_cast<uint64_t>(e.weight);
      if (e.source < 20) {
        ++expect_active;
        expect_weight += static_cast<uint64_t>(e.weight);
      }
    }
    auto counts = std::make_shared<testing::FakePartitionCounts>();
    testing::FakePartitionOptions fake;
    fake.chunk_edges = 37;
    fake.partition_bytes = 64 * 1024;
    fake.asks_ahead = ahead;
    fake.turn_every = 2;
    // A tiny budget: a plain column stream would be split into source windows and use O_DIRECT.
    EdgeStream stream(*layout, 1024, 2);
    stream.SetPartitionSource(std::make_unique<testing::FakePartitions>(*layout, tmp.File("lp"), fake, counts));
    std::filesystem::create_directories(tmp.File("lp"));
    ASSERT_TRUE(stream.integrated());

    auto weights = stream.Stream<uint64_t>(StreamOptions{}, [](VertexId, VertexId, float w) -> uint64_t {
      return static_cast<uint64_t>(w);
    });
    ASSERT_TRUE(weights.ok()) << weights.error().message();
    EXPECT_EQ(*weights, expect_all_weight);
    EXPECT_EQ(counts->set_all_active, 1u) << "no active set: every vertex";
    EXPECT_GT(counts->partitions, 3u);
    EXPECT_EQ(stream.stats().partitions, counts->partitions);
    // Asking ahead, the next ask ends the use of an LP (no `done`), and every ask but the
    // first of an iteration comes while the last LP is still held.
    EXPECT_EQ(counts->done, ahead ? 0u : counts->partitions);
    EXPECT_EQ(counts->asked_holding, ahead ? counts->partitions : 0u);
    EXPECT_EQ(counts->ends, 1u);
    // Every LP handed out as a turn was ended, once.
    EXPECT_GT(counts->turns.load(), 0u);
    EXPECT_EQ(counts->end_turns.load(), counts->turns.load());
    EXPECT_EQ(counts->stray_end_turns.load(), 0u);
    EXPECT_EQ(stream.stats().edges_read, g.edges.size());
    EXPECT_EQ(stream.stats().edges_active, g.edges.size());
    EXPECT_EQ(stream.stats().bytes_read, g.edges.size() * layout->edge_size());
    EXPECT_EQ(stream.stats().direct_streams, 0u);
    EXPECT_EQ(stream.stats().passes, 0u) << "no sweeps over column";

    const StreamStats before = stream.stats();
    const uint64_t chunk_edges_before = counts->chunk_edges_out;
    StreamOptions options;
    options.active = &active;
    options.vertex_state_bytes = g.vertices * 4;
    auto some = stream.Stream<uint64_t>(options, [&](VertexId s, VertexId, float w) -> uint64_t {
      EXPECT_TRUE(active.Get(s));
      return static_cast<uint64_t>(w) * 1000000 + 1;
    });
    ASSERT_TRUE(some.ok()) << some.error().message();
    EXPECT_EQ(*some % 1000000, expect_active);
    EXPECT_EQ(*some / 1000000, expect_weight);
    EXPECT_EQ(counts->set_active, 1u);
    EXPECT_EQ(counts->ends, 2u);
    EXPECT_EQ(stream.stats().edges_active - before.edges_active, expect_active);
    EXPECT_EQ(stream.stats().edges_read - before.edges_read, counts->chunk_edges_out - chunk_edges_before);
    EXPECT_LT(stream.stats().edges_read - before.edges_read, g.edges.size() / 2) << "only active chunks are read";

    const uint64_t partitions = counts->partitions;
    StreamOptions row;
    row.order = EdgeOrder::kRow;
    auto rows = stream.Stream<uint64_t>(row, [](VertexId, VertexId, float) -> uint64_t { return 1; });
    ASSERT_TRUE(rows.ok());
    EXPECT_EQ(*rows, g.edges.size());
    EXPECT_EQ(counts->partitions, partitions) << "row streams do not use logical partitions";
    EXPECT_EQ(stream.stats().passes, 1u);
  }
}

TEST(EdgeStream, IntegratedModeRefusesAPartitionOfPartialRecords) {
  TempDir tmp;
  TestGraph g = testing::RandomGraph(100, 100, 1000, true, 7);
  auto layout = GridLayout::Open(BuildGrid(tmp, g, 2));
  ASSERT_TRUE(layout.ok());
  std::filesystem::create_directories(tmp.File("lp"));
  testing::FakePartitionOptions fake;
  fake.junk_bytes = 8;  // not a multiple of 12
  EdgeStream stream(*layout, 8ull << 30, 2);
  stream.SetPartitionSource(std::make_unique<testing::FakePartitions>(*layout, tmp.File("lp"), fake));
  auto n = stream.Stream<uint64_t>(StreamOptions{}, [](VertexId, VertexId, float) -> uint64_t { return 1; });
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().message().find(tmp.File("lp") + "/lp-0: "), std::string::npos) << n.error().message();
  EXPECT_NE(n.error().message().find("bytes is not a whole number of 12-byte edge records"), std::string::npos)
      << n.error().message();
}

}  // namespace
}  // namespace graphfs::engine
