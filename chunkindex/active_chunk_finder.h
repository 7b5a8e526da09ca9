// "Which chunks of file F are active for this set of active vertices?"
// A chunk is active when at least one of its sources is active. The finder
// keeps, per chunk content (column and row chunks share them), its distinct
// sources in one of three forms, chosen per chunk:
//   range   the sources are exactly [min, max] (blocks sorted by source, no
//           gaps): count = popcount of the active bitmap over [min, max];
//   bitmap  a bitmap of the sources over the words spanning [min, max], used
//           when there are at least two sources per 64-bit word on average
//           (so it never takes more memory than the list):
//           count = sum popcount(active & sources) — a sequential AND;
//   list    sorted source ids (sparse chunks): count = sum of bit tests.
// Besides this forward form, an inverted form (per vertex, the contents it is
// a source of; CSR) answers a query in time proportional to the active
// vertices' (chunk, source) pairs instead of all chunks' sources. Each query
// estimates both costs and takes the cheaper path: sparse active sets go
// through the inverted form, dense ones through the forward form.
// The answer also carries the number of active sources per chunk and the
// chunk's mean source degree, i.e. what GraphSO's priority
// N(J) * N(A) * mean degree needs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "chunkindex/chunk_index.h"
#include "common/result.h"

namespace graphfs::chunkindex {

struct ActiveChunk {
  uint64_t id = 0;               // chunk id in its file (ascending = file order)
  uint32_t active_sources = 0;   // N(A): active vertices among its sources
  double mean_source_degree = 0;
};

class ActiveChunkFinder {
 public:
  enum class Form { kAuto, kList, kBitmap };  // kList / kBitmap force one form (for measurements)

  // `inverted`: also build the inverted form (4 B per (chunk, source) pair + 4 B per vertex:
  // InvertedBytes). Without it every query takes the forward path.
  static Result<ActiveChunkFinder> Load(const ChunkTable& table, Form form = Form::kAuto, bool inverted = true);
  static uint64_t InvertedBytes(uint64_t pairs, uint64_t vertices) { return (pairs + vertices + 1) * 4; }
  bool has_inverted() const { return !vertex_begin_.empty(); }

  enum class Path { kCheapest, kForward, kInverted };  // forcing a path is for tests and measurements
  void set_path(Path p) { path_ = p; }

  // `active` is a bitmap over the vertices: bit v is (active[v / 64] >> (v % 64)) & 1;
  // it must have at least ceil(vertices / 64) words. Fills `out` (cleared first).
  Status Find(ChunkFile file, std::span<const uint64_t> active, std::vector<ActiveChunk>* out) const;

  // Active-source count of every content (index = content id).
  Status CountContents(std::span<const uint64_t> active, std::vector<uint32_t>* counts) const;

  uint64_t vertices() const { return vertices_; }
  uint64_t memory_bytes() const;
  uint64_t count(Form f) const;  // contents stored as kList / kBitmap; kAuto: as range
  uint64_t contents() const { return entries_.size(); }

 private:
  enum class Kind : uint8_t { kRange, kBitmap, kList };
  struct Entry {
    Kind kind;
    uint32_t min, max;    // sources span [min, max]
    uint64_t pool;        // offset into words_ (bitmap) or ids_ (list)
    uint32_t size;        // words (bitmap) or ids (list)
  };
  uint32_t CountOne(const Entry& e, const uint64_t* active) const;

  uint64_t vertices_ = 0;
  Path path_ = Path::kCheapest;
  uint64_t forward_cost_ = 0;  // words + ids a forward query visits at most
  uint64_t pairs_ = 0;         // (chunk, source) pairs
  std::vector<uint32_t> vertex_begin_;     // inverted: V+1 offsets into vertex_contents_ (empty: none)
  std::vector<uint32_t> vertex_contents_;
  std::vector<Entry> entries_;
  std::vector<uint64_t> words_;
  std::vector<uint32_t> ids_;
  std::vector<uint64_t> column_content_, row_content_;  // file id -> content
  std::vector<double> mean_degree_;                     // per content
};

}  // namespace graphfs::chunkindex
