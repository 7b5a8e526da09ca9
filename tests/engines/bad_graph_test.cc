// Damaged graph directories through the real binaries: every app (with a large and a
// tiny memory budget, i.e. buffered and O_DIRECT + source windows), run-jobs and
// graphfs-index must exit non-zero with a message that names the file and the problem,
// never die by a signal, never hang, never exit 0 with results of a corrupt graph.
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>

#include "engine_test_util.h"
#include "engines/core/mapped_file.h"
#include "engines/core/preprocess.h"
#include "run_binary.h"

namespace graphfs::engine {
namespace {

namespace fs = std::filesystem;
using graphfs::testing::BinaryRun;
using graphfs::testing::RunBinary;
using testing::Bin;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

constexpr uint32_t kVertices = 300;
constexpr uint32_t kPartitions = 3;
constexpr size_t kEdges = 4000;

std::string MakeGrid(const std::string& dir, bool weighted) {
  testing::TestGraph g = testing::RandomGraph(kVertices, kVertices, kEdges, weighted, weighted ? 11 : 12);
  WriteFile(dir + ".edges", testing::EdgeBytes(g));
  PreprocessOptions o;
  o.input = dir + ".edges";
  o.output_dir = dir;
  o.vertices = kVertices;
  o.partitions = kPartitions;
  o.edge_type = weighted ? 1 : 0;
  o.threads = 1;
  o.block_buffer_bytes = 1 << 20;
  auto r = Preprocess(o);
  fs::remove(dir + ".edges");
  return r.ok() ? "" : r.error().message();
}

void Overwrite(const std::string& path, uint64_t offset, const void* data, size_t bytes) {
  std::string all = ReadFile(path);
  ASSERT_LE(offset + bytes, all.size()) << path;
  std::memcpy(all.data() + offset, data, bytes);
  WriteFile(path, all);
}

std::vector<int64_t> Offsets(const std::string& path) { return testing::ReadArray<int64_t>(path); }
void WriteOffsets(const std::string& path, const std::vector<int64_t>& o) {
  WriteFile(path, std::string(reinterpret_cast<const char*>(o.data()), o.size() * 8));
}

// The first record of `column` and of `row` (both start with block (0, 0)) becomes s -> t.
void SetFirstEdge(const std::string& dir, int32_t s, int32_t t) {
  const int32_t rec[2] = {s, t};
  Overwrite(dir + "/column", 0, rec, 8);
  Overwrite(dir + "/row", 0, rec, 8);
}

void Replace(const std::string& path, const std::function<void(const std::string&)>& make) {
  fs::remove_all(path);
  make(path);
}

struct BadCase {
  const char* name;
  bool weighted;
  std::function<void(const std::string& dir)> damage;
  std::vector<std::string> expect;        // substrings of what every binary says
  std::vector<std::string> expect_index;  // graphfs-index, when it says it differently
};

// Failure messages name the case, not its bytes.
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

std::vector<BadCase> Cases() {
  const std::string v = std::to_string(kVertices), e = std::to_string(kEdges), p = std::to_string(kPartitions);
  auto meta = [](const std::string& text) {
    return [text](const std::string& d) { WriteFile(d + "/meta", text); };
  };
  return {
      {"MissingMeta", true, [](const std::string& d) { fs::remove(d + "/meta"); }, {"/meta", "No such file"}, {}},
      {"GarbageMeta", true, meta("hello graph"), {"/meta", "expected \"EDGE_TYPE VERTICES EDGES PARTITIONS\""}, {}},
      {"EmptyMeta", true, meta(""), {"/meta", "expected \"EDGE_TYPE"}, {}},
      {"NegativeVertices", true, meta("1 -5 " + e + " " + p), {"/meta", "bad vertex count -5"}, {}},
      {"HugeEdgeCount", true, meta("1 " + v + " 999999999999 " + p),
       {"/column: has " + std::to_string(kEdges * 12) + " bytes", "999999999999 edges", "truncated?"}, {}},
      // 2^62 + 4000 edges of 12 B wrap to exactly the size of the files.
      {"EdgeCountThatWrapsToTheFileSize", true, meta("1 " + v + " " + std::to_string((uint64_t{1} << 62) + kEdges) + " " + p),
       {"/meta", "bad edge count"}, {}},
      {"ZeroPartitions", true, meta("1 " + v + " " + e + " 0"), {"/meta", "bad partition count 0"}, {}},
      {"HugePartitions", true, meta("1 " + v + " " + e + " 100000"), {"/meta", "too many partitions"}, {}},
      {"UnknownEdgeType", true, meta("2 " + v + " " + e + " " + p), {"/meta", "edge type must be 0 or 1"}, {}},
      {"MetaSaysWeightedColumnIsUnweighted", false, meta("1 " + v + " " + e + " " + p),
       {"/column: has " + std::to_string(kEdges * 8) + " bytes", "edge type 1", "is the edge type in meta wrong?"}, {}},
      {"MetaSaysUnweightedColumnIsWeighted", true, meta("0 " + v + " " + e + " " + p),
       {"/column: has " + std::to_string(kEdges * 12) + " bytes", "is the edge type in meta wrong?"}, {}},
      {"MetaTooLong", true, [](const std::string& d) { WriteFile(d + "/meta", std::string(5000, '1')); },
       {"/meta: has 5000 bytes, expected at most"}, {}},
      {"TruncatedColumn", true, [](const std::string& d) { fs::resize_file(d + "/column", (kEdges - 100) * 12); },
       {"/column: has " + std::to_string((kEdges - 100) * 12) + " bytes", "truncated?"}, {}},
      {"ColumnCutMidRecord", true, [](const std::string& d) { fs::resize_file(d + "/column", kEdges * 12 - 5); },
       {"/column: has", "not even a whole number of 12-byte records"}, {}},
      {"TruncatedRow", false, [](const std::string& d) { fs::resize_file(d + "/row", 4096); },
       {"/row: has 4096 bytes", "truncated?"}, {}},
      {"ColumnLongerThanMeta", true, [](const std::string& d) { fs::resize_file(d + "/column", kEdges * 12 + 12 * 64); },
       {"/column: has", "longer than meta says"}, {}},
      {"EmptyColumn", true, [](const std::string& d) { fs::resize_file(d + "/column", 0); },
       {"/column: has 0 bytes"}, {}},
      {"EmptyOffsets", true, [](const std::string& d) { fs::resize_file(d + "/column_offset", 0); },
       {"/column_offset: has 0 bytes", "P*P+1 int64 offsets"}, {}},
      {"EveryFileEmpty", true,
       [](const std::string& d) {
         for (auto& f : fs::directory_iterator(d)) fs::resize_file(f.path(), 0);
       },
       {"/meta", "expected \"EDGE_TYPE"}, {}},
      {"LastOffsetPastEof", true,
       [](const std::string& d) {
         auto o = Offsets(d + "/column_offset");
         o.back() += 12 * 10;
         WriteOffsets(d + "/column_offset", o);
       },
       {"/column_offset: offsets span 0..", "expected 0.." + std::to_string(kEdges * 12)}, {}},
      {"MiddleOffsetPastEof", false,
       [](const std::string& d) {
         auto o = Offsets(d + "/row_offset");
         o[4] = static_cast<int64_t>(kEdges * 8 + 8 * 100);
         WriteOffsets(d + "/row_offset", o);
       },
       {"/row_offset: offsets decrease at entry 5"}, {}},
      {"OffsetsSwapped", true,
       [](const std::string& d) {
         auto o = Offsets(d + "/column_offset");
         std::swap(o[2], o[3]);
         WriteOffsets(d + "/column_offset", o);
       },
       {"/column_offset: offsets decrease at entry 3"}, {}},
      {"BlockSizeDisagrees", true, [](const std::string& d) { fs::resize_file(d + "/block-0-1", 12); },
       {"/block-0-1: size 12 disagrees with column_offset"}, {}},
      {"SourceIdPastV", true, [](const std::string& d) { SetFirstEdge(d, 70000, 5); },
       {"edge record has a source id outside [0, 300)", "corrupt"},
       {"/row: edge 70000 -> 5", "lies outside its block"}},
      {"NegativeSourceId", true, [](const std::string& d) { SetFirstEdge(d, -1, 5); },
       {"edge record has a source id outside [0, 300)"}, {"/row: edge -1 -> 5", "lies outside its block"}},
      {"TargetIdPastV", true, [](const std::string& d) { SetFirstEdge(d, 5, 300); },
       {"edge record has a target id outside [0, 300)"}, {"/row: edge 5 -> 300", "lies outside its block"}},
      {"MetaUndercountsVertices", true, meta("1 100 " + e + " " + p),
       {"outside [0, 100) (meta says 100 vertices)"}, {"/row: edge", "lies outside its block"}},
      {"MetaIsADirectory", true, [](const std::string& d) { Replace(d + "/meta", [](auto& f) { fs::create_directory(f); }); },
       {"/meta: is a directory, expected a regular file"}, {}},
      {"ColumnIsADirectory", true,
       [](const std::string& d) { Replace(d + "/column", [](auto& f) { fs::create_directory(f); }); },
       {"/column: is a directory, expected a regular file"}, {}},
      {"BlockIsADirectory", true,
       [](const std::string& d) { Replace(d + "/block-1-1", [](auto& f) { fs::create_directory(f); }); },
       {"/block-1-1: is a directory, expected a regular file"}, {}},
      {"OffsetsIsADirectory", true,
       [](const std::string& d) { Replace(d + "/row_offset", [](auto& f) { fs::create_directory(f); }); },
       {"/row_offset: is a directory, expected a regular file"}, {}},
      // A FIFO blocks an open for reading until a writer comes: the binaries used to hang.
      {"MetaIsAFifo", true, [](const std::string& d) { Replace(d + "/meta", [](auto& f) { ::mkfifo(f.c_str(), 0644); }); },
       {"/meta: is a FIFO, expected a regular file"}, {}},
      {"ColumnIsAFifo", true,
       [](const std::string& d) { Replace(d + "/column", [](auto& f) { ::mkfifo(f.c_str(), 0644); }); },
       {"/column: is a FIFO, expected a regular file"}, {}},
      {"MissingColumn", true, [](const std::string& d) { fs::remove(d + "/column"); }, {"/column: No such file"}, {}},
      {"MissingBlock", false, [](const std::string& d) { fs::remove(d + "/block-0-2"); }, {"/block-0-2: No such file"}, {}},
      {"GraphIsAFile", true,
       [](const std::string& d) {
         fs::remove_all(d);
         WriteFile(d, "not a graph");
       },
       {"/meta: Not a directory"}, {}},
      {"GraphMissing", true, [](const std::string& d) { fs::remove_all(d); }, {"/meta: No such file"}, {}},
  };
}

// One valid weighted and one unweighted graph for the whole suite; each case damages a copy.
class Grids : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new TempDir();
    ASSERT_EQ(MakeGrid(tmp_->File("weighted"), true), "");
    ASSERT_EQ(MakeGrid(tmp_->File("unweighted"), false), "");
  }
  static void TearDownTestSuite() {
    delete tmp_;
    tmp_ = nullptr;
  }
  static TempDir* tmp_;
};
TempDir* Grids::tmp_ = nullptr;

class BadGraph : public Grids, public ::testing::WithParamInterface<BadCase> {};

// A normal exit, not 0 (nor 2, usage), a message naming the graph's files, and every
// expected piece of it (a piece starting with '/' is a path inside the graph directory).
void ExpectCleanRefusal(const BinaryRun& r, const std::string& what, const std::string& dir,
                        const std::vector<std::string>& expect) {
  ASSERT_FALSE(r.timed_out) << what << " hung\n" << r.output;
  ASSERT_TRUE(r.exited) << what << " died: " << r.How() << "\n" << r.output;
  EXPECT_NE(r.exit_code, 0) << what << " accepted the damaged graph\n" << r.output;
  EXPECT_NE(r.exit_code, 2) << what << " took it for a usage error\n" << r.output;
  EXPECT_NE(r.output.find(dir), std::string::npos) << what << ": the message does not name the graph\n" << r.output;
  for (const std::string& piece : expect) {
    const std::string want = piece[0] == '/' ? dir + piece : piece;
    EXPECT_NE(r.output.find(want), std::string::npos) << what << ": no '" << want << "' in\n" << r.output;
  }
}

TEST_P(BadGraph, EveryBinaryRefusesItWithAClearMessage) {
  const BadCase& c = GetParam();
  const std::string dir = tmp_->File(c.name);
  fs::copy(tmp_->File(c.weighted ? "weighted" : "unweighted"), dir, fs::copy_options::recursive);
  c.damage(dir);
  for (const char* mem : {"8", "0.00001"}) {
    const std::vector<std::vector<std::string>> apps = {
        {Bin("bfs"), dir, "0", mem},      {Bin("wcc"), dir, mem},  {Bin("sssp"), dir, "0", mem},
        {Bin("pagerank"), dir, "2", mem}, {Bin("pagerank-delta"), dir, "0.01", mem}, {Bin("spmv"), dir, mem},
    };
    for (const auto& argv : apps) {
      ExpectCleanRefusal(RunBinary(argv, 30), fs::path(argv[0]).filename().string() + " (MEM " + mem + ")", dir,
                         c.expect);
    }
  }
  ExpectCleanRefusal(RunBinary({Bin("run-jobs"), "--graph", dir, "--jobs", "wcc,bfs:0,pagerank:2"}, 60), "run-jobs", dir,
                     c.expect);
  ExpectCleanRefusal(RunBinary({Bin("graphfs-index"), "-q", "--chunk-size", "4K", dir}, 30), "graphfs-index", dir,
                     c.expect_index.empty() ? c.expect : c.expect_index);
  // A failed build leaves no index behind.
  EXPECT_FALSE(fs::exists(dir + "/.graphfs/index"));
}

INSTANTIATE_TEST_SUITE_P(Damage, BadGraph, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

// The undamaged graphs really are fine: the refusals above are about the damage.
TEST_F(Grids, TheUndamagedGraphsPass) {
  for (const char* name : {"weighted", "unweighted"}) {
    const std::string dir = tmp_->File(std::string("copy-") + name);
    fs::copy(tmp_->File(name), dir, fs::copy_options::recursive);
    for (const char* mem : {"8", "0.00001"}) {
      auto r = RunBinary({Bin("bfs"), dir, "0", mem}, 30);
      EXPECT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
      r = RunBinary({Bin("pagerank"), dir, "2", mem}, 30);
      EXPECT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
    }
    auto r = RunBinary({Bin("graphfs-index"), "-q", "--chunk-size", "4K", dir}, 30);
    EXPECT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  }
}

// Two processes creating the same vertex state: the second used to truncate the first's
// mapped file, which then died of SIGBUS (or computed garbage). Now the second is refused.
TEST(VertexState, ASecondHolderIsRefusedAndTheFirstMappingStaysValid) {
  TempDir tmp;
  const std::string path = tmp.File("wcc.label");
  const size_t bytes = 1 << 20;
  auto first = MappedFile::Create(path, bytes);
  ASSERT_TRUE(first.ok()) << first.error().message();
  std::memset(first->data(), 0x5a, bytes);
  auto second = MappedFile::Create(path, bytes);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code(), EBUSY);
  EXPECT_NE(second.error().message().find(path + " is in use by another process"), std::string::npos)
      << second.error().message();
  EXPECT_NE(second.error().message().find("--state-tag"), std::string::npos) << second.error().message();
  // Still the whole size and the first's bytes (touching a truncated page would be SIGBUS).
  EXPECT_EQ(fs::file_size(path), bytes);
  const auto* data = static_cast<const unsigned char*>(first->data());
  size_t wrong = 0;
  for (size_t i = 0; i < bytes; i += 512) wrong += data[i] != 0x5a;
  EXPECT_EQ(wrong, 0u);
  // Once the first is gone, the file can be created again.
  *first = MappedFile();
  auto third = MappedFile::Create(path, bytes);
  EXPECT_TRUE(third.ok()) << third.error().message();
}

TEST(VertexState, AnAppWhoseStateFileIsHeldElsewhereSaysSoAndLeavesItAlone) {
  TempDir tmp;
  const std::string dir = tmp.File("g");
  ASSERT_EQ(MakeGrid(dir, false), "");
  WriteFile(dir + "/pagerank.degree", std::string(4096, 'k'));
  const int fd = ::open((dir + "/pagerank.degree").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  auto r = RunBinary({Bin("pagerank"), dir, "2"}, 30);
  ::close(fd);
  ASSERT_TRUE(r.exited) << r.How() << "\n" << r.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(dir + "/pagerank.degree is in use by another process"), std::string::npos) << r.output;
  EXPECT_EQ(ReadFile(dir + "/pagerank.degree"), std::string(4096, 'k')) << "the held file was truncated";
  // Released: the same run succeeds.
  r = RunBinary({Bin("pagerank"), dir, "2"}, 30);
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
}

// A vertex count in meta far beyond the graph used to make every app write gigabytes of
// vertex state (and fill a small disk). The space is checked before anything is written.
TEST(VertexState, StateLargerThanTheFreeSpaceIsRefusedBeforeWriting) {
  TempDir tmp;
  const std::string small = tmp.File("small");
  fs::create_directory(small);
  ASSERT_EQ(::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=2m"), 0) << std::strerror(errno) << " (needs root)";
  const std::string dir = small + "/g";
  std::string made = MakeGrid(dir, true);
  if (made.empty()) WriteFile(dir + "/meta", "1 10000000 " + std::to_string(kEdges) + " " + std::to_string(kPartitions));
  std::vector<BinaryRun> runs;
  if (made.empty()) {
    runs.push_back(RunBinary({Bin("bfs"), dir, "0"}, 30));
    runs.push_back(RunBinary({Bin("pagerank"), dir, "2"}, 30));
  }
  std::vector<std::string> left;
  for (auto& f : fs::directory_iterator(dir)) left.push_back(f.path().filename().string());
  ::umount2(small.c_str(), MNT_DETACH);
  ASSERT_EQ(made, "");
  for (const BinaryRun& r : runs) {
    ASSERT_TRUE(r.exited) << r.How() << "\n" << r.output;
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("vertex state needs 40000000 bytes"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("is the vertex count in meta right?"), std::string::npos) << r.output;
  }
  for (const std::string& name : left) {
    EXPECT_TRUE(name == "meta" || name == "column" || name == "row" || name == "column_offset" ||
                name == "row_offset" || name.rfind("block-", 0) == 0)
        << "left behind: " << name;
  }
}

// ---- preprocess: bad edge lists ----

class BadEdgeList : public ::testing::Test {
 protected:
  std::string Edges(std::initializer_list<int32_t> ids) {
    std::string bytes;
    for (int32_t id : ids) bytes.append(reinterpret_cast<const char*>(&id), 4);
    return bytes;
  }
  BinaryRun Preprocess(const std::string& input, const std::string& out, const std::string& v, const char* type = "0") {
    return RunBinary({Bin("preprocess"), "-i", input, "-o", out, "-v", v, "-p", "2", "-t", type}, 30);
  }
  TempDir tmp;
};

TEST_F(BadEdgeList, EachIsRefusedNamingTheInputAndTheProblem) {
  struct Case {
    std::string name, bytes, v, type;
    std::vector<std::string> expect;
  };
  const std::vector<Case> cases = {
      {"odd", Edges({1, 2, 3}), "10", "0", {"odd: size 12 bytes is not a multiple of the 8-byte edge record"}},
      {"weighted-odd", Edges({1, 2, 3, 4}), "10", "1", {"weighted-odd: size 16 bytes", "12-byte edge record"}},
      {"target-out-of-range", Edges({1, 2, 3, 10}), "10", "0",
       {"target-out-of-range: edge 1 (byte offset 8) is 3 -> 10", "must be in [0, 10)"}},
      {"source-out-of-range", Edges({1, 2, 2147483647, 1}), "10", "0", {"source-out-of-range: edge 1", "2147483647 -> 1"}},
      {"negative", Edges({-3, 2}), "10", "0", {"negative: edge 0 (byte offset 0) is -3 -> 2"}},
  };
  for (const Case& c : cases) {
    WriteFile(tmp.File(c.name), c.bytes);
    auto r = Preprocess(tmp.File(c.name), tmp.File("out-" + c.name), c.v, c.type.c_str());
    ASSERT_TRUE(r.exited) << c.name << ": " << r.How() << "\n" << r.output;
    EXPECT_EQ(r.exit_code, 1) << c.name << "\n" << r.output;
    for (const std::string& piece : c.expect) EXPECT_NE(r.output.find(piece), std::string::npos) << c.name << "\n" << r.output;
    EXPECT_FALSE(fs::exists(tmp.File("out-" + c.name) + "/meta")) << c.name;
  }
  // Not a regular file: a directory, a FIFO (the open used to block forever), nothing.
  fs::create_directory(tmp.File("dir"));
  ASSERT_EQ(::mkfifo(tmp.File("fifo").c_str(), 0644), 0);
  for (const auto& [name, expect] : std::vector<std::pair<std::string, std::string>>{
           {"dir", ": is a directory, expected a regular file"},
           {"fifo", ": is a FIFO, expected a regular file"},
           {"missing", ": No such file or directory"}}) {
    auto r = Preprocess(tmp.File(name), tmp.File("out-" + name), "10");
    ASSERT_TRUE(r.exited) << name << ": " << r.How() << "\n" << r.output;
    EXPECT_EQ(r.exit_code, 1) << name << "\n" << r.output;
    EXPECT_NE(r.output.find(tmp.File(name) + expect), std::string::npos) << name << "\n" << r.output;
  }
  // Empty is a valid (edgeless) graph, and the apps run on it.
  WriteFile(tmp.File("empty"), "");
  auto r = Preprocess(tmp.File("empty"), tmp.File("out-empty"), "10");
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  r = RunBinary({Bin("wcc"), tmp.File("out-empty")}, 30);
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  EXPECT_NE(r.output.find("10 components"), std::string::npos) << r.output;
}

// A bad input used to wipe the graph already in the output directory first (meta,
// column, row, offsets deleted, blocks truncated) and then fail: now that graph stays.
TEST_F(BadEdgeList, AGraphAlreadyInTheOutputDirectorySurvivesABadInput) {
  const std::string dir = tmp.File("g");
  ASSERT_EQ(MakeGrid(dir, true), "");
  std::map<std::string, std::string> before;
  for (auto& f : fs::directory_iterator(dir)) before[f.path().filename().string()] = ReadFile(f.path().string());
  testing::TestGraph bad = testing::RandomGraph(kVertices, kVertices, 100000, true, 3);
  bad.edges[77777].target = static_cast<int32_t>(kVertices);  // late in the input: most of it was fine
  WriteFile(tmp.File("bad.edges"), testing::EdgeBytes(bad));
  auto r = RunBinary({Bin("preprocess"), "-i", tmp.File("bad.edges"), "-o", dir, "-v", std::to_string(kVertices), "-p",
                      "4", "-t", "1", "--threads", "2"},
                     30);
  ASSERT_TRUE(r.exited) << r.How() << "\n" << r.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("edge 77777"), std::string::npos) << r.output;
  std::map<std::string, std::string> after;
  for (auto& f : fs::directory_iterator(dir)) after[f.path().filename().string()] = ReadFile(f.path().string());
  EXPECT_TRUE(before == after) << "the previous graph was changed (" << before.size() << " files before, "
                               << after.size() << " after)";
  // And a good input replaces it (other P: the old blocks go), leaving no staging behind.
  bad.edges[77777].target = 0;
  WriteFile(tmp.File("good.edges"), testing::EdgeBytes(bad));
  r = RunBinary({Bin("preprocess"), "-i", tmp.File("good.edges"), "-o", dir, "-v", std::to_string(kVertices), "-p", "2",
                 "-t", "1"},
                30);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  std::vector<std::string> names;
  for (auto& f : fs::directory_iterator(dir)) names.push_back(f.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"block-0-0", "block-0-1", "block-1-0", "block-1-1", "column",
                                             "column_offset", "meta", "row", "row_offset"}));
  EXPECT_EQ(ReadFile(dir + "/meta"), "1 300 100000 2");
}

}  // namespace
}  // namespace graphfs::engine
