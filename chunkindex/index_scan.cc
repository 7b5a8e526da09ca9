#include "chunkindex/index_scan.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "chunkindex/index_format.h"
#include "grid/graph_file.h"

namespace graphfs::chunkindex {

namespace {

using grid::EdgeOrder;
using grid::GridLayout;

struct ChunkSummary {
  uint64_t content = 0;
  ChunkRecord record;
  std::string sources;  // EncodeSources
};

// The key of content `content`'s records under `plan` (index_format.h, ContentKey).
uint64_t KeyOf(const ChunkPlan& plan, uint64_t content) {
  const ChunkExtent& e = plan.row[content];
  const uint64_t block = uint64_t{e.block_i} * plan.partitions + e.block_j;
  return ContentKey(block, content - plan.block_first_content[block]);
}

class RangeWorker {
 public:
  explicit RangeWorker(BuildState* st) : st_(st) {}

  Status Run() {
    const GridLayout& layout = *st_->layout;
    auto file = grid::GraphFile::Open(layout.OrderFile(EdgeOrder::kRow), layout.stubs());
    if (!file.ok()) return file.error();
    row_ = std::make_unique<grid::GraphFile>(std::move(*file));
    const uint64_t es = layout.edge_size();
    buffer_size_ = std::max<uint64_t>(st_->read_bytes / es, 1) * es;
    buffer_.reset(new char[buffer_size_]);
    const uint64_t max_range = layout.ranges().Range(0).size();  // the first range is the largest
    counts_.assign(max_range, 0);
    seen_.assign((max_range + 63) / 64, 0);
    degrees_.assign(max_range, 0);
    while (!st_->failed) {
      uint64_t i = st_->next_range.fetch_add(1);
      if (i >= layout.partitions()) break;
      if (st_->reuse != nullptr && st_->reuse->ranges[i]) {
        GRAPHFS_RETURN_IF_ERROR(KeepRange(i));
      } else {
        GRAPHFS_RETURN_IF_ERROR(DoRange(i));
      }
    }
    return Status::Ok();
  }

 private:
  // Range i's blocks are the previous version's files, and the new database started as the old
  // one (IndexDb::CreateSharing): the range's records are there already, under the same keys (a
  // chunk's key is where it is, not its content id). They are only counted.
  Status KeepRange(uint64_t i) {
    const ChunkPlan& now = *st_->plan;
    const ChunkPlan& then = st_->reuse->plan;
    const uint64_t p = st_->layout->partitions();
    const uint64_t first = now.block_first_content[i * p], count = now.block_first_content[i * p + p] - first;
    if (then.block_first_content[i * p + p] - then.block_first_content[i * p] != count)
      return Error(EINVAL, "internal: a reused source range has another number of chunks");
    uint64_t pairs = 0;
    for (uint64_t k = 0; k < count; ++k) {
      auto v = st_->reuse->db->Get(ChunkKey(KeyOf(now, first + k)));
      if (!v.ok()) return v.error();
      if (!*v) return Error(EINVAL, "the previous version's index lacks a record it should have; rebuild it");
      auto record = DecodeChunk(**v);
      if (!record.ok()) return record.error();
      pairs += record->num_sources;
    }
    st_->source_pairs += pairs;
    st_->ranges_reused += 1;
    return Status::Ok();
  }

  Status DoRange(uint64_t i) {
    const GridLayout& layout = *st_->layout;
    const ChunkPlan& plan = *st_->plan;
    const uint64_t p = layout.partitions();
    const grid::VertexRange src = layout.ranges().Range(i);
    std::fill(degrees_.begin(), degrees_.begin() + static_cast<ptrdiff_t>(src.size()), 0);
    pos_ = buf_begin_ = buf_end_ = layout.BlockBegin(EdgeOrder::kRow, i, 0);
    range_end_ = layout.BlockEnd(EdgeOrder::kRow, i, p - 1);
    std::vector<ChunkSummary> summaries;
    for (uint64_t c = plan.block_first_content[i * p]; c < plan.block_first_content[i * p + p]; ++c) {
      if (st_->failed) return Status::Ok();
      const ChunkExtent& e = plan.row[c];
      const grid::VertexRange dst = layout.ranges().Range(e.block_j);
      if (e.offset != pos_) return Error(EINVAL, "internal: chunk plan out of step with the stream");
      uint64_t remaining = e.length;
      last_source_ = 0;
      sorted_ = true;
      while (remaining > 0) {
        if (pos_ == buf_end_) GRAPHFS_RETURN_IF_ERROR(Refill());
        uint64_t take = std::min(remaining, buf_end_ - pos_);
        const char* data = buffer_.get() + (pos_ - buf_begin_);
        Status s = layout.edge_size() == 12 ? Count<12>(data, take, src, dst) : Count<8>(data, take, src, dst);
        if (!s.ok()) return s;
        pos_ += take;
        remaining -= take;
      }
      summaries.push_back(FinishChunk(c, e, src));
    }
    // Degrees of range i are final: sum them per chunk and write the range.
    IndexBatch batch;
    std::vector<SourceCount> sources;
    uint64_t pairs = 0;
    for (ChunkSummary& s : summaries) {
      GRAPHFS_RETURN_IF_ERROR(DecodeSources(s.sources, &sources));
      uint64_t sum = 0;
      for (const SourceCount& sc : sources) sum += degrees_[sc.vertex - src.begin];
      s.record.source_degree_sum = sum;
      pairs += sources.size();
      batch.Put(ChunkKey(KeyOf(plan, s.content)), EncodeChunk(s.record));
      batch.Put(SourcesKey(KeyOf(plan, s.content)), s.sources);
    }
    for (uint64_t v = src.begin; v < src.end; v += kDegreesPerRecord) {
      uint64_t n = std::min(kDegreesPerRecord, src.end - v);
      batch.Put(DegreesKey(v), EncodeDegrees(std::span<const uint32_t>(degrees_.data() + (v - src.begin), n)));
    }
    st_->source_pairs += pairs;
    return st_->db->Write(&batch);
  }

  Status Refill() {
    const uint64_t n = std::min<uint64_t>(buffer_size_, range_end_ - pos_);
    GRAPHFS_RETURN_IF_ERROR(row_->ReadExact(buffer_.get(), n, pos_));
    buf_begin_ = pos_;
    buf_end_ = pos_ + n;
    st_->progress->Add(n);
    return Status::Ok();
  }

  template <size_t kStride>
  Status Count(const char* data, uint64_t bytes, grid::VertexRange src, grid::VertexRange dst) {
    const uint32_t src_begin = static_cast<uint32_t>(src.begin), src_size = static_cast<uint32_t>(src.size());
    const uint32_t dst_begin = static_cast<uint32_t>(dst.begin), dst_size = static_cast<uint32_t>(dst.size());
    const uint64_t n = bytes / kStride;
    uint32_t* counts = counts_.data();
    uint32_t last = last_source_;
    bool sorted = sorted_;
    for (uint64_t k = 0; k < n; ++k) {
      uint32_t s, t;
      std::memcpy(&s, data + k * kStride, 4);
      std::memcpy(&t, data + k * kStride + 4, 4);
      const uint32_t local = s - src_begin;
      if (local >= src_size || t - dst_begin >= dst_size) [[unlikely]] {
        return Error(EINVAL, st_->layout->OrderFile(EdgeOrder::kRow) + ": edge " + std::to_string(static_cast<int32_t>(s)) +
                                 " -> " + std::to_string(static_cast<int32_t>(t)) + " at byte " +
                                 std::to_string(pos_ + k * kStride) + " lies outside its block (source range " +
                                 std::to_string(src.begin) + ".." + std::to_string(src.end) + ", target range " +
                                 std::to_string(dst.begin) + ".." + std::to_string(dst.end) + ")");
      }
      if (counts[local]++ == 0) touched_.push_back(local);
      sorted &= s >= last;
      last = s;
    }
    last_source_ = last;
    sorted_ = sorted;
    return Status::Ok();
  }

  ChunkSummary FinishChunk(uint64_t content, const ChunkExtent& e, grid::VertexRange src) {
    // Sources in ascending order: already so when blocks are sorted by source;
    // through a bitmap when the chunk touches much of the range; else a sort.
    if (!std::is_sorted(touched_.begin(), touched_.end())) {
      const size_t words = (src.size() + 63) / 64;
      if (words < touched_.size() * 8) {
        // Mark the touched vertices in a bitmap and read them back in order.
        for (uint32_t l : touched_) seen_[l >> 6] |= uint64_t{1} << (l & 63);
        touched_.clear();
        for (size_t w = 0; w < words; ++w) {
          for (uint64_t bits = seen_[w]; bits != 0; bits &= bits - 1) {
            touched_.push_back(static_cast<uint32_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits))));
          }
          seen_[w] = 0;
        }
      } else {
        std::sort(touched_.begin(), touched_.end());
      }
    }
    scratch_.clear();
    for (uint32_t l : touched_) {
      scratch_.push_back({static_cast<uint32_t>(src.begin + l), counts_[l]});
      degrees_[l] += counts_[l];
      counts_[l] = 0;
    }
    touched_.clear();
    ChunkSummary s;
    s.content = content;
    s.record.block_i = e.block_i;
    s.record.block_j = e.block_j;
    s.record.edge_count = e.length / st_->layout->edge_size();
    s.record.num_sources = static_cast<uint32_t>(scratch_.size());
    s.record.min_source = scratch_.front().vertex;
    s.record.max_source = scratch_.back().vertex;
    s.record.sources_sorted = sorted_;
    EncodeSources(scratch_, &s.sources);
    return s;
  }

  BuildState* st_;
  std::unique_ptr<grid::GraphFile> row_;  // an ordinary file or an extent map
  std::unique_ptr<char[]> buffer_;  // not zero-filled: pages are touched only as reads fill them
  uint64_t buffer_size_ = 0;
  std::vector<uint64_t> seen_;
  std::vector<uint32_t> counts_, degrees_, touched_;
  std::vector<SourceCount> scratch_;
  uint64_t pos_ = 0, buf_begin_ = 0, buf_end_ = 0, range_end_ = 0;
  uint32_t last_source_ = 0;  // of the chunk's edges so far
  bool sorted_ = true;        //   and whether they came in source order
};

}  // namespace

void ScanRanges(BuildState& st, int threads) {
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&st] {
      RangeWorker w(&st);
      Status s = w.Run();
      if (!s.ok()) st.Fail(s.error());
    });
  }
  for (std::thread& t : workers) t.join();
}

Status WriteFileChunks(IndexDb* db, const ChunkPlan& plan) {
  IndexBatch batch;
  for (ChunkFile f : {ChunkFile::kColumn, ChunkFile::kRow}) {
    const auto& list = f == ChunkFile::kColumn ? plan.column : plan.row;
    for (uint64_t id = 0; id < list.size(); ++id) {
      batch.Put(FileChunkKey(f, id), EncodeFileChunk({list[id].offset, list[id].length, list[id].content}));
      if (batch.bytes() > (8 << 20)) {
        GRAPHFS_RETURN_IF_ERROR(db->Write(&batch));
        batch = IndexBatch();
      }
    }
  }
  return db->Write(&batch);
}

Status DeleteStale(IndexDb* db, const ChunkPlan& then, const ChunkPlan& now) {
  IndexBatch batch;
  const uint64_t blocks = now.block_first_content.size() - 1;
  for (uint64_t b = 0; b < blocks; ++b) {
    const uint64_t had = then.block_first_content[b + 1] - then.block_first_content[b];
    const uint64_t has = now.block_first_content[b + 1] - now.block_first_content[b];
    for (uint64_t k = has; k < had; ++k) {
      batch.Delete(ChunkKey(ContentKey(b, k)));
      batch.Delete(SourcesKey(ContentKey(b, k)));
    }
  }
  for (uint64_t id = now.column.size(); id < then.column.size(); ++id) batch.Delete(FileChunkKey(ChunkFile::kColumn, id));
  for (uint64_t id = now.row.size(); id < then.row.size(); ++id) batch.Delete(FileChunkKey(ChunkFile::kRow, id));
  return db->Write(&batch);
}

}  // namespace graphfs::chunkindex
