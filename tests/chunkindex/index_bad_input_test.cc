// graphfs-index on graphs that changed or broke after they were indexed, through the
// real binary: a regenerated graph is detected (--check exits 1 saying "stale", a rerun
// rebuilds to exactly what a fresh build gives); a damaged one is refused with the file
// and the problem named, without hanging, crashing, or touching the graph or the index.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

#include "chunkindex/chunk_index.h"
#include "chunkindex_test_util.h"
#include "index_dump.h"
#include "tests/engines/run_binary.h"

namespace graphfs::chunkindex {
namespace {

namespace fs = std::filesystem;
using graphfs::testing::BinaryRun;
using graphfs::testing::RunBinary;
using testing::Bin;

std::map<std::string, std::string> Files(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = testing::ReadFile(e.path().string());
  }
  return files;
}

BinaryRun Index(const std::string& dir, bool check = false) {
  if (check) return RunBinary({Bin("graphfs-index"), "--check", dir}, 60);
  return RunBinary({Bin("graphfs-index"), "-q", "--chunk-size", "8K", dir}, 60);
}

testing::GraphSpec Spec(uint32_t seed) {
  testing::GraphSpec g;
  g.vertices = 5000;
  g.partitions = 4;
  g.edges = testing::RandomEdges(5000, 200000, seed);  // 1.6 MB per file: sampled, not hashed whole
  return g;
}

class GraphIndexedByCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = tmp.File("g");
    ASSERT_EQ(testing::MakeGraph(Spec(1), dir), "");
    auto r = Index(dir);
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  }
  void ExpectRefused(const BinaryRun& r, const std::vector<std::string>& expect) {
    ASSERT_FALSE(r.timed_out) << "hung\n" << r.output;
    ASSERT_TRUE(r.exited) << r.How() << "\n" << r.output;
    EXPECT_EQ(r.exit_code, 1) << r.output;
    for (const std::string& piece : expect) EXPECT_NE(r.output.find(piece), std::string::npos) << piece << " in\n" << r.output;
  }
  testing::TempDir tmp;
  std::string dir;
};

// The graph is preprocessed again from other edges (same sizes: only contents differ).
TEST_F(GraphIndexedByCli, ARegeneratedGraphIsStaleAndARerunRebuildsItExactly) {
  ASSERT_EQ(testing::MakeGraph(Spec(2), dir), "");
  auto check = Index(dir, /*check=*/true);
  ExpectRefused(check, {"chunk index of " + dir + " is stale", "re-run `graphfs-index " + dir + "`"});
  auto rerun = Index(dir);
  ASSERT_TRUE(rerun.exited && rerun.exit_code == 0) << rerun.How() << "\n" << rerun.output;
  // The same as a fresh build of the new graph elsewhere (fingerprints aside: other files).
  const std::string fresh = tmp.File("fresh");
  ASSERT_EQ(testing::MakeGraph(Spec(2), fresh), "");
  auto r = Index(fresh);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  std::string error;
  auto without_files = [](std::string dump) {
    std::string out;
    std::istringstream in(dump);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("file ", 0) != 0) out += line + "\n";
    }
    return out;
  };
  const std::string rebuilt = testing::DumpIndex(dir, &error);
  ASSERT_EQ(error, "");
  const std::string expected = testing::DumpIndex(fresh, &error);
  ASSERT_EQ(error, "");
  EXPECT_TRUE(without_files(rebuilt) == without_files(expected)) << "the rebuilt index differs from a fresh one";
  check = Index(dir, true);
  EXPECT_TRUE(check.exited && check.exit_code == 0) << check.How() << "\n" << check.output;
  // And now it is up to date: nothing to do.
  auto again = RunBinary({Bin("graphfs-index"), "--chunk-size", "8K", dir}, 60);
  EXPECT_TRUE(again.exited && again.exit_code == 0) << again.How() << "\n" << again.output;
  EXPECT_NE(again.output.find("up to date"), std::string::npos) << again.output;
}

TEST_F(GraphIndexedByCli, DamageAfterIndexingIsNamedAndLeavesGraphAndIndexAlone) {
  struct Case {
    const char* name;
    std::function<void()> damage, undo;
    std::vector<std::string> check_says, build_says;
  };
  const std::string column = testing::ReadFile(dir + "/column");
  const std::string meta = testing::ReadFile(dir + "/meta");
  // Undoing puts content and modification time back, so each case starts from a
  // graph the index still matches (a changed mtime alone makes it stale).
  auto restore = [&](const std::string& name, const std::string& bytes, struct timespec mtime) {
    fs::remove_all(dir + "/" + name);
    testing::WriteFile(dir + "/" + name, bytes);
    const struct timespec times[2] = {mtime, mtime};
    ASSERT_EQ(::utimensat(AT_FDCWD, (dir + "/" + name).c_str(), times, 0), 0);
  };
  auto mtime = [&](const std::string& name) {
    struct stat st;
    EXPECT_EQ(::stat((dir + "/" + name).c_str(), &st), 0);
    return st.st_mtim;
  };
  const struct timespec column_mtime = mtime("column"), meta_mtime = mtime("meta");
  const std::vector<Case> cases = {
      // A FIFO in a graph file's place: opening it for the fingerprint used to block forever.
      {"meta is a FIFO",
       [&] {
         fs::remove(dir + "/meta");
         ASSERT_EQ(::mkfifo((dir + "/meta").c_str(), 0644), 0);
       },
       [&] { restore("meta", meta, meta_mtime); },
       {dir + "/meta: is a FIFO, expected a regular file"},
       {dir + "/meta: is a FIFO, expected a regular file"}},
      {"column truncated",
       [&] { fs::resize_file(dir + "/column", column.size() - 8 * 100); },
       [&] { restore("column", column, column_mtime); },
       {"is stale (column: size was " + std::to_string(column.size()) + " B"},
       {dir + "/column: has " + std::to_string(column.size() - 800) + " bytes", "(truncated?)"}},
      {"column is a directory",
       [&] {
         fs::remove(dir + "/column");
         fs::create_directory(dir + "/column");
       },
       [&] { restore("column", column, column_mtime); },
       {dir + "/column: is a directory, expected a regular file"},
       {dir + "/column: is a directory, expected a regular file"}},
      {"meta edge type flipped",
       [&] { testing::WriteFile(dir + "/meta", "1" + meta.substr(1)); },
       [&] { restore("meta", meta, meta_mtime); },
       {"is stale (meta: "},
       {"is the edge type in meta wrong?"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    c.damage();
    const auto graph_before = Files(dir);
    ExpectRefused(Index(dir, /*check=*/true), c.check_says);
    ExpectRefused(Index(dir), c.build_says);
    EXPECT_TRUE(Files(dir) == graph_before) << "graph or index changed by a refused run";
    c.undo();
    auto check = Index(dir, true);
    EXPECT_TRUE(check.exited && check.exit_code == 0) << "not undone: " << check.How() << "\n" << check.output;
  }
  // Undamaged again: the index was never touched and is up to date.
  auto r = RunBinary({Bin("graphfs-index"), "--chunk-size", "8K", dir}, 60);
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  EXPECT_NE(r.output.find("up to date"), std::string::npos) << r.output;
  auto check = Index(dir, true);
  EXPECT_TRUE(check.exited && check.exit_code == 0) << check.How() << "\n" << check.output;
}

// An edge outside its block found halfway through the build: exit 1 naming it, and no
// debris (no index, no build directory); the graph is untouched.
TEST(IndexBadInput, ACorruptEdgeFailsTheBuildCleanly) {
  testing::TempDir tmp;
  const std::string dir = tmp.File("g");
  ASSERT_EQ(testing::MakeGraph(Spec(3), dir), "");
  std::string row = testing::ReadFile(dir + "/row");
  // Inside block (1, 2), past the first 4 KiB that are compared with column before the pass.
  std::vector<int64_t> offsets(4 * 4 + 1);
  const std::string offsets_bytes = testing::ReadFile(dir + "/row_offset");
  ASSERT_EQ(offsets_bytes.size(), offsets.size() * 8);
  std::memcpy(offsets.data(), offsets_bytes.data(), offsets_bytes.size());
  const size_t at = static_cast<size_t>(offsets[1 * 4 + 2]) + 8 * 600;
  ASSERT_LT(at, static_cast<size_t>(offsets[1 * 4 + 3]));
  const int32_t bad = -7;
  std::memcpy(row.data() + at, &bad, 4);
  testing::WriteFile(dir + "/row", row);
  const auto before = Files(dir);
  auto r = Index(dir);
  ASSERT_TRUE(r.exited) << r.How() << "\n" << r.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(dir + "/row: edge -7 -> "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("at byte " + std::to_string(at) + " lies outside its block"), std::string::npos) << r.output;
  EXPECT_TRUE(Files(dir) == before);
  ASSERT_TRUE(fs::is_directory(dir + "/.graphfs"));
  EXPECT_TRUE(fs::is_empty(dir + "/.graphfs")) << "a failed build left files behind";
}

}  // namespace
}  // namespace graphfs::chunkindex
