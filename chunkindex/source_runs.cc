#include "chunkindex/source_runs.h"

#include <algorithm>

#include "chunkindex/coding.h"

namespace graphfs::chunkindex {

Result<SourceRuns> SourceRuns::Load(const ChunkTable& table, ChunkFile file, Forms forms) {
  SourceRuns r;
  r.edge_size_ = table.edge_size();
  const std::span<const Chunk> chunks = table.chunks(file);
  const std::span<const Chunk> contents = table.chunks(ChunkFile::kRow);  // content id = row chunk id
  std::vector<Entry> of_content(contents.size());
  GRAPHFS_RETURN_IF_ERROR(
      table.ForEachContentSources([&](uint64_t content, std::span<const SourceCount> sources) -> Status {
        if (!contents[content].sources_sorted || sources.empty()) return Status::Ok();
        r.Append(sources, forms, &of_content[content]);
        return Status::Ok();
      }));
  r.chunks_.resize(chunks.size());
  for (size_t id = 0; id < chunks.size(); ++id) {
    const Chunk& c = chunks[id];
    Entry& e = r.chunks_[id];
    if (c.content < of_content.size()) e = of_content[c.content];
    if (e.form == Form::kUnsorted) e.sources = c.num_sources;
    e.length = c.length;
  }
  r.Account();
  return r;
}

SourceRuns SourceRuns::FromChunks(uint64_t edge_size, const std::vector<ChunkSources>& chunks) {
  SourceRuns r;
  r.edge_size_ = edge_size;
  r.chunks_.resize(chunks.size());
  for (size_t id = 0; id < chunks.size(); ++id) {
    Entry& e = r.chunks_[id];
    if (!chunks[id].sources.empty()) r.Append(chunks[id].sources, Forms::kChosen, &e);
    e.sources = static_cast<uint32_t>(chunks[id].sources.size());
    e.length = chunks[id].length;
  }
  r.Account();
  return r;
}

void SourceRuns::Account() {
  storage_.shrink_to_fit();
  blocks_.shrink_to_fit();
  words_.shrink_to_fit();
  escapes_.shrink_to_fit();
  sorted_chunks_ = bitmap_chunks_ = 0;
  for (const Entry& e : chunks_) {
    sorted_chunks_ += e.form != Form::kUnsorted;
    bitmap_chunks_ += e.form == Form::kBitmap;
  }
  memory_ = storage_.size() + blocks_.size() * sizeof(Block) + words_.size() * sizeof(Word) +
            escapes_.size() * sizeof(Escape) +
            chunks_.size() * sizeof(Entry);
}

void SourceRuns::Append(std::span<const SourceCount> sources, Forms forms, Entry* e) {
  // The list form's size is its varints and blocks; the bitmap form's its words, count bytes
  // and escapes.
  uint64_t list_bytes = (sources.size() / kBlockSources + 2) * sizeof(Block), escapes = 0, edges = 0;
  uint32_t previous = 0;
  for (const SourceCount& s : sources) {
    list_bytes += VarintLength(s.vertex - previous) + VarintLength(s.edges);
    previous = s.vertex;
    escapes += s.edges >= kEscape;
    edges += s.edges;
  }
  const uint64_t words = sources.back().vertex / 64 - sources.front().vertex / 64 + 1;
  const uint64_t bitmap_bytes = words * sizeof(Word) + sources.size() + escapes * sizeof(Escape);
  // Per-word ranks and edge offsets are 32-bit: a chunk's edges always fit (chunks are MiBs).
  // The bitmap form cuts sparse and clustered sets 1.4–5x faster (chunkindex-bench --runs): it
  // is taken up to kBitmapMemoryShare of the list's bytes.
  const bool bitmap = forms == Forms::kBitmap ||
                      (forms == Forms::kChosen && bitmap_bytes <= kBitmapMemoryShare * static_cast<double>(list_bytes));
  if (bitmap && edges <= UINT32_MAX)
    AppendBitmap(sources, e);
  else
    AppendList(sources, e);
  e->sources = static_cast<uint32_t>(sources.size());
}

void SourceRuns::AppendList(std::span<const SourceCount> sources, Entry* e) {
  e->form = Form::kList;
  e->at = storage_.size();
  e->first = blocks_.size();
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

void SourceRuns::AppendBitmap(std::span<const SourceCount> sources, Entry* e) {
  e->form = Form::kBitmap;
  e->at = storage_.size();
  e->first = words_.size();
  e->escapes = escapes_.size();
  e->first_word = sources.front().vertex / 64;
  e->words = sources.back().vertex / 64 - e->first_word + 1;
  words_.resize(words_.size() + e->words);
  Word* const words = words_.data() + e->first;
  uint32_t rank = 0, edges = 0;
  uint64_t filled = 0;  // words [0, filled) have their rank and edges
  for (const SourceCount& s : sources) {
    const uint64_t w = s.vertex / 64 - e->first_word;
    for (; filled <= w; ++filled) words[filled].rank = rank, words[filled].edges = edges;
    words[w].sources |= uint64_t{1} << (s.vertex % 64);
    if (s.edges >= kEscape) escapes_.push_back({rank, static_cast<uint32_t>(s.edges)});
    storage_.push_back(static_cast<char>(std::min<uint64_t>(s.edges, kEscape)));
    ++rank;
    edges += s.edges;
  }
  e->escape_count = static_cast<uint32_t>(escapes_.size() - e->escapes);
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

// Bits [from, to) of a word (0 <= from <= to <= 64).
inline uint64_t Bits(int from, int to) {
  const uint64_t below_to = to >= 64 ? ~uint64_t{0} : (uint64_t{1} << to) - 1;
  const uint64_t below_from = from >= 64 ? ~uint64_t{0} : (uint64_t{1} << from) - 1;
  return below_to & ~below_from;
}

// Appends [at, at + length) to `out`, joining it to the last run when they touch.
inline void AddRun(uint64_t at, uint64_t length, std::vector<ByteRun>* out) {
  if (!out->empty() && out->back().end() == at)
    out->back().length += length;
  else
    out->push_back({at, length});
}

}  // namespace

void SourceRuns::ActiveRuns(uint64_t chunk, std::span<const uint64_t* const> bitmaps, std::vector<ByteRun>* out) const {
  out->clear();
  if (chunk >= chunks_.size()) return;
  const Entry& e = chunks_[chunk];
  if (bitmaps.empty()) return;
  bool everything = false;
  for (const uint64_t* b : bitmaps) everything |= b == nullptr;
  if (e.form == Form::kUnsorted || everything) {
    out->push_back({0, e.length});
    return;
  }
  if (e.form == Form::kBitmap)
    BitmapRuns(e, bitmaps, out);
  else
    ListRuns(e, bitmaps, out);
}

void SourceRuns::ListRuns(const Entry& e, std::span<const uint64_t* const> bitmaps, std::vector<ByteRun>* out) const {
  const uint8_t* const base = reinterpret_cast<const uint8_t*>(storage_.data()) + e.at;
  const uint64_t blocks = (e.sources + kBlockSources - 1) / kBlockSources;
  for (uint64_t b = 0; b < blocks; ++b) {
    const Block& block = blocks_[e.first + b];
    const Block& next = blocks_[e.first + b + 1];  // the closing block after the last
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
      if (active) AddRun(at, length, out);
      at += length;
    }
  }
}

// The bitmap form's loop. The baseline x86-64 target has no POPCNT instruction and std::popcount
// is a library call there (it was a fifth of this loop's time), so the loop is compiled for
// POPCNT+BMI and for the baseline and picked once by CPU, as the active-chunk finder's are
// (manual dispatch: ifunc resolvers run before the sanitizer runtimes start).
struct BitmapRunsKernel {
  using Entry = SourceRuns::Entry;
  using Fn = void (*)(const SourceRuns&, const Entry&, std::span<const uint64_t* const>, std::vector<ByteRun>*);

  // The edges of the sources of ranks [rank, rank + n) of the chunk.
  static inline __attribute__((always_inline)) uint64_t SumCounts(const SourceRuns& r, const Entry& e, uint64_t rank,
                                                                  uint64_t n) {
    const uint8_t* const counts = reinterpret_cast<const uint8_t*>(r.storage_.data()) + e.at + rank;
    uint64_t sum = 0;
    bool escaped = false;
    for (uint64_t k = 0; k < n; ++k) {  // a plain loop the compiler vectorizes
      sum += counts[k];
      escaped |= counts[k] == SourceRuns::kEscape;
    }
    if (!escaped) return sum;
    // Each escaped count in the range was summed as kEscape (a hub's: rare, so looked up).
    const SourceRuns::Escape* const first = r.escapes_.data() + e.escapes;
    const SourceRuns::Escape* const last = first + e.escape_count;
    auto before = [](const SourceRuns::Escape& x, uint64_t at) { return x.rank < at; };
    for (const SourceRuns::Escape* it = std::lower_bound(first, last, rank, before); it != last && it->rank < rank + n;
         ++it)
      sum += it->edges - SourceRuns::kEscape;
    return sum;
  }

  static inline __attribute__((always_inline)) void Body(const SourceRuns& r, const Entry& e,
                                                         std::span<const uint64_t* const> bitmaps,
                                                         std::vector<ByteRun>* out) {
    const SourceRuns::Word* const words = r.words_.data() + e.first;
    const uint8_t* const counts = reinterpret_cast<const uint8_t*>(r.storage_.data()) + e.at;
    const uint64_t edge_size = r.edge_size_;
    for (uint32_t w = 0; w < e.words; ++w) {
      const SourceRuns::Word& word = words[w];
      uint64_t active = 0;
      for (const uint64_t* bits : bitmaps) active |= bits[e.first_word + w];
      active &= word.sources;
      if (active == 0) continue;
      uint64_t rank = word.rank, edges = word.edges;
      if (__builtin_popcountll(active) * 4 >= __builtin_popcountll(word.sources)) {
        // Many active: source by source, each count read once.
        for (uint64_t left = word.sources; left != 0; left &= left - 1, ++rank) {
          const uint64_t count = counts[rank] != SourceRuns::kEscape ? counts[rank] : SumCounts(r, e, rank, 1);
          if ((active >> __builtin_ctzll(left)) & 1) AddRun(edges * edge_size, count * edge_size, out);
          edges += count;
        }
        continue;
      }
      // Few active: segments of sources that are all active (no inactive source between them)
      // are one run each: its start is the counts of the sources before it, its length theirs.
      const uint64_t inactive = word.sources & ~active;
      int passed_to = 0;  // the sources below bit passed_to are counted
      while (active != 0) {
        const int first = __builtin_ctzll(active);
        const uint64_t above = first == 63 ? 0 : inactive & (~uint64_t{0} << (first + 1));
        const int end = above == 0 ? 64 : __builtin_ctzll(above);  // the first inactive source after it
        const uint64_t skipped = static_cast<uint64_t>(__builtin_popcountll(word.sources & Bits(passed_to, first)));
        edges += SumCounts(r, e, rank, skipped);
        rank += skipped;
        const uint64_t n = static_cast<uint64_t>(__builtin_popcountll(word.sources & Bits(first, end)));
        const uint64_t length = SumCounts(r, e, rank, n);
        AddRun(edges * edge_size, length * edge_size, out);
        edges += length;
        rank += n;
        passed_to = end;
        active &= ~Bits(0, end);
      }
    }
  }

  __attribute__((target("popcnt,bmi"))) static void Popcnt(const SourceRuns& r, const Entry& e,
                                                           std::span<const uint64_t* const> bitmaps,
                                                           std::vector<ByteRun>* out) {
    Body(r, e, bitmaps, out);
  }
  static void Base(const SourceRuns& r, const Entry& e, std::span<const uint64_t* const> bitmaps,
                   std::vector<ByteRun>* out) {
    Body(r, e, bitmaps, out);
  }
  static Fn Pick() {
    static const Fn fn = [] {
      __builtin_cpu_init();
      return __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi") ? &Popcnt : &Base;
    }();
    return fn;
  }
};

void SourceRuns::BitmapRuns(const Entry& e, std::span<const uint64_t* const> bitmaps, std::vector<ByteRun>* out) const {
  BitmapRunsKernel::Pick()(*this, e, bitmaps, out);
}

}  // namespace graphfs::chunkindex
