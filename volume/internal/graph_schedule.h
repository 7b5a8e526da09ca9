// Internal to the volume (the front end's view of it is volume/graph_jobs.h).
// The logical-partition service of one graph directory of the volume: its chunk
// table, active-chunk finder and LpScheduler (chunkindex/lp_scheduler.h), and the loader
// threads that take the scheduler's plans and read chunks of `column` through the shared
// cache and striping — or straight from the file when it is not striped — into the LPs'
// memory, then hand them back. Jobs registered in `.graphfs/jobs/` on the same graph
// share one GraphSchedule. Answers to asks that waited go to the mount's answer queue
// (GraphSchedules::answers(), a JobAnswers), which the front end drains.
#pragma once

#include <atomic>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "chunkindex/active_chunk_finder.h"
#include "chunkindex/chunk_index.h"
#include "chunkindex/lp_answers.h"
#include "chunkindex/lp_scheduler.h"
#include "chunkindex/source_runs.h"
#include "common/aligned_buffer.h"
#include "common/result.h"
#include "common/shared_arena.h"
#include "common/unique_fd.h"
#include "grid/graph_file.h"
#include "volume/graph_jobs.h"
#include "volume/internal/memory_budget.h"

namespace graphfs {
class StripedFile;
}

namespace graphfs::volume {

class VolumeCore;
class StripedSource;
struct CopyRange;

// The schedulers' queue of answers to parked asks, as JobAnswers (volume/graph_jobs.h) holds it
// without naming chunkindex/.
class AnswerQueue final : public chunkindex::LpAnswers {};

class GraphSchedule {
 public:
  // `dir`: the graph's absolute backing path. Fails with the reason (not a graph, not
  // indexed, stale or damaged index: "re-run graphfs-index") as a value.
  // Answers to asks that waited go to `answers`.
  static Result<std::shared_ptr<GraphSchedule>> Open(VolumeCore& core, const std::string& dir,
                                                     std::shared_ptr<chunkindex::LpAnswers> answers);
  ~GraphSchedule();

  const std::string& dir() const { return dir_; }
  uint64_t vertices() const { return table_->vertices(); }
  uint64_t edge_size() const { return table_->edge_size(); }
  chunkindex::LpScheduler& scheduler() { return *scheduler_; }
  // The shared memory its LPs live in, which its jobs map read-only (`jobs/NAME/memory`);
  // null when it could not be made (LPs are then on the heap and jobs read them through
  // the daemon).
  const std::shared_ptr<SharedArena>& memory() const { return memory_; }
  const chunkindex::ChunkTable& table() const { return *table_; }
  bool striped() const { return striped_ != nullptr; }
  // Whether the index and `column` still look as they did when this was opened.
  bool Fresh() const;

  // Starts the job's next iteration: finds the chunks with an active source (bitmap
  // words, ceil(V/64) of them, bits past V clear) and hands them to the scheduler. With
  // vertex-granular LPs the scheduler keeps the bitmap to cut the job's runs out of
  // source-sorted chunks — unless `whole_chunks` (the job's `granularity` is chunk): then its
  // view holds the whole chunks.
  using ActiveCounts = JobGraph::ActiveCounts;
  Result<ActiveCounts> SetActive(uint64_t job, std::vector<uint64_t> words, bool whole_chunks = false);

  // What the loader did, for stats.
  struct LoaderStats {
    uint64_t whole_bytes = 0;         // whole chunks, through the cache
    uint64_t run_bytes = 0;           // runs (vertex-granular extents)
    // The direct reads (CopyRuns: the runs, and whole chunks too with lp_loader=direct):
    uint64_t run_bytes_cached = 0;    //   bytes copied from cached chunks
    uint64_t run_disk_bytes = 0;      //   the disks' reads for the others (aligned)
    uint64_t run_requests = 0;
    // Per LP, the bytes the busiest disk read for it (of run_disk_bytes): an LP whose extents are
    // not spread evenly over the disks cannot load faster than that disk alone, whatever the loader.
    uint64_t busiest_disk_bytes = 0;
    // The units the runs lie in (for a compressed `column`, the frames read and decoded whole
    // for them) and the 64 KiB blocks they lie in (run_grains.h).
    uint64_t run_units = 0;
    uint64_t run_unit_bytes = 0;
    uint64_t run_blocks = 0;
    // The LPs' memory: their sizes, and the memory they held — more where runs were read in
    // place with the gaps between them, less never (a copy is packed).
    uint64_t lp_bytes = 0;
    uint64_t memory_bytes = 0;
    uint64_t borrowed_bytes = 0;  // LP bytes that are cached units, pinned, not copies of them
    double seconds = 0;
  };
  LoaderStats loader_stats() const;
  // The LPs' granularity and the read-cost model's choices for `.graphfs/stats` (stats.cc):
  // "mode" vertex or chunk, and for vertex LPs the sorted chunks, the runs index's bytes, and
  // the scheduler's counts `s` of whole, partial and unsorted chunks and planned bytes.
  nlohmann::json GranularityJson(const chunkindex::SchedulerStats& s) const;
  // Everything above and the scheduler's stats, as `.graphfs/stats` shows a graph (stats.cc).
  nlohmann::json StatsJson() const;
  // Of StatsJson, the objects that say what memory the graph holds — "graph", "window" (its LPs
  // live and loading), "memory" (index, owned, scratch), "shared_memory" — alone, with the same
  // values: what the daemon's memory sampler prices (Volume::AddMemoryStats).
  nlohmann::json MemoryStatsJson() const;

  // Tells the scheduler which of `column`'s chunks the cache holds decoded now
  // (LpScheduler::SetResident): at every SetActive, before the iteration's LPs are planned (one
  // look at the cache per unit of `column`).
  void RefreshResident();

  // Memory it holds besides its LPs: the chunk index's finder and source runs in memory, and the
  // loaders' read buffers.
  uint64_t index_bytes() const;
  uint64_t scratch_bytes() const;
  // What its LPs' own blocks and the idle shared memory kept for the next ones hold now.
  uint64_t owned_bytes() const;

  // Cost of the active-chunk queries so far.
  double find_seconds() const;
  uint64_t finds() const;

 private:
  GraphSchedule() = default;
  // MemoryStatsJson of the scheduler's stats `s`: StatsJson starts from it.
  nlohmann::json MemoryStatsJson(const chunkindex::SchedulerStats& s) const;
  void LoaderLoop();  // a loader thread: TakePlan, Load, Finish until the scheduler stops
  Status Load(chunkindex::LogicalPartition& lp);
  static std::vector<int64_t> Stamp(const std::string& dir);
  // Its reservation in the memory budget set to what it holds now: index and owned bytes, and
  // what the LPs being loaded are expected to own (their loads allocate before Recharge sees it).
  void Recharge();

  VolumeCore* core_ = nullptr;
  // Its index and its LPs' own memory, set aside in the mount's memory budget while it lives.
  MemoryBudget::Reservation reservation_;
  // Without memory=: the part of its LP window lent to the cache while it lives.
  MemoryBudget::Reservation loan_;
  std::string dir_;
  std::vector<int64_t> stamp_;
  std::unique_ptr<chunkindex::ChunkTable> table_;
  std::unique_ptr<chunkindex::ActiveChunkFinder> finder_;
  std::unique_ptr<chunkindex::SourceRuns> runs_;
  std::shared_ptr<StripedFile> striped_;   // `column` when striped
  std::shared_ptr<StripedSource> source_;  //   and its units in the cache
  std::shared_ptr<const grid::GraphFile> plain_;  // `column` otherwise (a file or an extent map)
  // The direct reads' buffers, kept between loads: one set per loader thread that ran at once.
  std::vector<std::vector<AlignedBuffer>> idle_load_buffers_;
  mutable std::mutex mu_;
  // What the LPs being loaded are expected to own: reserved from the start of their loads, so
  // that the frames make room before the loads allocate, not after (the daemon's peak RSS came
  // with the LPs in flight: docs/memory-as-cache.md). Expected: an LP's size times the share of
  // their size the last loads owned (the rest they borrowed from cached units), from 1.
  std::atomic<uint64_t> loading_reserved_{0};
  std::atomic<double> owned_share_{1.0};
  // `column`'s chunks (offset, length) in file order, for RefreshResident.
  std::vector<std::pair<uint64_t, uint64_t>> chunk_ranges_;
  double find_seconds_ = 0;
  uint64_t finds_ = 0;
  LoaderStats loader_;
  std::shared_ptr<SharedArena> memory_;
  std::unique_ptr<chunkindex::LpScheduler> scheduler_;
  std::vector<std::thread> loaders_;  // last: they use the above; joined first
};

// The schedules of the mount, one per graph directory in use.
class GraphSchedules {
 public:
  // Where every schedule of the mount puts the answers to asks that waited.
  JobAnswers& answers() { return answers_; }
  // The graph's schedule, opened on first use or when the old one went stale.
  Result<std::shared_ptr<GraphSchedule>> Get(VolumeCore& core, const std::string& dir);
  std::vector<std::shared_ptr<GraphSchedule>> List();
  void Clear();  // at unmount, before the cache and the I/O engine go
  // Drops the schedules no job holds (they keep their graph's files open).
  void Prune();

 private:
  JobAnswers answers_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<GraphSchedule>> by_dir_;
};

}  // namespace graphfs::volume
