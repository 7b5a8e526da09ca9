// graphfs chunk index: the chunk table of a GridGraph-format graph directory,
// stored in RocksDB under GRAPH/.graphfs/index/ (format: chunkindex/README.md).
//
//   auto table = ChunkTable::Open("/srv/graphs/twitter");     // refuses a stale index
//   for (const Chunk& c : table->chunks(ChunkFile::kColumn)) ... c.offset, c.length ...
//   auto finder = ActiveChunkFinder::Load(*table);             // chunkindex/active_chunk_finder.h
//
// Build it with `graphfs-index GRAPH_DIR` (BuildIndex in chunkindex/index_builder.h).
// Every call returns errors as values; a stale, missing, foreign or damaged
// index gives an Error whose message says to re-run graphfs-index.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "chunkindex/index_format.h"
#include "common/result.h"

namespace graphfs::grid {
class StubFiles;  // grid/graph_file.h
}  // namespace graphfs::grid

namespace graphfs::chunkindex {

class IndexDb;

// Where the index of GRAPH lives.
std::string IndexPath(const std::string& graph_dir);  // GRAPH/.graphfs/index

struct Chunk {
  uint64_t id = 0;       // position in its file, in file order (0, 1, ...)
  ChunkFile file = ChunkFile::kColumn;
  uint64_t offset = 0;   // byte offset in the file
  uint64_t length = 0;   // bytes, a multiple of the edge size
  uint64_t edge_count = 0;
  uint32_t block_i = 0;  // the block (source range i, target range j) it lies in;
  uint32_t block_j = 0;  //   chunks never cross blocks, so first block == last block
  uint64_t content = 0;  // shared by the column and row chunk with the same bytes (= its row id)
  uint32_t num_sources = 0;           // distinct source vertices
  uint32_t min_source = 0, max_source = 0;  // 0, 0 when edge_count == 0 (never: empty chunks do not exist)
  uint64_t source_degree_sum = 0;     // sum of out-degrees of its distinct sources
  bool sources_sorted = false;        // edges in source order: a source's edges are one run
  double mean_source_degree() const {
    return num_sources == 0 ? 0.0 : static_cast<double>(source_degree_sum) / num_sources;
  }
};

// Const methods may be called from several threads at once.
class ChunkTable {
 public:
  // Opens GRAPH/.graphfs/index read-only, checks it against the graph's files
  // (sizes, mtimes, sampled checksums) and loads the chunk records. `stubs` reads a striped
  // graph's files through their parts (null: ordinary files).
  static Result<ChunkTable> Open(const std::string& graph_dir, const grid::StubFiles* stubs = nullptr);
  // The same, taking what the graph's files look like now from `fingerprint` (name -> size,
  // mtime, sampled checksum): the daemon reads striped files through their stripe map.
  using FingerprintFn = std::function<Result<FileFingerprint>(const std::string& name)>;
  static Result<ChunkTable> Open(const std::string& graph_dir, const FingerprintFn& fingerprint);

  ChunkTable(ChunkTable&&) noexcept;
  ChunkTable& operator=(ChunkTable&&) noexcept;
  ~ChunkTable();

  const IndexMeta& meta() const { return meta_; }
  const std::string& graph_dir() const { return graph_dir_; }
  uint64_t vertices() const { return meta_.vertices; }
  uint64_t partitions() const { return meta_.partitions; }
  uint64_t edge_size() const { return meta_.edge_size; }
  uint64_t chunk_size() const { return meta_.chunk_size; }

  std::span<const Chunk> chunks(ChunkFile file) const {
    return file == ChunkFile::kColumn ? std::span<const Chunk>(column_) : std::span<const Chunk>(row_);
  }
  uint64_t content_count() const { return row_.size(); }
  // The chunk holding byte `offset` of `file`, or nullptr past the end.
  const Chunk* FindByOffset(ChunkFile file, uint64_t offset) const;

  // Distinct sources (ascending) of a chunk with their out-edge counts in it.
  Result<std::vector<SourceCount>> Sources(ChunkFile file, uint64_t id) const;
  Result<std::vector<SourceCount>> ContentSources(uint64_t content) const;
  // Visits the sources of every content in content order (one scan of the DB).
  Status ForEachContentSources(
      const std::function<Status(uint64_t content, std::span<const SourceCount>)>& visit) const;
  // Out-degree of every vertex.
  Result<std::vector<uint32_t>> Degrees() const;

  // Reads and validates every record (what `graphfs-index --check` does on top of Open).
  Status DeepCheck() const;

 private:
  ChunkTable() = default;
  std::string graph_dir_;
  IndexMeta meta_;
  std::vector<Chunk> column_, row_;
  std::vector<uint64_t> content_keys_;  // per content: the key of its `C` and `S` records
  std::unique_ptr<IndexDb> db_;
};

}  // namespace graphfs::chunkindex
