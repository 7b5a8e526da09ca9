// graphfs-index killed (SIGKILL) at random points, as tests/fusefs/restripe_crash_test.cc
// does for graphfs-stripe: whatever a killed run leaves, there is either no index or a
// complete and correct one (never a half-written one taken as valid); a rerun completes
// with an index whose logical content (every chunk, source list, degree, the meta) is
// identical to one built without interruption; the graph's files are never touched.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <thread>

#include "chunkindex/chunk_index.h"
#include "chunkindex_test_util.h"
#include "index_dump.h"
#include "tests/engines/run_binary.h"

namespace graphfs::chunkindex {
namespace {

namespace fs = std::filesystem;
using graphfs::testing::RunAndKill;
using graphfs::testing::RunBinary;

std::map<std::string, std::string> GraphFiles(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) files[e.path().filename().string()] = testing::ReadFile(e.path().string());
  }
  return files;
}

TEST(IndexCrash, KilledAtRandomPointsARerunGivesTheSameIndex) {
  testing::TempDir tmp;
  const std::string dir = tmp.File("g");
  testing::GraphSpec g;
  g.vertices = 400000;
  g.partitions = 8;
  g.weighted = true;
  g.edges = testing::RandomEdges(400000, 2000000, 7);  // 24 MB per file
  ASSERT_EQ(testing::MakeGraph(g, dir), "");
  const auto graph_before = GraphFiles(dir);
  const std::vector<std::string> build = {testing::Bin("graphfs-index"), "-q", "--threads", "2", "--chunk-size", "16K",
                                          dir};
  std::vector<std::string> force = build;
  force.insert(force.begin() + 1, "--force");

  // The reference: built without interruption, then removed.
  const auto started = std::chrono::steady_clock::now();
  auto r = RunBinary(build, 120);
  const auto full = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  std::string error;
  const std::string reference = testing::DumpIndex(dir, &error);
  ASSERT_EQ(error, "");
  ASSERT_GT(reference.size(), 100000u);
  fs::remove_all(dir + "/.graphfs");

  // Seeds run until enough builds were really cut (a run that finishes before its kill
  // proves only the uninterrupted case). How long a build takes depends on the machine's
  // load, so the reference time is only where the kill window starts: each run that
  // finishes first narrows it, so that a busy CI machine still gets its kills.
  constexpr int kWantKilled = 10, kWantKilledOverAnIndex = 4, kMaxRuns = 40;
  int64_t window_us = full.count() * 6 / 5 + 1;  // up to 1.2x: some finish, most are cut anywhere
  int killed = 0, killed_over_an_index = 0, runs = 0;
  for (int seed = 0; seed < kMaxRuns && (killed < kWantKilled || killed_over_an_index < kWantKilledOverAnIndex);
       ++seed, ++runs) {
    std::mt19937 rng(seed);
    // Even seeds build from nothing; odd ones rebuild (--force) over a complete index.
    const bool over_index = seed % 2 == 1;
    // (Only the index goes: a killed run's build directories stay for the next run to sweep.)
    if (!over_index) fs::remove_all(IndexPath(dir));
    if (over_index && !fs::exists(IndexPath(dir))) {
      r = RunBinary(build, 120);
      ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
    }
    const auto delay = std::chrono::microseconds(rng() % static_cast<uint64_t>(window_us));
    int status = 0;
    if (!RunAndKill(over_index ? force : build, delay, &status)) {
      ++killed;
      if (over_index) ++killed_over_an_index;
    } else {
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "seed " << seed << ": status " << status;
      window_us = std::max<int64_t>(window_us * 3 / 4, 1000);
    }
    SCOPED_TRACE("seed " + std::to_string(seed) + (over_index ? ", --force over an index" : ", no index before") +
                 ", killed after " + std::to_string(delay.count()) + " us of ~" + std::to_string(full.count()));
    // What the killed run left: no index, or the complete one — never a partial one.
    if (fs::exists(IndexPath(dir))) {
      const std::string left = testing::DumpIndex(dir, &error);
      ASSERT_EQ(error, "") << "a killed build left an index that does not open";
      ASSERT_TRUE(left == reference) << "a killed build left an index that differs from the reference";
    } else {
      ASSERT_FALSE(over_index) << "--force lost the complete index it was replacing";
      auto t = ChunkTable::Open(dir);
      ASSERT_FALSE(t.ok());
      EXPECT_NE(t.error().message().find("graphfs-index"), std::string::npos) << t.error().message();
    }
    // The rerun completes, with the same index.
    r = RunBinary(build, 120);
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
    const std::string after = testing::DumpIndex(dir, &error);
    ASSERT_EQ(error, "");
    ASSERT_TRUE(after == reference) << "the rerun built a different index";
    auto check = RunBinary({testing::Bin("graphfs-index"), "--check", dir}, 60);
    ASSERT_TRUE(check.exited && check.exit_code == 0) << check.How() << "\n" << check.output;
    // The graph's own files: byte for byte as before.
    ASSERT_TRUE(GraphFiles(dir) == graph_before) << "the graph's files changed";
    // Nothing the killed run left survives the rerun (also when the rerun found the index
    // up to date and built nothing): no build or set-aside directories.
    for (auto& e : fs::directory_iterator(dir + "/.graphfs")) {
      ASSERT_EQ(e.path().filename(), "index") << "left behind: " << e.path();
    }
  }
  EXPECT_GE(killed, kWantKilled) << "too few runs were interrupted: the test proved little";
  EXPECT_GE(killed_over_an_index, kWantKilledOverAnIndex);
  std::cout << "graphfs-index killed in " << killed << " of " << runs << " runs (" << killed_over_an_index
            << " while replacing an index); uninterrupted build " << full.count() << " us\n";
}

// A PID that no process has now: a child that has exited and been reaped.
pid_t DeadPid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

// Where the filesystem has no RENAME_EXCHANGE, a build moves the index aside to
// index.old-PID before moving its own in; killed in between, it leaves no index. The next
// run puts the set-aside index back (it is complete: nothing to rebuild) and removes
// what dead builds left, but not the directories of a build still running.
TEST(IndexCrash, WhatAKilledSwapLeftIsRecoveredOrSwept) {
  testing::TempDir tmp;
  const std::string dir = tmp.File("g");
  testing::GraphSpec g;
  g.vertices = 3000;
  g.edges = testing::RandomEdges(3000, 30000, 8);
  ASSERT_EQ(testing::MakeGraph(g, dir), "");
  const std::vector<std::string> build = {testing::Bin("graphfs-index"), "--chunk-size", "4K", dir};
  auto r = RunBinary(build, 60);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  std::string error;
  const std::string reference = testing::DumpIndex(dir, &error);
  ASSERT_EQ(error, "");

  const std::string gfs = dir + "/.graphfs/";
  const std::string dead_old = "index.old-" + std::to_string(DeadPid());
  const std::string dead_building = "index.building-" + std::to_string(DeadPid());
  const std::string live_building = "index.building-" + std::to_string(::getpid());  // this test is alive
  fs::rename(gfs + "index", gfs + dead_old);
  for (const std::string& d : {dead_building, live_building}) {
    fs::create_directory(gfs + d);
    testing::WriteFile(gfs + d + "/000001.sst", "half a database");
  }
  ASSERT_FALSE(ChunkTable::Open(dir).ok());

  r = RunBinary(build, 60);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  EXPECT_NE(r.output.find("up to date"), std::string::npos) << "the set-aside index was not restored\n" << r.output;
  EXPECT_EQ(testing::DumpIndex(dir, &error), reference);
  EXPECT_EQ(error, "");
  EXPECT_FALSE(fs::exists(gfs + dead_old));
  EXPECT_FALSE(fs::exists(gfs + dead_building)) << "a dead build's directory was not swept";
  EXPECT_TRUE(fs::exists(gfs + live_building)) << "a live build's directory was swept";
}

}  // namespace
}  // namespace graphfs::chunkindex
