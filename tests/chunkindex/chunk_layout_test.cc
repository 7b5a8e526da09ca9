// Chunk boundaries and the chunk size formula.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "chunkindex/chunk_layout.h"
#include "chunkindex/chunk_size.h"

namespace graphfs::chunkindex {
namespace {

std::vector<ChunkExtent> Cut(const std::vector<BlockSpan>& blocks, uint64_t chunk, uint64_t es) {
  auto r = CutBlocks(blocks, chunk, es);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? *r : std::vector<ChunkExtent>{};
}

TEST(CutBlocks, SameSizedEdgeAlignedAndShorterLastChunkPerBlock) {
  // Block (0,0): 100 edges, block (0,1): 30 edges, chunk = 40 edges.
  auto c = Cut({{0, 0, 0, 800}, {0, 1, 800, 1040}}, 320, 8);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].offset, 0u);
  EXPECT_EQ(c[0].length, 320u);
  EXPECT_EQ(c[1].offset, 320u);
  EXPECT_EQ(c[2].offset, 640u);
  EXPECT_EQ(c[2].length, 160u);  // the block's last chunk is shorter...
  EXPECT_EQ(c[3].offset, 800u);  // ...and the next block starts a new chunk
  EXPECT_EQ(c[3].length, 240u);  // a block smaller than a chunk is one chunk
  EXPECT_EQ(c[3].block_j, 1u);
}

TEST(CutBlocks, NeverCrossesABlockAndCoversEveryByte) {
  std::vector<BlockSpan> blocks;
  uint64_t off = 0;
  const uint64_t sizes[] = {0, 12, 0, 0, 1200, 12 * 37, 0, 12 * 1000, 12};
  for (uint32_t k = 0; k < std::size(sizes); ++k) {
    blocks.push_back({k / 3, k % 3, off, off + sizes[k]});
    off += sizes[k];
  }
  for (uint64_t chunk : {12u, 24u, 120u, 1188u, 12000u, 1200000u}) {
    auto c = Cut(blocks, chunk, 12);
    uint64_t pos = 0;
    for (const ChunkExtent& e : c) {
      EXPECT_EQ(e.offset, pos);
      EXPECT_GT(e.length, 0u) << "empty blocks have no chunks";
      EXPECT_LE(e.length, chunk);
      EXPECT_EQ(e.offset % 12, 0u);
      EXPECT_EQ(e.length % 12, 0u);
      const BlockSpan& b = blocks[e.block_i * 3 + e.block_j];
      EXPECT_GE(e.offset, b.begin);
      EXPECT_LE(e.offset + e.length, b.end) << "chunk crosses the end of its block";
      // Only a block's last chunk may be short.
      if (e.offset + e.length != b.end) {
        EXPECT_EQ(e.length, chunk);
      }
      pos += e.length;
    }
    EXPECT_EQ(pos, off);
  }
}

TEST(CutBlocks, EmptyAndSingleBlock) {
  EXPECT_TRUE(Cut({{0, 0, 0, 0}}, 8, 8).empty());
  auto c = Cut({{0, 0, 0, 8 * 10}}, 8 * 3, 8);  // P = 1
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c.back().length, 8u);
}

TEST(CutBlocks, RefusesMisalignedSizes) {
  EXPECT_FALSE(CutBlocks({{0, 0, 0, 96}}, 100, 12).ok()) << "chunk not a multiple of the edge";
  EXPECT_FALSE(CutBlocks({{0, 0, 0, 100}}, 96, 12).ok()) << "block not edge-aligned";
  EXPECT_FALSE(CutBlocks({{0, 0, 0, 96}}, 0, 12).ok());
}

TEST(ChunkSize, FormulaGivesTheLargestFittingMultipleOfTheEdge) {
  ChunkSizeInputs in;
  in.llc_bytes = 32ull << 20;
  in.cores = 2;
  in.graph_bytes = 512ull << 20;
  in.vertices = 4ull << 20;
  in.edge_size = 12;
  ChunkSizeChoice c = ChooseChunkSize(in);
  EXPECT_FALSE(c.floored);
  EXPECT_EQ(c.bytes % 12, 0u);
  EXPECT_EQ(c.reserved, in.llc_bytes / 8);
  auto lhs = [&](double size) {
    return size * in.cores + size * in.cores / static_cast<double>(in.graph_bytes) * in.vertices * 8 + c.reserved;
  };
  EXPECT_LE(lhs(static_cast<double>(c.bytes)), static_cast<double>(in.llc_bytes));
  EXPECT_GT(lhs(static_cast<double>(c.bytes + 12)), static_cast<double>(in.llc_bytes)) << "not the largest";
  EXPECT_NE(c.explanation.find("32 MiB"), std::string::npos) << c.explanation;
}

TEST(ChunkSize, TinyResultsAreRaisedToTheFloor) {
  ChunkSizeInputs in;
  in.llc_bytes = 1 << 20;
  in.cores = 64;
  in.graph_bytes = 1 << 20;
  in.vertices = 1 << 20;  // vertex values dwarf the graph
  in.edge_size = 12;
  ChunkSizeChoice c = ChooseChunkSize(in);
  EXPECT_TRUE(c.floored);
  EXPECT_EQ(c.bytes, (kMinChunkBytes + 11) / 12 * 12);
  EXPECT_NE(c.explanation.find("floor"), std::string::npos);
}

TEST(ChunkSize, OverrideIsRoundedDownToTheEdge) {
  ChunkSizeChoice c = OverrideChunkSize(1000, 12);
  EXPECT_EQ(c.bytes, 996u);
  EXPECT_TRUE(c.overridden);
  EXPECT_NE(c.explanation.find("rounded"), std::string::npos);
  EXPECT_EQ(OverrideChunkSize(5, 12).bytes, 12u) << "at least one edge";
  EXPECT_EQ(OverrideChunkSize(4096, 8).bytes, 4096u);
}

TEST(ChunkSize, ProbesSysfsLikeTree) {
  const std::string root = std::filesystem::temp_directory_path() / ("chunkindex-sysfs-" + std::to_string(::getpid()));
  auto put = [&](const std::string& rel, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(root + rel).parent_path());
    std::ofstream(root + rel) << text << "\n";
  };
  put("/cache/index0/level", "1");
  put("/cache/index0/type", "Data");
  put("/cache/index0/size", "48K");
  put("/cache/index1/level", "1");
  put("/cache/index1/type", "Instruction");
  put("/cache/index1/size", "32K");
  put("/cache/index3/level", "3");
  put("/cache/index3/type", "Unified");
  put("/cache/index3/size", "36864K");
  MachineCache m = ProbeMachine(root);
  EXPECT_EQ(m.llc_bytes, 36864ull << 10);
  EXPECT_GE(m.cores, 1);
  std::filesystem::remove_all(root);
  MachineCache none = ProbeMachine("/nonexistent-cpu");
  EXPECT_GT(none.llc_bytes, 0u) << "falls back to sysconf or a default";
}

}  // namespace
}  // namespace graphfs::chunkindex
