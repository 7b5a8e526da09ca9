#include "chunkindex/index_format.h"

#include "chunkindex/coding.h"

namespace graphfs::chunkindex {

namespace {

Error Damaged(const std::string& what) { return Error(EIO, "damaged " + what + " record"); }

std::string TagKey(char tag, uint64_t n) {
  std::string k(1, tag);
  PutBigEndian64(&k, n);
  return k;
}

}  // namespace

std::string MetaKey() { return std::string(1, kMetaTag); }
std::string FileChunkKey(ChunkFile file, uint64_t id) {
  std::string k(1, kFileChunkTag);
  k.push_back(file == ChunkFile::kColumn ? 'c' : 'r');
  PutBigEndian64(&k, id);
  return k;
}
std::string ChunkKey(uint64_t content_key) { return TagKey(kChunkTag, content_key); }
std::string SourcesKey(uint64_t content_key) { return TagKey(kSourcesTag, content_key); }
std::string DegreesKey(uint64_t first_vertex) { return TagKey(kDegreesTag, first_vertex); }

std::string EncodeMeta(const IndexMeta& m) {
  std::string out;
  PutBytes(&out, kMagic);
  PutVarint(&out, m.version);
  for (uint64_t v : {m.vertices, m.edges, m.partitions, m.edge_size, m.chunk_size,
                     static_cast<uint64_t>(m.chunk_size_overridden), m.llc_bytes, m.cores, m.column_chunks,
                     m.row_chunks, static_cast<uint64_t>(m.built_unix_s),
                     static_cast<uint64_t>(m.build_seconds * 1e6)}) {
    PutVarint(&out, v);
  }
  PutBytes(&out, m.chunk_size_explanation);
  PutVarint(&out, m.files.size());
  for (const FileFingerprint& f : m.files) {
    PutBytes(&out, f.name);
    PutVarint(&out, f.size);
    PutVarint(&out, static_cast<uint64_t>(f.mtime_ns));
    PutVarint(&out, f.sample_hash);
  }
  return out;
}

Result<IndexMeta> DecodeMeta(std::string_view v) {
  Decoder d(v);
  if (d.Bytes() != kMagic || !d.ok()) {
    return Error(EINVAL, "not a graphfs chunk index (the meta record has no graphfs-chunkindex magic)");
  }
  IndexMeta m;
  m.version = d.Varint32();
  if (d.ok() && m.version != kFormatVersion) {
    return Error(EINVAL, "chunk index format version " + std::to_string(m.version) + ", this build reads " +
                             std::to_string(kFormatVersion) + " (an index from another graphfs-index version)");
  }
  m.vertices = d.Varint();
  m.edges = d.Varint();
  m.partitions = d.Varint();
  m.edge_size = d.Varint();
  m.chunk_size = d.Varint();
  m.chunk_size_overridden = d.Varint() != 0;
  m.llc_bytes = d.Varint();
  m.cores = d.Varint();
  m.column_chunks = d.Varint();
  m.row_chunks = d.Varint();
  m.built_unix_s = static_cast<int64_t>(d.Varint());
  m.build_seconds = static_cast<double>(d.Varint()) / 1e6;
  m.chunk_size_explanation = std::string(d.Bytes());
  uint64_t files = d.Varint();
  if (files > 64) return Damaged("meta");
  for (uint64_t k = 0; k < files && d.ok(); ++k) {
    FileFingerprint f;
    f.name = std::string(d.Bytes());
    f.size = d.Varint();
    f.mtime_ns = static_cast<int64_t>(d.Varint());
    f.sample_hash = d.Varint();
    m.files.push_back(std::move(f));
  }
  if (!d.finished()) return Damaged("meta");
  if (m.edge_size != 8 && m.edge_size != 12) return Damaged("meta (edge size)");
  if (m.partitions == 0 || m.vertices == 0 || m.chunk_size == 0 || m.chunk_size % m.edge_size != 0 ||
      m.column_chunks != m.row_chunks) {
    return Damaged("meta");
  }
  return m;
}

std::string EncodeChunk(const ChunkRecord& c) {
  std::string out;
  for (uint64_t v : {uint64_t{c.block_i}, uint64_t{c.block_j}, c.edge_count, uint64_t{c.num_sources},
                     uint64_t{c.min_source}, uint64_t{c.max_source}, c.source_degree_sum,
                     uint64_t{c.sources_sorted}}) {
    PutVarint(&out, v);
  }
  return out;
}

Result<ChunkRecord> DecodeChunk(std::string_view v) {
  Decoder d(v);
  ChunkRecord c;
  c.block_i = d.Varint32();
  c.block_j = d.Varint32();
  c.edge_count = d.Varint();
  c.num_sources = d.Varint32();
  c.min_source = d.Varint32();
  c.max_source = d.Varint32();
  c.source_degree_sum = d.Varint();
  const uint64_t sorted = d.Varint();
  c.sources_sorted = sorted == 1;
  if (!d.finished() || sorted > 1 || c.min_source > c.max_source || c.num_sources == 0 || c.num_sources > c.edge_count ||
      c.max_source - c.min_source + 1ull < c.num_sources) {
    return Damaged("chunk");
  }
  return c;
}

std::string EncodeFileChunk(const FileChunkRecord& c) {
  std::string out;
  PutVarint(&out, c.offset);
  PutVarint(&out, c.length);
  PutVarint(&out, c.content);
  return out;
}

Result<FileChunkRecord> DecodeFileChunk(std::string_view v) {
  Decoder d(v);
  FileChunkRecord c;
  c.offset = d.Varint();
  c.length = d.Varint();
  c.content = d.Varint();
  if (!d.finished() || c.length == 0) return Damaged("file chunk");
  return c;
}

void EncodeSources(std::span<const SourceCount> sources, std::string* out) {
  PutVarint(out, sources.size());
  uint32_t prev = 0;
  for (size_t k = 0; k < sources.size(); ++k) {
    PutVarint(out, k == 0 ? sources[k].vertex : sources[k].vertex - prev);
    prev = sources[k].vertex;
  }
  for (const SourceCount& s : sources) PutVarint(out, s.edges);
}

Status DecodeSources(std::string_view v, std::vector<SourceCount>* out) {
  Decoder d(v);
  uint64_t n = d.Varint();
  // Each source takes at least two bytes: refuse counts the value cannot hold.
  if (!d.ok() || n > v.size() / 2) return Damaged("sources");
  out->resize(n);
  uint64_t prev = 0;
  for (uint64_t k = 0; k < n; ++k) {
    uint64_t delta = d.Varint();
    if (k > 0 && delta == 0) return Damaged("sources");
    // Checked before adding: a huge delta would wrap prev + delta around to a smaller id.
    if (delta > UINT32_MAX - prev) return Damaged("sources");
    prev = k == 0 ? delta : prev + delta;
    (*out)[k].vertex = static_cast<uint32_t>(prev);
  }
  for (uint64_t k = 0; k < n; ++k) {
    (*out)[k].edges = d.Varint32();
    if ((*out)[k].edges == 0) return Damaged("sources");
  }
  if (!d.finished()) return Damaged("sources");
  return Status::Ok();
}

std::string EncodeDegrees(std::span<const uint32_t> degrees) {
  std::string out;
  PutVarint(&out, degrees.size());
  for (uint32_t d : degrees) PutVarint(&out, d);
  return out;
}

Status DecodeDegrees(std::string_view v, std::vector<uint32_t>* out) {
  Decoder d(v);
  uint64_t n = d.Varint();
  if (!d.ok() || n > v.size() || n > kDegreesPerRecord) return Damaged("degrees");
  for (uint64_t k = 0; k < n; ++k) out->push_back(d.Varint32());
  if (!d.finished()) return Damaged("degrees");
  return Status::Ok();
}

}  // namespace graphfs::chunkindex
