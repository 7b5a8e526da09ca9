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
  // Keeps, per source-sorted chunk of `file`, where each source's edges lie: as a bitmap of its
  // sources with a count byte each, or as (id gap, edge count) varint pairs (the forms below).
  // `forms`: each chunk's form chosen by their sizes, or every chunk in one form (for measuring
  // one against the other: chunkindex-bench --runs).
  enum class Forms { kChosen, kList, kBitmap };
  static Result<SourceRuns> Load(const ChunkTable& table, ChunkFile file, Forms forms = Forms::kChosen);
  // The same from explicit chunks (tests, tools): per chunk its length in bytes and, when its
  // edges are in source order, its sources and counts (ascending; empty: not sorted).
  struct ChunkSources {
    uint64_t length = 0;
    std::vector<SourceCount> sources;
  };
  static SourceRuns FromChunks(uint64_t edge_size, const std::vector<ChunkSources>& chunks);

  uint64_t chunk_count() const { return chunks_.size(); }
  bool sorted(uint64_t chunk) const { return chunk < chunks_.size() && chunks_[chunk].form != Form::kUnsorted; }
  uint64_t sorted_chunks() const { return sorted_chunks_; }
  // Sorted chunks kept in the bitmap form (below); the rest of the sorted ones are in the list form.
  uint64_t bitmap_chunks() const { return bitmap_chunks_; }
  uint64_t memory_bytes() const { return memory_; }
  uint64_t edge_size() const { return edge_size_; }

  // Replaces `out` with the byte runs of chunk `chunk` (from its start; ascending, disjoint,
  // never touching: consecutive active sources make one run) holding the edges of the sources
  // active in at least one of `bitmaps` (bit v = words[v / 64] >> (v % 64) & 1; a null bitmap
  // means every vertex). An unsorted chunk gives one run: the whole chunk.
  void ActiveRuns(uint64_t chunk, std::span<const uint64_t* const> bitmaps, std::vector<ByteRun>* out) const;

 private:
  friend struct BitmapRunsKernel;  // the bitmap form's loop, compiled per CPU (source_runs.cc)
  // A sorted chunk is kept in one of two forms, the bitmap form unless it takes more than
  // kBitmapMemoryShare of the list form's memory:
  //
  // - the bitmap form, for chunks whose sources fill their id range densely (most chunks of
  //   R-MAT and road graphs): per 64-id word of [min source, max source] the word of sources it
  //   holds, how many sources and edges come before it; per source its edge count in a byte
  //   (kEscape: the count is in the chunk's escapes, by rank — a hub's). An active set is ANDed
  //   with the words, so words without an active source cost one AND, and a word with some costs
  //   a sum of its sources' counts up to each of them — no varint is decoded. Cutting runs was a
  //   fifth of the daemon's CPU with everything cached (docs/memory-as-cache.md), most of it
  //   decoding the (gap, count) pairs of blocks a sparse set touched a few ids of.
  // - the list form, for chunks whose sources are far apart: (id gap, edge count) varint pairs
  //   (2–3 bytes a source) with a block entry every kBlockSources sources, so that a block whose
  //   id range holds no active bit is skipped without decoding it.
  enum class Form : uint8_t { kUnsorted, kList, kBitmap };
  static constexpr double kBitmapMemoryShare = 1.5;
  static constexpr uint32_t kBlockSources = 64;
  struct Block {
    uint32_t before = 0;   // the id of the source before the block's first (0 for the first block)
    uint32_t storage = 0;  // where its pairs start, from the chunk's Entry::at
    uint64_t at = 0;       // its first edge's byte offset in the chunk
  };
  struct Word {
    uint64_t sources = 0;  // bit b: vertex 64 (first_word + k) + b is a source of the chunk
    uint32_t rank = 0;     // the chunk's sources before this word
    uint32_t edges = 0;    // their edges
  };
  static constexpr uint8_t kEscape = 0xff;
  struct Escape {
    uint32_t rank = 0;   // the source's rank in its chunk
    uint32_t edges = 0;  // its count (kEscape or more)
  };
  struct Entry {
    uint64_t length = 0;   // the chunk's bytes
    uint64_t at = 0;       // list: its pairs in storage_; bitmap: its counts in storage_
    uint64_t first = 0;    // list: its first block in blocks_; bitmap: its first word in words_
    uint64_t escapes = 0;  // bitmap: its first escape in escapes_ (they end where the next chunk's start)
    uint32_t sources = 0;
    uint32_t words = 0;       // bitmap: its words, for ids from 64 first_word on
    uint32_t first_word = 0;  // bitmap: min source / 64
    uint32_t escape_count = 0;  // bitmap
    Form form = Form::kUnsorted;
  };
  // Sets `e` up for `sources` (ascending) in the form `forms` gives, appending to the storage.
  void Append(std::span<const SourceCount> sources, Forms forms, Entry* e);
  void AppendList(std::span<const SourceCount> sources, Entry* e);
  void AppendBitmap(std::span<const SourceCount> sources, Entry* e);
  void ListRuns(const Entry& e, std::span<const uint64_t* const> bitmaps, std::vector<ByteRun>* out) const;
  void BitmapRuns(const Entry& e, std::span<const uint64_t* const> bitmaps, std::vector<ByteRun>* out) const;
  void Account();

  std::vector<Entry> chunks_;  // per chunk of the file
  std::string storage_;        // list chunks' (id gap, count) pairs, bitmap chunks' count bytes
  std::vector<Block> blocks_;  // list chunks' blocks, one chunk after another
  std::vector<Word> words_;    // bitmap chunks' words, one chunk after another
  std::vector<Escape> escapes_;  // bitmap chunks' counts of kEscape or more, one chunk after another
  uint64_t sorted_chunks_ = 0;
  uint64_t bitmap_chunks_ = 0;
  uint64_t memory_ = 0;
  uint64_t edge_size_ = 8;
};

}  // namespace graphfs::chunkindex
