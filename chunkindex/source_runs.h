// Where each source's edges lie in the source-sorted chunks of a partition file: the
// index's sources and counts of a chunk (chunkindex/README.md, the `S` records) give, for
// a chunk whose edges come in source order, the byte offset of every source's edges.
// That turns an active set into the exact byte runs of a chunk worth loading.
//
//   auto runs = SourceRuns::Load(table, ChunkFile::kColumn);   // once per graph
//   std::vector<ByteRun> out;
//   runs->ActiveRuns(chunk_id, {bitmap_a, bitmap_b}, &out);    // runs active in either
//
// Chunks whose edges are not in source order (blocks preprocessed without
// --sort-sources) have no runs: sorted(chunk) is false, and readers load them whole.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "chunkindex/chunk_index.h"
#include "chunkindex/read_cost.h"
#include "common/result.h"

namespace graphfs::chunkindex {

class SourceRuns {
 public:
  // Keeps, per source-sorted chunk of `file`, its sources and counts as (id gap, edge count)
  // varint pairs: about 2–3 bytes per (chunk, source) pair, and a block entry per 64 sources.
  static Result<SourceRuns> Load(const ChunkTable& table, ChunkFile file);
  // The same from explicit chunks (tests, tools): per chunk its length in bytes and, when its
  // edges are in source order, its sources and counts (ascending; empty: not sorted).
  struct ChunkSources {
    uint64_t length = 0;
    std::vector<SourceCount> sources;
  };
  static SourceRuns FromChunks(uint64_t edge_size, const std::vector<ChunkSources>& chunks);

  uint64_t chunk_count() const { return chunks_.size(); }
  bool sorted(uint64_t chunk) const { return chunk < chunks_.size() && chunks_[chunk].sorted; }
  uint64_t sorted_chunks() const { return sorted_chunks_; }
  uint64_t memory_bytes() const { return memory_; }
  uint64_t edge_size() const { return edge_size_; }

  // Replaces `out` with the byte runs of chunk `chunk` (from its start; ascending, disjoint,
  // never touching: consecutive active sources make one run) holding the edges of the sources
  // active in at least one of `bitmaps` (bit v = words[v / 64] >> (v % 64) & 1; a null bitmap
  // means every vertex). An unsorted chunk gives one run: the whole chunk.
  void ActiveRuns(uint64_t chunk, std::span<const uint64_t* const> bitmaps, std::vector<ByteRun>* out) const;

 private:
  // Every kBlockSources sources of a sorted chunk start a block that ActiveRuns can skip
  // without decoding it when no bitmap has a bit in its id range: a sparse job's runs cost
  // the blocks its active sources lie in, not every source of the chunk (cutting runs for
  // BFS/SSSP frontiers was 5% of the machine at scale 22 before, decoding 2–3 bytes per source).
  static constexpr uint32_t kBlockSources = 64;
  struct Block {
    uint32_t before = 0;   // the id of the source before the block's first (0 for the first block)
    uint32_t storage = 0;  // where its pairs start, from the chunk's Entry::at
    uint64_t at = 0;       // its first edge's byte offset in the chunk
  };
  // Appends `sources` as (id gap, count) pairs to storage_ and their blocks (plus one closing
  // block: `before` = the last source, `at` = the chunk's edge bytes) to blocks_.
  void Append(std::span<const SourceCount> sources);
  struct Entry {
    uint64_t at = 0;       // its encoded sources in storage_
    uint64_t length = 0;   // the chunk's bytes
    uint64_t block = 0;    // its first block in blocks_
    uint32_t sources = 0;
    bool sorted = false;
  };
  std::vector<Entry> chunks_;  // per chunk of the file
  std::string storage_;        // every sorted content's (id gap, count) pairs, one after another
  std::vector<Block> blocks_;  // every sorted content's blocks, one content after another
  uint64_t sorted_chunks_ = 0;
  uint64_t memory_ = 0;
  uint64_t edge_size_ = 8;
};

}  // namespace graphfs::chunkindex
