#include "chunkindex/index_builder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "chunkindex/chunk_index.h"
#include "chunkindex/chunk_layout.h"
#include "chunkindex/fingerprint.h"
#include "chunkindex/index_db.h"
#include "chunkindex/index_install.h"
#include "chunkindex/progress.h"
#include "common/size_parse.h"
#include "common/unique_fd.h"
#include "grid/graph_file.h"
#include "grid/grid_layout.h"
#include "grid/posix_io.h"

namespace graphfs::chunkindex {

namespace {

using grid::EdgeOrder;
using grid::GridLayout;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

const char* const kFingerprintFiles[] = {grid::kMetaFile, grid::kColumnOffsetFile, grid::kRowOffsetFile,
                                         grid::kColumnFile, grid::kRowFile};

Result<std::vector<FileFingerprint>> TakeFingerprints(const std::string& dir, const grid::StubFiles* stubs) {
  std::vector<FileFingerprint> out;
  for (const char* name : kFingerprintFiles) {
    auto f = TakeFingerprint(dir, name, stubs);
    if (!f.ok()) return f.error();
    out.push_back(std::move(*f));
  }
  return out;
}

// Column and row must hold the same blocks. Compares the first 4 KiB of up to
// 256 evenly spaced non-empty blocks (not those of `skip_ranges`: source ranges reused as they were).
Status SpotCheckColumnAgainstRow(const GridLayout& layout, const std::vector<bool>* skip_ranges) {
  // Either may be an extent map (a graph version's, grid/graph_file.h).
  auto col = grid::GraphFile::Open(layout.OrderFile(EdgeOrder::kColumn), layout.stubs());
  if (!col.ok()) return col.error();
  auto row = grid::GraphFile::Open(layout.OrderFile(EdgeOrder::kRow), layout.stubs());
  if (!row.ok()) return row.error();
  const uint64_t p = layout.partitions();
  const uint64_t blocks = p * p;
  const uint64_t step = std::max<uint64_t>(1, blocks / 256);
  std::vector<char> a(4096), b(4096);
  for (uint64_t blk = 0; blk < blocks; blk += step) {
    uint64_t i = blk / p, j = blk % p;
    if (skip_ranges != nullptr && (*skip_ranges)[i]) continue;
    uint64_t n = std::min<uint64_t>(4096, layout.BlockBytes(i, j));
    if (n == 0) continue;
    GRAPHFS_RETURN_IF_ERROR(col->ReadExact(a.data(), n, layout.BlockBegin(EdgeOrder::kColumn, i, j)));
    GRAPHFS_RETURN_IF_ERROR(row->ReadExact(b.data(), n, layout.BlockBegin(EdgeOrder::kRow, i, j)));
    if (std::memcmp(a.data(), b.data(), n) != 0) {
      return Error(EINVAL, "block (" + std::to_string(i) + "," + std::to_string(j) +
                               ") differs between column and row; the graph is inconsistent (re-run preprocess)");
    }
  }
  return Status::Ok();
}

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

// What a build takes from a previous version's index (BuildOptions::reuse_from).
struct Reuse {
  std::unique_ptr<IndexDb> db;
  ChunkPlan plan;               // the previous version's chunks
  std::vector<bool> ranges;     // per source range: blocks (i, *) are the same files
};

// Everything the workers share.
struct BuildState {
  const Reuse* reuse = nullptr;
  std::atomic<uint64_t> ranges_reused{0};
  const GridLayout* layout = nullptr;
  const ChunkPlan* plan = nullptr;
  IndexDb* db = nullptr;
  ProgressBar* progress = nullptr;
  uint64_t read_bytes = 0;
  std::atomic<uint64_t> next_range{0};
  std::atomic<bool> failed{false};
  std::atomic<uint64_t> source_pairs{0};
  std::mutex mu;
  std::optional<Error> error;

  void Fail(const Error& e) {
    std::lock_guard<std::mutex> lock(mu);
    if (!error) error = e;
    failed = true;
  }
};

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

// In a shared database: the records the new plan has no more of — the chunks a block lost (their
// keys are per block), and the chunk lists' entries past their new ends.
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

void RemoveAll(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

// Fills `reuse` from the previous version `old_dir` of graph `g`; returns why it cannot be used
// ("" when it can). Only errors of the new build itself are Errors.
Result<std::string> PrepareReuse(const std::string& old_dir, const GridLayout& g, uint64_t chunk_size, Reuse& reuse) {
  auto table = ChunkTable::Open(old_dir, g.stubs());  // fresh, checked against its files
  if (!table.ok()) return "the previous version's index is not usable (" + table.error().message() + ")";
  const IndexMeta& m = table->meta();
  if (m.chunk_size != chunk_size || m.partitions != g.partitions() || m.vertices != g.vertices() ||
      m.edge_size != g.edge_size())
    return std::string("the previous version's index has another chunk size or shape");
  auto old_layout = GridLayout::Open(old_dir, g.stubs());
  if (!old_layout.ok()) return "the previous version does not open (" + old_layout.error().message() + ")";
  auto plan = PlanChunks(*old_layout, chunk_size);
  if (!plan.ok()) return plan.error();
  const uint64_t p = g.partitions();
  reuse.ranges.assign(p, false);
  uint64_t same = 0;
  for (uint64_t i = 0; i < p; ++i) {
    bool shared = true;
    for (uint64_t j = 0; j < p && shared; ++j) {
      struct stat a, b;
      shared = ::stat(g.Path(grid::BlockFileName(i, j)).c_str(), &a) == 0 &&
               ::stat(old_layout->Path(grid::BlockFileName(i, j)).c_str(), &b) == 0 && a.st_dev == b.st_dev &&
               a.st_ino == b.st_ino && g.BlockBytes(i, j) == old_layout->BlockBytes(i, j);
    }
    reuse.ranges[i] = shared;
    same += shared ? 1 : 0;
  }
  if (same == 0) return std::string("no source range has all its blocks unchanged");
  auto db = IndexDb::OpenReadOnly(IndexPath(old_dir));
  if (!db.ok()) return "the previous version's index does not open (" + db.error().message() + ")";
  reuse.db = std::move(*db);
  reuse.plan = std::move(*plan);
  return std::string();
}

}  // namespace

Result<BuildReport> BuildIndex(const BuildOptions& options) {
  const double start = Now();
  auto say = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  BuildReport report;
  auto layout = GridLayout::Open(options.graph_dir, options.stubs);
  if (!layout.ok()) return layout.error();
  const GridLayout& g = *layout;

  report.machine = ProbeMachine();
  if (options.chunk_size) {
    if (*options.chunk_size == 0) return Error(EINVAL, "--chunk-size must be positive");
    report.chunk_size = OverrideChunkSize(*options.chunk_size, g.edge_size());
  } else {
    ChunkSizeInputs in;
    in.llc_bytes = report.machine.llc_bytes;
    in.cores = report.machine.cores;
    in.graph_bytes = g.FileBytes();
    in.vertices = g.vertices();
    in.edge_size = g.edge_size();
    report.chunk_size = ChooseChunkSize(in);
    report.chunk_size.explanation += "; LLC from " + report.machine.llc_source;
  }
  say(report.chunk_size.explanation);

  report.graph_bytes = 2 * g.FileBytes();
  for (uint64_t i = 0; i < g.partitions(); ++i) {
    for (uint64_t j = 0; j < g.partitions(); ++j) report.graph_bytes += g.BlockBytes(i, j);
  }

  // Before anything else looks at the index: what killed builds left goes (also when
  // there is nothing to build), and an index one of them had set aside comes back.
  SweepDeadBuilds(options.graph_dir);

  // Up to date already?
  if (!options.force) {
    auto existing = ChunkTable::Open(options.graph_dir, options.stubs);
    if (existing.ok()) {
      if (existing->chunk_size() == report.chunk_size.bytes) {
        report.rebuilt = false;
        report.reason = "index is up to date (graph unchanged, chunk size " + std::to_string(report.chunk_size.bytes) +
                        " B); nothing to do";
        report.index_bytes = DirectoryBytes(IndexPath(options.graph_dir));
        report.chunks = existing->chunks(ChunkFile::kColumn).size();
        report.seconds = Now() - start;
        return report;
      }
      report.reason = "chunk size changed from " + std::to_string(existing->chunk_size()) + " B to " +
                      std::to_string(report.chunk_size.bytes) + " B";
    } else {
      // The reason without the advice to re-run graphfs-index: that is what we are doing.
      report.reason = existing.error().message();
      size_t advice = report.reason.find("; re-run `graphfs-index");
      if (advice != std::string::npos) report.reason.resize(advice);
    }
  } else {
    report.reason = "--force";
  }
  say("building: " + report.reason);

  auto before = TakeFingerprints(options.graph_dir, options.stubs);
  if (!before.ok()) return before.error();
  for (const FileFingerprint& f : *before) {
    if ((f.name == grid::kColumnFile || f.name == grid::kRowFile) && f.size != g.FileBytes()) {
      return Error(EINVAL, options.graph_dir + "/" + f.name + " has " + std::to_string(f.size) + " bytes, meta says " +
                               std::to_string(g.FileBytes()) + " (" + std::to_string(g.edges()) + " edges of " +
                               std::to_string(g.edge_size()) + " B)");
    }
  }
  BuildState st;
  Reuse reuse;
  if (!options.reuse_from.empty()) {
    auto why_not = PrepareReuse(options.reuse_from, g, report.chunk_size.bytes, reuse);
    if (!why_not.ok()) return why_not.error();
    if (why_not->empty()) {
      st.reuse = &reuse;
    } else {
      say("every source range is scanned: " + *why_not);
    }
  }
  // The reused ranges' blocks are the previous version's files, checked when it was indexed.
  GRAPHFS_RETURN_IF_ERROR(SpotCheckColumnAgainstRow(g, st.reuse != nullptr ? &reuse.ranges : nullptr));
  auto plan = PlanChunks(g, report.chunk_size.bytes);
  if (!plan.ok()) return plan.error();
  report.chunks = plan->row.size();

  const std::string graphfs_dir = options.graph_dir + "/.graphfs";
  if (::mkdir(graphfs_dir.c_str(), 0755) != 0 && errno != EEXIST) return Error::FromErrno("mkdir " + graphfs_dir);
  const std::string tmp = BuildDirPath(options.graph_dir);
  // Reused ranges' records are the old ones under the same keys: the new index starts as the old.
  const bool shared = st.reuse != nullptr;
  auto db = shared ? IndexDb::CreateSharing(tmp, IndexPath(options.reuse_from)) : IndexDb::Create(tmp);
  if (!db.ok()) {
    RemoveAll(tmp);
    return db.error();
  }

  uint64_t scanned = 0;  // the bytes of `row` the workers will read
  for (uint64_t i = 0; i < g.partitions(); ++i)
    if (st.reuse == nullptr || !reuse.ranges[i])
      scanned += g.BlockEnd(EdgeOrder::kRow, i, g.partitions() - 1) - g.BlockBegin(EdgeOrder::kRow, i, 0);
  ProgressBar progress("indexing", scanned, options.progress);
  st.layout = &g;
  st.plan = &*plan;
  st.db = db->get();
  st.progress = &progress;
  st.read_bytes = options.read_bytes;
  int threads = options.threads > 0 ? options.threads : report.machine.cores;
  threads = static_cast<int>(std::clamp<uint64_t>(static_cast<uint64_t>(threads), 1, g.partitions()));
  report.threads = threads;
  const double scan_start = Now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&st] {
      RangeWorker w(&st);
      Status s = w.Run();
      if (!s.ok()) st.Fail(s.error());
    });
  }
  for (std::thread& t : workers) t.join();
  progress.Stop();
  report.scan_seconds = Now() - scan_start;
  const double finish_start = Now();
  report.bytes_read = progress.done();
  if (st.error) {
    db->reset();
    RemoveAll(tmp);
    return *st.error;
  }
  report.source_pairs = st.source_pairs;
  report.ranges_reused = st.ranges_reused;

  Status s = WriteFileChunks(db->get(), *plan);
  if (s.ok() && shared) s = DeleteStale(db->get(), reuse.plan, *plan);
  IndexMeta meta;
  meta.vertices = g.vertices();
  meta.edges = g.edges();
  meta.partitions = g.partitions();
  meta.edge_size = g.edge_size();
  meta.chunk_size = report.chunk_size.bytes;
  meta.chunk_size_overridden = report.chunk_size.overridden;
  meta.llc_bytes = report.machine.llc_bytes;
  meta.cores = static_cast<uint64_t>(report.machine.cores);
  meta.chunk_size_explanation = report.chunk_size.explanation;
  meta.column_chunks = plan->column.size();
  meta.row_chunks = plan->row.size();
  meta.files = *before;
  meta.built_unix_s = static_cast<int64_t>(std::time(nullptr));
  meta.build_seconds = Now() - start;
  if (s.ok()) {
    IndexBatch batch;  // the meta record goes last: a database without it is incomplete
    batch.Put(MetaKey(), EncodeMeta(meta));
    s = (*db)->Write(&batch);
  }
  if (s.ok()) s = (*db)->Finish();
  db->reset();
  if (s.ok()) {
    auto after = TakeFingerprints(options.graph_dir, options.stubs);
    if (!after.ok()) {
      s = after.error();
    } else if (*after != *before) {
      s = Error(EAGAIN, "the graph changed while it was being indexed; run graphfs-index again");
    }
  }
  if (!s.ok()) {
    RemoveAll(tmp);
    return s.error();
  }

  // Swap the new index in.
  if (Status installed = InstallIndex(options.graph_dir, tmp); !installed.ok()) {
    RemoveAll(tmp);
    return installed.error();
  }
  const std::string final_path = IndexPath(options.graph_dir);
  report.rebuilt = true;
  report.finish_seconds = Now() - finish_start;
  report.index_bytes = DirectoryBytes(final_path);
  report.shared = shared;
  report.index_bytes_written = shared ? UnsharedBytes(final_path) : report.index_bytes;
  report.seconds = Now() - start;
  return report;
}

Status CheckIndex(const std::string& graph_dir) {
  auto table = ChunkTable::Open(graph_dir);
  if (!table.ok()) return table.error();
  return table->DeepCheck();
}

}  // namespace graphfs::chunkindex
