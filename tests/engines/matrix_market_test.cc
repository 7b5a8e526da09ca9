// import-edges --format mtx (engines/core/matrix_market.h): Matrix Market coordinate files as
// scipy.io.mmread reads them, their refusals by line, and no output file after a refusal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "engine_test_util.h"
#include "engines/core/edge_import.h"

namespace graphfs::engine {
namespace {

using testing::TempDir;
using testing::TestGraph;

Result<ImportStats> ImportMtx(const TempDir& tmp, const std::string& text, bool weighted = false) {
  testing::WriteFile(tmp.File("in.mtx"), text);
  ImportOptions options;
  options.input = tmp.File("in.mtx");
  options.output = tmp.File("out.bin");
  options.format = ImportFormat::kMatrixMarket;
  options.weighted = weighted;
  options.default_weight = 2.5f;
  return ImportEdges(options);
}

std::string Output(const TempDir& tmp) { return testing::ReadFile(tmp.File("out.bin")); }

std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(MatrixMarket, GeneralPatternIndicesBecomeZeroBased) {
  TempDir tmp;
  auto stats = ImportMtx(tmp,
                         "%%MatrixMarket matrix coordinate pattern general\n"
                         "% a comment\n"
                         "%another one\n"
                         "\n"
                         "5 5 4\n"
                         "1 2\n"
                         "2 1\n"
                         "  3\t3  \n"
                         "1 5\n");
  ASSERT_TRUE(stats.ok()) << stats.error().message();
  EXPECT_EQ(stats->lines, 9u);
  EXPECT_EQ(stats->entries, 4u);
  EXPECT_EQ(stats->edges, 4u);
  EXPECT_EQ(stats->max_vertex, 4u);
  EXPECT_EQ(stats->vertices, 5u);
  EXPECT_TRUE(Output(tmp) == testing::EdgeBytes(TestGraph{5, false, {{0, 1}, {1, 0}, {2, 2}, {0, 4}}}));
}

TEST(MatrixMarket, SymmetricGivesBothDirectionsAndTheDiagonalOnce) {
  TempDir tmp;
  const std::string text =
      "%%MatrixMarket matrix coordinate real symmetric\n"
      "4 4 4\n"
      "1 1 0.5\n"
      "3 1 -2\n"
      "4 2 1e3\n"
      "2 3 7\n";  // upper triangle: mirrored all the same, as mmread does
  auto stats = ImportMtx(tmp, text, /*weighted=*/true);
  ASSERT_TRUE(stats.ok()) << stats.error().message();
  EXPECT_EQ(stats->entries, 4u);
  EXPECT_EQ(stats->edges, 7u);
  EXPECT_TRUE(Output(tmp) == testing::EdgeBytes(TestGraph{4, true,
                                                          {{0, 0, 0.5f},
                                                           {2, 0, -2.0f},
                                                           {0, 2, -2.0f},
                                                           {3, 1, 1000.0f},
                                                           {1, 3, 1000.0f},
                                                           {1, 2, 7.0f},
                                                           {2, 1, 7.0f}}}));
  auto unweighted = ImportMtx(tmp, text, /*weighted=*/false);
  ASSERT_TRUE(unweighted.ok()) << unweighted.error().message();
  EXPECT_TRUE(Output(tmp) ==
              testing::EdgeBytes(TestGraph{4, false, {{0, 0}, {2, 0}, {0, 2}, {3, 1}, {1, 3}, {1, 2}, {2, 1}}}));
}

TEST(MatrixMarket, IntegerAndRealValuesAreTheWeightsPatternGetsTheDefault) {
  TempDir tmp;
  auto integer = ImportMtx(tmp,
                           "%%MatrixMarket matrix coordinate integer general\n"
                           "3 3 3\n"
                           "1 2 7\n"
                           "2 3 -4 extra columns ignored\n"
                           "3 1 0\n",
                           true);
  ASSERT_TRUE(integer.ok()) << integer.error().message();
  EXPECT_TRUE(Output(tmp) == testing::EdgeBytes(TestGraph{3, true, {{0, 1, 7.0f}, {1, 2, -4.0f}, {2, 0, 0.0f}}}));

  auto real = ImportMtx(tmp,
                        "%%MatrixMarket matrix coordinate real general\n"
                        "3 3 3\n"
                        "1 2 1.5e-2\n"
                        "2 3 -0.25\n"
                        "3 3 1e-300\n",  // a double that is 0 as float32
                        true);
  ASSERT_TRUE(real.ok()) << real.error().message();
  EXPECT_TRUE(Output(tmp) == testing::EdgeBytes(TestGraph{3, true, {{0, 1, 0.015f}, {1, 2, -0.25f}, {2, 2, 0.0f}}}));

  // Without --weighted the values are checked, then dropped (nan too, which mmread reads).
  auto dropped = ImportMtx(tmp,
                           "%%MatrixMarket matrix coordinate real general\n"
                           "3 3 2\n"
                           "1 2 nan\n"
                           "2 3 1e300\n",
                           false);
  ASSERT_TRUE(dropped.ok()) << dropped.error().message();
  EXPECT_TRUE(Output(tmp) == testing::EdgeBytes(TestGraph{3, false, {{0, 1}, {1, 2}}}));

  auto pattern = ImportMtx(tmp,
                           "%%MatrixMarket matrix coordinate pattern symmetric\n"
                           "2 2 1\n"
                           "2 1\n",
                           true);
  ASSERT_TRUE(pattern.ok()) << pattern.error().message();
  EXPECT_TRUE(Output(tmp) == testing::EdgeBytes(TestGraph{2, true, {{1, 0, 2.5f}, {0, 1, 2.5f}}}));
}

TEST(MatrixMarket, BannerWordsAliasesAndLineEnds) {
  TempDir tmp;
  // The words after %%MatrixMarket in any case; 'double' and 'unsigned-integer' as mmread
  // takes them; CRLF line ends; comments among the entries; duplicates and zeros kept.
  auto stats = ImportMtx(tmp,
                         "%%MatrixMarket MATRIX Coordinate DOUBLE General\r\n"
                         "2 2 3\r\n"
                         "1 2 0\r\n"
                         "% between entries\r\n"
                         "1 2 3\r\n"
                         "2 2 4",  // no line end at the end
                         true);
  ASSERT_TRUE(stats.ok()) << stats.error().message();
  EXPECT_TRUE(Output(tmp) == testing::EdgeBytes(TestGraph{2, true, {{0, 1, 0.0f}, {0, 1, 3.0f}, {1, 1, 4.0f}}}));
  auto unsigned_field = ImportMtx(tmp,
                                  "%%MatrixMarket matrix coordinate unsigned-integer general\n"
                                  "2 2 1\n"
                                  "2 1 9\n",
                                  true);
  ASSERT_TRUE(unsigned_field.ok()) << unsigned_field.error().message();
  EXPECT_TRUE(Output(tmp) == testing::EdgeBytes(TestGraph{2, true, {{1, 0, 9.0f}}}));
}

TEST(MatrixMarket, VertexCountIsTheLargerDimension) {
  struct Case {
    std::string size;
    std::string entry;
    uint64_t vertices, max_vertex;
  };
  for (const Case& c : {Case{"3 7 1", "3 7", 7, 6}, Case{"7 3 1", "7 3", 7, 6}, Case{"9 9 1", "1 2", 9, 1},
                        Case{"4 6 0", "", 6, 0}}) {
    TempDir tmp;
    auto stats = ImportMtx(tmp, "%%MatrixMarket matrix coordinate pattern general\n" + c.size + "\n" + c.entry + "\n");
    ASSERT_TRUE(stats.ok()) << stats.error().message();
    EXPECT_EQ(stats->vertices, c.vertices) << c.size;
    if (stats->edges > 0) {
      EXPECT_EQ(stats->max_vertex, c.max_vertex) << c.size;
    }
  }
}

// Every refusal: "in.mtx:LINE: reason", EINVAL, and no file left beside the input.
TEST(MatrixMarket, ErrorsNameTheLineAndLeaveNoOutput) {
  const std::string pattern = "%%MatrixMarket matrix coordinate pattern general\n";
  const std::string integer = "%%MatrixMarket matrix coordinate integer general\n";
  const std::string real = "%%MatrixMarket matrix coordinate real general\n";
  struct Case {
    std::string text;
    std::string expect;
    bool weighted = false;
  };
  const std::vector<Case> cases = {
      {"", "in.mtx:1: empty file: no Matrix Market banner"},
      {"3 3 1\n1 1\n", "in.mtx:1: not a Matrix Market file: line 1 must be the banner"},
      {"%%MATRIXMARKET matrix coordinate real general\n1 1 0\n", "in.mtx:1: not a Matrix Market file"},
      {"%%MatrixMarket matrix coordinate real\n1 1 0\n", "in.mtx:1: the banner has 4 words, want 5"},
      {"%%MatrixMarket vector coordinate real general\n", "in.mtx:1: unsupported Matrix Market object 'vector'"},
      {"%%MatrixMarket matrix array real general\n2 2\n", "in.mtx:1: unsupported Matrix Market format 'array'"},
      {"%%MatrixMarket matrix sparse real general\n", "in.mtx:1: unknown Matrix Market format 'sparse'"},
      {"%%MatrixMarket matrix coordinate complex general\n", "in.mtx:1: unsupported Matrix Market field 'complex'"},
      {"%%MatrixMarket matrix coordinate float general\n", "in.mtx:1: unknown Matrix Market field 'float'"},
      {"%%MatrixMarket matrix coordinate real skew-symmetric\n",
       "in.mtx:1: unsupported Matrix Market symmetry 'skew-symmetric'"},
      {"%%MatrixMarket matrix coordinate complex Hermitian\n", "in.mtx:1: unsupported Matrix Market field 'complex'"},
      {"%%MatrixMarket matrix coordinate real hermitian\n", "in.mtx:1: unsupported Matrix Market symmetry 'hermitian'"},
      {"%%MatrixMarket matrix coordinate real upper\n", "in.mtx:1: unknown Matrix Market symmetry 'upper'"},
      {pattern, "in.mtx:1: the file ends before the size line 'ROWS COLS NNZ'"},
      {pattern + "% only comments\n\n", "in.mtx:3: the file ends before the size line"},
      {pattern + "3 3\n", "in.mtx:2: expected the size line 'ROWS COLS NNZ' in '3 3'"},
      {pattern + "3 3 1 1\n1 1\n", "in.mtx:2: expected the size line"},
      {pattern + "3.0 3 1\n1 1\n", "in.mtx:2: bad ROWS '3.0'"},
      {pattern + "3 -3 1\n1 1\n", "in.mtx:2: bad COLS '-3'"},
      {pattern + "3 3 x\n", "in.mtx:2: bad NNZ 'x'"},
      {pattern + "2147483649 2 1\n1 1\n", "in.mtx:2: ROWS 2147483649 above 2147483648 (vertex ids are int32)"},
      {"%%MatrixMarket matrix coordinate pattern symmetric\n3 4 1\n1 1\n",
       "in.mtx:2: a symmetric matrix must be square, this one is 3 x 4"},
      {pattern + "% c\n3 3 3\n1 1\n\n2 2\n", "in.mtx:6: the file ends after 2 of the 3 entries of the size line (line 3)"},
      {pattern + "3 3 2\n", "in.mtx:2: the file ends after 0 of the 2 entries"},
      {pattern + "3 3 2\n1 1\n2 2\n% c\n3 3\n", "in.mtx:6: one entry more than the 2 of the size line (line 2) in '3 3'"},
      {pattern + "3 3 0\n1 1\n", "in.mtx:3: one entry more than the 0 of the size line"},
      {pattern + "3 3 1\n0 1\n", "in.mtx:3: row index 0 outside 1..3 (Matrix Market indices are 1-based)"},
      {pattern + "3 3 2\n1 1\n3 0\n", "in.mtx:4: column index 0 outside 1..3 (Matrix Market"},
      {pattern + "3 3 1\n4 1\n", "in.mtx:3: row index 4 outside 1..3 in '4 1'"},
      {pattern + "3 5 1\n3 6\n", "in.mtx:3: column index 6 outside 1..5"},
      {pattern + "3 3 1\nx 1\n", "in.mtx:3: bad row index 'x'"},
      {pattern + "3 3 1\n-1 1\n", "in.mtx:3: bad row index '-1'"},
      {pattern + "3 3 1\n1 1.0\n", "in.mtx:3: bad column index '1.0'"},
      {pattern + "3 3 1\n1\n", "in.mtx:3: expected an entry 'ROW COL' (pattern matrix)"},
      {real + "3 3 1\n1 2\n", "in.mtx:3: expected an entry 'ROW COL VALUE'"},
      {integer + "3 3 1\n1 2 1.5\n", "in.mtx:3: bad integer value '1.5'"},
      {integer + "3 3 1\n1 2 +2\n", "in.mtx:3: bad integer value '+2'"},
      {integer + "3 3 1\n1 2 99999999999999999999\n", "in.mtx:3: bad integer value"},
      {"%%MatrixMarket matrix coordinate unsigned-integer general\n3 3 1\n1 2 -1\n",
       "in.mtx:3: bad unsigned integer value '-1'"},
      {real + "3 3 1\n1 2 heavy\n", "in.mtx:3: bad real value 'heavy'"},
      {real + "3 3 1\n1 2 0x1p3\n", "in.mtx:3: bad real value '0x1p3'"},
      {real + "3 3 1\n1 2 1e300\n", "in.mtx:3: weight '1e300' is not a finite float32", true},
      {real + "3 3 1\n1 2 -inf\n", "in.mtx:3: weight '-inf' is not a finite float32", true},
      {real + "3 3 2\n1 2 1\n2 1 nan\n", "in.mtx:4: weight 'nan' is not a finite float32", true},
  };
  for (const Case& c : cases) {
    TempDir tmp;
    auto stats = ImportMtx(tmp, c.text, c.weighted);
    ASSERT_FALSE(stats.ok()) << c.text;
    EXPECT_EQ(stats.error().code(), EINVAL) << stats.error().message();
    EXPECT_EQ(stats.error().message().find(tmp.File(c.expect)), 0u) << stats.error().message() << "\nwant " << c.expect;
    EXPECT_EQ(FilesIn(tmp.path()), std::vector<std::string>{"in.mtx"}) << c.text;
  }
}

TEST(MatrixMarket, RefusedInputLeavesAnOlderOutputAsItWas) {
  TempDir tmp;
  testing::WriteFile(tmp.File("out.bin"), "older");
  // The refusal comes after 4.8 MB of records were written to the partial file (the output
  // buffer of 4 MiB was flushed once).
  std::string text = "%%MatrixMarket matrix coordinate pattern general\n1 1 600001\n";
  for (int i = 0; i < 600000; ++i) text += "1 1\n";
  text += "2 1\n";
  auto stats = ImportMtx(tmp, text);
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.error().message().find("in.mtx:600003: row index 2 outside 1..1"), std::string::npos)
      << stats.error().message();
  EXPECT_EQ(testing::ReadFile(tmp.File("out.bin")), "older");
  EXPECT_EQ(FilesIn(tmp.path()), (std::vector<std::string>{"in.mtx", "out.bin"}));
}

TEST(MatrixMarket, TextFormatRefusesAnMtxFile) {
  TempDir tmp;
  testing::WriteFile(tmp.File("in.txt"), "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2\n");
  ImportOptions options;
  options.input = tmp.File("in.txt");
  options.output = tmp.File("out.bin");
  auto stats = ImportEdges(options);  // the default, SNAP/KONECT text: the size line would be an edge
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.error().message().find("in.txt:1: a Matrix Market banner: import .mtx files with --format mtx"),
            std::string::npos)
      << stats.error().message();
  EXPECT_EQ(FilesIn(tmp.path()), std::vector<std::string>{"in.txt"});
}

// The same graph as an .mtx file and as SNAP text imports to the same edges, and preprocesses
// to the same grid.
TEST(MatrixMarket, SameGraphAsTheSnapText) {
  TempDir tmp;
  const TestGraph g = testing::RandomGraph(/*vertices=*/50, /*used=*/40, /*edges=*/300, /*weighted=*/true, 7);
  std::string snap = "# FromNodeId\tToNodeId\tWeight\n";
  std::string mtx = "%%MatrixMarket matrix coordinate real general\n% the same graph\n50 50 300\n";
  char line[96];
  for (const auto& e : g.edges) {
    std::snprintf(line, sizeof line, "%d\t%d\t%.9g\n", e.source, e.target, static_cast<double>(e.weight));
    snap += line;
    std::snprintf(line, sizeof line, "%d %d %.9g\n", e.source + 1, e.target + 1, static_cast<double>(e.weight));
    mtx += line;
  }
  testing::WriteFile(tmp.File("g.txt"), snap);
  testing::WriteFile(tmp.File("g.mtx"), mtx);
  ImportOptions options;
  options.weighted = true;
  options.input = tmp.File("g.txt");
  options.output = tmp.File("snap.bin");
  auto from_snap = ImportEdges(options);
  options.format = ImportFormat::kMatrixMarket;
  options.input = tmp.File("g.mtx");
  options.output = tmp.File("mtx.bin");
  auto from_mtx = ImportEdges(options);
  ASSERT_TRUE(from_snap.ok()) << from_snap.error().message();
  ASSERT_TRUE(from_mtx.ok()) << from_mtx.error().message();
  EXPECT_EQ(from_mtx->edges, 300u);
  EXPECT_EQ(from_mtx->vertices, 50u);  // ids 40..49 isolated: the size line keeps them
  EXPECT_EQ(from_snap->max_vertex, from_mtx->max_vertex);
  const std::string records = testing::ReadFile(tmp.File("snap.bin"));
  ASSERT_TRUE(records == testing::EdgeBytes(g));
  ASSERT_TRUE(testing::ReadFile(tmp.File("mtx.bin")) == records);

  ASSERT_TRUE(testing::PreprocessGraph(tmp.File("snap.bin"), tmp.File("snap"), 50, 4, true));
  ASSERT_TRUE(testing::PreprocessGraph(tmp.File("mtx.bin"), tmp.File("mtx"), 50, 4, true));
  ASSERT_EQ(FilesIn(tmp.File("snap")), FilesIn(tmp.File("mtx")));
  for (const std::string& name : FilesIn(tmp.File("snap"))) {
    EXPECT_TRUE(testing::ReadFile(tmp.File("snap/" + name)) == testing::ReadFile(tmp.File("mtx/" + name))) << name;
  }
}

// A symmetric .mtx (one triangle) against SNAP's undirected form, each pair listed both ways.
TEST(MatrixMarket, SymmetricEqualsBothDirectionsInSnapText) {
  TempDir tmp;
  const TestGraph g = testing::RandomGraph(30, 30, 200, false, 11);
  std::string snap, mtx;
  uint64_t entries = 0, edges = 0;
  std::vector<std::tuple<int32_t, int32_t>> both;
  for (const auto& e : g.edges) {
    const int32_t hi = std::max(e.source, e.target), lo = std::min(e.source, e.target);
    mtx += std::to_string(hi + 1) + " " + std::to_string(lo + 1) + "\n";  // lower triangle
    ++entries;
    both.emplace_back(hi, lo);
    if (hi != lo) both.emplace_back(lo, hi);
  }
  std::sort(both.begin(), both.end());  // SNAP's files are sorted by source
  for (const auto& [s, t] : both) snap += std::to_string(s) + " " + std::to_string(t) + "\n";
  edges = both.size();
  testing::WriteFile(tmp.File("g.txt"), snap);
  testing::WriteFile(tmp.File("g.mtx"), "%%MatrixMarket matrix coordinate pattern symmetric\n30 30 " +
                                            std::to_string(entries) + "\n" + mtx);
  ImportOptions options;
  options.input = tmp.File("g.txt");
  options.output = tmp.File("snap.bin");
  ASSERT_TRUE(ImportEdges(options).ok());
  options.format = ImportFormat::kMatrixMarket;
  options.input = tmp.File("g.mtx");
  options.output = tmp.File("mtx.bin");
  auto stats = ImportEdges(options);
  ASSERT_TRUE(stats.ok()) << stats.error().message();
  EXPECT_EQ(stats->entries, entries);
  EXPECT_EQ(stats->edges, edges);
  auto sorted = [](std::vector<uint64_t> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  const auto from_snap = testing::ReadArray<uint64_t>(tmp.File("snap.bin"));  // one (source, target) per word
  const auto from_mtx = testing::ReadArray<uint64_t>(tmp.File("mtx.bin"));
  ASSERT_EQ(from_snap.size(), edges);
  EXPECT_EQ(sorted(from_snap), sorted(from_mtx));
}

TEST(MatrixMarket, BinaryTakesFormatMtx) {
  TempDir tmp;
  const std::string bin = testing::Bin("import-edges");
  testing::WriteFile(tmp.File("g.mtx"), "%%MatrixMarket matrix coordinate pattern symmetric\n6 6 3\n2 1\n3 3\n5 2\n");
  auto ok = testing::RunCommand(bin + " --format mtx -i " + tmp.File("g.mtx") + " -o " + tmp.File("g.bin"));
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_NE(ok.output.find("5 edges from 3 matrix entries"), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("-v 6 -t 0"), std::string::npos) << ok.output;
  EXPECT_TRUE(testing::ReadFile(tmp.File("g.bin")) ==
              testing::EdgeBytes(TestGraph{6, false, {{1, 0}, {0, 1}, {2, 2}, {4, 1}, {1, 4}}}));

  testing::WriteFile(tmp.File("bad.mtx"), "%%MatrixMarket matrix coordinate real general\n4 4 3\n1 2 1\n2 3 1\n");
  auto bad = testing::RunCommand(bin + " --format mtx --weighted -i " + tmp.File("bad.mtx") + " -o " +
                                 tmp.File("bad.bin") + " 2>&1");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("bad.mtx:4: the file ends after 2 of the 3 entries"), std::string::npos) << bad.output;
  EXPECT_EQ(FilesIn(tmp.path()), (std::vector<std::string>{"bad.mtx", "g.bin", "g.mtx"}));

  EXPECT_EQ(testing::RunCommand(bin + " --format xml -i " + tmp.File("g.mtx") + " -o " + tmp.File("x") + " 2>/dev/null")
                .exit_code,
            2);
  auto help = testing::RunCommand(bin + " --help");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* word : {"--format", "snap: SNAP/KONECT text", "mtx: Matrix Market", "max(ROWS, COLS)",
                           "skew-symmetric", "no output file"}) {
    EXPECT_NE(help.output.find(word), std::string::npos) << word << " not in\n" << help.output;
  }
}

}  // namespace
}  // namespace graphfs::engine
