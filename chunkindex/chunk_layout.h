// Cutting a partition file (`column` or `row`) into chunks: same-sized,
// edge-aligned, never across a block boundary. A block of B bytes becomes
// ceil(B / |C|) chunks, all |C| long but the last; an empty block has none.
//
// Column and row hold the same blocks byte for byte (only their order
// differs), so chunk (i, j, k) has the same bytes in both files. Each such
// piece has one *content id*: its position in `row` order. Column chunks
// point at their content; summaries (sources, counts) are stored once.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"

namespace graphfs::grid {
class GridLayout;
}

namespace graphfs::chunkindex {

struct BlockSpan {
  uint32_t i = 0, j = 0;
  uint64_t begin = 0, end = 0;  // byte range inside the partition file
};

struct ChunkExtent {
  uint64_t offset = 0;
  uint64_t length = 0;
  uint32_t block_i = 0, block_j = 0;
  uint64_t content = 0;  // set by PlanChunks
};

// Cuts blocks given in file order. Fails if the chunk size is not a positive
// multiple of the edge size, or a block is not edge-aligned.
Result<std::vector<ChunkExtent>> CutBlocks(const std::vector<BlockSpan>& blocks, uint64_t chunk_size,
                                           uint64_t edge_size);

struct ChunkPlan {
  uint64_t chunk_size = 0;
  uint64_t partitions = 0;
  std::vector<ChunkExtent> row;     // content id == index
  std::vector<ChunkExtent> column;  // in column order, content ids into `row`
  std::vector<uint64_t> block_first_content;  // i*P+j -> first content id; P*P+1 entries
};

Result<ChunkPlan> PlanChunks(const grid::GridLayout& layout, uint64_t chunk_size);

}  // namespace graphfs::chunkindex
