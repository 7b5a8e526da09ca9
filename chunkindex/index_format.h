// Records and keys of the chunk index database (layout: chunkindex/README.md).
// Every key starts with a one-byte tag; numbers in keys are big-endian so that
// RocksDB's bytewise order is numeric order. Values are varint-encoded and
// decoded with bounds checks: a damaged value is an Error, never a crash.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace graphfs::chunkindex {

enum class ChunkFile : uint8_t { kColumn = 0, kRow = 1 };
inline const char* ChunkFileName(ChunkFile f) { return f == ChunkFile::kColumn ? "column" : "row"; }

struct SourceCount {
  uint32_t vertex = 0;
  uint32_t edges = 0;  // out-edges of `vertex` in the chunk
  bool operator==(const SourceCount&) const = default;
};

inline constexpr char kMagic[] = "graphfs-chunkindex";
// 2: chunk records say whether their edges are in source order (vertex-granular LPs need it).
// 3: `C` and `S` records are keyed by where their chunk is (ContentKey: its block and its place
//    among the block's chunks), not by content id: a block that gains or loses a chunk no longer
//    moves every later block's keys, so graph versions share their index's unchanged records.
inline constexpr uint32_t kFormatVersion = 3;
inline constexpr uint64_t kDegreesPerRecord = 65536;

// What a graph file looked like when the index was built.
struct FileFingerprint {
  std::string name;  // relative to the graph directory
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t sample_hash = 0;  // XXH3 of sampled windows (chunkindex/fingerprint.h)
  bool operator==(const FileFingerprint&) const = default;
};

struct IndexMeta {
  uint32_t version = kFormatVersion;
  uint64_t vertices = 0, edges = 0, partitions = 0, edge_size = 0;
  uint64_t chunk_size = 0;
  bool chunk_size_overridden = false;
  uint64_t llc_bytes = 0;
  uint64_t cores = 0;
  std::string chunk_size_explanation;
  uint64_t column_chunks = 0, row_chunks = 0;
  std::vector<FileFingerprint> files;
  int64_t built_unix_s = 0;
  double build_seconds = 0;
};

struct ChunkRecord {  // "C" + content
  uint32_t block_i = 0, block_j = 0;
  uint64_t edge_count = 0;
  uint32_t num_sources = 0, min_source = 0, max_source = 0;
  uint64_t source_degree_sum = 0;
  // Every edge's source >= the previous edge's: each source's edges are one run of the chunk,
  // at the offset the counts before it give (true for `preprocess --sort-sources` blocks).
  bool sources_sorted = false;
};

struct FileChunkRecord {  // "F" + file + id
  uint64_t offset = 0, length = 0, content = 0;
};

// The key of a content's `C` and `S` records: its block (i·P + j) and its index among the
// block's chunks. Keys ascend in content order (contents are numbered in `row` order).
inline uint64_t ContentKey(uint64_t block, uint64_t index_in_block) { return block << 32 | index_in_block; }

// Keys.
std::string MetaKey();
std::string FileChunkKey(ChunkFile file, uint64_t id);
std::string ChunkKey(uint64_t content_key);
std::string SourcesKey(uint64_t content_key);
std::string DegreesKey(uint64_t first_vertex);
inline constexpr char kFileChunkTag = 'F', kChunkTag = 'C', kSourcesTag = 'S', kDegreesTag = 'D', kMetaTag = 'M';

// Values.
std::string EncodeMeta(const IndexMeta& m);
Result<IndexMeta> DecodeMeta(std::string_view v);
std::string EncodeChunk(const ChunkRecord& c);
Result<ChunkRecord> DecodeChunk(std::string_view v);
std::string EncodeFileChunk(const FileChunkRecord& c);
Result<FileChunkRecord> DecodeFileChunk(std::string_view v);
// Sources ascending and distinct: count, first id, deltas, then the counts.
void EncodeSources(std::span<const SourceCount> sources, std::string* out);
Status DecodeSources(std::string_view v, std::vector<SourceCount>* out);
std::string EncodeDegrees(std::span<const uint32_t> degrees);
Status DecodeDegrees(std::string_view v, std::vector<uint32_t>* out);  // appends

}  // namespace graphfs::chunkindex
