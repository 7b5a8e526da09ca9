// graphfs-rebuild stopped by SIGKILL at each named point of its run (striping/rebuild_crash_points.h,
// GRAPHFS_CRASH_AT): every state a killed run can leave between its durable steps is visited on
// every run, where rebuild_test.cc's kills after a delay land only where the machine's speed lets
// them (and never, for instance, between a record's temporary copy and its rename). Each point:
// the run dies there, a rerun dies there again (a resumed run resuming a resumed run), and a rerun
// without the variable ends the rebuild — after which the new directory holds exactly what the
// lost disk held, file for file and byte for byte (its parts, their sums, its identity; no
// progress record, no temporary copy), every registry names it, and the set scrubs clean.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "common/crash_point.h"
#include "striping/disk_set.h"
#include "striping/rebuild.h"
#include "striping/rebuild_crash_points.h"
#include "tests/engines/run_binary.h"
#include "tests/striping/parity_graph.h"
#include "tests/testutil/crash_points.h"

namespace graphfs {
namespace {

namespace fs = std::filesystem;
using testing::ParityGraph;
using testing::RandomBytes;
using testing::ReadFile;

constexpr uint64_t kUnit = ParityGraph::kUnit;
constexpr uint32_t kLost = 2;

// Every regular file under `dir` (relative path) and its bytes; directories are not listed.
std::map<std::string, std::string> FilesUnder(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = ReadFile(e.path());
  return out;
}

// Whether `dir` holds exactly the files of `want` with their bytes; else what differs, by name
// (a file's bytes are too long to print).
::testing::AssertionResult HoldsExactly(const std::string& dir, const std::map<std::string, std::string>& want) {
  const std::map<std::string, std::string> have = FilesUnder(dir);
  std::string diff;
  for (const auto& [name, bytes] : want) {
    const auto it = have.find(name);
    if (it == have.end()) {
      diff += "; missing " + name;
    } else if (it->second != bytes) {
      diff += "; " + name + " differs (" + std::to_string(it->second.size()) + " bytes, want " +
              std::to_string(bytes.size()) + ")";
    }
  }
  for (const auto& [name, bytes] : have)
    if (!want.contains(name)) diff += "; left: " + name;
  if (diff.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << dir << diff;
}

// Where a point is in the run (the table is in the run's order).
size_t Order(std::string_view point) {
  return static_cast<size_t>(std::find_if(kRebuildCrashPoints.begin(), kRebuildCrashPoints.end(),
                                          [&](const CrashPointInfo& p) { return p.name == point; }) -
                             kRebuildCrashPoints.begin());
}

class RebuildCrash : public ::testing::TestWithParam<CrashPointInfo> {
 protected:
  // Two graphs on one set of four disks, parity 1: `graph` with two files of several
  // checkpoints each (the second ends in a short row), `graph2` with one; disk kLost removed.
  void SetUp() override {
    g.Stripe("column", RandomBytes(40 * kUnit + 777, 60), 1);
    g.Stripe("row", RandomBytes(20 * kUnit + 4321, 61), 1);
    graph2 = g.tmp.Sub("graph2");
    testing::WriteFile(graph2 + "/column", RandomBytes(9 * kUnit + 100, 62));
    StripeRequest req = testing::TestStripeRequest(graph2 + "/column", g.disks, kUnit);
    req.sum_block = ParityGraph::kBlock;
    req.parity = 1;
    testing::StripeAndRead(req, graph2 + "/column");
    lost = FilesUnder(g.disks[kLost]);
    ASSERT_EQ(lost.size(), 7u) << "three parts, their sums and the identity";
    fs::remove_all(g.disks[kLost]);
    to = g.tmp.Sub("new-disk");
  }

  std::string_view point() const { return GetParam().name; }

  // graphfs-rebuild of disk kLost onto `to` for both graphs, stopped at `at` if one is given.
  // A checkpoint every two rows (each row puts one 64K unit on the disk).
  testing::BinaryRun Rebuild(std::string_view at = {}) const {
    std::vector<std::string> argv;
    if (!at.empty()) argv = {"env", std::string(kCrashAtVariable) + "=" + std::string(at)};
    for (const std::string& a : {std::string(GRAPHFS_REBUILD_TOOL), std::string("-q"), std::string("--offline"),
                                 std::string("--disk"), std::to_string(kLost), std::string("--to"), to,
                                 std::string("--checkpoint"), std::string("128K"), g.graph, graph2})
      argv.push_back(a);
    return testing::RunBinary(argv, 120);
  }

  // A run stopped at the test's point: it died of SIGKILL there, not earlier or by an error.
  void KillAtThePoint() const {
    const testing::BinaryRun killed = Rebuild(point());
    ASSERT_TRUE(!killed.exited && killed.signal == SIGKILL) << killed.How() << ": " << killed.output;
    EXPECT_NE(killed.output.find("GRAPHFS_CRASH_AT=" + std::string(point()) + ": killed here"), std::string::npos)
        << killed.output;
  }

  // How many of the two registries name the new directory for the lost disk (the others still
  // name the lost one).
  int RegistriesSwitched() const {
    int n = 0;
    for (const std::string& dir : {g.graph, graph2}) {
      auto r = ReadRegistry(dir);
      EXPECT_TRUE(r.ok()) << r.error().message();
      if (!r.ok()) continue;
      if (r->disks[kLost] == fs::canonical(to).string()) {
        ++n;
      } else {
        EXPECT_EQ(r->disks[kLost], g.disks[kLost]) << dir;
      }
    }
    return n;
  }

  ParityGraph g{4};
  std::string graph2, to;
  std::map<std::string, std::string> lost;  // what the lost disk held
};

TEST_P(RebuildCrash, ARerunEndsWithTheLostDisksBytesAndNothingElse) {
  const bool done = point() == kRebuildCrashRecordRemoved;
  // Killed twice at the point: the second run resumes from what the first left (or, killed
  // before any record was in place, starts over beside its temporary copy). A run killed after
  // it removed its record has finished; a rerun finds the disk rebuilt and says so, exit 0.
  for (int round = 0; round < (done ? 1 : 2); ++round) {
    SCOPED_TRACE("kill " + std::to_string(round + 1));
    ASSERT_NO_FATAL_FAILURE(KillAtThePoint());
    // The registries switch only at the end, one graph at a time.
    const int want = Order(point()) < Order(kRebuildCrashRegistrySwitched) ? 0
                     : point() == kRebuildCrashRegistrySwitched                ? 1
                                                                               : 2;
    EXPECT_EQ(RegistriesSwitched(), want);
    // Before the first record is in place the directory holds its temporary copy only; from
    // then on the record, until the run removes it last.
    EXPECT_EQ(fs::exists(to + "/" + kRebuildRecordFile), point() != kRebuildCrashRecordTmp && !done);
    // The directory becomes the disk only once every part was read back.
    EXPECT_EQ(fs::exists(to + "/" + kDiskIdentityFile), Order(point()) >= Order(kRebuildCrashIdentityStamped));
  }
  const testing::BinaryRun rerun = Rebuild();
  if (done) {
    // Nothing left to do, and the disks prove it: done (rebuild_in_place.h).
    EXPECT_TRUE(rerun.exited && rerun.exit_code == 0) << rerun.How() << ": " << rerun.output;
    EXPECT_NE(rerun.output.find(" is " + fs::canonical(to).string() + " already (rebuilt there, or never lost)"),
              std::string::npos)
        << rerun.output;
  } else {
    ASSERT_TRUE(rerun.exited && rerun.exit_code == 0) << rerun.How() << ": " << rerun.output;
    // Every kill after the first record was in place left one to resume from.
    EXPECT_EQ(rerun.output.find("(resumed)") != std::string::npos, point() != kRebuildCrashRecordTmp)
        << rerun.output;
  }
  EXPECT_TRUE(HoldsExactly(to, lost)) << "the new directory is not what the lost disk held";
  EXPECT_EQ(RegistriesSwitched(), 2);
  auto set = DiskSet::Open(*ReadRegistry(g.graph));
  ASSERT_TRUE(set.ok()) << set.error().message();
  EXPECT_FALSE(set->degraded());
  EXPECT_TRUE(g.ScrubClean());
}

INSTANTIATE_TEST_SUITE_P(Points, RebuildCrash, ::testing::ValuesIn(kRebuildCrashPoints), testing::CrashPointCaseName);

// A point graphfs-rebuild does not have is a usage error, before anything is written: a test
// that misspells one must not pass with a run that was never stopped.
TEST(RebuildCrashPoints, AnUnknownPointIsRefusedAndNamesTheKnownOnes) {
  ParityGraph g(3);
  g.Stripe("column", RandomBytes(6 * kUnit, 63), 1);
  fs::remove_all(g.disks[1]);
  const std::string to = g.tmp.Sub("new-disk");
  const testing::BinaryRun run = testing::RunBinary({"env", "GRAPHFS_CRASH_AT=checkpointd", GRAPHFS_REBUILD_TOOL, "-q",
                                                     "--offline", "--disk", "1", "--to", to, g.graph});
  EXPECT_TRUE(run.exited && run.exit_code == 2) << run.How() << ": " << run.output;
  EXPECT_NE(run.output.find("GRAPHFS_CRASH_AT=checkpointd names no crash point of graphfs-rebuild"), std::string::npos)
      << run.output;
  for (const CrashPointInfo& p : kRebuildCrashPoints)
    EXPECT_NE(run.output.find(std::string(p.name)), std::string::npos) << p.name << " not listed: " << run.output;
  EXPECT_TRUE(fs::is_empty(to));
  EXPECT_EQ(ReadRegistry(g.graph)->disks[1], g.disks[1]);
}

}  // namespace
}  // namespace graphfs
