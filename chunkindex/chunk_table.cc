// ChunkTable: opening, staleness check, loading and validating the records.
#include <algorithm>

#include "chunkindex/chunk_index.h"
#include "chunkindex/coding.h"
#include "chunkindex/fingerprint.h"
#include "chunkindex/index_db.h"

namespace graphfs::chunkindex {

namespace {

std::string Rerun(const std::string& graph_dir, bool force) {
  return std::string("; re-run `graphfs-index ") + (force ? "--force " : "") + graph_dir + "`";
}

Error Damaged(const std::string& graph_dir, const std::string& detail) {
  return Error(EIO, "chunk index " + IndexPath(graph_dir) + " is damaged (" + detail + ")" + Rerun(graph_dir, true));
}

}  // namespace

std::string IndexPath(const std::string& graph_dir) { return graph_dir + "/.graphfs/index"; }

ChunkTable::ChunkTable(ChunkTable&&) noexcept = default;
ChunkTable& ChunkTable::operator=(ChunkTable&&) noexcept = default;
ChunkTable::~ChunkTable() = default;

Result<ChunkTable> ChunkTable::Open(const std::string& graph_dir, const grid::StubFiles* stubs) {
  return Open(graph_dir, [&](const std::string& name) { return TakeFingerprint(graph_dir, name, stubs); });
}

Result<ChunkTable> ChunkTable::Open(const std::string& graph_dir, const FingerprintFn& fingerprint) {
  ChunkTable t;
  t.graph_dir_ = graph_dir;
  auto db = IndexDb::OpenReadOnly(IndexPath(graph_dir));
  if (!db.ok()) return Error(db.error().code(), db.error().message() + Rerun(graph_dir, true));
  t.db_ = std::move(*db);

  auto meta_value = t.db_->Get(MetaKey());
  if (!meta_value.ok()) return Damaged(graph_dir, meta_value.error().message());
  if (!meta_value->has_value()) {
    return Error(EINVAL, IndexPath(graph_dir) + " is not a graphfs chunk index (no meta record)" + Rerun(graph_dir, true));
  }
  auto meta = DecodeMeta(**meta_value);
  if (!meta.ok()) return Error(meta.error().code(), IndexPath(graph_dir) + ": " + meta.error().message() + Rerun(graph_dir, true));
  t.meta_ = std::move(*meta);

  // Staleness: every recorded file must look as it did.
  for (const FileFingerprint& then : t.meta_.files) {
    auto now = fingerprint(then.name);
    if (!now.ok()) {
      return Error(ESTALE, "chunk index of " + graph_dir + " is stale (" + now.error().message() + ")" + Rerun(graph_dir, false));
    }
    std::string change = DescribeChange(then, *now);
    if (!change.empty()) {
      return Error(ESTALE, "chunk index of " + graph_dir + " is stale (" + change + " since it was indexed)" +
                               Rerun(graph_dir, false));
    }
  }

  // Chunk records, in content order.
  const uint64_t n = t.meta_.row_chunks;
  std::vector<ChunkRecord> records;
  records.reserve(n);
  // Keys are (block, index in block): each must follow the last one in its block, or start a later block.
  uint64_t last_block = 0, next_in_block = 0;
  Status s = t.db_->Scan(kChunkTag, [&](std::string_view key, std::string_view value) -> Status {
    if (key.size() != 9 || records.size() >= n) return Error(EIO, "unexpected chunk key");
    const uint64_t k = GetBigEndian64(key.data() + 1);
    auto r = DecodeChunk(value);
    if (!r.ok()) return r.error();
    const uint64_t block = uint64_t{r->block_i} * t.meta_.partitions + r->block_j;
    if (records.empty() || block != last_block) {
      if (!records.empty() && block < last_block) return Error(EIO, "chunk records out of block order");
      last_block = block;
      next_in_block = 0;
    }
    if (k != ContentKey(block, next_in_block++)) return Error(EIO, "unexpected chunk key");
    t.content_keys_.push_back(k);
    records.push_back(*r);
    return Status::Ok();
  });
  if (!s.ok()) return Damaged(graph_dir, s.error().message());
  if (records.size() != n) return Damaged(graph_dir, "chunk records missing");

  const uint64_t file_bytes = t.meta_.edges * t.meta_.edge_size;
  uint64_t expect_id[2] = {0, 0};
  uint64_t next_offset[2] = {0, 0};
  s = t.db_->Scan(kFileChunkTag, [&](std::string_view key, std::string_view value) -> Status {
    if (key.size() != 10 || (key[1] != 'c' && key[1] != 'r')) return Error(EIO, "unexpected file chunk key");
    ChunkFile f = key[1] == 'c' ? ChunkFile::kColumn : ChunkFile::kRow;
    int fi = static_cast<int>(f);
    uint64_t id = GetBigEndian64(key.data() + 2);
    if (id != expect_id[fi]++) return Error(EIO, "file chunk ids not contiguous");
    auto r = DecodeFileChunk(value);
    if (!r.ok()) return r.error();
    if (r->content >= n || r->offset < next_offset[fi] || r->offset + r->length > file_bytes ||
        r->length > t.meta_.chunk_size || r->offset % t.meta_.edge_size != 0 || r->length % t.meta_.edge_size != 0 ||
        (f == ChunkFile::kRow && r->content != id)) {
      return Error(EIO, std::string(ChunkFileName(f)) + " chunk " + std::to_string(id) + " out of bounds");
    }
    next_offset[fi] = r->offset + r->length;
    const ChunkRecord& c = records[r->content];
    if (c.edge_count * t.meta_.edge_size != r->length || c.block_i >= t.meta_.partitions ||
        c.block_j >= t.meta_.partitions || c.max_source >= t.meta_.vertices) {
      return Error(EIO, "chunk record " + std::to_string(r->content) + " disagrees with its extent");
    }
    Chunk chunk;
    chunk.id = id;
    chunk.file = f;
    chunk.offset = r->offset;
    chunk.length = r->length;
    chunk.edge_count = c.edge_count;
    chunk.block_i = c.block_i;
    chunk.block_j = c.block_j;
    chunk.content = r->content;
    chunk.num_sources = c.num_sources;
    chunk.min_source = c.min_source;
    chunk.max_source = c.max_source;
    chunk.source_degree_sum = c.source_degree_sum;
    chunk.sources_sorted = c.sources_sorted;
    (f == ChunkFile::kColumn ? t.column_ : t.row_).push_back(chunk);
    return Status::Ok();
  });
  if (!s.ok()) return Damaged(graph_dir, s.error().message());
  if (t.column_.size() != t.meta_.column_chunks || t.row_.size() != n) return Damaged(graph_dir, "file chunk records missing");
  return t;
}

const Chunk* ChunkTable::FindByOffset(ChunkFile file, uint64_t offset) const {
  auto list = chunks(file);
  auto it = std::upper_bound(list.begin(), list.end(), offset,
                             [](uint64_t off, const Chunk& c) { return off < c.offset; });
  if (it == list.begin()) return nullptr;
  --it;
  return offset < it->offset + it->length ? &*it : nullptr;
}

namespace {

// Checks decoded sources against their chunk record.
Status CheckSources(const Chunk& c, std::span<const SourceCount> sources) {
  if (sources.size() != c.num_sources || sources.empty() || sources.front().vertex != c.min_source ||
      sources.back().vertex != c.max_source) {
    return Error(EIO, "sources of chunk " + std::to_string(c.content) + " disagree with its record");
  }
  uint64_t edges = 0;
  for (const SourceCount& s : sources) edges += s.edges;
  if (edges != c.edge_count) return Error(EIO, "edge counts of chunk " + std::to_string(c.content) + " do not add up");
  return Status::Ok();
}

}  // namespace

Result<std::vector<SourceCount>> ChunkTable::ContentSources(uint64_t content) const {
  if (content >= row_.size()) return Error(EINVAL, "no chunk content " + std::to_string(content));
  auto value = db_->Get(SourcesKey(content_keys_[content]));
  if (!value.ok()) return Damaged(graph_dir_, value.error().message());
  if (!value->has_value()) return Damaged(graph_dir_, "sources of chunk " + std::to_string(content) + " missing");
  std::vector<SourceCount> out;
  Status s = DecodeSources(**value, &out);
  if (s.ok()) s = CheckSources(row_[content], out);
  if (!s.ok()) return Damaged(graph_dir_, s.error().message());
  return out;
}

Result<std::vector<SourceCount>> ChunkTable::Sources(ChunkFile file, uint64_t id) const {
  auto list = chunks(file);
  if (id >= list.size()) return Error(EINVAL, std::string("no ") + ChunkFileName(file) + " chunk " + std::to_string(id));
  return ContentSources(list[id].content);
}

Status ChunkTable::ForEachContentSources(
    const std::function<Status(uint64_t, std::span<const SourceCount>)>& visit) const {
  uint64_t next = 0;
  std::vector<SourceCount> sources;
  bool visitor_failed = false;
  Error visitor_error(0, "");
  Status s = db_->Scan(kSourcesTag, [&](std::string_view key, std::string_view value) -> Status {
    if (key.size() != 9 || next >= row_.size() || GetBigEndian64(key.data() + 1) != content_keys_[next]) {
      return Error(EIO, "unexpected sources key");
    }
    GRAPHFS_RETURN_IF_ERROR(DecodeSources(value, &sources));
    GRAPHFS_RETURN_IF_ERROR(CheckSources(row_[next], sources));
    Status v = visit(next, sources);
    if (!v.ok()) {
      visitor_failed = true;
      visitor_error = v.error();
      return v;
    }
    ++next;
    return Status::Ok();
  });
  if (visitor_failed) return visitor_error;
  if (!s.ok()) return Damaged(graph_dir_, s.error().message());
  if (next != row_.size()) return Damaged(graph_dir_, "sources records missing");
  return Status::Ok();
}

Result<std::vector<uint32_t>> ChunkTable::Degrees() const {
  std::vector<uint32_t> degrees;
  degrees.reserve(meta_.vertices);
  Status s = db_->Scan(kDegreesTag, [&](std::string_view key, std::string_view value) -> Status {
    if (key.size() != 9 || GetBigEndian64(key.data() + 1) != degrees.size()) return Error(EIO, "unexpected degrees key");
    GRAPHFS_RETURN_IF_ERROR(DecodeDegrees(value, &degrees));
    if (degrees.size() > meta_.vertices) return Error(EIO, "too many degrees");
    return Status::Ok();
  });
  if (!s.ok()) return Damaged(graph_dir_, s.error().message());
  if (degrees.size() != meta_.vertices) return Damaged(graph_dir_, "degree records missing");
  return degrees;
}

Status ChunkTable::DeepCheck() const {
  auto degrees = Degrees();
  if (!degrees.ok()) return degrees.error();
  std::vector<uint64_t> counted(meta_.vertices, 0);
  GRAPHFS_RETURN_IF_ERROR(ForEachContentSources([&](uint64_t content, std::span<const SourceCount> sources) -> Status {
    const Chunk& c = row_[content];
    uint64_t sum = 0;
    for (const SourceCount& s : sources) {
      counted[s.vertex] += s.edges;
      sum += (*degrees)[s.vertex];
    }
    if (sum != c.source_degree_sum) return Damaged(graph_dir_, "degree sum of chunk " + std::to_string(content));
    return Status::Ok();
  }));
  for (uint64_t v = 0; v < meta_.vertices; ++v) {
    if (counted[v] != (*degrees)[v]) return Damaged(graph_dir_, "degree of vertex " + std::to_string(v));
  }
  return Status::Ok();
}

}  // namespace graphfs::chunkindex
