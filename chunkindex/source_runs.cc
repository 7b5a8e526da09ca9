#include "chunkindex/source_runs.h"

#include "chunkindex/coding.h"

namespace graphfs::chunkindex {

Result<SourceRuns> SourceRuns::Load(const ChunkTable& table, ChunkFile file) {
  SourceRuns r;
  r.edge_size_ = table.edge_size();
  const std::span<const Chunk> chunks = table.chunks(file);
  const std::span<const Chunk> contents = table.chunks(ChunkFile::kRow);  // content id = row chunk id
  r.storage_.resize(contents.size());
  GRAPHFS_RETURN_IF_ERROR(
      table.ForEachContentSources([&](uint64_t content, std::span<const SourceCount> sources) -> Status {
        if (!contents[content].sources_sorted) return Status::Ok();
        std::string& out = r.storage_[content];
        uint32_t previous = 0;
        for (const SourceCount& s : sources) {
          PutVarint(&out, s.vertex - previous);  // the first one is the id itself
          PutVarint(&out, s.edges);
          previous = s.vertex;
        }
        out.shrink_to_fit();
        r.memory_ += out.size();
        return Status::Ok();
      }));
  r.chunks_.resize(chunks.size());
  for (size_t id = 0; id < chunks.size(); ++id) {
    const Chunk& c = chunks[id];
    Entry& e = r.chunks_[id];
    e.length = c.length;
    e.sources = c.num_sources;
    if (c.sources_sorted && c.content < r.storage_.size() && !r.storage_[c.content].empty()) {
      e.bytes = reinterpret_cast<const uint8_t*>(r.storage_[c.content].data());
      ++r.sorted_chunks_;
    }
  }
  r.memory_ += r.chunks_.size() * sizeof(Entry);
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
  if (e.bytes == nullptr || everything) {
    out->push_back({0, e.length});
    return;
  }
  const uint8_t* p = e.bytes;
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
