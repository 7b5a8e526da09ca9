// Graph versions through the mount (fusefs/graph_versions.h): after graphfs-update, the kept
// version GRAPH@0 reads as the old graph and cannot change; graph files shared by the two
// versions cannot be written through either name; everything else behaves as before, and a kept
// version can be removed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdint>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <sys/wait.h>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/unique_fd.h"
#include "grid/graph_file.h"
#include "grid/grid_layout.h"
#include "striping/manifest.h"
#include "admin/graph_disks.h"
#include "tests/fusefs/result_arrays.h"
#include "tests/fusefs/striped_fixture.h"

namespace graphfs::testing {
namespace {

// Parameter: the graph plain, or striped (graphfs-stripe, every file of 4 KiB or more) before its
// update, so the versions' maps read striped pieces — without parity, or with one parity unit per
// row, which the new version's files get too (the set's K).
enum class Striped { kNo, kNoParity, kParity };
void PrintTo(Striped s, std::ostream* os) { *os << (s == Striped::kNo ? "plain" : s == Striped::kNoParity ? "striped" : "parity"); }
class GraphVersionsMount : public StripedMount, public ::testing::WithParamInterface<Striped> {
 protected:
  bool striped() const { return GetParam() != Striped::kNo; }
  bool parity() const { return GetParam() == Striped::kParity; }
  void SetUp() override {
    StripedMount::SetUp();
    // A small unweighted graph, P = 4, and a batch touching only block (0, 0) (ids < V/4).
    std::string edges, add;
    std::mt19937 rng(3);
    auto put = [](std::string& to, int32_t s, int32_t t) {
      to.append(reinterpret_cast<const char*>(&s), 4);
      to.append(reinterpret_cast<const char*>(&t), 4);
    };
    for (int k = 0; k < 20000; ++k) put(edges, static_cast<int32_t>(rng() % 4000), static_cast<int32_t>(rng() % 4000));
    for (int k = 0; k < 50; ++k) put(add, k % 40, (k * 3) % 40);
    WriteFile(tmp.path() + "/edges", edges);
    WriteFile(tmp.path() + "/add", add);
    auto pre = RunCommand({BinDir() + "/preprocess", "-i", tmp.path() + "/edges", "-o", src + "/g", "-v", "4000", "-p",
                           "4", "-t", "0", "--sort-sources"});
    ASSERT_EQ(pre.status, 0) << pre.output;
    old_column = ReadFile(src + "/g/column");
    old_block = ReadFile(src + "/g/block-2-3");
    if (striped()) {
      auto st = RunCommand({BinDir() + "/graphfs-stripe", "--parity", parity() ? "1" : "0", "--compress", "none", "--unit", "64K", "--min-size", "4K", "--disks",
                            disks[0] + "," + disks[1] + "," + disks[2], src + "/g"});
      ASSERT_EQ(st.status, 0) << st.output;
      auto m = ReadManifest(src + "/g/block-2-3");
      ASSERT_TRUE(m.ok() && *m) << "the blocks were not striped";
    }
    // The updated graph written whole elsewhere: what the new version must read as.
    auto want = RunCommand({BinDir() + "/graphfs-update", src + "/g", "--add", tmp.path() + "/add", "-o",
                            tmp.path() + "/want"});
    ASSERT_EQ(want.status, 0) << want.output;
    new_column = ReadFile(tmp.path() + "/want/column");
    new_row = ReadFile(tmp.path() + "/want/row");
    new_block = ReadFile(tmp.path() + "/want/block-0-0");
    ASSERT_NE(old_column, new_column);
    auto up = RunCommand({BinDir() + "/graphfs-update", src + "/g", "--add", tmp.path() + "/add"});
    ASSERT_EQ(up.status, 0) << up.output;
    // In place, `column` and `row` are extent maps over g@0's files and the new block.
    auto mapped = grid::IsExtentMap(src + "/g/column");
    ASSERT_TRUE(mapped.ok() && *mapped);
    DoMount();
  }
  int OpenErrno(const std::string& path, int flags) {
    int fd = ::open(path.c_str(), flags, 0644);
    if (fd >= 0) {
      ::close(fd);
      return 0;
    }
    return errno;
  }
  std::string old_column, new_column, new_row, old_block, new_block;
};

// The new version's `column` and `row` are extent maps in the source directory; through the mount
// they read as the updated graph's files, whole or in pieces that cross the maps' extents, and
// cannot be written (their bytes are other files').
TEST_P(GraphVersionsMount, ExtentMappedFilesReadAsTheUpdatedGraph) {
  EXPECT_EQ(ReadFile(mnt + "/g/column"), new_column);
  EXPECT_EQ(ReadFile(mnt + "/g/row"), new_row);
  EXPECT_EQ(ReadFile(mnt + "/g/block-0-0"), new_block);
  EXPECT_EQ(std::filesystem::file_size(mnt + "/g/column"), new_column.size());
  // Reads of every size at offsets around the first extent's end (block (0, 0) is the map's first
  // piece in both files).
  auto map = grid::ReadExtentMap(src + "/g/column");
  ASSERT_TRUE(map.ok() && *map);
  // Block (0, 0) comes first: its new run (the batch's sources start at 0), then old bytes.
  ASSERT_GE((*map)->extents().size(), 2u);
  UniqueFd fd(::open((mnt + "/g/column").c_str(), O_RDONLY));
  ASSERT_TRUE(fd.valid());
  uint64_t edge = 0;
  for (size_t e = 0; e < std::min<size_t>(3, (*map)->extents().size()); ++e) {
    edge += (*map)->extents()[e].length;
    for (uint64_t len : {1ull, 7ull, 4096ull, 8192ull, 65536ull, 300000ull}) {
      for (int64_t delta : {-4100, -1, 0, 1}) {
        const uint64_t off = static_cast<uint64_t>(std::max<int64_t>(0, static_cast<int64_t>(edge) + delta));
      std::string got(len, '\0');
      const ssize_t n = ::pread(fd.get(), got.data(), len, static_cast<off_t>(off));
      ASSERT_GE(n, 0) << std::strerror(errno);
      got.resize(static_cast<size_t>(n));
      EXPECT_EQ(got, off < new_column.size() ? new_column.substr(off, len) : "") << "pread of " << len << " at " << off;
      }
    }
  }
  EXPECT_EQ(OpenErrno(mnt + "/g/column", O_WRONLY), EROFS);
  EXPECT_EQ(::truncate((mnt + "/g/row").c_str(), 0), -1);
  EXPECT_EQ(errno, EROFS);
  EXPECT_EQ(OpenErrno(mnt + "/g/.graphfs/pieces/column@0", O_RDWR), EROFS);
  EXPECT_EQ(ReadFile(mnt + "/g/column"), new_column);
}

// graphfs-update in place runs on the source directory; through the mount it is refused and
// nothing changes (writing the updated graph elsewhere, -o, reads through the mount fine).
TEST_P(GraphVersionsMount, AnUpdateInPlaceThroughTheMountIsRefused) {
  auto up = RunCommand({BinDir() + "/graphfs-update", mnt + "/g", "--add", tmp.path() + "/add"});
  EXPECT_EQ(up.status, 1);
  EXPECT_NE(up.output.find("source directory"), std::string::npos) << up.output;
  EXPECT_FALSE(std::filesystem::exists(src + "/g@1"));
  EXPECT_FALSE(std::filesystem::exists(src + "/.g.update"));
  EXPECT_EQ(ReadFile(mnt + "/g/column"), new_column);
  auto out = RunCommand({BinDir() + "/graphfs-update", mnt + "/g", "--add", tmp.path() + "/add", "-o",
                         tmp.path() + "/twice"});
  EXPECT_EQ(out.status, 0) << out.output;
  EXPECT_EQ(ReadFile(tmp.path() + "/twice/meta").substr(0, 2), ReadFile(src + "/g/meta").substr(0, 2));
}

// Every version directory of `src/g` (g and g@N with a meta) is whole: its `column` and `row`
// (files or extent maps) read as its blocks in column and row order.
// Every part on `disks` is named by a stub under `src`, and every stub's parts are there.
void ExpectPartsNamedByStubs(const std::string& src, const std::vector<std::string>& disks) {
  std::set<std::string> parts, named;
  for (const std::string& d : disks) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(d + "/parts", ec)) {
      // A file with parity also has its sums (ID.sums) and row journal (ID.journal) beside its part.
      const std::string name = e.path().filename().string();
      parts.insert(name.substr(0, name.find('.')));
    }
  }
  for (const auto& e : std::filesystem::recursive_directory_iterator(src)) {
    if (!e.is_regular_file() || e.file_size() > kMaxStubSize) continue;
    auto m = ReadManifest(e.path().string());
    if (m.ok() && *m) named.insert((*m)->file_id);
  }
  EXPECT_EQ(parts, named) << "parts no stub names, or stubs without parts";
}

void ExpectEveryVersionWhole(const std::string& src) {
  for (const auto& e : std::filesystem::directory_iterator(src)) {
    const std::string name = e.path().filename().string();
    if (name != "g" && name.rfind("g@", 0) != 0) continue;
    if (!std::filesystem::exists(e.path() / "meta")) continue;
    SCOPED_TRACE(name);
    // A striped version's stubs read through their parts.
    auto disks = admin::GraphDisks::Open(e.path().string());
    ASSERT_TRUE(disks.ok()) << disks.error().message();
    const grid::StubFiles* stubs = *disks ? &(*disks)->stubs() : nullptr;
    auto g = grid::GridLayout::Open(e.path().string(), stubs);
    ASSERT_TRUE(g.ok()) << g.error().message();
    auto bytes = [stubs](const std::string& path) {
      auto f = grid::GraphFile::Open(path, stubs);
      if (!f.ok()) return "unreadable: " + f.error().message();
      std::string b(f->size(), '\0');
      Status s = f->ReadExact(b.data(), b.size(), 0);
      return s.ok() ? b : "unreadable: " + s.error().message();
    };
    std::string by_column, by_row;
    for (uint64_t j = 0; j < g->partitions(); ++j)
      for (uint64_t i = 0; i < g->partitions(); ++i) by_column += bytes(g->Path(grid::BlockFileName(i, j)));
    for (uint64_t i = 0; i < g->partitions(); ++i)
      for (uint64_t j = 0; j < g->partitions(); ++j) by_row += bytes(g->Path(grid::BlockFileName(i, j)));
    EXPECT_TRUE(bytes(g->Path("column")) == by_column) << "column is not its blocks";
    EXPECT_TRUE(bytes(g->Path("row")) == by_row) << "row is not its blocks";
  }
}

// kill -9 of the daemon while versions come and go — updates with --keep 0 one after another,
// a reader through the mount holding versions so that the daemon reclaims some of them, and
// the update tool killed at the same moment: after a remount and one more update (which
// finishes what a killed one left), every version there is whole, nothing half-reclaimed or
// half-built is left, and the mount reads the newest version as its blocks.
TEST_P(GraphVersionsMount, KilledWhileVersionsComeAndGoEveryVersionStaysWhole) {
  std::mt19937 rng(11);
  UniqueFd quiet(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::atomic<bool> stop{false};
    std::atomic<int> tool{0};
    std::thread reader([&] {
      while (!stop.load()) {
        int fd = ::open((mnt + "/g/column").c_str(), O_RDONLY);
        if (fd < 0) break;  // the daemon is gone
        char buf[65536];
        while (::read(fd, buf, sizeof buf) > 0) {
        }
        ::close(fd);
      }
    });
    std::thread updates([&] {
      while (!stop.load()) {
        const int pid = SpawnCommand({BinDir() + "/graphfs-update", src + "/g", "--add", tmp.path() + "/add",
                                      "--keep", "0"},
                                     quiet.get());
        if (pid <= 0) break;
        tool.store(pid);
        int status = 0;
        ::waitpid(pid, &status, 0);
        tool.store(0);
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50 + rng() % 400));
    mount.Kill();
    if (const int pid = tool.load(); pid > 0) ::kill(pid, SIGKILL);
    stop.store(true);
    reader.join();
    updates.join();
    DoMount();
    auto again = RunCommand({BinDir() + "/graphfs-update", src + "/g", "--add", tmp.path() + "/add", "--keep", "0"});
    ASSERT_EQ(again.status, 0) << again.output;
    ExpectEveryVersionWhole(src);
    for (const auto& e : std::filesystem::directory_iterator(src)) {
      const std::string name = e.path().filename().string();
      EXPECT_FALSE(name.ends_with(".reclaiming") || name.ends_with(".update")) << name << " was left";
    }
    if (striped()) ExpectPartsNamedByStubs(src, disks);
    const uint32_t p = 4;  // the fixture's graph
    std::string by_column;
    for (uint64_t j = 0; j < p; ++j)
      for (uint64_t i = 0; i < p; ++i) by_column += ReadFile(mnt + "/g/" + grid::BlockFileName(i, j));
    EXPECT_TRUE(ReadFile(mnt + "/g/column") == by_column);
  }
}

// Stats account for the versions' disk space: what each holds, and what reclaiming it frees (its
// own files only: g@0's rebuilt block and offsets, not the column the new version's map reads).
TEST_P(GraphVersionsMount, StatsAccountForTheVersionsDiskSpace) {
  const nlohmann::json stats = Stats();
  const nlohmann::json& graphs = stats["graph_versions"]["graphs"];
  ASSERT_EQ(graphs.size(), 1u) << stats["graph_versions"].dump();
  EXPECT_EQ(graphs[0]["graph"], src + "/g");
  const nlohmann::json& versions = graphs[0]["versions"];
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_TRUE(versions[0]["current"].get<bool>());
  EXPECT_EQ(versions[1]["path"], src + "/g@0");
  const uint64_t old_bytes = versions[1]["bytes"], old_own = versions[1]["exclusive_bytes"];
  EXPECT_GE(old_bytes, old_column.size());
  EXPECT_GT(old_own, 0u);
  EXPECT_LT(old_own, old_column.size()) << "g@0's column is shared with the new version's map";
  EXPECT_EQ(graphs[0]["kept_versions_exclusive_bytes"], old_own);
}

TEST_P(GraphVersionsMount, AKeptVersionReadsAsTheOldGraphAndCannotChange) {
  const std::string kept = mnt + "/g@0";
  EXPECT_EQ(ReadFile(kept + "/column"), old_column);
  EXPECT_EQ(ReadFile(mnt + "/g/column"), new_column);
  EXPECT_EQ(OpenErrno(kept + "/column", O_WRONLY), EROFS);
  EXPECT_EQ(OpenErrno(kept + "/meta", O_RDONLY | O_TRUNC), EROFS);
  EXPECT_EQ(OpenErrno(kept + "/column", O_RDONLY), 0);
  EXPECT_EQ(::truncate((kept + "/column").c_str(), 0), -1);
  EXPECT_EQ(errno, EROFS);
  // No graph file can be added either: a grid file's name is refused however it is made.
  EXPECT_EQ(OpenErrno(kept + "/block-9-9", O_CREAT | O_WRONLY), EROFS);
  EXPECT_EQ(::mkdir((kept + "/block-7-7").c_str(), 0755), -1);
  EXPECT_EQ(errno, EROFS);
  WriteFile(mnt + "/g/notes", "x");
  EXPECT_EQ(::rename((mnt + "/g/notes").c_str(), (kept + "/column").c_str()), -1);
  EXPECT_EQ(errno, EROFS);
  EXPECT_EQ(::link((mnt + "/g/notes").c_str(), (kept + "/block-5-5").c_str()), -1);
  EXPECT_EQ(errno, EROFS);
  EXPECT_EQ(ReadFile(kept + "/column"), old_column) << "a refused change changed something";
  // A job running on the kept version keeps its state and results beside the graph.
  WriteFile(kept + "/pagerank.rank", "ranks");
  EXPECT_EQ(ReadFile(kept + "/pagerank.rank"), "ranks");
  EXPECT_EQ(OpenErrno(kept + "/pagerank.rank", O_WRONLY | O_TRUNC), 0);
  EXPECT_EQ(::rename((mnt + "/g/notes").c_str(), (kept + "/notes").c_str()), 0) << std::strerror(errno);
  EXPECT_EQ(::mkdir((kept + "/results").c_str(), 0755), 0) << std::strerror(errno);
}

TEST_P(GraphVersionsMount, SharedGraphFilesCannotBeWrittenThroughEitherName) {
  // block-2-3 is one file with two names (g and g@0); block-0-0 was rebuilt: an extent map over
  // g@0's bytes and its new run, read-only as every map; `meta` is g's own.
  EXPECT_EQ(OpenErrno(mnt + "/g/block-2-3", O_RDWR), EROFS);
  EXPECT_EQ(OpenErrno(mnt + "/g/block-2-3", O_WRONLY | O_CREAT | O_TRUNC), EROFS);
  EXPECT_EQ(::truncate((mnt + "/g/block-2-3").c_str(), 0), -1);
  EXPECT_EQ(errno, EROFS);
  EXPECT_EQ(ReadFile(mnt + "/g/block-2-3"), old_block);
  EXPECT_EQ(ReadFile(mnt + "/g@0/block-2-3"), old_block);
  EXPECT_EQ(OpenErrno(mnt + "/g/block-0-0", O_RDWR), EROFS);
  EXPECT_EQ(OpenErrno(mnt + "/g/meta", O_RDWR), 0) << "the newest version's own files stay writable";
  // Ordinary files of the graph directory are not affected.
  WriteFile(mnt + "/g/bfs.level", "levels");
  EXPECT_EQ(ReadFile(mnt + "/g/bfs.level"), "levels");
  EXPECT_EQ(OpenErrno(mnt + "/g/bfs.level", O_WRONLY | O_TRUNC), 0);
}

TEST_P(GraphVersionsMount, AKeptVersionCanBeRemovedAndTheNewOneStaysWhole) {
  std::error_code ec;
  std::filesystem::remove_all(mnt + "/g@0", ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_FALSE(std::filesystem::exists(src + "/g@0"));
  EXPECT_EQ(ReadFile(mnt + "/g/column"), new_column);
  EXPECT_EQ(ReadFile(mnt + "/g/block-2-3"), old_block);
  EXPECT_EQ(ReadFile(mnt + "/g/block-0-0"), new_block);
  // No longer shared: the newest version's block is its own again.
  EXPECT_EQ(OpenErrno(mnt + "/g/block-2-3", O_RDWR), 0);
}

// graphfs-update gives the version's new files (the delta piece, blocks written whole) the set's
// parity: with a disk's directory gone, the new version reads as the updated graph, through the
// mount and through the tools' reader, and every file of the graph has K parity units.
// (Only the graph with parity: without it a disk gone loses files.)
class GraphVersionsMountWithParity : public GraphVersionsMount {};

TEST_P(GraphVersionsMountWithParity, ADiskGoneTheNewVersionReadsWhole) {
  int with_parity = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(src + "/g")) {
    if (!e.is_regular_file() || e.file_size() > kMaxStubSize) continue;
    auto m = ReadManifest(e.path().string());
    if (!m.ok() || !*m) continue;
    EXPECT_EQ((*m)->layout.parity, 1u) << e.path() << " was striped without parity";
    with_parity++;
  }
  EXPECT_GT(with_parity, 0);
  EXPECT_TRUE(std::filesystem::exists(src + "/g/.graphfs/pieces/delta@1")) << "the update wrote no delta piece";
  mount.Unmount();
  std::filesystem::remove_all(disks[1]);
  DoMount({"cache_size=0"});
  EXPECT_EQ(Stats()["degraded"], nlohmann::json::array({1}));
  EXPECT_TRUE(ReadFile(mnt + "/g/column") == new_column) << "column read through parity differs";
  EXPECT_TRUE(ReadFile(mnt + "/g/row") == new_row) << "row read through parity differs";
  EXPECT_TRUE(ReadFile(mnt + "/g/block-0-0") == new_block) << "the rebuilt block read through parity differs";
  EXPECT_TRUE(ReadFile(mnt + "/g@0/column") == old_column);
  ExpectEveryVersionWhole(src);
}

INSTANTIATE_TEST_SUITE_P(Graphs, GraphVersionsMount,
                         ::testing::Values(Striped::kNo, Striped::kNoParity, Striped::kParity),
                         [](const auto& info) {
                           return info.param == Striped::kNo ? "plain" : info.param == Striped::kNoParity ? "striped" : "parity";
                         });
INSTANTIATE_TEST_SUITE_P(Graphs, GraphVersionsMountWithParity, ::testing::Values(Striped::kParity),
                         [](const auto&) { return std::string("parity"); });

// A job running across an update: an integrated PageRank registered before graphfs-update stays
// on the version it registered on, and one started after gets the new version. Both are compared
// with the unmodified app on plain copies of the two versions.
class GraphVersionsJobs : public ::testing::Test {
 protected:
  // Runs a tool; false (and a failure naming it) unless it exits 0.
  static bool ok(const std::vector<std::string>& argv) {
    CommandResult r = RunCommand(argv, 600);
    EXPECT_EQ(r.status, 0) << argv[0] << ":\n" << r.output;
    return r.status == 0;
  }
  // SRC/g: an R-MAT graph of 2^14 vertices in 4 x 4 blocks (input order).
  void MakeGraph(int seed, bool sorted = false) {
    ASSERT_TRUE(ok({BinDir() + "/gen-rmat", "--scale", "14", "--seed", std::to_string(seed), "-o", edges}));
    std::vector<std::string> pre = {BinDir() + "/preprocess", "-i", edges, "-o", g, "-v", "16384", "-p", "4", "-t", "0"};
    if (sorted) pre.push_back("--sort-sources");
    ASSERT_TRUE(ok(pre));
  }
  // An integrated PageRank registered before an update stays on its version (`striped`: the
  // graph source-sorted and striped, the batch clustered).
  void JobAcrossAnUpdate(bool striped);
  TempDir tmp;
  const std::string src = tmp.Sub("src"), mnt = tmp.Sub("mnt"), g = src + "/g";
  const std::string edges = tmp.path() + "/edges", add = tmp.path() + "/add", del = tmp.path() + "/del";
};

void GraphVersionsJobs::JobAcrossAnUpdate(bool striped) {
  ASSERT_NO_FATAL_FAILURE(MakeGraph(5, /*sorted=*/striped));
  ASSERT_TRUE(ok({BinDir() + "/graphfs-index", "--chunk-size", "32K", g}));
  // Plain: a random 10% batch — every block changes, and so does every vertex's rank. Striped
  // (source-sorted): 10% clustered by source — the touched blocks are spliced, so the new
  // version's files are maps over striped pieces (the old `column`, the delta on the disks).
  ASSERT_TRUE(ok({BinDir() + "/gen-update", "--graph", g, "--fraction", "0.1", "--kind", striped ? "clustered" : "random",
                  "--add", add, "--delete", del}));
  ASSERT_TRUE(ok({"cp", "-a", g, tmp.path() + "/old"}));
  ASSERT_TRUE(ok({BinDir() + "/graphfs-update", g, "--add", add, "--delete", del, "-o", tmp.path() + "/new"}));
  if (striped) {
    std::string disks;
    for (int d = 0; d < 3; ++d) disks += (d ? "," : "") + tmp.Sub("disk" + std::to_string(d));
    ASSERT_TRUE(ok({BinDir() + "/graphfs-stripe", "--parity", "0", "--compress", "none", "--unit", "64K", "--min-size", "4K",
                    "--disks", disks, g}));
  }
  GraphfsMount mount;
  ASSERT_TRUE(mount.Mount(src, mnt, {})) << mount.error();
  const uint64_t column = std::filesystem::file_size(tmp.path() + "/old/column");
  const std::vector<std::string> job = {BinDir() + "/run-jobs", "--graph", mnt + "/g", "--jobs", "pagerank:800",
                                        "--integrated", "--partition", std::to_string(column / 4)};
  const std::string log = tmp.path() + "/job.log";
  UniqueFd out(::open(log.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644));
  const int child = SpawnCommand(job, out.get());
  ASSERT_GT(child, 0);
  // Mid-run: the job is registered (it has a directory in .graphfs/jobs/) and has run a while.
  auto registered = [&] {
    std::error_code ec;
    return !std::filesystem::is_empty(mnt + "/.graphfs/jobs", ec) && !ec;
  };
  for (int i = 0; i < 400 && !registered(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(registered()) << ReadFile(log);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // --keep 0: the old version is reclaimed as soon as nothing uses it — here not before the job
  // that runs on it leaves (the daemon holds its files), and then by the daemon.
  ASSERT_TRUE(ok({BinDir() + "/graphfs-update", g, "--add", add, "--delete", del, "--keep", "0"}));
  EXPECT_TRUE(registered()) << "the job ended before the update: the test proves nothing";
  EXPECT_TRUE(std::filesystem::exists(src + "/g@0/meta")) << "the version a job runs on was reclaimed";
  EXPECT_TRUE(std::filesystem::exists(src + "/g@0/.graphfs/reclaim"));
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(log);
  for (int i = 0; i < 200 && std::filesystem::exists(src + "/g@0/meta"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(std::filesystem::exists(src + "/g@0/meta")) << "the daemon did not reclaim the version its job left";
  EXPECT_FALSE(std::filesystem::exists(src + "/g@0/column"));
  // The old job wrote its ranks into the directory it ran in: now the kept version.
  ASSERT_TRUE(ok({BinDir() + "/run-jobs", "--graph", tmp.path() + "/old", "--jobs", "pagerank:800", "--sequential"}));
  EXPECT_LE(WorstRelativeDifference(ReadArray<double>(tmp.path() + "/old/pagerank.rank"),
                                    ReadArray<double>(mnt + "/g@0/pagerank.rank")),
            1e-6)
      << "the job that registered before the update did not stay on its version";
  // A job after the update: the new version.
  ASSERT_TRUE(ok(job));
  ASSERT_TRUE(ok({BinDir() + "/run-jobs", "--graph", tmp.path() + "/new", "--jobs", "pagerank:800", "--sequential"}));
  EXPECT_LE(WorstRelativeDifference(ReadArray<double>(tmp.path() + "/new/pagerank.rank"),
                                    ReadArray<double>(mnt + "/g/pagerank.rank")),
            1e-6)
      << "the job started after the update did not get the new version";
  EXPECT_GT(WorstRelativeDifference(ReadArray<double>(tmp.path() + "/old/pagerank.rank"),
                                    ReadArray<double>(tmp.path() + "/new/pagerank.rank")),
            1e-3)
      << "the batch must change the ranks, or the test proves nothing";
  // Both versions read through the mount as their graphs, byte for byte.
  EXPECT_TRUE(ReadFile(mnt + "/g/column") == ReadFile(tmp.path() + "/new/column"));
  EXPECT_TRUE(ReadFile(mnt + "/g/row") == ReadFile(tmp.path() + "/new/row"));
  if (striped) {
    auto map = grid::ReadExtentMap(g + "/column");
    ASSERT_TRUE(map.ok() && *map);
    const auto& pieces = (*map)->pieces();
    EXPECT_NE(std::find(pieces.begin(), pieces.end(), ".graphfs/pieces/delta@1"), pieces.end())
        << "no block was spliced: the maps' delta piece went untested";
    auto delta = ReadManifest(g + "/.graphfs/pieces/delta@1");
    EXPECT_TRUE(delta.ok() && *delta) << "the delta piece is not on the disks";
    // The daemon reclaimed version 0 with the parts only it named.
    ExpectPartsNamedByStubs(src, {tmp.Sub("disk0"), tmp.Sub("disk1"), tmp.Sub("disk2")});
  }
  mount.Unmount();
}

TEST_F(GraphVersionsJobs, AJobAcrossAnUpdateStaysOnItsVersion) { JobAcrossAnUpdate(/*striped=*/false); }

// The same on a striped, source-sorted graph (graphfs-stripe): the new version's maps read
// striped pieces through the volume (its cache and the LP loader's runs), the old version's files
// are the striped files they were.
TEST_F(GraphVersionsJobs, AJobAcrossAnUpdateOfAStripedGraphStaysOnItsVersion) { JobAcrossAnUpdate(/*striped=*/true); }

// An unmodified job (it reopens `column` every iteration) pointed at a kept version GRAPH@0/
// reads version 0 for its whole run, while two more updates (--keep 5: held) make versions 1
// and 2 and GRAPH moves on; it keeps its state and results in GRAPH@0/.
TEST_F(GraphVersionsJobs, AnUnmodifiedJobOnAKeptVersionSeesItToTheEnd) {
  ASSERT_NO_FATAL_FAILURE(MakeGraph(9));
  ASSERT_TRUE(ok({"cp", "-a", g, tmp.path() + "/old"}));
  auto batch = [&](int seed) {
    return ok({BinDir() + "/gen-update", "--graph", g, "--fraction", "0.1", "--seed", std::to_string(seed), "--add",
               add, "--delete", del});
  };
  ASSERT_TRUE(batch(1));
  ASSERT_TRUE(ok({BinDir() + "/graphfs-update", g, "--add", add, "--delete", del, "--keep", "5"}));
  GraphfsMount mount;
  ASSERT_TRUE(mount.Mount(src, mnt, {})) << mount.error();
  const std::string log = tmp.path() + "/job.log";
  UniqueFd out(::open(log.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644));
  const int child = SpawnCommand({BinDir() + "/run-jobs", "--graph", mnt + "/g@0", "--jobs", "pagerank:400"}, out.get());
  ASSERT_GT(child, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (int seed : {2, 3}) {
    ASSERT_TRUE(batch(seed));
    ASSERT_TRUE(ok({BinDir() + "/graphfs-update", g, "--add", add, "--delete", del}));
  }
  EXPECT_EQ(::waitpid(child, nullptr, WNOHANG), 0) << "the job ended before the updates: the test proves nothing";
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(log);
  EXPECT_TRUE(std::filesystem::exists(src + "/g@2/meta"));
  ASSERT_TRUE(ok({BinDir() + "/run-jobs", "--graph", tmp.path() + "/old", "--jobs", "pagerank:400"}));
  EXPECT_LE(WorstRelativeDifference(ReadArray<double>(tmp.path() + "/old/pagerank.rank"),
                                    ReadArray<double>(mnt + "/g@0/pagerank.rank")),
            1e-9)
      << "the job on g@0 did not read version 0 to the end";
  mount.Unmount();
}

}  // namespace
}  // namespace graphfs::testing
