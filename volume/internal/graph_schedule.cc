#include "volume/internal/graph_schedule.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <bit>
#include <chrono>

#include "common/clock.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "grid/posix_io.h"
#include "volume/internal/run_grains.h"
#include "volume/internal/striped_source.h"
#include "volume/internal/volume_core.h"
#include "volume/internal/volume_file.h"

namespace graphfs::volume {

namespace {

// The cache counts readers by process; the LP loader is the daemon itself.
const uint32_t kLoaderPid = static_cast<uint32_t>(::getpid());

// LPs loading at once (one loader thread each, taking the scheduler's plans), each with CopyRuns's full
// depth and its own buffers: sharing one depth between two loaders (4 batches each) made a sparse
// W5 at scale 24 load at half the rate (its runs are ~50 KiB requests: what keeps the disks busy
// is the requests in flight, BENCHMARKS.md, issue 31), for 128 MiB of buffers saved.
constexpr unsigned kLoaders = 2;

// `column` not striped itself — an ordinary file, or an extent map (a graph version) — : the LP's
// ranges read from its pieces (an ordinary file is its own one piece).
Status LoadFromGraphFile(VolumeCore& core, const grid::GraphFile& column, const std::string& dir,
                  const std::vector<CopyRange>& whole, const std::vector<CopyRange>& runs, char* out,
                  VolumeCore::RunsReport& report, std::vector<AlignedBuffer>& buffers) {
  // Each range split at the map's extents: plain pieces are pread; the ranges of each striped
  // piece (a striped graph's version) are gathered and copied as a striped `column` would be —
  // whole chunks through the cache, runs around it (a compressed piece: all from its units).
  struct PieceRanges {
    std::vector<CopyRange> whole, runs;
  };
  std::map<const MappedPiece*, PieceRanges> striped;
  for (const std::vector<CopyRange>* list : {&whole, &runs}) {
    for (const CopyRange& r : *list) {
      uint64_t at = r.out_offset;
      for (const grid::GraphFile::Piece& piece : column.Pieces(r.offset, r.length)) {
        if (piece.stub != nullptr) {
          // Only the volume's stub_files() opened this map's stubs: they are MappedPieces.
          PieceRanges& to = striped[static_cast<const MappedPiece*>(piece.stub)];
          (list == &whole ? to.whole : to.runs).push_back({piece.offset, piece.length, at});
        } else {
          GRAPHFS_RETURN_IF_ERROR(grid::PreadExact(piece.fd, out + at, piece.length, piece.offset, column.path()));
          if (list == &runs) {
            report.disk_bytes += piece.length;
            ++report.requests;
          }
        }
        at += piece.length;
      }
    }
  }
  auto by_offset = [](const CopyRange& a, const CopyRange& b) { return a.offset < b.offset; };
  for (auto& [piece, ranges] : striped) {
    const std::shared_ptr<StripedSource> source = piece->file()->shared_source();
    if (source->compressed()) {
      ranges.whole.insert(ranges.whole.end(), ranges.runs.begin(), ranges.runs.end());
      ranges.runs.clear();
    }
    std::sort(ranges.whole.begin(), ranges.whole.end(), by_offset);
    std::sort(ranges.runs.begin(), ranges.runs.end(), by_offset);
    if (!ranges.whole.empty()) {
      Status s = core.CopyRanges(source, source->size(), ranges.whole, out, kLoaderPid, /*done_with_units=*/true);
      if (!s.ok()) return s.error().Wrap("chunks of " + dir + "/column");
    }
    // CopyRuns wants disjoint ranges; a map never reads a piece's bytes twice, but a damaged
    // one might: then one range at a time.
    bool disjoint = true;
    for (size_t k = 1; k < ranges.runs.size(); ++k)
      disjoint &= ranges.runs[k - 1].offset + ranges.runs[k - 1].length <= ranges.runs[k].offset;
    if (disjoint && !ranges.runs.empty()) {
      Status s = core.CopyRuns(source, source->size(), ranges.runs, out, kLoaderPid, &report, &buffers);
      if (!s.ok()) return s.error().Wrap("runs of " + dir + "/column");
    } else {
      for (const CopyRange& r : ranges.runs) GRAPHFS_RETURN_IF_ERROR(piece->ReadExact(out + r.out_offset, r.length, r.offset));
    }
  }
  return Status::Ok();
}


// The index's (chunk, source) pairs, from its chunk records alone (one per content: row's).
uint64_t IndexPairs(const chunkindex::ChunkTable& table) {
  uint64_t pairs = 0;
  for (const chunkindex::Chunk& c : table.chunks(chunkindex::ChunkFile::kRow)) pairs += c.num_sources;
  return pairs;
}

// What the index of `table` will take in memory, before it is loaded: per pair about 7 bytes —
// the finder's list or bitmap (4), the source runs' varints (~3) —, per chunk ~64 bytes of
// entries, and the finder's inverted form where it is built (InvertedBytes: 4 per pair and per
// vertex). An estimate: the reservation is resized to the truth.
uint64_t IndexBytesAhead(const chunkindex::ChunkTable& table, uint64_t pairs, bool inverted) {
  const uint64_t chunks = table.chunks(chunkindex::ChunkFile::kColumn).size() + table.chunks(chunkindex::ChunkFile::kRow).size();
  return pairs * 7 + chunks * 64 + (inverted ? chunkindex::ActiveChunkFinder::InvertedBytes(pairs, table.vertices()) : 0);
}

// The active-chunk finder's inverted form (chunkindex/active_chunk_finder.h: 4 B per (chunk,
// source) pair and per vertex) answers a sparse active set faster than the forward form, but a
// query is made once per job iteration, and the forward form's full scan took milliseconds at
// scale 22 (9 M pairs) — while the inverted form's 52 MiB were 27% of a 192 MiB budget, room the
// frames would otherwise hold (docs/memory-as-cache.md, tenth part). So it is built only where it
// costs at most 1/kInvertedFormShare of the budget (or without a budget: beside a fixed cache).
constexpr uint64_t kInvertedFormShare = 32;

bool WantsInvertedForm(VolumeCore& core, const chunkindex::ChunkTable& table, uint64_t pairs) {
  if (!core.budget().enabled()) return true;
  return chunkindex::ActiveChunkFinder::InvertedBytes(pairs, table.vertices()) <=
         core.budget().total() / kInvertedFormShare;
}

}  // namespace

std::vector<int64_t> GraphSchedule::Stamp(const std::string& dir) {
  return FilesStamp({chunkindex::IndexPath(dir), dir + "/column"});
}

bool GraphSchedule::Fresh() const { return Stamp(dir_) == stamp_; }

Result<std::shared_ptr<GraphSchedule>> GraphSchedule::Open(VolumeCore& core, const std::string& dir,
                                                           std::shared_ptr<chunkindex::LpAnswers> answers) {
  std::shared_ptr<GraphSchedule> g(new GraphSchedule());
  g->core_ = &core;
  g->dir_ = dir;
  g->stamp_ = Stamp(dir);
  struct stat st;
  if (::stat((dir + "/meta").c_str(), &st) != 0)
    return Error(ENOENT, dir + " is not a graph directory (no meta file)");
  if (::stat(chunkindex::IndexPath(dir).c_str(), &st) != 0)
    return Error(ENOENT, dir + " has no chunk index; run `graphfs-index " + dir + "` first");
  auto table = OpenMountedTable(core, dir);
  if (!table.ok()) return table.error();
  g->table_ = std::make_unique<chunkindex::ChunkTable>(std::move(*table));
  // The cache gives up room for the index before it is loaded, not after: loaded into a full
  // cache it set the daemon's peak (at scale 22, 79 MiB of index on top of the cache a few
  // seconds into the run). Resized to what it took below.
  const uint64_t pairs = IndexPairs(*g->table_);
  const bool inverted = WantsInvertedForm(core, *g->table_, pairs);
  g->reservation_ = core.budget().Reserve(IndexBytesAhead(*g->table_, pairs, inverted));
  auto finder = chunkindex::ActiveChunkFinder::Load(*g->table_, chunkindex::ActiveChunkFinder::Form::kAuto, inverted);
  if (!finder.ok()) return finder.error();
  g->finder_ = std::make_unique<chunkindex::ActiveChunkFinder>(std::move(*finder));

  const std::string column = dir + "/column";
  auto file = OpenMountedGraphFile(core, column, core.options().direct);
  if (!file.ok()) return file.error();
  if (file->striped) {
    if (core.cache() == nullptr) return Error(EIO, column + " is striped but the mount has no cache yet");
    g->striped_ = file->striped;
    auto source = core.MakeSource(g->striped_, column);
    if (!source.ok()) return source.error();
    g->source_ = std::move(*source);
  } else {
    g->plain_ = std::move(file->plain);
  }

  if (core.options().lp_granularity == LpGranularity::kVertex) {
    auto runs = chunkindex::SourceRuns::Load(*g->table_, chunkindex::ChunkFile::kColumn);
    if (!runs.ok()) return runs.error();
    g->runs_ = std::make_unique<chunkindex::SourceRuns>(std::move(*runs));
    const uint64_t unsorted = g->runs_->chunk_count() - g->runs_->sorted_chunks();
    if (unsorted > 0) {
      LogError("lp: " + dir + ": " + std::to_string(unsorted) + " of " + std::to_string(g->runs_->chunk_count()) +
                               " chunks of column are not in source order (preprocessed without --sort-sources); "
                               "logical partitions load them whole");
    }
  }

  const uint64_t p = g->table_->partitions();
  std::vector<chunkindex::ChunkInfo> catalog;
  // A striped `column`: where each chunk's bytes lie on the disks, so that the selection balances
  // each LP over them (chunkindex/lp_scheduler.h), and for a compressed one the bytes of the
  // frames the chunk is decoded from (one, when column was cut at the chunks).
  const bool compressed = g->source_ != nullptr && g->source_->compressed();
  const uint32_t disks = g->striped_ ? g->striped_->map().disks() : 0;
  std::vector<std::vector<chunkindex::DiskBytes>> chunk_disks;
  std::vector<uint64_t> per_disk(disks);
  for (const chunkindex::Chunk& c : g->table_->chunks(chunkindex::ChunkFile::kColumn)) {
    uint64_t stored = 0;
    if (g->striped_) {
      std::fill(per_disk.begin(), per_disk.end(), 0);
      g->source_->DiskShare(c.offset, c.length, per_disk);
      chunk_disks.emplace_back();
      for (uint32_t d = 0; d < disks; ++d) {
        stored += per_disk[d];
        if (per_disk[d] > 0) chunk_disks.back().push_back({d, per_disk[d]});
      }
    }
    if (g->source_ != nullptr) g->chunk_ranges_.emplace_back(c.offset, c.length);
    catalog.push_back({c.offset, c.length, static_cast<uint32_t>(c.block_i * p + c.block_j), c.mean_source_degree(),
                       c.num_sources, c.block_i == c.block_j, compressed ? std::max<uint64_t>(stored, 1) : 0,
                       static_cast<uint32_t>(c.block_j)});
  }
  // The LPs' memory (and, while the graph has jobs, its cached units'): sparse, far larger than
  // the window and the cache so that it never fragments into refusals; what is in use is bounded
  // by them. Freed slices stay resident for reuse within what the LPs' own blocks leave of half
  // the window, and at least a floor up to kIdleFloor; the rest is punched. Half, not all, as the
  // bound: LPs made of borrowed units own few blocks, and with the whole window a compressed W5
  // kept 454–466 MiB idle at the daemon's peak (raw LPs own most of theirs, and keep little idle
  // either way). Under a budget the floor is the whole window, and the idle bytes count as the
  // decoded units' idle memory (volume_core.h, shared_idle), not as the window's (owned_bytes):
  // an LP gone frees up to its size at once beside the units evicted meanwhile, and with half a
  // window kept the demo's f = 1/2 punched and populated again 0.41 GB, with the window 0.07
  // (docs/memory-as-cache.md, thirty-fifth part).
  constexpr uint64_t kIdleFloor = 64ull << 20;
  SharedArena::Options arena;
  arena.budget = core.options().lp_memory / 2;
  arena.idle_limit = std::min(kIdleFloor, core.options().lp_memory / (core.budget().enabled() ? 1 : 2));
  arena.idle_counter = core.shared_idle();
  // Without memory= the cache is cache_size alone, and at cache_size=0 every LP read its frames
  // from the disks again: a BFS over a 512 x 512 grid (11 MB of column) read 5.1 GB in 1,456
  // LPs. Half of what the window would keep idle holds cached units instead (MemoryBudget::Lend).
  if (!core.budget().enabled()) {
    const uint64_t lent = arena.idle_limit / 2;
    arena.idle_limit -= lent;
    g->loan_ = core.budget().Lend(lent);
  }
  // Its size (volume_options.h: SharedLpMemoryBytes): the daemon and each job map it whole,
  // address space, not memory.
  arena.virtual_bytes = SharedLpMemoryBytes(core.options().lp_memory) / SharedArena::kGranule * SharedArena::kGranule;
  auto memory = SharedArena::Create("graphfs-lp:" + dir.substr(dir.rfind('/') + 1), arena);
  if (memory.ok()) {
    g->memory_ = std::move(*memory);
    // `column`'s units load into it from now on, so LPs are made of cached units, not copies.
    if (g->source_) g->source_->SetArena(g->memory_);
  } else {
    LogError("lp: " + dir + ": " + memory.error().message() + "; LPs are kept on the heap and read through the daemon");
  }

  chunkindex::LpScheduler::Options options;
  options.memory = g->memory_;
  if (core.options().lp_granularity == LpGranularity::kVertex) {
    options.granularity = chunkindex::LpScheduler::Options::Granularity::kVertex;
    options.runs = g->runs_.get();
  }
  options.cost = core.read_cost().cost;
  options.diagonal_first = core.options().lp_diagonal;
  options.window_bytes = core.options().lp_memory;
  options.answers = std::move(answers);
  options.max_lp_bytes = std::max<uint64_t>(1, core.options().lp_memory / kLpsPerWindow);
  // An LP reads at most the window from the disks: a sparse pass over a compressed column that
  // needs a run of every frame is a stream of LPs the jobs join as they start their pass, not
  // one whole pass per job (chunkindex/lp_scheduler.h, Options::max_lp_disk_bytes). A dense
  // LP's whole chunks read no more than they hold, so the cap leaves those as they were.
  options.max_lp_disk_bytes = core.options().lp_memory;
  options.disks = disks;
  options.chunk_disks = std::move(chunk_disks);
  g->scheduler_ = std::make_unique<chunkindex::LpScheduler>(std::move(catalog), std::move(options));
  // The cache gives up what the graph's index and its LPs' own memory take while it has jobs
  // (memory=): what they hold now, not the window's ceiling (Recharge). Before the loaders,
  // which resize it.
  g->reservation_.Resize(g->index_bytes());
  // Loading freed as much heap as it kept (the index's records as read); give it back.
  ::malloc_trim(0);
  GraphSchedule* self = g.get();
  for (unsigned i = 0; i < kLoaders; ++i) g->loaders_.emplace_back([self] { self->LoaderLoop(); });
  return g;
}

uint64_t GraphSchedule::owned_bytes() const {
  if (!memory_) return 0;
  // The LPs' own blocks; the cached units LPs borrow are in the arena too, but the cache counts
  // those. Its freed bytes kept resident for the next loads are the decoded units' idle memory
  // (VolumeCore::shared_idle): charged here as well, a unit the cache evicted into them shrank the
  // cache by its size — which evicted more — until the next load took them back.
  const SharedArena::Stats a = memory_->stats();
  return a.budgeted_bytes;
}

void GraphSchedule::Recharge() { reservation_.Resize(index_bytes() + owned_bytes() + loading_reserved_.load()); }

GraphSchedule::~GraphSchedule() {
  // Units in it keep it while they stay cached. A newer schedule of the same graph (the index
  // changed under this one) may have put its own there: that one stays.
  if (source_ && memory_ && source_->arena() == memory_) source_->SetArena(nullptr);
  if (scheduler_) scheduler_->Stop();
  for (std::thread& t : loaders_) t.join();
  scheduler_.reset();  // answers the asks still parked
}

void GraphSchedule::LoaderLoop() {
  NameThisThread("gfs-lp-loader");
  // The scheduler decides what to load; this thread reads it and hands it back.
  while (std::optional<chunkindex::LpScheduler::LoadPlan> plan = scheduler_->TakePlan()) {
    const int64_t cpu0 = ThreadCpuNs();
    Status status = Load(plan->lp());
    scheduler_->Finish(std::move(*plan), std::move(status), static_cast<double>(ThreadCpuNs() - cpu0) * 1e-9);
  }
}

void GraphSchedule::RefreshResident() {
  if (source_ == nullptr || chunk_ranges_.empty()) return;
  scheduler_->SetResident(core_->InMemory(source_, source_->size(), chunk_ranges_));
}

Status GraphSchedule::Load(chunkindex::LogicalPartition& lp) {
  const auto t0 = std::chrono::steady_clock::now();
  // Whole chunks adjacent in the file and in the LP are read as one range, through the cache;
  // runs are read around it (VolumeCore::CopyRuns) — or, when `column` is not striped, from its pieces
  // (LoadFromGraphFile: pread, and a version's striped pieces as above).
  std::vector<CopyRange> whole, runs;
  uint64_t whole_bytes = 0, run_bytes = 0;
  // A compressed `column` is read in whole decoded units: runs too are copied from them.
  const bool compressed = source_ != nullptr && source_->compressed();
  for (const chunkindex::LpExtent& e : lp.extents) {
    // lp_loader=direct: whole chunks are read like runs (cached ones copied, the rest straight
    // from the disks in one submission).
    std::vector<CopyRange>& to = compressed || (e.whole && core_->options().lp_loading == LpLoading::kThroughCache) ? whole : runs;
    (e.whole ? whole_bytes : run_bytes) += e.length;
    if (!to.empty() && to.back().offset + to.back().length == e.file_offset &&
        to.back().out_offset + to.back().length == e.lp_offset) {
      to.back().length += e.length;
    } else {
      to.push_back({e.file_offset, e.length, e.lp_offset});
    }
  }
  VolumeCore::RunsReport report;
  std::vector<AlignedBuffer> buffers;  // this loader's, returned below
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_load_buffers_.empty()) {
      buffers = std::move(idle_load_buffers_.back());
      idle_load_buffers_.pop_back();
    }
  }
  auto load = [&]() -> Status {
    if (striped_) {
      // Whole chunks (and a compressed file's runs) are taken from cache units: borrowed where
      // they lie in the graph's shared memory (the LP pins them), else copied. Runs are read into
      // blocks of the LP and stay where the reads put them (no copy).
      if (!whole.empty()) {
        Status s = core_->CopyRanges(source_, source_->size(), whole, nullptr, kLoaderPid, /*done_with_units=*/true,
                                       &lp.memory, &report.borrowed);
        if (!s.ok()) return s.error().Wrap("chunks of " + dir_ + "/column");
      }
      if (!runs.empty()) {
        Status s = core_->CopyRuns(source_, source_->size(), runs, nullptr, kLoaderPid, &report, nullptr, &lp.memory);
        if (!s.ok()) return s.error().Wrap("runs of " + dir_ + "/column");
      }
    } else {
      char* out = lp.memory.Packed(lp.size);
      if (out == nullptr) return Error(ENOMEM, "no memory for an LP of " + std::to_string(lp.size) + " bytes");
      Status s = LoadFromGraphFile(*core_, *plain_, dir_, whole, runs, out, report, buffers);
      if (!s.ok()) return s.error().Wrap("loading a logical partition (re-run graphfs-index if the graph changed)");
    }
    return Status::Ok();
  };
  // What the LP is expected to own is set aside before its load, what it owns after it. (Its
  // whole size would be a bound, but at the higher budgets most of an LP is borrowed, and the
  // frames would make room for nothing.) While it loads, its blocks are counted twice.
  const uint64_t expected = static_cast<uint64_t>(static_cast<double>(lp.size) * owned_share_.load());
  loading_reserved_ += expected;
  Recharge();
  Status s = load();
  if (lp.size > 0) {
    const double share = std::min(1.0, static_cast<double>(lp.memory.bytes()) / static_cast<double>(lp.size));
    owned_share_ = 0.75 * owned_share_.load() + 0.25 * share;  // the last few loads
  }
  loading_reserved_ -= expected;
  Recharge();
  // The units the runs were copied out of, and the finer blocks they lie in (run_grains.h).
  RunGrains grains;
  if (s.ok() && source_ != nullptr && run_bytes > 0)
    if (const auto layout = source_->layout()) grains = CountRunGrains(*layout, source_->size(), lp.extents);
  std::lock_guard<std::mutex> lock(mu_);
  idle_load_buffers_.push_back(std::move(buffers));
  if (!s.ok()) return s;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  loader_.whole_bytes += whole_bytes;
  loader_.run_bytes += run_bytes;
  loader_.run_bytes_cached += report.from_cache;
  loader_.run_disk_bytes += report.disk_bytes;
  loader_.run_requests += report.requests;
  if (!report.per_disk.empty())
    loader_.busiest_disk_bytes += *std::max_element(report.per_disk.begin(), report.per_disk.end());
  loader_.run_units += grains.units;
  loader_.run_unit_bytes += grains.unit_bytes;
  loader_.run_blocks += grains.blocks;
  loader_.lp_bytes += lp.size;
  loader_.memory_bytes += lp.memory.bytes();
  loader_.borrowed_bytes += lp.memory.borrowed_bytes();
  loader_.seconds += seconds;
  return Status::Ok();
}


uint64_t GraphSchedule::index_bytes() const {
  return finder_->memory_bytes() + (runs_ ? runs_->memory_bytes() : 0);
}

uint64_t GraphSchedule::scratch_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t bytes = 0;  // the idle sets: a set in use is counted when it comes back
  for (const auto& set : idle_load_buffers_)
    for (const AlignedBuffer& b : set) bytes += b.size();
  return bytes;
}

GraphSchedule::LoaderStats GraphSchedule::loader_stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return loader_;
}

Result<GraphSchedule::ActiveCounts> GraphSchedule::SetActive(uint64_t job, std::vector<uint64_t> words,
                                                             bool whole_chunks) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<chunkindex::ActiveChunk> active;
  GRAPHFS_RETURN_IF_ERROR(finder_->Find(chunkindex::ChunkFile::kColumn, words, &active));
  // Every vertex active (pagerank, spmv): whole chunks, no bitmap to keep.
  uint64_t count = 0;
  for (uint64_t w : words) count += static_cast<uint64_t>(std::popcount(w));
  std::shared_ptr<const std::vector<uint64_t>> bitmap;
  if (runs_ && count < vertices() && !whole_chunks) bitmap = std::make_shared<const std::vector<uint64_t>>(std::move(words));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  {
    std::lock_guard<std::mutex> lock(mu_);
    find_seconds_ += seconds;
    ++finds_;
  }
  RefreshResident();
  GRAPHFS_RETURN_IF_ERROR(scheduler_->SetActive(job, active, seconds, std::move(bitmap)));
  Recharge();  // LPs of the last iteration may have gone
  return ActiveCounts{count, static_cast<uint64_t>(active.size())};
}

double GraphSchedule::find_seconds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return find_seconds_;
}

uint64_t GraphSchedule::finds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return finds_;
}

Result<std::shared_ptr<GraphSchedule>> GraphSchedules::Get(VolumeCore& core, const std::string& dir) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_dir_.find(dir);
  if (it != by_dir_.end() && it->second->Fresh()) return it->second;
  // A stale schedule stays with the jobs that use it; new jobs get a fresh one.
  auto g = GraphSchedule::Open(core, dir, answers_.queue_);
  if (!g.ok()) return g.error();
  by_dir_[dir] = *g;
  return *g;
}

std::vector<std::shared_ptr<GraphSchedule>> GraphSchedules::List() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<GraphSchedule>> out;
  for (const auto& [dir, g] : by_dir_) out.push_back(g);
  return out;
}

void GraphSchedules::Prune() {
  std::vector<std::shared_ptr<GraphSchedule>> gone;  // destroyed outside the lock
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = by_dir_.begin(); it != by_dir_.end();) {
    if (it->second.use_count() == 1) {
      gone.push_back(std::move(it->second));
      it = by_dir_.erase(it);
    } else {
      ++it;
    }
  }
}

void GraphSchedules::Clear() {
  std::map<std::string, std::shared_ptr<GraphSchedule>> gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    gone.swap(by_dir_);
  }
}

}  // namespace graphfs::volume
