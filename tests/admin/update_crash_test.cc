// graphfs-update stopped by SIGKILL at each named point of its in-place sequence
// (admin/update_crash_points.h, GRAPHFS_CRASH_AT): every state a killed run can leave is visited
// on every run, where the random-kill tests (graph_update_test.cc, tests/fusefs/
// graph_versions_test.cc) reach only the states the machine's speed lets them. The graph is at
// version 1 or later when a run is stopped: a staging directory that reads as version 0 then
// looks like the old version swapped out, the bug commit 36e26d3 fixed (reverting its order
// fails `meta-written` here). After the kill, after the recovery and after reruns, each name of
// the graph's versions holds one whole version — byte for byte what preprocess makes of its edge
// list, indexed — under its own number, and nothing else is left beside them; on a striped graph
// (with parity) also none of a dropped version's parts on the disks.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "admin/graph_disks.h"
#include "admin/graph_update.h"
#include "admin/update_crash_points.h"
#include "chunkindex/chunk_index.h"
#include "chunkindex/index_builder.h"
#include "tests/admin/graph_versions.h"
#include "tests/engines/engine_test_util.h"
#include "striping/graph_files.h"
#include "striping/restripe.h"
#include "tests/engines/run_binary.h"
#include "tests/testutil/crash_points.h"
#include "tests/testutil/striped_files.h"
#include "volume/version_reclaim.h"

namespace graphfs::admin {
namespace {

namespace etest = graphfs::engine::testing;

constexpr uint32_t kP = 4, kVertices = 20000;
constexpr size_t kEdges = 200000;
// The reference graphs: the original with the batch added 0 ... kMostBatches times. Two killed
// runs after the swap and their reruns go up to version 5.
constexpr int kMostBatches = 5;

// Whether a kill at `point` comes after the swap (the table is in the run's order): GRAPH is then
// the new version, else still the old one.
bool AfterTheSwap(std::string_view point) {
  const auto at = [](std::string_view name) {
    return std::find_if(kUpdateCrashPoints.begin(), kUpdateCrashPoints.end(),
                        [&](const CrashPointInfo& p) { return p.name == name; });
  };
  return at(point) >= at(kCrashSwapped);
}

// A point, and whether the graph is striped (graphfs-stripe over three directory "disks", blocks
// too, parity 1): a killed striped run also leaves parts on the disks, which the recovery must
// remove with the version they belong to.
using CrashCase = std::tuple<CrashPointInfo, bool>;

class UpdateCrash : public ::testing::TestWithParam<CrashCase> {
 protected:
  // The original graph, the batch and the references, once for all the points.
  static void SetUpTestSuite() {
    refs = std::make_unique<etest::TempDir>();
    const etest::TestGraph g = etest::RandomGraph(kVertices, kVertices, kEdges, false, 3);
    etest::WriteFile(refs->File("edges"), etest::EdgeBytes(g));
    ASSERT_TRUE(etest::PreprocessGraph(refs->File("edges"), Want(0), kVertices, kP, false, /*sorted=*/true));
    // A batch in block (0, 0) only: the other blocks are shared by links, column and row are maps.
    etest::TestGraph adds{kVertices, false, {}};
    for (int32_t k = 0; k < 100; ++k) adds.edges.push_back({k % 50, (k * 7) % 50});
    etest::WriteFile(refs->File("add"), etest::EdgeBytes(adds));
    for (int times = 1; times <= kMostBatches; ++times) {
      std::string batches;
      for (int k = 0; k < times; ++k) batches += etest::EdgeBytes(adds);
      etest::WriteFile(refs->File("batches"), batches);
      UpdateOptions o;
      o.graph_dir = Want(0);
      o.add_file = refs->File("batches");
      o.output_dir = Want(times);  // written whole: preprocess's layout of the updated edge list
      auto st = UpdateGraph(o);
      ASSERT_TRUE(st.ok()) << st.error().message();
    }
  }
  static void TearDownTestSuite() { refs.reset(); }
  static std::string Want(int version) { return refs->File("want" + std::to_string(version)); }

  // GRAPH at version 1 (the original kept as g@0), indexed, alone in its parent directory.
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::create_directories(tmp.File("v")));
    std::filesystem::copy(Want(0), Graph());
    chunkindex::BuildOptions b;
    b.graph_dir = Graph();
    b.chunk_size = std::filesystem::file_size(Graph() + "/block-0-0");
    auto indexed = chunkindex::BuildIndex(b);
    ASSERT_TRUE(indexed.ok()) << indexed.error().message();
    if (striped()) {
      for (int d = 0; d < 3; ++d) disks.push_back(tmp.Sub("disk" + std::to_string(d)));
      StripeRequest r = testing::TestStripeRequest(Graph(), disks);
      r.min_size = 4096;  // the blocks too: an update writes its rebuilt run to the disks
      r.record_size = 8;
      r.parity = 1;
      auto done = StripeFiles(r);
      ASSERT_TRUE(done.ok()) << done.error().message();
      auto opened = GraphDisks::Open(Graph());
      ASSERT_TRUE(opened.ok() && *opened) << (opened.ok() ? "no registry" : opened.error().message());
      graph_disks = std::move(*opened);
    }
    const testing::BinaryRun first = Update();
    ASSERT_EQ(first.exit_code, 0) << first.How() << ": " << first.output;
    ASSERT_NO_FATAL_FAILURE(ExpectVersions(1));
  }

  std::string_view point() const { return std::get<0>(GetParam()).name; }
  bool striped() const { return std::get<1>(GetParam()); }
  // Reads a striped version's stubs through their parts (every version is on the same disks).
  const grid::StubFiles* stubs() const { return graph_disks ? &graph_disks->stubs() : nullptr; }

  std::string Graph() const { return tmp.File("v/g"); }
  std::string In(const std::string& name) const { return tmp.File("v/" + name); }

  // graphfs-update GRAPH --add BATCH, stopped at `point` if one is given.
  testing::BinaryRun Update(std::string_view point = {}) const {
    std::vector<std::string> argv;
    if (!point.empty()) argv = {"env", std::string(kCrashAtVariable) + "=" + std::string(point)};
    for (const std::string& a : {etest::Bin("graphfs-update"), Graph(), std::string("--add"), refs->File("add")})
      argv.push_back(a);
    return testing::RunBinary(argv);
  }

  // A run stopped at the test's point: it died of SIGKILL there, not earlier or by an error.
  void KillAtThePoint() const {
    const testing::BinaryRun killed = Update(point());
    ASSERT_TRUE(!killed.exited && killed.signal == SIGKILL) << killed.How() << ": " << killed.output;
    EXPECT_NE(killed.output.find("GRAPHFS_CRASH_AT=" + std::string(point()) + ": killed here"),
              std::string::npos)
        << killed.output;
  }

  // `name` is version `number`, whole: the reference's bytes, that number in its version file,
  // an index that opens.
  void ExpectVersion(const std::string& name, int number) const {
    SCOPED_TRACE(name + " as version " + std::to_string(number));
    EXPECT_TRUE(SameGraph(In(name), Want(number), kP, stubs())) << "not the bytes of version " << number;
    EXPECT_EQ(volume::VersionOf(In(name)), number);
    auto index = chunkindex::ChunkTable::Open(In(name), stubs());
    EXPECT_TRUE(index.ok()) << index.error().message();
  }

  // The graph at version `current`, every older one kept under its name, nothing else beside them
  // (no staging directory, no half-built version under any name; on the disks, no part that no
  // version's stub names, and no stub without its parts).
  void ExpectVersions(int current) const {
    std::set<std::string> want = {"g"}, have;
    for (int k = 0; k < current; ++k) want.insert("g@" + std::to_string(k));
    for (const auto& e : std::filesystem::directory_iterator(tmp.File("v"))) have.insert(e.path().filename().string());
    EXPECT_EQ(have, want);
    ExpectVersion("g", current);
    for (int k = 0; k < current; ++k) ExpectVersion("g@" + std::to_string(k), k);
    if (striped()) {
      EXPECT_EQ(PartIds(), StubIds()) << "parts no stub names, or stubs without parts";
    }
  }

  std::set<std::string> PartIds() const { return admin::PartIds(disks); }
  std::set<std::string> StubIds() const { return admin::StubIds(tmp.File("v")); }

  static std::unique_ptr<etest::TempDir> refs;
  etest::TempDir tmp;
  std::vector<std::string> disks;  // striped: the disk set's directories
  std::unique_ptr<GraphDisks> graph_disks;
};

std::unique_ptr<etest::TempDir> UpdateCrash::refs;

// Killed on the way from version 1 to 2: GRAPH is one of the two, whole; the recovery (what every
// in-place run does first, RecoverUpdate) keeps exactly that one and names the old one if it was
// swapped out; a rerun of the batch then makes the next version.
TEST_P(UpdateCrash, TheRecoveryKeepsTheOldOrTheNewVersionWhole) {
  const bool swapped = AfterTheSwap(point());
  ASSERT_NO_FATAL_FAILURE(KillAtThePoint());
  ExpectVersion("g", swapped ? 2 : 1);
  ExpectVersion("g@0", 0);
  // What the recovery has to sort out: the staging directory, new (unswapped) or old (swapped);
  // only a kill after the old one got its name leaves none.
  EXPECT_EQ(std::filesystem::exists(In(".g.update")), point() != kCrashOldNamed);

  auto recovered = RecoverUpdate(Graph());
  ASSERT_TRUE(recovered.ok()) << recovered.error().message();
  ASSERT_NO_FATAL_FAILURE(ExpectVersions(swapped ? 2 : 1));

  const testing::BinaryRun rerun = Update();
  ASSERT_EQ(rerun.exit_code, 0) << rerun.How() << ": " << rerun.output;
  ExpectVersions(swapped ? 3 : 2);
}

// The path a user takes: after the kill, graphfs-update itself is run again. It recovers first
// (saying what it did) and then applies the batch. Stopped twice in a row at the same point.
TEST_P(UpdateCrash, ARerunRecoversAndUpdates) {
  const bool swapped = AfterTheSwap(point());
  int current = 1;
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ASSERT_NO_FATAL_FAILURE(KillAtThePoint());
    const testing::BinaryRun rerun = Update();
    ASSERT_EQ(rerun.exit_code, 0) << rerun.How() << ": " << rerun.output;
    if (point() != kCrashOldNamed) {
      EXPECT_NE(rerun.output.find(swapped ? "a killed update had swapped in version" : "an update killed before it"),
                std::string::npos)
          << rerun.output;
    }
    current += swapped ? 2 : 1;  // a swapped-in version stays; the rerun makes one more
    ASSERT_NO_FATAL_FAILURE(ExpectVersions(current));
  }
}

INSTANTIATE_TEST_SUITE_P(Points, UpdateCrash,
                         ::testing::Combine(::testing::ValuesIn(kUpdateCrashPoints), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<CrashCase>& info) {
                           return graphfs::testing::CrashCaseName(std::get<0>(info.param).name) +
                                  (std::get<1>(info.param) ? "_striped" : "_plain");
                         });

// A point graphfs-update does not have is a usage error, before anything is touched: a test
// that misspells one must not pass with a run that was never stopped.
TEST(UpdateCrashPoints, AnUnknownPointIsRefusedAndNamesTheKnownOnes) {
  etest::TempDir tmp;
  const etest::TestGraph g = etest::RandomGraph(1000, 1000, 5000, false, 5);
  etest::WriteFile(tmp.File("edges"), etest::EdgeBytes(g));
  ASSERT_TRUE(etest::PreprocessGraph(tmp.File("edges"), tmp.File("g"), 1000, 2, false, true));
  etest::WriteFile(tmp.File("add"), etest::EdgeBytes(etest::TestGraph{1000, false, {{1, 2}}}));
  const testing::BinaryRun run = testing::RunBinary(
      {"env", "GRAPHFS_CRASH_AT=meta-writen", etest::Bin("graphfs-update"), tmp.File("g"), "--add", tmp.File("add")});
  EXPECT_EQ(run.exit_code, 2) << run.How() << ": " << run.output;
  EXPECT_NE(run.output.find("GRAPHFS_CRASH_AT=meta-writen names no crash point of graphfs-update"), std::string::npos)
      << run.output;
  for (const CrashPointInfo& p : kUpdateCrashPoints)
    EXPECT_NE(run.output.find(std::string(p.name)), std::string::npos) << p.name << " not listed: " << run.output;
  EXPECT_FALSE(std::filesystem::exists(tmp.File(".g.update")));
  EXPECT_FALSE(std::filesystem::exists(tmp.File("g@0")));
  EXPECT_EQ(volume::VersionOf(tmp.File("g")), 0);
}

}  // namespace
}  // namespace graphfs::admin
