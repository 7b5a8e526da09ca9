#include "chunkindex/source_runs.h"

#include "chunkindex/coding.h"

namespace graphfs::chunkindex {

Result<SourceRuns> SourceRuns::Load(const ChunkTable& table, ChunkFile file) {
  SourceRuns r;
  r.edge_size_ = table.edge_size();
  const std::span<const Chunk> chunks = table.chunks(file);
  const std::span<const Chunk> contents = table.chunks(ChunkFile::kRow);  // content id = row chunk id
  std::vector<uint64_t> at(contents.size(), UINT64_MAX);
  GRAPHFS_RETURN_IF_ERROR(
      table.ForEachContentSources([&](uint64_t content, std::span<const SourceCount> sources) -> Status {
        if (!contents[content].sources_sorted) return Status::Ok();
        at[content] = r.storage_.size();
        Encode(sources, &r.storage_);
        return Status::Ok();
      }));
  r.storage_.shrink_to_fit();
  r.chunks_.resize(chunks.size());
  for (size_t id = 0; id < chunks.size(); ++id) {
    const Chunk& c = chunks[id];
    Entry& e = r.chunks_[id];
    e.length = c.length;
    e.sources = c.num_sources;
    if (c.content < at.size() && at[c.content] != UINT64_MAX) {
      e.at = at[c.content];
      e.sorted = true;
      ++r.sorted_chunks_;
    }
  }
  r.memory_ = r.storage_.size() + r.chunks_.size() * sizeof(Entry);
  return r;
}

void SourceRuns::Encode(std::span<const SourceCount> sources, std::string* out) {
  uint32_t previous = 0;
  for (const SourceCount& s : sources) {
    PutVarint(out, s.vertex - previous);  // the first one is the id itself
    PutVarint(out, s.edges);
    previous = s.vertex;
  }
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
    e.sorted = true;
    Encode(chunks[id].sources, &r.storage_);
    ++r.sorted_chunks_;
  }
  r.memory_ = r.storage_.size() + r.chunks_.size() * sizeof(Entry);
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
  const uint8_t* p = reinterpret_cast<const uint8_t*>(storage_.data()) + e.at;
  uint64_t v = 0, at = 0;
  for (uint32_t k = 0; k < e.sources; ++k) {
    v += NextVarint(p);
    const uint64_t length = NextVarint(p) * edge_size_;
    bool active = false;
    for (const uint64_t* b : bitmaps) {
      if (Bit(b, v)) {
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

}  // namespace graphfs::chunkindex
