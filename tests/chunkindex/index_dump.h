// The logical content of a graph's chunk index, read through the public API, as text:
// two indexes of the same graph with the same chunk size must dump identically, whatever
// their RocksDB files look like (SST bytes legitimately differ between builds).
#pragma once

#include <sstream>
#include <string>

#include "chunkindex/chunk_index.h"

namespace graphfs::chunkindex::testing {

// "" and `*error` set if the index does not open or fails DeepCheck.
inline std::string DumpIndex(const std::string& graph_dir, std::string* error) {
  auto t = ChunkTable::Open(graph_dir);
  if (!t.ok()) {
    *error = t.error().message();
    return "";
  }
  if (Status s = t->DeepCheck(); !s.ok()) {
    *error = s.error().message();
    return "";
  }
  std::ostringstream out;
  const IndexMeta& m = t->meta();
  // Everything but when and how long the build ran.
  out << "meta v" << m.version << " V" << m.vertices << " E" << m.edges << " P" << m.partitions << " es"
      << m.edge_size << " cs" << m.chunk_size << " ov" << m.chunk_size_overridden << " llc" << m.llc_bytes << " cores"
      << m.cores << " cc" << m.column_chunks << " rc" << m.row_chunks << " why{" << m.chunk_size_explanation << "}\n";
  for (const FileFingerprint& f : m.files) {
    out << "file " << f.name << " " << f.size << " " << f.mtime_ns << " " << f.sample_hash << "\n";
  }
  for (ChunkFile file : {ChunkFile::kColumn, ChunkFile::kRow}) {
    for (const Chunk& c : t->chunks(file)) {
      out << ChunkFileName(file) << " " << c.id << " @" << c.offset << "+" << c.length << " e" << c.edge_count << " b"
          << c.block_i << "," << c.block_j << " content" << c.content << " n" << c.num_sources << " [" << c.min_source
          << "," << c.max_source << "] deg" << c.source_degree_sum << "\n";
    }
  }
  for (uint64_t content = 0; content < t->content_count(); ++content) {
    auto sources = t->ContentSources(content);
    if (!sources.ok()) {
      *error = sources.error().message();
      return "";
    }
    out << "sources " << content << ":";
    for (const SourceCount& s : *sources) out << " " << s.vertex << "x" << s.edges;
    out << "\n";
  }
  auto degrees = t->Degrees();
  if (!degrees.ok()) {
    *error = degrees.error().message();
    return "";
  }
  out << "degrees";
  for (uint32_t d : *degrees) out << " " << d;
  out << "\n";
  error->clear();
  return out.str();
}

}  // namespace graphfs::chunkindex::testing
