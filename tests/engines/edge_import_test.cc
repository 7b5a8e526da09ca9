#include "engines/core/edge_import.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <iterator>

#include "engine_test_util.h"

namespace graphfs::engine {
namespace {

using testing::TempDir;
using testing::TestGraph;

Result<ImportStats> Import(const TempDir& tmp, const std::string& text, bool weighted) {
  testing::WriteFile(tmp.File("in.txt"), text);
  ImportOptions options;
  options.input = tmp.File("in.txt");
  options.output = tmp.File("out.bin");
  options.weighted = weighted;
  options.default_weight = 2.5f;
  return ImportEdges(options);
}

TEST(ImportEdges, SnapFormat) {
  TempDir tmp;
  auto stats = Import(tmp,
                      "# Directed graph (each unordered pair of nodes is saved once): web.txt\n"
                      "# FromNodeId\tToNodeId\n"
                      "0\t1\n"
                      "0\t7\r\n"
                      "\n"
                      "   3   2\n"
                      "7\t7\n",
                      false);
  ASSERT_TRUE(stats.ok()) << stats.error().message();
  EXPECT_EQ(stats->edges, 4u);
  EXPECT_EQ(stats->max_vertex, 7u);
  EXPECT_EQ(stats->lines, 7u);
  EXPECT_TRUE(testing::ReadFile(tmp.File("out.bin")) ==
              testing::EdgeBytes(TestGraph{8, false, {{0, 1}, {0, 7}, {3, 2}, {7, 7}}}));
}

TEST(ImportEdges, KonectFormatWithWeightsAndExtraColumns) {
  TempDir tmp;
  auto stats = Import(tmp,
                      "% sym weighted\n"
                      "% 3 4 4\n"
                      "1 2 0.5 1234567\n"
                      "2 3\n"
                      "3,1,0\n"
                      "4 1 -1e2\n",
                      true);
  ASSERT_TRUE(stats.ok()) << stats.error().message();
  EXPECT_TRUE(testing::ReadFile(tmp.File("out.bin")) ==
              testing::EdgeBytes(TestGraph{5, true, {{1, 2, 0.5f}, {2, 3, 2.5f}, {3, 1, 0.0f}, {4, 1, -100.0f}}}));
}

TEST(ImportEdges, ErrorsNameTheLine) {
  struct Case {
    std::string text;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"0 1\n# c\n1 x\n", "in.txt:3: bad target vertex id 'x'"},
      {"0 1\n5\n", "in.txt:2: expected 'SOURCE TARGET [WEIGHT]'"},
      {"-1 4\n", "in.txt:1: bad source vertex id '-1'"},
      {"1 2147483648\n", "in.txt:1: bad target vertex id"},
      {"1 2 3\n1 2 heavy\n", "in.txt:2: bad weight 'heavy'"},
      {"1 2 nan\n", "in.txt:1: bad weight"},
  };
  for (const Case& c : cases) {
    TempDir tmp;
    auto stats = Import(tmp, c.text, true);
    ASSERT_FALSE(stats.ok()) << c.text;
    EXPECT_NE(stats.error().message().find(c.expect), std::string::npos) << stats.error().message();
    // No output, not even a partial one: only the input is left.
    auto left = std::distance(std::filesystem::directory_iterator(tmp.path()), std::filesystem::directory_iterator());
    EXPECT_EQ(left, 1) << c.text;
  }
}

TEST(ImportEdges, BinaryReportsVertexCountAndFailsOnBadInput) {
  TempDir tmp;
  testing::WriteFile(tmp.File("a.txt"), "# x\n0 9\n9 3\n");
  auto ok = testing::RunCommand(testing::Bin("import-edges") + " -i " + tmp.File("a.txt") + " -o " + tmp.File("a.bin"));
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_NE(ok.output.find("2 edges"), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("-v 10 -t 0"), std::string::npos) << ok.output;
  testing::WriteFile(tmp.File("b.txt"), "0 1\n1 two\n");
  auto bad = testing::RunCommand(testing::Bin("import-edges") + " -i " + tmp.File("b.txt") + " -o " +
                                 tmp.File("b.bin") + " 2>&1");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("b.txt:2:"), std::string::npos) << bad.output;
  EXPECT_FALSE(std::filesystem::exists(tmp.File("b.bin")));
  EXPECT_EQ(testing::RunCommand(testing::Bin("import-edges") + " -i /nonexistent -o " + tmp.File("c") + " 2>/dev/null")
                .exit_code,
            1);
}

}  // namespace
}  // namespace graphfs::engine
