// reorder: every order gives a bijection and the same edges relabelled (in input order),
// bfs starts at the hub and lays out levels in id order, degree sorts, random is fixed by
// its seed; results map back (app results on the reordered graph equal the original
// ones); bad input is refused without leaving output behind; the binary's command line.
#include "engines/core/reorder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "engine_test_util.h"
#include "engines/apps/apps.h"
#include "engines/core/map_back.h"
#include "engines/core/preprocess.h"
#include "reference_apps.h"
#include "run_binary.h"

namespace graphfs::engine {
namespace {

using graphfs::testing::RunBinary;
using testing::Bin;
using testing::ReadArray;
using testing::ReadFile;
using testing::ReferenceBfs;
using testing::ReferenceLabels;
using testing::TempDir;
using testing::TestEdge;
using testing::TestGraph;
using testing::WriteFile;

struct Reordered {
  std::vector<int32_t> perm;  // perm[old] = new, as in the file
  TestGraph graph;            // the output edge file
  ReorderStats stats;
};

Reordered Relabel(const TempDir& tmp, const TestGraph& g, VertexOrder order, uint64_t seed = 1,
              const std::string& name = "out") {
  WriteFile(tmp.File("in"), testing::EdgeBytes(g));
  ReorderOptions o;
  o.input = tmp.File("in");
  o.output = tmp.File(name);
  o.vertices = g.vertices;
  o.weighted = g.weighted;
  o.order = order;
  o.seed = seed;
  auto stats = Reorder(o);
  EXPECT_TRUE(stats.ok()) << stats.error().message();
  Reordered r;
  if (!stats.ok()) return r;
  r.stats = *stats;
  EXPECT_EQ(stats->permutation, tmp.File(name + ".perm"));
  r.perm = ReadArray<int32_t>(stats->permutation);
  const std::string bytes = ReadFile(o.output);
  const size_t record = g.weighted ? 12 : 8;
  EXPECT_EQ(bytes.size() % record, 0u);
  r.graph = TestGraph{g.vertices, g.weighted, {}};
  for (size_t at = 0; at + record <= bytes.size(); at += record) {
    TestEdge e;
    std::memcpy(&e.source, bytes.data() + at, 4);
    std::memcpy(&e.target, bytes.data() + at + 4, 4);
    if (g.weighted) std::memcpy(&e.weight, bytes.data() + at + 8, 4);
    r.graph.edges.push_back(e);
  }
  return r;
}

void ExpectPermutation(const std::vector<int32_t>& perm, size_t vertices) {
  ASSERT_EQ(perm.size(), vertices);
  std::vector<int32_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < vertices; ++i) ASSERT_EQ(sorted[i], static_cast<int32_t>(i)) << "not a bijection";
}

std::vector<uint64_t> OutDegrees(const TestGraph& g) {
  std::vector<uint64_t> degree(g.vertices, 0);
  for (const TestEdge& e : g.edges) ++degree[static_cast<size_t>(e.source)];
  return degree;
}

// Both directions of every edge: BFS on it is reorder's undirected traversal.
TestGraph Symmetric(const TestGraph& g) {
  TestGraph s{g.vertices, false, {}};
  for (const TestEdge& e : g.edges) {
    s.edges.push_back({e.source, e.target});
    s.edges.push_back({e.target, e.source});
  }
  return s;
}

// Each vertex named by the first vertex with its label: equal for equal partitions.
std::vector<int32_t> Canonical(const std::vector<int32_t>& labels) {
  std::vector<int32_t> first(labels.size(), -1), out(labels.size());
  for (size_t v = 0; v < labels.size(); ++v) {
    int32_t& f = first[static_cast<size_t>(labels[v])];
    if (f < 0) f = static_cast<int32_t>(v);
    out[v] = f;
  }
  return out;
}

// A connected graph (a random tree with random directions, plus extra edges) around one
// hub: vertex 37 has the most out-edges.
TestGraph ConnectedWithHub(uint32_t n, uint32_t seed) {
  TestGraph g = testing::RandomGraph(n, n, 2 * n, false, seed);
  std::mt19937 rng(seed);
  for (uint32_t v = 1; v < n; ++v) {
    const int32_t parent = static_cast<int32_t>(rng() % v), child = static_cast<int32_t>(v);
    if (rng() % 2) {
      g.edges.push_back({parent, child});
    } else {
      g.edges.push_back({child, parent});
    }
  }
  for (int32_t k = 0; k < 40; ++k) g.edges.push_back({37, static_cast<int32_t>(rng() % n)});
  return g;
}

TEST(Reorder, EveryOrderIsABijectionAndRelabelsEveryEdgeInInputOrder) {
  for (VertexOrder order : {VertexOrder::kBfs, VertexOrder::kDegree, VertexOrder::kRandom}) {
    for (bool weighted : {false, true}) {
      SCOPED_TRACE(std::to_string(static_cast<int>(order)) + (weighted ? " weighted" : " unweighted"));
      TempDir tmp;
      // Ids drawn from [0, 250): 50 isolated vertices; self-loops and duplicates.
      const TestGraph g = testing::RandomGraph(300, 250, 3000, weighted, 5);
      const Reordered r = Relabel(tmp, g, order);
      ExpectPermutation(r.perm, g.vertices);
      EXPECT_EQ(r.stats.edges, g.edges.size());
      // Record i of the output is record i of the input relabelled (so the multiset of
      // edges is the same under the permutation), weight bits unchanged.
      ASSERT_EQ(r.graph.edges.size(), g.edges.size());
      for (size_t i = 0; i < g.edges.size(); ++i) {
        const TestEdge& in = g.edges[i];
        const TestEdge& out = r.graph.edges[i];
        ASSERT_EQ(out.source, r.perm[static_cast<size_t>(in.source)]) << "edge " << i;
        ASSERT_EQ(out.target, r.perm[static_cast<size_t>(in.target)]) << "edge " << i;
        ASSERT_EQ(std::memcmp(&out.weight, &in.weight, 4), 0) << "edge " << i;
      }
      auto read = ReadPermutationFile(r.stats.permutation);
      ASSERT_TRUE(read.ok()) << read.error().message();
      for (size_t v = 0; v < g.vertices; ++v) {
        EXPECT_EQ(read->old_of_new[static_cast<size_t>(read->new_of_old[v])], static_cast<int32_t>(v));
      }
      EXPECT_FALSE(std::filesystem::exists(tmp.File("out.partial-" + std::to_string(::getpid()))));
    }
  }
}

TEST(Reorder, BfsStartsAtTheHubAndLaysOutLevelsInIdOrder) {
  TempDir tmp;
  const TestGraph g = ConnectedWithHub(400, 9);
  const Reordered r = Relabel(tmp, g, VertexOrder::kBfs);
  ASSERT_EQ(r.perm.size(), 400u);
  EXPECT_EQ(r.perm[37], 0) << "the vertex of highest out-degree gets id 0";
  EXPECT_EQ(r.stats.bfs_root, 37);
  EXPECT_EQ(r.stats.bfs_starts, 1u) << "connected (ignoring direction): one traversal";
  // Undirected BFS levels from new vertex 0 never decrease along the new ids.
  const std::vector<int32_t> level = ReferenceBfs(Symmetric(r.graph), 0);
  for (size_t v = 1; v < level.size(); ++v) {
    ASSERT_GE(level[v], 0) << "vertex " << v << " unreached";
    ASSERT_GE(level[v], level[v - 1]) << "new vertex " << v;
  }
  // Directed BFS levels need not be monotone: some vertices are only reachable backwards.
  const std::vector<int32_t> directed = ReferenceBfs(r.graph, 0);
  EXPECT_NE(std::count(directed.begin(), directed.end(), -1), 0);
}

TEST(Reorder, BfsTiesGoToTheLowestIdAndComponentsGetIntervals) {
  TempDir tmp;
  // Components {0,1,2}, {3,4,5,6} (5 and 6 have out-degree 2, 6's with a self-loop: 5
  // wins the tie), {7,8} and isolated 9 and 10.
  const TestGraph g{11, false, {{0, 1}, {1, 2}, {5, 3}, {5, 4}, {6, 3}, {6, 6}, {8, 7}, {4, 4}}};
  const Reordered r = Relabel(tmp, g, VertexOrder::kBfs);
  ExpectPermutation(r.perm, 11);
  EXPECT_EQ(r.perm[5], 0);
  EXPECT_EQ(r.stats.bfs_root, 5);
  EXPECT_EQ(r.stats.bfs_starts, 5u) << "4 components after the first";
  // 5, then its neighbours 3 and 4 in input order, then 6 (via 3).
  EXPECT_EQ(r.perm[3], 1);
  EXPECT_EQ(r.perm[4], 2);
  EXPECT_EQ(r.perm[6], 3);
  // Next start: the unvisited vertex of highest out-degree, the lowest id of those (0, 1
  // and 8 have out-degree 1): 0. Then 8, then the isolated ones.
  EXPECT_EQ(r.perm[0], 4);
  EXPECT_EQ(r.perm[1], 5);
  EXPECT_EQ(r.perm[2], 6);
  EXPECT_EQ(r.perm[8], 7);
  EXPECT_EQ(r.perm[7], 8);
  EXPECT_EQ(r.perm[9], 9);
  EXPECT_EQ(r.perm[10], 10);
}

TEST(Reorder, DegreeOrderIsDecreasingOutDegreeThenOldId) {
  TempDir tmp;
  const TestGraph g = testing::RandomGraph(500, 450, 4000, false, 4);
  const Reordered r = Relabel(tmp, g, VertexOrder::kDegree);
  ExpectPermutation(r.perm, 500);
  const std::vector<uint64_t> degree = OutDegrees(g);
  std::vector<size_t> old_of_new(500);
  for (size_t v = 0; v < 500; ++v) old_of_new[static_cast<size_t>(r.perm[v])] = v;
  for (size_t i = 1; i < 500; ++i) {
    const size_t a = old_of_new[i - 1], b = old_of_new[i];
    ASSERT_TRUE(degree[a] > degree[b] || (degree[a] == degree[b] && a < b)) << "new ids " << i - 1 << ", " << i;
  }
}

TEST(Reorder, DeterministicPerSeedAndPinned) {
  TempDir tmp;
  const TestGraph g = testing::RandomGraph(300, 300, 2000, true, 6);
  for (VertexOrder order : {VertexOrder::kBfs, VertexOrder::kDegree, VertexOrder::kRandom}) {
    const Reordered a = Relabel(tmp, g, order, 11, "a");
    const Reordered b = Relabel(tmp, g, order, 11, "b");
    EXPECT_EQ(a.perm, b.perm);
    EXPECT_TRUE(ReadFile(tmp.File("a")) == ReadFile(tmp.File("b")));
  }
  const Reordered c = Relabel(tmp, g, VertexOrder::kRandom, 12, "c");
  EXPECT_NE(c.perm, Relabel(tmp, g, VertexOrder::kRandom, 11, "d").perm);
  EXPECT_EQ(Relabel(tmp, g, VertexOrder::kBfs, 12, "e").perm, Relabel(tmp, g, VertexOrder::kBfs, 11, "f").perm)
      << "the seed is for random only";
  // mt19937_64 is fully specified and the draw is ours: the same numbers on every
  // standard library. Pinned so a change of the draw is seen (the values were checked
  // against an independent Python implementation of mt19937_64 and of this shuffle).
  const TestGraph small{8, false, {}};
  EXPECT_EQ(Relabel(tmp, small, VertexOrder::kRandom, 1, "g").perm, (std::vector<int32_t>{4, 6, 3, 5, 1, 7, 2, 0}));
}

// Writes values indexed by new id, as an app on the reordered graph would.
template <typename T>
void WriteNewIdResult(const std::string& path, const std::vector<int32_t>& perm, const std::vector<T>& by_old) {
  std::vector<T> by_new(by_old.size());
  for (size_t v = 0; v < by_old.size(); ++v) by_new[static_cast<size_t>(perm[v])] = by_old[v];
  WriteFile(path, std::string(reinterpret_cast<const char*>(by_new.data()), by_new.size() * sizeof(T)));
}

TEST(MapBack, RoundTripsEveryTypeAndLabels) {
  TempDir tmp;
  const TestGraph g = testing::RandomGraph(200, 200, 1000, false, 8);
  const Reordered r = Relabel(tmp, g, VertexOrder::kRandom, 3);
  const std::string perm = r.stats.permutation;
  std::vector<int32_t> ints(200);
  std::vector<float> floats(200);
  std::vector<double> doubles(200);
  for (size_t v = 0; v < 200; ++v) {
    ints[v] = static_cast<int32_t>(v % 7) - 1;  // includes -1 (unreachable)
    floats[v] = static_cast<float>(v) * 0.5f;
    doubles[v] = 1.0 / static_cast<double>(v + 1);
  }
  auto map = [&](const std::string& name, ResultType type, bool labels = false) {
    MapBackOptions o;
    o.permutation = perm;
    o.input = tmp.File(name);
    o.output = tmp.File(name + ".old");
    o.type = type;
    o.labels = labels;
    auto n = MapBack(o);
    EXPECT_TRUE(n.ok()) << n.error().message();
    if (n.ok()) {
      EXPECT_EQ(*n, 200u);
    }
    return o.output;
  };
  WriteNewIdResult(tmp.File("i"), r.perm, ints);
  WriteNewIdResult(tmp.File("f"), r.perm, floats);
  WriteNewIdResult(tmp.File("d"), r.perm, doubles);
  EXPECT_EQ(ReadArray<int32_t>(map("i", ResultType::kInt32)), ints);
  EXPECT_EQ(ReadArray<float>(map("f", ResultType::kFloat32)), floats);
  EXPECT_EQ(ReadArray<double>(map("d", ResultType::kFloat64)), doubles);
  // Labels: the values are ids in the new numbering (old vertex (v * 3) % 200, say).
  std::vector<int32_t> labels_new_ids(200), want(200);
  for (size_t v = 0; v < 200; ++v) {
    want[v] = v % 10 == 0 ? -1 : static_cast<int32_t>((v * 3) % 200);
    labels_new_ids[v] = want[v] < 0 ? -1 : r.perm[static_cast<size_t>(want[v])];
  }
  WriteNewIdResult(tmp.File("l"), r.perm, labels_new_ids);
  EXPECT_EQ(ReadArray<int32_t>(map("l", ResultType::kInt32, true)), want);
  // In place works too (read whole, then replaced).
  MapBackOptions o{perm, tmp.File("i"), tmp.File("i"), ResultType::kInt32, false};
  ASSERT_TRUE(MapBack(o).ok());
  EXPECT_EQ(ReadArray<int32_t>(tmp.File("i")), ints);
  for (size_t v = 0; v < 200; v += 17) EXPECT_EQ(*MapVertex(perm, static_cast<int64_t>(v)), r.perm[v]);
}

// The apps' results on a reordered graph, mapped back, are the results on the original.
TEST(MapBack, AppResultsOnTheReorderedGraphAreTheOriginalOnes) {
  TempDir tmp;
  const TestGraph g = ConnectedWithHub(300, 3);
  for (VertexOrder order : {VertexOrder::kBfs, VertexOrder::kDegree, VertexOrder::kRandom}) {
    SCOPED_TRACE(static_cast<int>(order));
    const Reordered r = Relabel(tmp, g, order, 5);
    for (uint32_t start : {0u, 37u, 299u}) {
      const std::vector<int32_t> want = ReferenceBfs(g, start);
      const int32_t new_start = *MapVertex(r.stats.permutation, start);
      // The reference on the reordered graph from the mapped start (the real app follows).
      const std::vector<int32_t> levels = ReferenceBfs(r.graph, static_cast<uint32_t>(new_start));
      WriteFile(tmp.File("ref.level"), std::string(reinterpret_cast<const char*>(levels.data()), levels.size() * 4));
      MapBackOptions m{r.stats.permutation, tmp.File("ref.level"), tmp.File("ref.level.old"), ResultType::kInt32,
                       false};
      ASSERT_TRUE(MapBack(m).ok());
      EXPECT_EQ(ReadArray<int32_t>(m.output), want) << "reference, start " << start;
    }
    PreprocessOptions p;
    p.input = tmp.File("out");
    p.output_dir = tmp.File("grid");
    p.vertices = g.vertices;
    p.partitions = 3;
    p.threads = 1;
    ASSERT_TRUE(Preprocess(p).ok());
    AppConfig config;
    config.graph_dir = tmp.File("grid");
    config.threads = 2;
    auto bfs = RunBfs(config, *MapVertex(r.stats.permutation, 37));
    ASSERT_TRUE(bfs.ok()) << bfs.error().message();
    MapBackOptions m{r.stats.permutation, bfs->result_file, tmp.File("bfs.level.old"), ResultType::kInt32, false};
    ASSERT_TRUE(MapBack(m).ok());
    EXPECT_EQ(ReadArray<int32_t>(m.output), ReferenceBfs(g, 37)) << "the bfs app";
  }
}

// wcc's label is the smallest id reaching a vertex, so it depends on the numbering. On a
// symmetric graph it names connected components: mapped back, the same partition (not
// the same numbers). On a directed graph even the partition may differ.
TEST(MapBack, WccLabelsGiveTheSamePartitionOnSymmetricGraphsOnly) {
  TempDir tmp;
  TestGraph g = Symmetric(testing::RandomGraph(300, 280, 220, false, 10));  // many components
  const Reordered r = Relabel(tmp, g, VertexOrder::kRandom, 2);
  PreprocessOptions p;
  p.input = tmp.File("out");
  p.output_dir = tmp.File("grid");
  p.vertices = g.vertices;
  p.partitions = 2;
  p.threads = 1;
  ASSERT_TRUE(Preprocess(p).ok());
  AppConfig config;
  config.graph_dir = tmp.File("grid");
  config.threads = 2;
  auto wcc = RunWcc(config);
  ASSERT_TRUE(wcc.ok()) << wcc.error().message();
  MapBackOptions m{r.stats.permutation, wcc->result_file, tmp.File("wcc.label.old"), ResultType::kInt32, true};
  ASSERT_TRUE(MapBack(m).ok());
  const std::vector<int32_t> mapped = ReadArray<int32_t>(m.output), want = ReferenceLabels(g);
  EXPECT_EQ(Canonical(mapped), Canonical(want));
  EXPECT_NE(mapped, want) << "the numbers themselves differ (else this test shows nothing)";

  // Directed: 0 -> 2 <- 1. Original labels {0, 1, 0}; with 0 and 1 swapped, 2 goes with 1.
  const TestGraph directed{3, false, {{0, 2}, {1, 2}}};
  const std::vector<int32_t> swap = {1, 0, 2};
  WriteFile(tmp.File("swap.perm"), std::string(reinterpret_cast<const char*>(swap.data()), 12));
  const TestGraph relabelled{3, false, {{1, 2}, {0, 2}}};
  const std::vector<int32_t> new_labels = ReferenceLabels(relabelled);
  WriteFile(tmp.File("d.label"), std::string(reinterpret_cast<const char*>(new_labels.data()), 12));
  MapBackOptions d{tmp.File("swap.perm"), tmp.File("d.label"), tmp.File("d.label.old"), ResultType::kInt32, true};
  ASSERT_TRUE(MapBack(d).ok());
  EXPECT_EQ(ReferenceLabels(directed), (std::vector<int32_t>{0, 1, 0}));
  EXPECT_EQ(ReadArray<int32_t>(d.output), (std::vector<int32_t>{0, 1, 1}));
}

TEST(Reorder, BadInputIsRefusedAndLeavesNoOutput) {
  TempDir tmp;
  TestGraph g = testing::RandomGraph(50, 50, 100, true, 1);
  WriteFile(tmp.File("out"), "old output");
  WriteFile(tmp.File("out.perm"), "old perm");
  auto attempt = [&](const std::string& bytes, VertexOrder order, bool weighted = true, uint64_t vertices = 50) {
    WriteFile(tmp.File("in"), bytes);
    ReorderOptions o;
    o.input = tmp.File("in");
    o.output = tmp.File("out");
    o.vertices = vertices;
    o.weighted = weighted;
    o.order = order;
    auto stats = Reorder(o);
    EXPECT_FALSE(stats.ok());
    EXPECT_EQ(ReadFile(tmp.File("out")), "old output") << "the output is replaced only by a complete one";
    EXPECT_EQ(ReadFile(tmp.File("out.perm")), "old perm");
    for (const auto& entry : std::filesystem::directory_iterator(tmp.path())) {
      EXPECT_EQ(entry.path().filename().string().find(".partial"), std::string::npos) << entry.path();
    }
    return stats.ok() ? std::string() : stats.error().message();
  };
  for (VertexOrder order : {VertexOrder::kBfs, VertexOrder::kDegree, VertexOrder::kRandom}) {
    SCOPED_TRACE(static_cast<int>(order));
    TestGraph bad = g;
    bad.edges[70].target = 50;
    std::string message = attempt(testing::EdgeBytes(bad), order);
    EXPECT_NE(message.find("edge 70 (byte offset 840) is "), std::string::npos) << message;
    EXPECT_NE(message.find("vertex ids must be in [0, 50)"), std::string::npos) << message;
    bad = g;
    bad.edges[3].source = -2;
    message = attempt(testing::EdgeBytes(bad), order);
    EXPECT_NE(message.find("edge 3 "), std::string::npos) << message;
    message = attempt(testing::EdgeBytes(g).substr(0, 12 * 99 + 5), order);
    EXPECT_NE(message.find("not a whole number of 12-byte weighted edge records"), std::string::npos) << message;
    message = attempt(testing::EdgeBytes(g).substr(0, 12 * 99 + 5), order, false);
    EXPECT_NE(message.find("--weighted missing?"), std::string::npos) << message;
  }
  EXPECT_NE(attempt(testing::EdgeBytes(g), VertexOrder::kBfs, true, 0).find("vertices must be in [1, "),
            std::string::npos);
  EXPECT_NE(attempt(testing::EdgeBytes(g), VertexOrder::kBfs, true, uint64_t{1} << 31).find("ids are int32"),
            std::string::npos);
  ReorderOptions o;
  o.input = tmp.File("missing");
  o.output = tmp.File("x");
  o.vertices = 5;
  EXPECT_FALSE(Reorder(o).ok());
  o.input = tmp.path();
  EXPECT_NE(Reorder(o).error().message().find("is a directory"), std::string::npos);
  o.input = tmp.File("in");
  o.permutation = tmp.File("x");
  EXPECT_NE(Reorder(o).error().message().find("would overwrite the output"), std::string::npos);
}

TEST(MapBack, RefusesWrongSizesAndNonPermutations) {
  TempDir tmp;
  auto write_ints = [&](const std::string& name, const std::vector<int32_t>& v) {
    WriteFile(tmp.File(name), std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
    return tmp.File(name);
  };
  const std::string perm = write_ints("p", {2, 0, 1, 3});
  const std::string result = write_ints("r", {5, 6, 7, 8});
  auto map = [&](const std::string& p, const std::string& in, ResultType type = ResultType::kInt32,
                 bool labels = false) {
    MapBackOptions o{p, in, tmp.File("o"), type, labels};
    auto n = MapBack(o);
    EXPECT_FALSE(std::filesystem::exists(tmp.File("o"))) << "nothing written on error";
    return n.ok() ? std::string() : n.error().message();
  };
  EXPECT_NE(map(perm, write_ints("r5", {1, 2, 3, 4, 5})).find("20 bytes, but a result of 4 int32 values"),
            std::string::npos);
  EXPECT_NE(map(perm, result, ResultType::kFloat64).find("16 bytes, but a result of 4 float64 values"),
            std::string::npos);
  EXPECT_NE(map(write_ints("dup", {0, 1, 1, 3}), result).find("new id 1 is given to both vertex 1 and vertex 2"),
            std::string::npos);
  EXPECT_NE(map(write_ints("range", {0, 1, 4, 3}), result).find("entry 2 is 4, outside [0, 4)"), std::string::npos);
  WriteFile(tmp.File("odd"), "12345");
  EXPECT_NE(map(tmp.File("odd"), result).find("not that of a permutation file"), std::string::npos);
  WriteFile(tmp.File("empty"), "");
  EXPECT_NE(map(tmp.File("empty"), result).find("not that of a permutation file"), std::string::npos);
  EXPECT_NE(map(perm, result, ResultType::kFloat32, true).find("need --type int32"), std::string::npos);
  EXPECT_NE(map(perm, result, ResultType::kInt32, true).find("not a vertex id in [0, 4)"), std::string::npos);
  EXPECT_FALSE(MapVertex(perm, 4).ok());
  EXPECT_FALSE(MapVertex(perm, -1).ok());
  EXPECT_EQ(*MapVertex(perm, 0), 2);
  EXPECT_FALSE(ParseResultType("int64").ok());
  EXPECT_FALSE(ParseVertexOrder("rcm").ok());
}

// The workflow through the binaries: reorder, preprocess, bfs from the mapped start, map back.
TEST(ReorderBinary, PipelineAndExitCodes) {
  TempDir tmp;
  const TestGraph g = ConnectedWithHub(200, 4);
  WriteFile(tmp.File("g.bin"), testing::EdgeBytes(g));
  auto r = RunBinary({Bin("reorder"), "-i", tmp.File("g.bin"), "-o", tmp.File("r.bin"), "--vertices", "200",
                      "--order", "bfs"});
  ASSERT_EQ(r.How(), "exit 0") << r.output;
  EXPECT_NE(r.output.find("reorder: relabelled " + std::to_string(g.edges.size()) +
                          " edges over 200 vertices (bfs from vertex 37, 1 start) to " + tmp.File("r.bin") +
                          ", permutation " + tmp.File("r.bin.perm")),
            std::string::npos)
      << r.output;
  r = RunBinary({Bin("reorder"), "--map-vertex", "5", "--permutation", tmp.File("r.bin.perm")});
  ASSERT_EQ(r.How(), "exit 0") << r.output;
  const int32_t start = ReadArray<int32_t>(tmp.File("r.bin.perm"))[5];
  EXPECT_EQ(r.output, std::to_string(start) + "\n");
  r = RunBinary({Bin("preprocess"), "-i", tmp.File("r.bin"), "-o", tmp.File("grid"), "-v", "200", "-p", "2"});
  ASSERT_EQ(r.How(), "exit 0") << r.output;
  r = RunBinary({Bin("bfs"), tmp.File("grid"), std::to_string(start), "1"});
  ASSERT_EQ(r.How(), "exit 0") << r.output;
  r = RunBinary({Bin("reorder"), "--map-back", "--permutation", tmp.File("r.bin.perm"), "--type", "int32", "-i",
                 tmp.File("grid/bfs.level"), "-o", tmp.File("level")});
  ASSERT_EQ(r.How(), "exit 0") << r.output;
  EXPECT_EQ(ReadArray<int32_t>(tmp.File("level")), ReferenceBfs(g, 5));
  r = RunBinary({Bin("reorder"), "-i", tmp.File("g.bin"), "-o", tmp.File("s.bin"), "--vertices", "200", "--order",
                 "random", "--seed", "9", "--permutation", tmp.File("s.perm")});
  ASSERT_EQ(r.How(), "exit 0") << r.output;
  EXPECT_NE(r.output.find("(random, seed 9)"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(tmp.File("s.perm")));

  // Errors: 1 for bad input, 2 for usage.
  r = RunBinary({Bin("reorder"), "-i", tmp.File("g.bin"), "-o", tmp.File("t.bin"), "--vertices", "100", "--order",
                 "degree"});
  EXPECT_EQ(r.How(), "exit 1") << r.output;
  EXPECT_NE(r.output.find("reorder: error: " + tmp.File("g.bin") + ": edge "), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(tmp.File("t.bin")));
  EXPECT_FALSE(std::filesystem::exists(tmp.File("t.bin.perm")));
  r = RunBinary({Bin("reorder"), "--map-vertex", "200", "--permutation", tmp.File("r.bin.perm")});
  EXPECT_EQ(r.How(), "exit 1") << r.output;
  r = RunBinary({Bin("reorder"), "--map-back", "--permutation", tmp.File("r.bin.perm"), "--type", "float64", "-i",
                 tmp.File("grid/bfs.level"), "-o", tmp.File("x")});
  EXPECT_EQ(r.How(), "exit 1") << r.output;
  EXPECT_NE(r.output.find("800 bytes, but a result of 200 float64 values"), std::string::npos) << r.output;
  const std::vector<std::vector<std::string>> usage = {
      {"-i", tmp.File("g.bin"), "-o", tmp.File("u"), "--vertices", "200"},                      // no --order
      {"-i", tmp.File("g.bin"), "-o", tmp.File("u"), "--vertices", "200", "--order", "rcm"},    // unknown order
      {"-i", tmp.File("g.bin"), "-o", tmp.File("u"), "--order", "bfs"},                         // no --vertices
      {"--map-back", "--permutation", tmp.File("r.bin.perm"), "-i", "a", "-o", "b"},            // no --type
      {"--map-back", "--type", "int32", "-i", "a", "-o", "b"},                                  // no --permutation
      {"--labels", "-i", tmp.File("g.bin"), "-o", tmp.File("u"), "--vertices", "200", "--order", "bfs"},
      {"--map-vertex", "3"},                                                                    // no --permutation
      {"--map-vertex", "3", "--permutation", tmp.File("r.bin.perm"), "--order", "bfs"},
      {"--map-back", "--permutation", tmp.File("r.bin.perm"), "--type", "int16", "-i", "a", "-o", "b"},
  };
  for (std::vector<std::string> args : usage) {
    args.insert(args.begin(), Bin("reorder"));
    r = RunBinary(args);
    EXPECT_EQ(r.How(), "exit 2") << args[1] << " " << args[2] << ": " << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(tmp.File("u")));
}

}  // namespace
}  // namespace graphfs::engine
