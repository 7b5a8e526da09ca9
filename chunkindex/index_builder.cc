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
#include "chunkindex/index_scan.h"
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
  ScanRanges(st, threads);
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
