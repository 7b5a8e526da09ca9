// How a Volume is set up (volume.h); kept apart so that option parsers need not see the
// volume's machinery.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "volume/read_ahead.h"

namespace graphfs::volume {

// Choices made by name in the mount options (io=, lp=, lp_loader=) stay choices down here.
enum class IoQueues { kPerDisk, kShared };    // one queue per disk, or one for all (comparison)
enum class LpGranularity { kVertex, kChunk };
enum class LpLoading { kDirect, kThroughCache };
// Their names: what the mount options take and what stats print.
inline const char* NameOf(IoQueues q) { return q == IoQueues::kShared ? "shared" : "perdisk"; }
inline const char* NameOf(LpGranularity g) { return g == LpGranularity::kChunk ? "chunk" : "vertex"; }
inline const char* NameOf(LpLoading l) { return l == LpLoading::kThroughCache ? "cache" : "direct"; }

// Defaults, each written once: VolumeOptions starts from them, the lower libraries are given
// them (the cache has no defaults of its own for these), and fusefs's option table
// (fusefs/mount_options.cc) shows its fields' initial values as the defaults of --help,
// graphfs(1) and README.md's table. readahead_mem='s is kDefaultReadaheadMem (read_ahead.h);
// cache_policy='s is the first name of the cache's policy registry; the I/O engine's are its own
// (striping/io_engine.h), handed up by the functions below.
inline constexpr unsigned kDefaultCacheWindowSeconds = 600;  // cache_window=
inline constexpr uint64_t kDefaultLpMemory = 512ull << 20;   // lp_memory=
// One LP is at most lp_memory / kLpsPerWindow (GraphSchedule, volume/internal/graph_schedule.cc):
// that many load ahead and are held at least.
inline constexpr uint64_t kLpsPerWindow = 4;
// lp_memory's floor, kLpsPerWindow LPs of 16K: the option refuses less, and a memory budget caps
// it no lower.
inline constexpr uint64_t kMinLpMemory = kLpsPerWindow * (16ull << 10);
// Each graph's shared LP memory (GraphSchedule's arena, volume/internal/graph_schedule.cc; the
// jobs map it as MOUNT/.graphfs/jobs/NAME/memory) is this much address space, or
// kSharedLpMemoryPerLpMemory x lp_memory if that is more: sparse, far larger than the window so
// that it never fragments into refusals; only the LPs and units in use are memory. lp_memory='s
// help prints the rule.
inline constexpr uint64_t kSharedLpMemoryBytes = 64ull << 30;
inline constexpr uint64_t kSharedLpMemoryPerLpMemory = 16;
inline constexpr uint64_t SharedLpMemoryBytes(uint64_t lp_memory) {
  // No wrap-around for a huge lp_memory=: a size no mapping takes (the LPs then stay on the heap).
  if (lp_memory > UINT64_MAX / kSharedLpMemoryPerLpMemory) return UINT64_MAX;
  return std::max(kSharedLpMemoryBytes, kSharedLpMemoryPerLpMemory * lp_memory);
}

// The I/O engine's queue depth by default and at most (queue_depth=), and its workers per disk
// by default (io_workers= with io=perdisk): its constants, read in volume_options.cc, since this
// header may not include the engine's.
unsigned DefaultQueueDepth();
unsigned MaxQueueDepth();
unsigned DefaultIoWorkersPerDisk();

// The names `cache_policy` takes, the default first, and a line on each (for help texts): the
// cache's policy registry (cache/eviction_policy.h), read in volume/volume_options.cc.
const std::vector<std::string>& CachePolicyNames();
std::vector<std::pair<std::string, std::string>> CachePolicySummaries();

struct VolumeOptions {
  std::string source;               // absolute path of the directory of graphs
  std::vector<std::string> disks;   // disk directories overriding the registered ones (same order)
  bool read_only = false;
  bool direct = true;               // O_DIRECT on part files for aligned reads
  // I/O engine.
  IoQueues io_queues = IoQueues::kPerDisk;
  // Per disk, or in the shared pool; 0: the engine's defaults (DefaultIoWorkersPerDisk() per disk,
  // and as many in all in the pool: DefaultSharedWorkers, striping/io_engine.h).
  unsigned io_workers = 0;
  unsigned queue_depth = DefaultQueueDepth();
  // A cache of this size alone (cache_size=; fusefs resolves N% of RAM into bytes), used only
  // without a budget.
  uint64_t cache_bytes = 0;
  // One budget (memory=; 0: none) instead of cache_bytes. The volume divides it, and only it
  // sizes the cache then: staging and lp_memory capped at a share of it each (`Budgeted`,
  // volume/internal/volume_core.cc), the cache what those and the graphs in use (their indexes
  // and what their LPs own) leave (volume/internal/memory_budget.h).
  uint64_t memory_bytes = 0;
  std::string cache_policy = CachePolicyNames().front();
  unsigned cache_window = kDefaultCacheWindowSeconds;  // seconds a read counts towards a unit's rank
  std::string cache_trace;          // unit lookups logged to this file (diagnostics)
  // Read-ahead.
  ReadAheadOptions read_ahead;
  // Logical partitions: vertex-granular (only the runs of active sources' edges of source-sorted
  // chunks, by the read-cost model) or whole chunks.
  LpGranularity lp_granularity = LpGranularity::kVertex;
  // How the LP loader reads whole chunks that are not cached: straight from the disks (the
  // default: like runs, see below; the whole chunks read are then offered to the cache, which
  // keeps them if its policy admits them), or through the cache, unit by unit with read-ahead
  // (measured slower: BENCHMARKS.md).
  LpLoading lp_loading = LpLoading::kDirect;
  // Among chunks of equal priority, LPs take those of diagonal blocks (i, i) first (CLIP's
  // diagonal-first order: reentry gains most where both ends of an edge are in one partition).
  bool lp_diagonal = true;
  // Logical partitions loaded ahead and held by jobs, per graph (chunkindex/lp_scheduler.h: the
  // window); a job never waits for a slower one unless this is full. The largest LP and the
  // freed memory kept for reuse are shares of it that GraphSchedule sets (graph_schedule.cc).
  uint64_t lp_memory = kDefaultLpMemory;
  // Its reads go to the disks in batches of at most this many bytes, kRunsBatchesInFlight of them
  // in flight (small enough that a disk's queue holds its own next pieces; tests make it tiny).
  // Independent of the read path's extents (kMaxExtent, volume/internal/volume_core.h, which says
  // why). Less than one direct-I/O block counts as one (CopyRuns takes the larger).
  uint64_t runs_batch_bytes = 16ull << 20;
  // The read-cost model's disk parameters, overriding `graphfs-calibrate`'s measurement
  // (SOURCE/.graphfs/calibration.json) when set (> 0, >= 0).
  double seq_bytes_per_second = 0;
  double seconds_per_request = -1;
};

}  // namespace graphfs::volume
