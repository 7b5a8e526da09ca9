// ExpectMatchesFiles: everything a ChunkTable says, checked against the graph's files.
#pragma once

#include <gtest/gtest.h>

#include "chunkindex/chunk_index.h"
#include "chunkindex_test_util.h"

namespace graphfs::chunkindex::testing {

inline void ExpectMatchesFiles(const std::string& dir, const ChunkTable& t) {
  Reference ref;
  ASSERT_EQ(ref.Load(dir), "");
  EXPECT_EQ(t.vertices(), ref.vertices);
  EXPECT_EQ(t.edge_size(), ref.edge_size);
  const uint64_t cs = t.chunk_size();
  EXPECT_EQ(cs % ref.edge_size, 0u);
  for (bool col : {true, false}) {
    SCOPED_TRACE(col ? "column" : "row");
    auto chunks = t.chunks(col ? ChunkFile::kColumn : ChunkFile::kRow);
    uint64_t pos = 0;
    std::map<std::pair<uint64_t, uint64_t>, uint64_t> per_block;
    for (uint64_t id = 0; id < chunks.size(); ++id) {
      const Chunk& c = chunks[id];
      EXPECT_EQ(c.id, id);
      EXPECT_EQ(c.offset, pos) << "chunks must tile the file";
      pos = c.offset + c.length;
      auto [b, e] = ref.Block(col, c.block_i, c.block_j);
      ASSERT_GE(c.offset, b);
      ASSERT_LE(c.offset + c.length, e) << "chunk " << id << " crosses its block";
      EXPECT_EQ((c.offset - b) % cs, 0u) << "chunks start every chunk-size bytes within a block";
      if (c.offset + c.length != e) {
        EXPECT_EQ(c.length, cs);
      }
      EXPECT_EQ(c.length % ref.edge_size, 0u);
      per_block[{c.block_i, c.block_j}]++;
      // Contents.
      auto want = ref.Sources(col, c.offset, c.offset + c.length);
      auto got = t.Sources(c.file, id);
      ASSERT_TRUE(got.ok()) << got.error().message();
      ASSERT_EQ(got->size(), want.size());
      size_t k = 0;
      uint64_t deg_sum = 0;
      for (auto [v, n] : want) {
        EXPECT_EQ((*got)[k].vertex, v);
        EXPECT_EQ((*got)[k].edges, n);
        deg_sum += ref.degree[v];
        ++k;
      }
      EXPECT_EQ(c.edge_count, c.length / ref.edge_size);
      EXPECT_EQ(c.num_sources, want.size());
      EXPECT_EQ(c.min_source, want.begin()->first);
      EXPECT_EQ(c.max_source, want.rbegin()->first);
      EXPECT_EQ(c.source_degree_sum, deg_sum);
      // Same content id, same bytes.
      const Chunk& r = t.chunks(ChunkFile::kRow)[c.content];
      EXPECT_EQ(ref.File(col).compare(c.offset, c.length, ref.row, r.offset, r.length), 0);
      const Chunk* found = t.FindByOffset(c.file, c.offset + c.length - 1);
      ASSERT_NE(found, nullptr);
      EXPECT_EQ(found->id, id);
    }
    EXPECT_EQ(pos, ref.File(col).size());
    EXPECT_EQ(t.FindByOffset(col ? ChunkFile::kColumn : ChunkFile::kRow, pos), nullptr);
    for (uint64_t i = 0; i < ref.p; ++i) {
      for (uint64_t j = 0; j < ref.p; ++j) {
        auto [b, e] = ref.Block(col, i, j);
        EXPECT_EQ((per_block[{i, j}]), (e - b + cs - 1) / cs) << "block " << i << "," << j;
      }
    }
  }
  auto degrees = t.Degrees();
  ASSERT_TRUE(degrees.ok()) << degrees.error().message();
  EXPECT_EQ(*degrees, ref.degree);
  EXPECT_TRUE(t.DeepCheck().ok());
}

}  // namespace graphfs::chunkindex::testing
