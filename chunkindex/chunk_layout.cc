#include "chunkindex/chunk_layout.h"

#include "grid/grid_layout.h"

namespace graphfs::chunkindex {

Result<std::vector<ChunkExtent>> CutBlocks(const std::vector<BlockSpan>& blocks, uint64_t chunk_size,
                                           uint64_t edge_size) {
  if (edge_size == 0 || chunk_size == 0 || chunk_size % edge_size != 0) {
    return Error(EINVAL, "chunk size " + std::to_string(chunk_size) + " is not a positive multiple of the " +
                             std::to_string(edge_size) + "-byte edge");
  }
  std::vector<ChunkExtent> chunks;
  for (const BlockSpan& b : blocks) {
    if (b.end < b.begin || b.begin % edge_size != 0 || b.end % edge_size != 0) {
      return Error(EINVAL, "block (" + std::to_string(b.i) + "," + std::to_string(b.j) + ") at bytes " +
                               std::to_string(b.begin) + ".." + std::to_string(b.end) + " is not edge-aligned");
    }
    for (uint64_t off = b.begin; off < b.end; off += chunk_size) {
      ChunkExtent c;
      c.offset = off;
      c.length = std::min(chunk_size, b.end - off);
      c.block_i = b.i;
      c.block_j = b.j;
      chunks.push_back(c);
    }
  }
  return chunks;
}

Result<ChunkPlan> PlanChunks(const grid::GridLayout& layout, uint64_t chunk_size) {
  const uint64_t p = layout.partitions();
  std::vector<BlockSpan> row_blocks, column_blocks;
  row_blocks.reserve(p * p);
  column_blocks.reserve(p * p);
  for (uint64_t i = 0; i < p; ++i) {
    for (uint64_t j = 0; j < p; ++j) {
      row_blocks.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(j),
                            layout.BlockBegin(grid::EdgeOrder::kRow, i, j),
                            layout.BlockEnd(grid::EdgeOrder::kRow, i, j)});
    }
  }
  for (uint64_t j = 0; j < p; ++j) {
    for (uint64_t i = 0; i < p; ++i) {
      column_blocks.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(j),
                               layout.BlockBegin(grid::EdgeOrder::kColumn, i, j),
                               layout.BlockEnd(grid::EdgeOrder::kColumn, i, j)});
    }
  }
  auto row = CutBlocks(row_blocks, chunk_size, layout.edge_size());
  if (!row.ok()) return row.error();
  auto column = CutBlocks(column_blocks, chunk_size, layout.edge_size());
  if (!column.ok()) return column.error();

  ChunkPlan plan;
  plan.chunk_size = chunk_size;
  plan.partitions = p;
  plan.row = std::move(*row);
  plan.column = std::move(*column);
  plan.block_first_content.assign(p * p + 1, 0);
  // Row chunks are already in content order; count chunks per block.
  for (uint64_t id = 0; id < plan.row.size(); ++id) {
    ChunkExtent& c = plan.row[id];
    c.content = id;
    plan.block_first_content[c.block_i * p + c.block_j + 1]++;
  }
  for (uint64_t b = 0; b < p * p; ++b) plan.block_first_content[b + 1] += plan.block_first_content[b];
  for (ChunkExtent& c : plan.column) {
    uint64_t block = c.block_i * p + c.block_j;
    uint64_t k = (c.offset - layout.BlockBegin(grid::EdgeOrder::kColumn, c.block_i, c.block_j)) / chunk_size;
    c.content = plan.block_first_content[block] + k;
  }
  return plan;
}

}  // namespace graphfs::chunkindex
