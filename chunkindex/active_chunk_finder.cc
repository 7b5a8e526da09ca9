#include "chunkindex/active_chunk_finder.h"

namespace graphfs::chunkindex {

namespace {

// The hot loops. The baseline x86-64 target has no POPCNT instruction (a
// library call per word is ~6x slower), so they are compiled for AVX2+POPCNT,
// POPCNT and the baseline, and picked once by CPU. (Manual dispatch rather than
// target_clones: ifunc resolvers run before the sanitizer runtimes start and
// crash under TSan.)
template <bool kAnd>
inline __attribute__((always_inline)) uint64_t CountBits(const uint64_t* a, const uint64_t* b, size_t n) {
  uint64_t count = 0;
  for (size_t k = 0; k < n; ++k) count += static_cast<uint64_t>(__builtin_popcountll(kAnd ? (a[k] & b[k]) : a[k]));
  return count;
}

__attribute__((target("avx2,popcnt"))) uint64_t AndPopcountAvx2(const uint64_t* a, const uint64_t* b, size_t n) {
  return CountBits<true>(a, b, n);
}
__attribute__((target("popcnt"))) uint64_t AndPopcountPopcnt(const uint64_t* a, const uint64_t* b, size_t n) {
  return CountBits<true>(a, b, n);
}
uint64_t AndPopcountBase(const uint64_t* a, const uint64_t* b, size_t n) { return CountBits<true>(a, b, n); }
__attribute__((target("avx2,popcnt"))) uint64_t PopcountAvx2(const uint64_t* a, const uint64_t* b, size_t n) {
  return CountBits<false>(a, b, n);
}
__attribute__((target("popcnt"))) uint64_t PopcountPopcnt(const uint64_t* a, const uint64_t* b, size_t n) {
  return CountBits<false>(a, b, n);
}
uint64_t PopcountBase(const uint64_t* a, const uint64_t* b, size_t n) { return CountBits<false>(a, b, n); }

using CountFn = uint64_t (*)(const uint64_t*, const uint64_t*, size_t);
struct Kernels {
  CountFn and_popcount;
  CountFn popcount;
};

const Kernels& PickKernels() {
  static const Kernels kernels = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt")) return Kernels{AndPopcountAvx2, PopcountAvx2};
    if (__builtin_cpu_supports("popcnt")) return Kernels{AndPopcountPopcnt, PopcountPopcnt};
    return Kernels{AndPopcountBase, PopcountBase};
  }();
  return kernels;
}

uint64_t AndPopcount(const uint64_t* a, const uint64_t* b, size_t n) { return PickKernels().and_popcount(a, b, n); }
uint64_t Popcount(const uint64_t* a, size_t n) { return PickKernels().popcount(a, nullptr, n); }

}  // namespace

Result<ActiveChunkFinder> ActiveChunkFinder::Load(const ChunkTable& table, Form form, bool inverted) {
  ActiveChunkFinder f;
  f.vertices_ = table.vertices();
  f.entries_.resize(table.content_count());
  f.mean_degree_.resize(table.content_count());
  for (ChunkFile file : {ChunkFile::kColumn, ChunkFile::kRow}) {
    auto& map = file == ChunkFile::kColumn ? f.column_content_ : f.row_content_;
    for (const Chunk& c : table.chunks(file)) map.push_back(c.content);
  }
  for (const Chunk& c : table.chunks(ChunkFile::kRow)) f.mean_degree_[c.content] = c.mean_source_degree();

  Status s = table.ForEachContentSources([&](uint64_t content, std::span<const SourceCount> sources) -> Status {
    Entry e;
    e.min = sources.front().vertex;
    e.max = sources.back().vertex;
    const uint64_t span = uint64_t{e.max} - e.min + 1;
    const uint64_t first_word = e.min / 64, last_word = e.max / 64;
    const uint64_t nwords = last_word - first_word + 1;
    Kind kind;
    if (form == Form::kList) {
      kind = Kind::kList;
    } else if (form == Form::kBitmap) {
      kind = Kind::kBitmap;
    } else if (span == sources.size()) {
      kind = Kind::kRange;
    } else if (nwords * 2 <= sources.size()) {  // 8 B per word vs 4 B per id: never more memory than a list
      kind = Kind::kBitmap;
    } else {
      kind = Kind::kList;
    }
    e.kind = kind;
    e.pool = 0;
    e.size = 0;
    if (kind == Kind::kBitmap) {
      e.pool = f.words_.size();
      e.size = static_cast<uint32_t>(nwords);
      f.words_.resize(f.words_.size() + nwords, 0);
      uint64_t* w = f.words_.data() + e.pool;
      for (const SourceCount& sc : sources) w[sc.vertex / 64 - first_word] |= uint64_t{1} << (sc.vertex % 64);
    } else if (kind == Kind::kList) {
      e.pool = f.ids_.size();
      e.size = static_cast<uint32_t>(sources.size());
      for (const SourceCount& sc : sources) f.ids_.push_back(sc.vertex);
    }
    f.entries_[content] = e;
    f.pairs_ += sources.size();
    return Status::Ok();
  });
  if (!s.ok()) return s.error();
  f.words_.shrink_to_fit();
  f.ids_.shrink_to_fit();
  for (const Entry& e : f.entries_) {
    f.forward_cost_ += e.kind == Kind::kRange ? (e.max / 64 - e.min / 64 + 1) : e.size;
  }
  // The inverted form, built from the forward one (no second pass over the database).
  if (inverted && f.pairs_ < UINT32_MAX) {
    auto for_each_source = [&](const Entry& e, auto&& fn) {
      if (e.kind == Kind::kRange) {
        for (uint64_t v = e.min; v <= e.max; ++v) fn(static_cast<uint32_t>(v));
      } else if (e.kind == Kind::kList) {
        for (uint32_t k = 0; k < e.size; ++k) fn(f.ids_[e.pool + k]);
      } else {
        const uint64_t base = uint64_t{e.min} / 64 * 64;
        for (uint32_t k = 0; k < e.size; ++k) {
          for (uint64_t bits = f.words_[e.pool + k]; bits != 0; bits &= bits - 1) {
            fn(static_cast<uint32_t>(base + k * 64 + static_cast<uint64_t>(__builtin_ctzll(bits))));
          }
        }
      }
    };
    f.vertex_begin_.assign(f.vertices_ + 1, 0);
    for (const Entry& e : f.entries_) for_each_source(e, [&](uint32_t v) { f.vertex_begin_[v + 1]++; });
    for (uint64_t v = 0; v < f.vertices_; ++v) f.vertex_begin_[v + 1] += f.vertex_begin_[v];
    f.vertex_contents_.resize(f.pairs_);
    std::vector<uint32_t> fill(f.vertex_begin_.begin(), f.vertex_begin_.end() - 1);
    for (uint32_t c = 0; c < f.entries_.size(); ++c) {
      for_each_source(f.entries_[c], [&](uint32_t v) { f.vertex_contents_[fill[v]++] = c; });
    }
  }
  return f;
}

uint32_t ActiveChunkFinder::CountOne(const Entry& e, const uint64_t* active) const {
  switch (e.kind) {
    case Kind::kRange: {
      const uint64_t lo = e.min, hi = uint64_t{e.max} + 1;  // [lo, hi)
      const uint64_t wlo = lo / 64, whi = (hi - 1) / 64;
      const uint64_t first_mask = ~uint64_t{0} << (lo % 64);
      const uint64_t last_mask = ~uint64_t{0} >> (63 - (hi - 1) % 64);
      if (wlo == whi) return static_cast<uint32_t>(__builtin_popcountll(active[wlo] & first_mask & last_mask));
      uint64_t n = static_cast<uint64_t>(__builtin_popcountll(active[wlo] & first_mask));
      n += Popcount(active + wlo + 1, whi - wlo - 1);
      n += static_cast<uint64_t>(__builtin_popcountll(active[whi] & last_mask));
      return static_cast<uint32_t>(n);
    }
    case Kind::kBitmap: {
      return static_cast<uint32_t>(AndPopcount(active + e.min / 64, words_.data() + e.pool, e.size));
    }
    case Kind::kList: {
      const uint32_t* ids = ids_.data() + e.pool;
      uint32_t n = 0;
      for (uint32_t k = 0; k < e.size; ++k) n += static_cast<uint32_t>((active[ids[k] >> 6] >> (ids[k] & 63)) & 1);
      return n;
    }
  }
  return 0;
}

Status ActiveChunkFinder::CountContents(std::span<const uint64_t> active, std::vector<uint32_t>* counts) const {
  if (active.size() < (vertices_ + 63) / 64) {
    return Error(EINVAL, "active set has " + std::to_string(active.size() * 64) + " bits, the graph " +
                             std::to_string(vertices_) + " vertices");
  }
  // One pass over the active set: its size, and a summary with one bit per 64
  // words (4096 vertices), so that chunks whose [min, max] holds no active
  // vertex at all are skipped after reading a few summary words.
  const size_t nwords = (vertices_ + 63) / 64;
  std::vector<uint64_t> summary((nwords + 4095) / 4096, 0);
  uint64_t active_count = 0;
  for (size_t w = 0; w < nwords; ++w) {
    if (active[w] != 0) {
      summary[w >> 12] |= uint64_t{1} << ((w >> 6) & 63);
      active_count += static_cast<uint64_t>(__builtin_popcountll(active[w]));
    }
  }
  // Which chunks the forward path has to look at, and what that costs (words or ids).
  std::vector<uint8_t> touched(entries_.size(), 0);
  double forward_cost = 0;
  for (size_t c = 0; c < entries_.size(); ++c) {
    const Entry& e = entries_[c];
    const uint64_t lo = e.min >> 12, hi = e.max >> 12;  // summary bits [lo, hi]
    bool any = false;
    for (uint64_t w = lo >> 6; w <= (hi >> 6) && !any; ++w) {
      uint64_t bits = summary[w];
      if (w == lo >> 6) bits &= ~uint64_t{0} << (lo & 63);
      if (w == hi >> 6) bits &= ~uint64_t{0} >> (63 - (hi & 63));
      any = bits != 0;
    }
    touched[c] = any;
    forward_cost += 1 + (any ? static_cast<double>(e.kind == Kind::kRange ? (e.max / 64 - e.min / 64 + 1) : e.size) : 0);
  }
  // The inverted path: per active vertex ~60 units (two cache misses: its
  // offsets and its list) plus ~4 per pair (a scattered increment), plus a
  // second pass over the bitmap. Calibrated on scale-22/24 R-MAT graphs
  // (chunkindex/BENCHMARKS-chunkindex.md); a forward unit is ~0.8 ns.
  bool use_inverted = path_ == Path::kInverted && !vertex_begin_.empty();
  if (path_ == Path::kCheapest && !vertex_begin_.empty()) {
    const double per_vertex = static_cast<double>(pairs_) / static_cast<double>(std::max<uint64_t>(vertices_, 1));
    const double inverted_cost =
        static_cast<double>(active_count) * (60.0 + 4.0 * per_vertex) + static_cast<double>(nwords) / 4;
    use_inverted = inverted_cost < forward_cost;
  }
  if (use_inverted) {
    counts->assign(entries_.size(), 0);
    uint32_t* out = counts->data();
    for (size_t w = 0; w < nwords; ++w) {
      for (uint64_t bits = active[w]; bits != 0; bits &= bits - 1) {
        const uint64_t v = w * 64 + static_cast<uint64_t>(__builtin_ctzll(bits));
        if (v >= vertices_) break;
        for (uint32_t k = vertex_begin_[v]; k < vertex_begin_[v + 1]; ++k) out[vertex_contents_[k]]++;
      }
    }
    return Status::Ok();
  }
  counts->resize(entries_.size());
  for (size_t c = 0; c < entries_.size(); ++c) (*counts)[c] = touched[c] ? CountOne(entries_[c], active.data()) : 0;
  return Status::Ok();
}

Status ActiveChunkFinder::Find(ChunkFile file, std::span<const uint64_t> active, std::vector<ActiveChunk>* out) const {
  out->clear();
  std::vector<uint32_t> counts;
  GRAPHFS_RETURN_IF_ERROR(CountContents(active, &counts));
  const auto& map = file == ChunkFile::kColumn ? column_content_ : row_content_;
  for (uint64_t id = 0; id < map.size(); ++id) {
    uint32_t n = counts[map[id]];
    if (n != 0) out->push_back({id, n, mean_degree_[map[id]]});
  }
  return Status::Ok();
}

uint64_t ActiveChunkFinder::memory_bytes() const {
  return entries_.size() * sizeof(Entry) + words_.size() * 8 + ids_.size() * 4 +
         (vertex_begin_.size() + vertex_contents_.size()) * 4 +
         (column_content_.size() + row_content_.size()) * 8 + mean_degree_.size() * 8;
}

uint64_t ActiveChunkFinder::count(Form f) const {
  Kind k = f == Form::kList ? Kind::kList : f == Form::kBitmap ? Kind::kBitmap : Kind::kRange;
  uint64_t n = 0;
  for (const Entry& e : entries_) n += e.kind == k ? 1 : 0;
  return n;
}

}  // namespace graphfs::chunkindex
