#include "chunkindex/source_runs.h"

#include <algorithm>

#include "chunkindex/coding.h"

namespace graphfs::chunkindex {

Result<SourceRuns> SourceRuns::Load(const ChunkTable& table, ChunkFile file) {
  SourceRuns r;
  r.edge_size_ = table.edge_size();
  const std::span<const Chunk> chunks = table.chunks(file);
  const std::span<const Chunk> contents = table.chunks(ChunkFile::kRow);  // content id = row chunk id
  std::vector<uint64_t> at(contents.size(), UINT64_MAX), block(contents.size(), 0), count(contents.size(), 0);
  GRAPHFS_RETURN_IF_ERROR(
      table.ForEachContentSources([&](uint64_t content, std::span<const SourceCount> sources) -> Status {
        if (!contents[content].sources_sorted) return Status::Ok();
        at[content] = r.storage_.size();
        block[content] = r.blocks_.size();
        count[content] = sources.size();
        r.Append(sources);
        return Status::Ok();
      }));
  r.storage_.shrink_to_fit();
  r.blocks_.shrink_to_fit();
  r.chunks_.resize(chunks.size());
  for (size_t id = 0; id < chunks.size(); ++id) {
    const Chunk& c = chunks[id];
    Entry& e = r.chunks_[id];
    e.length = c.length;
    e.sources = c.num_sources;
    if (c.content < at.size() && at[c.content] != UINT64_MAX) {
      e.at = at[c.content];
      e.block = block[c.content];
      e.sources = static_cast<uint32_t>(count[c.content]);  // what its blocks were built from
      e.sorted = true;
      ++r.sorted_chunks_;
    }
  }
  r.memory_ = r.storage_.size() + r.blocks_.size() * sizeof(Block) + r.chunks_.size() * sizeof(Entry);
  return r;
}

void SourceRuns::Append(std::span<const SourceCount> sources) {
  const uint64_t start = storage_.size();
  uint32_t previous = 0;
  uint64_t at = 0;
  for (size_t k = 0; k < sources.size(); ++k) {
    const SourceCount& s = sources[k];
    if (k % kBlockSources == 0) blocks_.push_back({previous, static_cast<uint32_t>(storage_.size() - start), at});
    PutVarint(&storage_, s.vertex - previous);  // the first one is the id itself
    PutVarint(&storage_, s.edges);
    previous = s.vertex;
    at += s.edges * edge_size_;
  }
  blocks_.push_back({previous, static_cast<uint32_t>(storage_.size() - start), at});  // closing
}

SourceRuns SourceRuns::FromChunks(uint64_t edge_size, const std::vector<ChunkSources>& chunks) {
  SourceRuns r;
  r.edge_size_ = edge_size;
  r.chunks_.resize(chunks.size());
  for (size_t id = 0; id < chunks.size(); ++id) {
    Entry& e = r.chunks_[id];
    e.length = chunks[id].length;
    e.sources = static_cast<uint32_t>(chunks[id].sources.size());
    if (chunks[id].sources.empty()) continue;
    e.at = r.storage_.size();
    e.block = r.blocks_.size();
    e.sorted = true;
    r.Append(chunks[id].sources);
    ++r.sorted_chunks_;
  }
  r.memory_ = r.storage_.size() + r.blocks_.size() * sizeof(Block) + r.chunks_.size() * sizeof(Entry);
  return r;
}

namespace {

// The records were validated when loaded: a plain LEB128 read.
inline uint64_t NextVarint(const uint8_t*& p) {
  uint64_t v = *p & 0x7f;
  if ((*p++ & 0x80) == 0) return v;
  for (int shift = 7;; shift += 7) {
    v |= static_cast<uint64_t>(*p & 0x7f) << shift;
    if ((*p++ & 0x80) == 0) return v;
  }
}

inline bool Bit(const uint64_t* words, uint64_t v) { return (words[v >> 6] >> (v & 63)) & 1; }

// Whether any bit in [lo, hi] (inclusive) is set.
inline bool AnyBit(const uint64_t* words, uint64_t lo, uint64_t hi) {
  const uint64_t first = lo >> 6, last = hi >> 6;
  const uint64_t low_mask = ~uint64_t{0} << (lo & 63);
  const uint64_t high_mask = ~uint64_t{0} >> (63 - (hi & 63));
  if (first == last) return (words[first] & low_mask & high_mask) != 0;
  if ((words[first] & low_mask) != 0 || (words[last] & high_mask) != 0) return true;
  for (uint64_t w = first + 1; w < last; ++w)
    if (words[w] != 0) return true;
  return false;
}

}  // namespace

void SourceRuns::ActiveRuns(uint64_t chunk, std::span<const uint64_t* const> bitmaps, std::vector<ByteRun>* out) const {
  out->clear();
  if (chunk >= chunks_.size()) return;
  const Entry& e = chunks_[chunk];
  if (bitmaps.empty()) return;
  bool everything = false;
  for (const uint64_t* b : bitmaps) everything |= b == nullptr;
  if (!e.sorted || everything) {
    out->push_back({0, e.length});
    return;
  }
  const uint8_t* const base = reinterpret_cast<const uint8_t*>(storage_.data()) + e.at;
  const uint64_t blocks = (e.sources + kBlockSources - 1) / kBlockSources;
  for (uint64_t b = 0; b < blocks; ++b) {
    const Block& block = blocks_[e.block + b];
    const Block& next = blocks_[e.block + b + 1];  // the closing block after the last
    // The block's sources lie in [before, next.before] (the first block's may start at 0).
    bool any = false;
    for (const uint64_t* bits : bitmaps) {
      if (AnyBit(bits, block.before, next.before)) {
        any = true;
        break;
      }
    }
    if (!any) continue;
    const uint8_t* p = base + block.storage;
    uint64_t v = block.before, at = block.at;
    const uint32_t in_block = static_cast<uint32_t>(std::min<uint64_t>(kBlockSources, e.sources - b * kBlockSources));
    for (uint32_t k = 0; k < in_block; ++k) {
      v += NextVarint(p);
      const uint64_t length = NextVarint(p) * edge_size_;
      bool active = false;
      for (const uint64_t* bits : bitmaps) {
        if (Bit(bits, v)) {
          active = true;
          break;
        }
      }
      if (active) {
        if (!out->empty() && out->back().end() == at) {
          out->back().length += length;
        } else {
          out->push_back({at, length});
        }
      }
      at += length;
    }
  }
}

}  // namespace graphfs::chunkindex
