#include "engines/core/preprocess.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "engine_test_util.h"
#include "grid/grid_layout.h"

namespace graphfs::engine {
namespace {

using grid::EdgeType;
using grid::GridLayout;
using testing::EdgeBytes;
using testing::ReadFile;
using testing::TempDir;
using testing::TestEdge;
using testing::TestGraph;

// The simplest possible grid builder, written independently of the engine:
// ranges from explicit sizes, blocks in input order, files concatenated.
std::map<std::string, std::string> ReferenceGrid(const TestGraph& g, uint32_t p, bool sort_sources) {
  std::vector<uint64_t> bounds = {0};
  for (uint32_t i = 0; i < p; ++i) bounds.push_back(bounds.back() + g.vertices / p + (i < g.vertices % p ? 1 : 0));
  auto part = [&](int32_t v) {
    return static_cast<uint32_t>(std::upper_bound(bounds.begin(), bounds.end(), static_cast<uint64_t>(v)) -
                                 bounds.begin() - 1);
  };
  std::vector<std::vector<TestEdge>> blocks(p * p);
  for (const TestEdge& e : g.edges) blocks[part(e.source) * p + part(e.target)].push_back(e);
  std::map<std::string, std::string> files;
  for (uint32_t b = 0; b < p * p; ++b) {
    if (sort_sources) {
      std::stable_sort(blocks[b].begin(), blocks[b].end(),
                       [](const TestEdge& x, const TestEdge& y) { return x.source < y.source; });
    }
    TestGraph block{g.vertices, g.weighted, blocks[b]};
    files["block-" + std::to_string(b / p) + "-" + std::to_string(b % p)] = EdgeBytes(block);
  }
  std::string column, row, column_offset, row_offset;
  auto append_offset = [](std::string& s, int64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); };
  for (uint32_t j = 0; j < p; ++j) {
    for (uint32_t i = 0; i < p; ++i) {
      append_offset(column_offset, static_cast<int64_t>(column.size()));
      column += files["block-" + std::to_string(i) + "-" + std::to_string(j)];
    }
  }
  append_offset(column_offset, static_cast<int64_t>(column.size()));
  for (uint32_t i = 0; i < p; ++i) {
    for (uint32_t j = 0; j < p; ++j) {
      append_offset(row_offset, static_cast<int64_t>(row.size()));
      row += files["block-" + std::to_string(i) + "-" + std::to_string(j)];
    }
  }
  append_offset(row_offset, static_cast<int64_t>(row.size()));
  files["column"] = column;
  files["row"] = row;
  files["column_offset"] = column_offset;
  files["row_offset"] = row_offset;
  char meta[128];
  std::snprintf(meta, sizeof(meta), "%d %d %ld %d", g.weighted ? 1 : 0, static_cast<int>(g.vertices),
                static_cast<long>(g.edges.size()), static_cast<int>(p));
  files["meta"] = meta;
  return files;
}

void ExpectSameGrid(const std::string& dir, const std::map<std::string, std::string>& expected) {
  size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    ++count;
    auto it = expected.find(name);
    ASSERT_NE(it, expected.end()) << "unexpected file " << name;
    ASSERT_TRUE(ReadFile(entry.path().string()) == it->second) << "file " << name << " differs";
  }
  EXPECT_EQ(count, expected.size());
}

Result<PreprocessStats> RunPreprocess(const TempDir& tmp, const TestGraph& g, uint32_t p, bool sort, int threads = 2,
                                      uint64_t buffers = 256ull << 20) {
  PreprocessOptions options = testing::GridOptions(tmp, g, p);
  options.sort_sources = sort;
  options.threads = threads;
  options.block_buffer_bytes = buffers;
  return Preprocess(options);
}

TEST(Preprocess, ByteExactForManyShapes) {
  for (bool weighted : {false, true}) {
    for (uint32_t vertices : {1u, 7u, 64u, 97u}) {
      for (uint32_t p : {1u, 2u, 3u, 5u, 8u}) {
        for (bool sort : {false, true}) {
          TempDir tmp;
          TestGraph g = testing::RandomGraph(vertices, std::max(1u, vertices - vertices / 5), 400, weighted,
                                             vertices * 31 + p);
          auto stats = RunPreprocess(tmp, g, p, sort);
          ASSERT_TRUE(stats.ok()) << stats.error().message();
          EXPECT_EQ(stats->edges, g.edges.size());
          SCOPED_TRACE("V=" + std::to_string(vertices) + " P=" + std::to_string(p) + " weighted=" +
                       std::to_string(weighted) + " sort=" + std::to_string(sort));
          ExpectSameGrid(tmp.File("grid"), ReferenceGrid(g, p, sort));
        }
      }
    }
  }
}

TEST(Preprocess, MoreInputThanOneChunkKeepsInputOrderWithManyThreads) {
  TempDir tmp;
  // 3.5 M edges = 28 MiB: two 24 MiB chunks bucketed concurrently.
  TestGraph g = testing::RandomGraph(1000, 1000, 3'500'000, false, 7);
  // Tiny write buffers force many flushes per block.
  auto stats = RunPreprocess(tmp, g, 3, false, 4, 64 << 10);
  ASSERT_TRUE(stats.ok()) << stats.error().message();
  ExpectSameGrid(tmp.File("grid"), ReferenceGrid(g, 3, false));
}

TEST(Preprocess, EmptyInputAndMorePartitionsThanVertices) {
  TempDir tmp;
  TestGraph empty{5, false, {}};
  ASSERT_TRUE(RunPreprocess(tmp, empty, 2, false).ok());
  ExpectSameGrid(tmp.File("grid"), ReferenceGrid(empty, 2, false));
  TempDir tmp2;
  TestGraph small{3, true, {{0, 2, 1.5f}, {2, 1, 0.0f}, {1, 1, 3.0f}}};
  ASSERT_TRUE(RunPreprocess(tmp2, small, 5, false).ok());
  ExpectSameGrid(tmp2.File("grid"), ReferenceGrid(small, 5, false));
}

TEST(Preprocess, RerunWithFewerPartitionsRemovesStaleBlocks) {
  TempDir tmp;
  TestGraph g = testing::RandomGraph(40, 40, 100, false, 3);
  ASSERT_TRUE(RunPreprocess(tmp, g, 4, false).ok());
  ASSERT_TRUE(RunPreprocess(tmp, g, 2, false).ok());
  ExpectSameGrid(tmp.File("grid"), ReferenceGrid(g, 2, false));
}

TEST(Preprocess, RejectsTruncatedRecords) {
  TempDir tmp;
  testing::WriteFile(tmp.File("edges"), std::string(20, '\0'));  // 2.5 unweighted records
  PreprocessOptions options;
  options.input = tmp.File("edges");
  options.output_dir = tmp.File("grid");
  options.vertices = 10;
  options.partitions = 2;
  auto stats = Preprocess(options);
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.error().message().find("not a multiple of the 8-byte edge record"), std::string::npos)
      << stats.error().message();
  options.edge_type = 1;  // 20 is not a multiple of 12 either
  EXPECT_FALSE(Preprocess(options).ok());
  EXPECT_FALSE(std::filesystem::exists(tmp.File("grid/meta")));
}

TEST(Preprocess, RejectsOutOfRangeAndNegativeIds) {
  for (TestEdge bad : {TestEdge{0, 10}, TestEdge{10, 0}, TestEdge{-1, 3}, TestEdge{3, -7}}) {
    TempDir tmp;
    TestGraph g{10, false, {{1, 2}, {3, 4}, bad, {5, 6}}};
    auto stats = RunPreprocess(tmp, g, 3, false);
    ASSERT_FALSE(stats.ok());
    EXPECT_NE(stats.error().message().find("edge 2 "), std::string::npos) << stats.error().message();
    EXPECT_NE(stats.error().message().find("must be in [0, 10)"), std::string::npos) << stats.error().message();
    EXPECT_FALSE(std::filesystem::exists(tmp.File("grid/meta")));
  }
}

TEST(Preprocess, RejectsBadParameters) {
  TempDir tmp;
  TestGraph g{10, false, {{1, 2}}};
  testing::WriteFile(tmp.File("edges"), EdgeBytes(g));
  PreprocessOptions base;
  base.input = tmp.File("edges");
  base.output_dir = tmp.File("grid");
  base.vertices = 10;
  base.partitions = 2;
  ASSERT_TRUE(Preprocess(base).ok());
  PreprocessOptions o = base;
  o.partitions = 0;
  EXPECT_FALSE(Preprocess(o).ok());
  o = base;
  o.vertices = 0;
  EXPECT_FALSE(Preprocess(o).ok());
  o = base;
  o.edge_type = 2;
  EXPECT_FALSE(Preprocess(o).ok());
  o = base;
  o.input = tmp.File("missing");
  EXPECT_FALSE(Preprocess(o).ok());
}

TEST(Preprocess, BinaryExitsNonZeroWithMessage) {
  TempDir tmp;
  TestGraph g{10, false, {{1, 2}, {9, 12}}};
  testing::WriteFile(tmp.File("edges"), EdgeBytes(g));
  const std::string base = testing::Bin("preprocess") + " -i " + tmp.File("edges") + " -o " + tmp.File("grid");
  auto bad = testing::RunCommand(base + " -v 10 -p 2 -t 0 2>&1");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("must be in [0, 10)"), std::string::npos) << bad.output;
  auto wrong_type = testing::RunCommand(base + " -v 13 -p 2 -t 1 2>&1");
  EXPECT_EQ(wrong_type.exit_code, 1);
  EXPECT_NE(wrong_type.output.find("not a multiple"), std::string::npos) << wrong_type.output;
  auto good = testing::RunCommand(base + " -v 13 -p 2 -t 0");
  EXPECT_EQ(good.exit_code, 0) << good.output;
  EXPECT_EQ(ReadFile(tmp.File("grid/meta")), "0 13 2 2");
  EXPECT_NE(testing::RunCommand(testing::Bin("preprocess") + " -i x 2>/dev/null").exit_code, 0);
}

TEST(GridLayout, OpensPreprocessedGraphAndDetectsInconsistency) {
  TempDir tmp;
  TestGraph g = testing::RandomGraph(30, 30, 200, true, 11);
  ASSERT_TRUE(RunPreprocess(tmp, g, 3, false).ok());
  auto layout = GridLayout::Open(tmp.File("grid"));
  ASSERT_TRUE(layout.ok()) << layout.error().message();
  EXPECT_EQ(layout->vertices(), 30u);
  EXPECT_EQ(layout->edges(), 200u);
  EXPECT_EQ(layout->partitions(), 3u);
  EXPECT_EQ(layout->edge_type(), EdgeType::kWeighted);
  uint64_t total = 0;
  for (uint64_t i = 0; i < 3; ++i) {
    for (uint64_t j = 0; j < 3; ++j) total += layout->BlockBytes(i, j);
  }
  EXPECT_EQ(total, 200u * 12);
  // A block whose size disagrees with the offsets is an error, not wrong answers.
  std::filesystem::resize_file(tmp.File("grid/block-1-2"), 0);
  std::filesystem::resize_file(tmp.File("grid/block-0-0"), 5);
  EXPECT_FALSE(GridLayout::Open(tmp.File("grid")).ok());
  testing::WriteFile(tmp.File("grid/meta"), "garbage");
  EXPECT_FALSE(GridLayout::Open(tmp.File("grid")).ok());
  EXPECT_FALSE(GridLayout::Open(tmp.File("nothing-here")).ok());
}

}  // namespace
}  // namespace graphfs::engine
