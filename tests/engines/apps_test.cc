// Every app against a small in-memory reference implementation, over graphs
// with isolated vertices, self-loops, duplicate edges, zero weights, P = 1 and
// V not divisible by P, with a large and a tiny memory budget.
#include "engines/apps/apps.h"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <filesystem>
#include <limits>
#include <queue>
#include <regex>

#include "engine_test_util.h"
#include "engines/apps/app_registry.h"
#include "engines/core/preprocess.h"
#include "fake_partitions.h"
#include "reference_apps.h"

namespace graphfs::engine {
namespace {

using grid::GridLayout;
using testing::ReadArray;
using testing::TempDir;
using testing::TestEdge;
using testing::TestGraph;
using testing::OutEdges;
using testing::ReferenceBfs;
using testing::ReferenceDijkstra;
using testing::ReferenceLabels;
using testing::ConvergedPageRank;
using testing::Degrees;
using testing::ReferencePageRankDelta;

// ---- reference implementations (plain adjacency lists, sequential) ----


// GridGraph's pagerank: rank 1 everywhere, then `iterations` rounds of
// rank = 0.15 + 0.85 * sum(rank[u] / deg[u]).
std::vector<double> ReferencePageRank(const TestGraph& g, int iterations) {
  auto degree = Degrees(g);
  std::vector<double> rank(g.vertices, 1.0);
  for (int it = 0; it < iterations; ++it) {
    std::vector<double> sum(g.vertices, 0.0);
    for (const TestEdge& e : g.edges) sum[e.target] += rank[e.source] / degree[e.source];
    for (uint32_t v = 0; v < g.vertices; ++v) rank[v] = 0.15 + 0.85 * sum[v];
  }
  return rank;
}

std::vector<double> ReferenceSpmv(const TestGraph& g) {
  std::vector<double> y(g.vertices, 0.0);
  for (const TestEdge& e : g.edges) y[e.target] += static_cast<double>(e.source) * e.weight;
  return y;
}

void ExpectClose(const std::vector<double>& got, const std::vector<double>& want, double rel) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t v = 0; v < want.size(); ++v) {
    ASSERT_LE(std::fabs(got[v] - want[v]), rel * std::max(std::fabs(want[v]), 1e-12))
        << "vertex " << v << ": got " << got[v] << ", want " << want[v];
  }
}

// ---- test graphs ----

TestGraph SelfLoopsAndDuplicates() {
  // 5 and 6 isolated; 0->1 twice; self-loops on 0, 2, 4; zero weights.
  return TestGraph{7, true, {{0, 0, 2.0f}, {0, 1, 3.0f}, {0, 1, 1.0f}, {1, 2, 0.0f}, {2, 2, 0.0f},
                             {2, 0, 5.0f}, {3, 4, 1.0f}, {4, 3, 0.5f}, {4, 4, 0.0f}, {1, 3, 7.5f}}};
}

TestGraph Chain(uint32_t n) {
  TestGraph g{n + 3, true, {}};  // three isolated vertices at the end
  for (uint32_t v = 0; v + 1 < n; ++v) g.edges.push_back({static_cast<int32_t>(v), static_cast<int32_t>(v + 1), static_cast<float>(v % 3)});
  g.edges.push_back({static_cast<int32_t>(n - 1), 0, 1.0f});  // closes a cycle
  return g;
}

std::vector<std::pair<std::string, TestGraph>> Graphs() {
  return {
      {"random", testing::RandomGraph(60, 48, 400, true, 1)},
      {"sparse", testing::RandomGraph(200, 200, 180, true, 2)},
      {"dense-small", testing::RandomGraph(9, 9, 120, true, 3)},
      {"loops-dups", SelfLoopsAndDuplicates()},
      {"chain", Chain(70)},
      {"one-vertex", TestGraph{1, true, {{0, 0, 4.0f}}}},
  };
}

struct Case {
  std::string name;
  TestGraph graph;
  uint32_t partitions;
  double mem_gb;
};

// Each graph with P = 1, 3 (V % 3 != 0 for most) and 4, and a generous
// budget and a tiny one (O_DIRECT reads, one source window per partition).
std::vector<Case> Cases() {
  std::vector<Case> setups;
  for (auto& [name, graph] : Graphs()) {
    for (uint32_t p : {1u, 3u, 4u}) {
      for (double mem : {8.0, 1e-9}) setups.push_back({name, graph, p, mem});
    }
  }
  return setups;
}

std::string Describe(const Case& s) {
  return s.name + " V=" + std::to_string(s.graph.vertices) + " P=" + std::to_string(s.partitions) +
         " mem=" + std::to_string(s.mem_gb);
}

class PreparedGraph {
 public:
  PreparedGraph(const TestGraph& g, uint32_t p, bool as_weighted = true) {
    TestGraph copy = g;
    copy.weighted = as_weighted;
    testing::BuildGrid(tmp_, copy, p);
  }
  std::string dir() const { return tmp_.File("grid"); }
  AppConfig Config(double mem_gb) const {
    AppConfig config;
    config.graph_dir = dir();
    config.mem_gb = mem_gb;
    config.threads = 2;
    return config;
  }

 private:
  TempDir tmp_;
};

TEST(Apps, BfsLevelsAreExact) {
  for (const Case& s : Cases()) {
    SCOPED_TRACE(Describe(s));
    for (bool weighted : {false, true}) {
      PreparedGraph prepared(s.graph, s.partitions, weighted);
      for (uint32_t start : {0u, s.graph.vertices - 1, s.graph.vertices / 2}) {
        auto result = RunBfs(prepared.Config(s.mem_gb), start);
        ASSERT_TRUE(result.ok()) << result.error().message();
        auto want = ReferenceBfs(s.graph, start);
        EXPECT_EQ(ReadArray<int32_t>(prepared.dir() + "/bfs.level"), want) << "start " << start;
        const auto discovered = std::count_if(want.begin(), want.end(), [](int32_t l) { return l >= 0; });
        EXPECT_NE(result->line.find("discovered " + std::to_string(discovered) + " of"), std::string::npos)
            << result->line;
      }
    }
  }
}

TEST(Apps, WccLabelsAreExact) {
  for (const Case& s : Cases()) {
    SCOPED_TRACE(Describe(s));
    PreparedGraph prepared(s.graph, s.partitions, s.partitions != 3);  // also unweighted files
    auto result = RunWcc(prepared.Config(s.mem_gb));
    ASSERT_TRUE(result.ok()) << result.error().message();
    auto want = ReferenceLabels(s.graph);
    EXPECT_EQ(ReadArray<int32_t>(prepared.dir() + "/wcc.label"), want);
    size_t components = 0;
    for (uint32_t v = 0; v < want.size(); ++v) components += want[v] == static_cast<int32_t>(v);
    EXPECT_EQ(result->line.rfind("wcc: " + std::to_string(components) + " components", 0), 0u) << result->line;
  }
}

TEST(Apps, SsspDistancesAreExact) {
  for (const Case& s : Cases()) {
    SCOPED_TRACE(Describe(s));
    PreparedGraph prepared(s.graph, s.partitions);
    for (uint32_t start : {0u, s.graph.vertices - 1, s.graph.vertices / 3}) {
      auto result = RunSssp(prepared.Config(s.mem_gb), start);
      ASSERT_TRUE(result.ok()) << result.error().message();
      auto got = ReadArray<float>(prepared.dir() + "/sssp.distance");
      auto want = ReferenceDijkstra(s.graph, start);
      ASSERT_EQ(got.size(), want.size());
      for (size_t v = 0; v < want.size(); ++v) EXPECT_EQ(got[v], want[v]) << "vertex " << v << " start " << start;
    }
  }
}

TEST(Apps, PageRankWithinOneMillionth) {
  for (const Case& s : Cases()) {
    SCOPED_TRACE(Describe(s));
    PreparedGraph prepared(s.graph, s.partitions, s.partitions == 1);
    for (int iterations : {1, 7}) {
      auto result = RunPageRank(prepared.Config(s.mem_gb), iterations);
      ASSERT_TRUE(result.ok()) << result.error().message();
      ExpectClose(ReadArray<double>(prepared.dir() + "/pagerank.rank"), ReferencePageRank(s.graph, iterations), 1e-6);
    }
  }
}

TEST(Apps, PageRankDeltaMatchesResidualReferenceAndConvergedPageRank) {
  for (const Case& s : Cases()) {
    SCOPED_TRACE(Describe(s));
    PreparedGraph prepared(s.graph, s.partitions);
    auto result = RunPageRankDelta(prepared.Config(s.mem_gb), 1e-3);
    ASSERT_TRUE(result.ok()) << result.error().message();
    ExpectClose(ReadArray<double>(prepared.dir() + "/pagerank-delta.rank"), ReferencePageRankDelta(s.graph, 1e-3), 1e-6);
    // With a tiny epsilon it reaches the PageRank fixpoint.
    auto exact = RunPageRankDelta(prepared.Config(s.mem_gb), 1e-12);
    ASSERT_TRUE(exact.ok()) << exact.error().message();
    ExpectClose(ReadArray<double>(prepared.dir() + "/pagerank-delta.rank"), ConvergedPageRank(s.graph), 1e-6);
  }
}

TEST(Apps, SpmvMatchesReference) {
  for (const Case& s : Cases()) {
    SCOPED_TRACE(Describe(s));
    PreparedGraph prepared(s.graph, s.partitions);
    auto result = RunSpmv(prepared.Config(s.mem_gb));
    ASSERT_TRUE(result.ok()) << result.error().message();
    ExpectClose(ReadArray<double>(prepared.dir() + "/spmv.output"), ReferenceSpmv(s.graph), 1e-12);
  }
}

// Integrated mode with the fake daemon (3-edge chunks, shuffled, a few per
// LP): the same results as the references, one job per run, one active set
// per iteration, and the same result line as the unmodified mode, but for
// the time and, for wcc and sssp, the iteration count: those two propagate
// within a pass (an edge sees a label lowered earlier in the same pass), so
// how many passes they need depends on the order edges arrive, in either mode.
TEST(Apps, IntegratedModeGivesTheSameResults) {
  auto without_timing = [](const std::string& line) {
    // Iterations, and so passes, depend on the order in which edges arrive (sssp, wcc).
    return std::regex_replace(line.substr(0, line.rfind(" in ")), std::regex("[0-9]+ (iterations|passes)"), "N $1");
  };
  for (const Case& s : Cases()) {
    SCOPED_TRACE(Describe(s));
    PreparedGraph prepared(s.graph, s.partitions);
    TempDir lps;
    auto counts = std::make_shared<testing::FakePartitionCounts>();
    AppConfig plain = prepared.Config(s.mem_gb);
    AppConfig config = plain;
    config.graphfs = true;
    config.partition_bytes = 100;  // 2 chunks of 3 weighted edges
    config.partition_source = [&](const GridLayout& layout,
                                  uint64_t bytes) -> Result<std::unique_ptr<PartitionSource>> {
      testing::FakePartitionOptions fake;
      fake.chunk_edges = 3;
      fake.partition_bytes = bytes;
      fake.seed = static_cast<uint32_t>(counts->created);
      return std::unique_ptr<PartitionSource>(
          std::make_unique<testing::FakePartitions>(layout, lps.path(), fake, counts));
    };
    uint64_t runs = 0, iterations = 0;
    auto check = [&](const Result<AppResult>& result, const Result<AppResult>& unmodified, bool exact_line) {
      ASSERT_TRUE(result.ok()) << result.error().message();
      ASSERT_TRUE(unmodified.ok()) << unmodified.error().message();
      ++runs;
      iterations += result->iterations;
      EXPECT_TRUE(result->integrated);
      EXPECT_FALSE(unmodified->integrated);
      EXPECT_EQ(counts->created, runs) << "one job per run";
      EXPECT_EQ(counts->destroyed, runs) << "removed at the end of the run";
      EXPECT_EQ(counts->set_active + counts->set_all_active, iterations) << "one active set per iteration";
      EXPECT_EQ(counts->ends, iterations);
      EXPECT_EQ(counts->done, counts->partitions);
      if (!s.graph.edges.empty()) {
        EXPECT_GT(result->partitions, 0u);
      }
      EXPECT_LE(result->edges_active, result->edges_read);
      if (exact_line) {
        EXPECT_EQ(without_timing(result->line), without_timing(unmodified->line));
      }
    };
    const uint32_t start = s.graph.vertices / 2;
    check(RunBfs(config, start), RunBfs(plain, start), true);
    EXPECT_EQ(ReadArray<int32_t>(prepared.dir() + "/bfs.level"), ReferenceBfs(s.graph, start));
    check(RunBfs(config, 0), RunBfs(plain, 0), true);
    EXPECT_EQ(ReadArray<int32_t>(prepared.dir() + "/bfs.level"), ReferenceBfs(s.graph, 0));
    check(RunWcc(config), RunWcc(plain), true);
    EXPECT_EQ(ReadArray<int32_t>(prepared.dir() + "/wcc.label"), ReferenceLabels(s.graph));
    check(RunSssp(config, 0), RunSssp(plain, 0), true);
    auto distances = ReadArray<float>(prepared.dir() + "/sssp.distance");
    auto want_distances = ReferenceDijkstra(s.graph, 0);
    ASSERT_EQ(distances.size(), want_distances.size());
    for (size_t v = 0; v < distances.size(); ++v) EXPECT_EQ(distances[v], want_distances[v]) << "vertex " << v;
    // Each run rewrites the result file: run the integrated one last.
    auto plain_rank = RunPageRank(plain, 7);
    check(RunPageRank(config, 7), plain_rank, false);
    ExpectClose(ReadArray<double>(prepared.dir() + "/pagerank.rank"), ReferencePageRank(s.graph, 7), 1e-6);
    auto plain_delta = RunPageRankDelta(plain, 1e-3);
    check(RunPageRankDelta(config, 1e-3), plain_delta, false);
    ExpectClose(ReadArray<double>(prepared.dir() + "/pagerank-delta.rank"), ReferencePageRankDelta(s.graph, 1e-3),
                1e-6);
    auto plain_spmv = RunSpmv(plain);
    check(RunSpmv(config), plain_spmv, false);
    ExpectClose(ReadArray<double>(prepared.dir() + "/spmv.output"), ReferenceSpmv(s.graph), 1e-12);
  }
}

TEST(Apps, IntegratedModeNeedsAGraphfsMount) {
  PreparedGraph prepared(SelfLoopsAndDuplicates(), 2);
  AppConfig config = prepared.Config(8);
  config.graphfs = true;
  auto result = RunWcc(config);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message().find("is not on a graphfs mount"), std::string::npos) << result.error().message();
  config.partition_bytes = 0;
  EXPECT_FALSE(RunWcc(config).ok());
}

TEST(Apps, ActivePartitionsOnlyAreRead) {
  // A 50-vertex chain inside partition 0, and 20000 edges among partitions
  // 1..3 that a BFS from vertex 0 never activates: each iteration may read
  // only partition 0's blocks (about a page), not the whole 160 KB file.
  TestGraph g = testing::RandomGraph(4000, 3000, 20000, false, 4);
  for (auto& e : g.edges) {
    e.source += 1000;
    e.target += 1000;
  }
  for (int32_t v = 0; v < 49; ++v) g.edges.push_back({v, v + 1});
  PreparedGraph prepared(g, 4, false);
  auto result = RunBfs(prepared.Config(8), 0);
  ASSERT_TRUE(result.ok()) << result.error().message();
  EXPECT_EQ(ReadArray<int32_t>(prepared.dir() + "/bfs.level"), ReferenceBfs(g, 0));
  EXPECT_EQ(result->iterations, 50u);
  EXPECT_LE(result->bytes_read, 50u * 2 * 4096);
  // The same stream over every partition reads it all each time.
  auto all = RunWcc(prepared.Config(8));
  ASSERT_TRUE(all.ok());
  EXPECT_GE(all->bytes_read, g.edges.size() * 8);
}

TEST(Apps, StartOutOfRangeIsAnError) {
  PreparedGraph prepared(SelfLoopsAndDuplicates(), 3);
  for (int64_t start : {int64_t{7}, int64_t{-1}, int64_t{1} << 40}) {
    auto bfs = RunBfs(prepared.Config(8), start);
    ASSERT_FALSE(bfs.ok());
    EXPECT_NE(bfs.error().message().find("out of range [0, 7)"), std::string::npos) << bfs.error().message();
    EXPECT_FALSE(RunSssp(prepared.Config(8), start).ok());
  }
}

TEST(Apps, RejectsBadArgumentsAndWrongEdgeType) {
  PreparedGraph unweighted(SelfLoopsAndDuplicates(), 2, false);
  EXPECT_FALSE(RunSssp(unweighted.Config(8), 0).ok());
  EXPECT_FALSE(RunSpmv(unweighted.Config(8)).ok());
  EXPECT_FALSE(RunPageRank(unweighted.Config(8), 0).ok());
  EXPECT_FALSE(RunPageRankDelta(unweighted.Config(8), 0).ok());
  EXPECT_FALSE(RunWcc(unweighted.Config(0)).ok());
  TestGraph negative{4, true, {{0, 1, 1.0f}, {1, 2, -0.5f}, {2, 3, 1.0f}}};
  PreparedGraph with_negative(negative, 2);
  auto sssp = RunSssp(with_negative.Config(8), 0);
  ASSERT_FALSE(sssp.ok());
  EXPECT_NE(sssp.error().message().find("negative"), std::string::npos) << sssp.error().message();
  AppConfig missing;
  missing.graph_dir = "/nonexistent/graph";
  EXPECT_FALSE(RunWcc(missing).ok());
}

// The registry's run call of every app runs that app, which writes the result file the
// registry names; every app has its binary.
TEST(AppRegistry, EachEntryRunsItsAppAndNamesItsResultFile) {
  PreparedGraph prepared(SelfLoopsAndDuplicates(), 3);
  ASSERT_EQ(Apps().size(), 7u);
  for (const AppSpec& app : Apps()) {
    AppArgValue arg;
    if (app.arg.type == AppArgType::kInteger) arg.integer = std::stoll(app.arg.job_default);
    if (app.arg.type == AppArgType::kPositiveNumber) arg.number = std::stod(app.arg.job_default);
    auto result = app.run(prepared.Config(8), arg);
    ASSERT_TRUE(result.ok()) << app.name << ": " << result.error().message();
    EXPECT_EQ(result->line.rfind(std::string(app.name) + ": ", 0), 0u) << result->line;
    EXPECT_EQ(result->result_file, prepared.dir() + "/" + app.result_file);
    EXPECT_EQ(FindApp(app.name), &app);
    EXPECT_TRUE(std::filesystem::exists(testing::Bin(app.name))) << app.name;
  }
  EXPECT_EQ(FindApp("bogus"), nullptr);
}

TEST(AppBinaries, PrintOneLineAndExitCodes) {
  PreparedGraph prepared(SelfLoopsAndDuplicates(), 3);
  const std::string dir = prepared.dir();
  struct Case {
    std::string command;
    int exit_code;
    std::string output_prefix;
  };
  const std::vector<Case> cases = {
      {"bfs " + dir + " 0 1", 0, "bfs: discovered 5 of 7 vertices from 0, depth 3"},
      {"bfs " + dir + " 5 1", 0, "bfs: discovered 1 of 7 vertices from 5, depth 0"},  // isolated start
      {"bfs " + dir + " 7 1", 1, ""},
      {"bfs " + dir + " -3 1", 1, ""},
      {"bfs " + dir + " abc 1", 2, ""},
      {"bfs " + dir, 2, ""},
      {"bfs " + dir + " 0 0", 1, ""},
      {"bfs /nonexistent 0 1", 1, ""},
      {"wcc " + dir + " 1", 0, "wcc: 3 components among 7 vertices"},
      {"wcc " + dir, 0, "wcc: "},  // MEM_GB defaults to 8
      {"sssp " + dir + " 0 1", 0, "sssp: reached 5 of 7 vertices from 0, max distance 9.5,"},
      {"sssp " + dir + " 99 1", 1, ""},
      {"pagerank " + dir + " 3 1", 0, "pagerank: sum of ranks "},
      {"pagerank " + dir + " 0 1", 1, ""},
      {"pagerank-delta " + dir + " 0.001 1", 0, "pagerank-delta: sum of ranks "},
      {"pagerank-delta " + dir + " -1 1", 1, ""},
      {"spmv " + dir + " 1", 0, "spmv: sum of output "},
  };
  for (const Case& c : cases) {
    auto r = testing::RunCommand(testing::Bin(c.command) + " 2>/dev/null");
    EXPECT_EQ(r.exit_code, c.exit_code) << c.command << "\n" << r.output;
    if (c.exit_code == 0) {
      EXPECT_EQ(r.output.rfind(c.output_prefix, 0), 0u) << c.command << "\n" << r.output;
      EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    }
  }
  for (const char* file : {"bfs.level", "wcc.label", "sssp.distance", "pagerank.rank", "pagerank-delta.rank",
                           "spmv.output"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + file)) << file;
  }
}

TEST(AppBinaries, GraphfsFlags) {
  PreparedGraph prepared(SelfLoopsAndDuplicates(), 3);
  const std::string dir = prepared.dir();
  struct Case {
    std::string command;
    int exit_code;
    std::string stderr_has;
  };
  const std::vector<Case> cases = {
      {"wcc " + dir + " 1 --graphfs-partition 0 --graphfs", 2, "--graphfs-partition: must be > 0"},
      {"wcc " + dir + " 1 --graphfs --graphfs-partition 12Q", 2, "--graphfs-partition"},
      {"wcc " + dir + " 1 --graphfs --graphfs-partition -5M", 2, "--graphfs-partition"},
      {"wcc " + dir + " 1 --graphfs --graphfs-partition", 2, "--graphfs-partition"},
      {"bfs " + dir + " 0 --graphfs-partition 64M", 2, "--graphfs"},  // needs --graphfs
      // Well-formed: the plain directory is then refused, naming the reason.
      {"bfs " + dir + " 0 1 --graphfs --graphfs-partition 64M", 1, "not on a graphfs mount"},
      {"spmv " + dir + " --graphfs", 1, "not on a graphfs mount"},
  };
  for (const Case& c : cases) {
    auto r = testing::RunCommand(testing::Bin(c.command) + " 2>&1");
    EXPECT_EQ(r.exit_code, c.exit_code) << c.command << "\n" << r.output;
    EXPECT_NE(r.output.find(c.stderr_has), std::string::npos) << c.command << "\n" << r.output;
  }
  // --verbose adds the counters on stderr only; stdout keeps its one line.
  auto verbose = testing::RunCommand(testing::Bin("bfs " + dir + " 0 1 --verbose 2>/dev/null"));
  EXPECT_EQ(verbose.exit_code, 0);
  EXPECT_EQ(std::count(verbose.output.begin(), verbose.output.end(), '\n'), 1) << verbose.output;
  // Without reentry bfs is level-synchronous: iteration 2 reaches the 2 vertices at level 2.
  auto both = testing::RunCommand(testing::Bin("bfs " + dir + " 0 1 --verbose --reentry 0 2>&1"));
  EXPECT_NE(both.output.find("bfs: iteration 2, 2 active, "), std::string::npos) << both.output;
  EXPECT_NE(both.output.find(" edges read, "), std::string::npos) << both.output;
  EXPECT_NE(both.output.find(" of active sources"), std::string::npos) << both.output;
  EXPECT_NE(both.output.find("4 passes, 0 reentries"), std::string::npos) << both.output;
  // By default (5) it re-enters its buffers, says how often per iteration, and needs fewer passes.
  auto reentering = testing::RunCommand(testing::Bin("bfs " + dir + " 0 1 --verbose 2>&1"));
  EXPECT_NE(reentering.output.find(" reentries\n"), std::string::npos) << reentering.output;
  EXPECT_NE(reentering.output.find("depth 3, 2 passes"), std::string::npos) << reentering.output;
  EXPECT_NE(both.output.find("depth 3, 4 passes"), std::string::npos) << both.output;
  auto help = testing::RunCommand(testing::Bin("bfs --help"));
  EXPECT_NE(help.output.find("--reentry"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("=5"), std::string::npos) << "the default, 5\n" << help.output;
  // pagerank-delta takes --reentry too, off by default, and says its results are not identical.
  auto delta_help = testing::RunCommand(testing::Bin("pagerank-delta --help"));
  EXPECT_NE(delta_help.output.find("--reentry INT:INT in [0 - 1000000]=0"), std::string::npos) << delta_help.output;
  EXPECT_NE(delta_help.output.find("within the tolerance of EPSILON"), std::string::npos) << delta_help.output;
  auto delta = testing::RunCommand(testing::Bin("pagerank-delta " + dir + " 0.001 1 --reentry 3 2>&1"));
  EXPECT_EQ(delta.exit_code, 0) << delta.output;
  EXPECT_NE(delta.output.find("pagerank-delta: sum of ranks "), std::string::npos) << delta.output;
}

}  // namespace
}  // namespace graphfs::engine
