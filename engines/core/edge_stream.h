// EdgeStream: GridGraph's out-of-core edge streaming over `column` or `row`.
//
// The file is read with large preads (up to 24 MiB) whose offsets are rounded
// down and lengths rounded up to the I/O page (4096 B, or 12288 B weighted),
// so reads run past block ends and past EOF and come back short. Partitions
// (source ranges) with no active vertex are skipped; every edge is still
// checked against the active set and the current source window, because
// rounded reads pull in edges of neighbouring blocks. One reader thread per
// core, each with its own aligned buffer; the file is opened with O_DIRECT
// when the memory budget is smaller than the active edge bytes.
//
// Column (target-oriented) streams are split into source windows when the
// vertex state does not fit the budget (GridGraph's partition batches).
//
// Integrated mode (a PartitionSource is set): column streams read graphfs's
// logical partitions instead of `column`: say which sources are active, then
// for every LP split it over the reader threads, filter its edges by the
// active set (chunks hold inactive sources' edges too) and say done. There
// are no source windows (the window is every vertex). Row streams are
// unchanged.
#pragma once

#include <atomic>
#include <cstdint>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "engines/core/bitmap.h"
#include "engines/core/partition_source.h"
#include "grid/edge.h"
#include "grid/grid_layout.h"
#include "grid/posix_io.h"

namespace graphfs::engine {

struct StreamOptions {
  grid::EdgeOrder order = grid::EdgeOrder::kColumn;
  const Bitmap* active = nullptr;   // sources to process; null = every vertex
  uint64_t vertex_state_bytes = 0;  // column streams: state to keep in memory per pass
  // Loaded-data reentry (CLIP §3.1): once a buffer's edges have been processed, they are
  // processed again for the sources in `reentry_active` (the vertices this pass updated: the
  // app's next active set) while that changes something — fn's results over the buffer sum to
  // more than zero — at most `reentry` times. Only for relaxations whose fixpoint does not
  // depend on the order of updates (bfs levels, sssp distances, wcc labels by write-min).
  int reentry = 0;
  const Bitmap* reentry_active = nullptr;
  // Column streams over `column`: the reads of diagonal blocks (i, i) first, then the others in
  // file order (CLIP's diagonal-first scheduling: updates inside a partition are made before
  // the blocks that carry them elsewhere are read). Every edge is still read exactly once.
  bool diagonal_first = false;
};

// A loaded buffer's edge records, handed to apps that re-enter loaded data their own way
// (pagerank-delta, see EdgeStream::Stream with `again`). ForEach visits the records whose source
// lies in the window; their ids were checked when the buffer was first processed, and records
// with bad ids are skipped.
class LoadedEdges {
 public:
  LoadedEdges(const char* data, size_t bytes, grid::VertexRange window, bool weighted, uint64_t vertices)
      : data_(data), bytes_(bytes), window_(window), weighted_(weighted), vertices_(vertices) {}
  template <typename F>  // f(source, target, weight); weight 1 on unweighted graphs
  void ForEach(F&& f) const {
    if (weighted_) {
      Visit<grid::WeightedEdge>(f);
    } else {
      Visit<grid::UnweightedEdge>(f);
    }
  }

 private:
  template <typename Record, typename F>
  void Visit(F& f) const {
    const Record* edges = reinterpret_cast<const Record*>(data_);
    const size_t count = bytes_ / sizeof(Record);
    const uint32_t lo = static_cast<uint32_t>(window_.begin);
    const uint32_t span = static_cast<uint32_t>(window_.end - window_.begin);
    for (size_t k = 0; k < count; ++k) {
      const uint32_t source = static_cast<uint32_t>(edges[k].source);
      const uint32_t target = static_cast<uint32_t>(edges[k].target);
      if (source - lo >= span || target >= vertices_) continue;
      if constexpr (std::is_same_v<Record, grid::WeightedEdge>) {
        f(source, target, edges[k].weight);
      } else {
        f(source, target, 1.0f);
      }
    }
  }
  const char* data_;
  size_t bytes_;
  grid::VertexRange window_;
  bool weighted_;
  uint64_t vertices_;
};

struct ReadTask {
  uint64_t offset;
  uint64_t length;
  bool diagonal = false;  // starts inside a diagonal block (i, i)
};

// One sweep over the file with a single source window.
struct StreamPass {
  grid::VertexRange window;
  std::vector<ReadTask> reads;
};

// Which reads a stream issues; separate from the reading so tests can check it.
// `use_partition[i]` says whether source partition i has active vertices.
std::vector<ReadTask> PlanReads(const grid::GridLayout& layout, grid::EdgeOrder order,
                                const std::vector<bool>& use_partition, uint64_t first_partition,
                                uint64_t end_partition);
// The same reads with those of diagonal blocks moved to the front (stable otherwise). Reads
// never overlap, so any order reads every edge once.
void DiagonalFirst(std::vector<ReadTask>& reads);

// GridGraph's rule for source windows: vertex state beyond this share of MEM is processed a
// batch of source partitions at a time (PartitionBatch), the rest of MEM left to the edges.
inline constexpr double kSourceWindowShare = 0.8;

// Integrated mode: a span of an LP of at least this many bytes of whole records is processed
// where it lies in the shared LP memory, so a whole chunk of a dense view (256 KiB and up) is not
// copied. The others (the runs of a sparse view: tens of KiB; a record cut between two blocks)
// are gathered into the worker's buffer first, one local copy, so that the engine sees large
// buffers of whole records: its per-buffer work (reentry rounds, setup) over thousands of small
// pieces cost more than the copy (a sparse BFS mix ran 1.5x slower).
inline constexpr uint64_t kInPlaceBytes = 128 << 10;

// GridGraph's partition batch: how many source partitions one column pass covers.
uint64_t PartitionBatch(uint64_t partitions, uint64_t vertex_state_bytes, uint64_t memory_bytes);

// The reads of one logical partition of `bytes`: consecutive pieces covering
// it exactly, small enough that every reader thread gets one, at most 24 MiB,
// at least ~1 MiB (fewer, larger requests to the daemon), whole I/O pages
// except the last, so pieces never split an edge record.
std::vector<ReadTask> PlanPartitionReads(uint64_t bytes, uint64_t page, int threads);

// An edge function with a prefetch: Stream calls prefetch(worker, target) for the record
// kPrefetchDistance ahead of the one it hands to fn, when that record's source is in the window
// and active, so that fn's access to its target's state (random within a partition: 8 MiB of
// doubles at scale 24 with 16 partitions, beyond L2) is on its way when fn runs. One job of
// pagerank-delta on scale-24 R-MAT from the page cache: 206 -> 95-105 user CPU-s (the distance,
// prefetching every record: 8 -> 132, 16 -> 104, 32 -> 83-92, 64 -> 87, 128 -> 93;
// docs/memory-as-cache.md, thirty-third part).
template <typename Fn, typename Prefetch>
struct Prefetching {
  Fn fn;
  Prefetch prefetch;
  template <typename... Args>
  auto operator()(Args&&... args) -> decltype(fn(std::forward<Args>(args)...)) {
    return fn(std::forward<Args>(args)...);
  }
};
template <typename Fn, typename Prefetch>
Prefetching<Fn, Prefetch> WithPrefetch(Fn fn, Prefetch prefetch) {
  return {std::move(fn), std::move(prefetch)};
}
template <typename Fn>
concept HasPrefetch = requires(Fn& f) { f.prefetch(0, grid::VertexId{0}); };
inline constexpr size_t kPrefetchDistance = 32;

struct StreamStats {
  uint64_t streams = 0;
  uint64_t passes = 0;  // sweeps over `column`/`row` (one per source window)
  uint64_t reads = 0;
  uint64_t bytes_read = 0;
  uint64_t bytes_mapped = 0;    // integrated mode: LP bytes used from shared memory (mapped)
  uint64_t bytes_gathered = 0;  //   of those, small pieces copied into a buffer first
  uint64_t direct_streams = 0;  // streams opened with O_DIRECT
  uint64_t edges_read = 0;      // edge records handed to the filter
  uint64_t edges_active = 0;    // of those, records whose source is active (and in the window)
  uint64_t partitions = 0;      // integrated mode: logical partitions read
  double wait_seconds = 0;      // integrated mode: time blocked waiting for the next one
  uint64_t reentries = 0;       // buffers processed again (StreamOptions::reentry; not in edges_read)
};

class EdgeStream {
 public:
  // `memory_bytes` is the app's MEM budget; `threads` 0 = one per core.
  EdgeStream(const grid::GridLayout& layout, uint64_t memory_bytes, int threads = 0);

  // Calls fn(source, target, weight) -> T for every edge whose source is in
  // the active set, and returns the sum of the results. fn runs concurrently
  // on several threads. Unweighted graphs pass weight 1. An fn that takes the
  // worker first, fn(worker, source, target, weight), is told which reader
  // thread calls it (0 .. threads() - 1; e.g. for TargetSums).
  template <typename T, typename Fn>
  Result<T> Stream(const StreamOptions& options, Fn&& fn) {
    return Stream<T>(options, std::forward<Fn>(fn), nullptr);
  }
  // The same, and an app's own reentry: with StreamOptions::reentry > 0, once a buffer has been
  // through fn, again(worker, const LoadedEdges&, round) is called on it for round 0, 1, ...
  // while it returns true, at most `reentry` times (each one counts in StreamStats::reentries).
  // For updates whose reentry needs more than one edge at a time (a vertex's edges in the
  // buffer); `again` = nullptr is Stream above.
  template <typename T, typename Fn, typename Again>
  Result<T> Stream(const StreamOptions& options, Fn&& fn, Again&& again);

  // Integrated mode from now on: column streams read `source`'s logical
  // partitions. The stream owns it (and so ends the graphfs job with itself).
  void SetPartitionSource(std::unique_ptr<PartitionSource> source) { source_ = std::move(source); }
  bool integrated() const { return source_ != nullptr; }

  const StreamStats& stats() const { return stats_; }
  int threads() const { return threads_; }

 private:
  struct Plan {
    UniqueFd fd;
    std::string path;
    std::vector<StreamPass> passes;
  };
  // on_buffer(worker, data, bytes, source window of the data)
  using BufferFn = std::function<void(int, const char*, size_t, grid::VertexRange)>;

  Result<Plan> MakePlan(const StreamOptions& options);
  // The two ways of feeding on_buffer: sweeps over `column`/`row`, or the
  // logical partitions of the source.
  Status RunPasses(const StreamOptions& options, const BufferFn& on_buffer);
  Status RunPartitions(const StreamOptions& options, const BufferFn& on_buffer);
  // Runs the reads on the worker threads; `file_end` is where the data must
  // reach; on_buffer(worker, data, bytes).
  Status RunReads(int fd, const std::string& path, const std::vector<ReadTask>& reads, uint64_t file_end,
                  const std::function<void(int, const char*, size_t)>& on_buffer);
  // The same over an LP's spans in memory (`total` bytes, whole records): no read.
  void RunSpans(const LogicalPartition& lp, uint64_t total, const std::function<void(int, const char*, size_t)>& on_buffer);
  void BeginStream();
  // Folds the per-stream counters into stats_; an error if edges were corrupt.
  Status EndStream(grid::EdgeOrder order);

  template <typename Record, typename T, typename Fn>
  T ProcessBuffer(int worker, const char* data, size_t bytes, grid::VertexRange window, const Bitmap* active,
                  Fn& fn, bool reentry = false);

  const grid::GridLayout& layout_;
  uint64_t memory_bytes_;
  int threads_;
  std::vector<grid::AlignedBuffer> buffers_;
  std::unique_ptr<PartitionSource> source_;
  std::atomic<uint64_t> bad_sources_{0};  // records whose source id is not a vertex
  std::atomic<uint64_t> bad_targets_{0};  // records (in the window) whose target id is not a vertex
  std::atomic<uint64_t> edges_read_{0};
  std::atomic<uint64_t> edges_active_{0};
  std::atomic<uint64_t> reentries_{0};
  StreamStats stats_;
};

template <typename Record, typename T, typename Fn>
T EdgeStream::ProcessBuffer(int worker, const char* data, size_t bytes, grid::VertexRange window,
                            const Bitmap* active, Fn& fn, bool reentry) {
  constexpr bool kTellsWorker = std::is_invocable_v<Fn&, int, grid::VertexId, grid::VertexId, float>;
  const Record* edges = reinterpret_cast<const Record*>(data);
  const size_t count = bytes / sizeof(Record);
  const uint32_t lo = static_cast<uint32_t>(window.begin);
  const uint32_t span = static_cast<uint32_t>(window.end - window.begin);
  const uint32_t vertices = static_cast<uint32_t>(layout_.vertices());
  T sum{};
  uint64_t bad_sources = 0, bad_targets = 0;
  uint64_t passed = 0;
  uint32_t prefetched = 0;  // the last target prefetched
  // Every record read is checked, active or not, so a corrupt id is found
  // whatever the active set (negative ids are huge as uint32). The checks are
  // branches never taken on a sound graph.
  for (size_t k = 0; k < count; ++k) {
    if constexpr (HasPrefetch<Fn>) {
      if (k + kPrefetchDistance < count) {
        const Record& ahead = edges[k + kPrefetchDistance];
        const uint32_t ahead_source = static_cast<uint32_t>(ahead.source);
        if (ahead_source - lo < span) {
          // A record of an inactive source prefetches the last wanted target again (a hit), so
          // that a sparse active set costs no memory traffic for its inactive records and no
          // second branch on a random bit beside the loop's own (arithmetic, not `?:`: the
          // compiler made that a branch). Prefetching every record's target instead measured
          // 88-92 user CPU-s against this one's 95-98 on the dense pagerank-delta above.
          const uint32_t wanted = active == nullptr ? 1u : static_cast<uint32_t>(active->Get(ahead_source));
          prefetched ^= (prefetched ^ static_cast<uint32_t>(ahead.target)) & (0u - wanted);
          fn.prefetch(worker, prefetched);
        }
      }
    }
    const uint32_t source = static_cast<uint32_t>(edges[k].source);
    if (source - lo >= span) {  // outside this pass's source window, or no vertex at all
      bad_sources += source >= vertices;
      continue;
    }
    const uint32_t target = static_cast<uint32_t>(edges[k].target);
    if (target >= vertices) [[unlikely]] {
      ++bad_targets;
      continue;
    }
    if (active != nullptr && !active->Get(source)) continue;
    ++passed;
    float weight = 1.0f;
    if constexpr (std::is_same_v<Record, grid::WeightedEdge>) weight = edges[k].weight;
    if constexpr (kTellsWorker) {
      sum += fn(worker, source, target, weight);
    } else {
      sum += fn(source, target, weight);
    }
  }
  if (reentry) return sum;  // the records were checked and counted the first time
  if (bad_sources != 0) bad_sources_.fetch_add(bad_sources, std::memory_order_relaxed);
  if (bad_targets != 0) bad_targets_.fetch_add(bad_targets, std::memory_order_relaxed);
  edges_read_.fetch_add(count, std::memory_order_relaxed);
  edges_active_.fetch_add(passed, std::memory_order_relaxed);
  return sum;
}

template <typename T, typename Fn, typename Again>
Result<T> EdgeStream::Stream(const StreamOptions& options, Fn&& fn, Again&& again) {
  struct alignas(64) Partial {
    T value{};
  };
  std::vector<Partial> partial(static_cast<size_t>(threads_));
  const bool weighted = layout_.edge_type() == grid::EdgeType::kWeighted;
  auto process = [&](int worker, const char* data, size_t bytes, grid::VertexRange window, const Bitmap* active,
                     bool again) {
    return weighted ? ProcessBuffer<grid::WeightedEdge, T>(worker, data, bytes, window, active, fn, again)
                    : ProcessBuffer<grid::UnweightedEdge, T>(worker, data, bytes, window, active, fn, again);
  };
  const int reentry = options.reentry_active != nullptr ? options.reentry : 0;
  auto on_buffer = [&](int worker, const char* data, size_t bytes, grid::VertexRange window) {
    T local = process(worker, data, bytes, window, options.active, false);
    // Reentry: while the loaded edges still change something, apply them again from the
    // sources this pass updated.
    for (int r = 0; r < reentry; ++r) {
      const T again = process(worker, data, bytes, window, options.reentry_active, true);
      reentries_.fetch_add(1, std::memory_order_relaxed);
      local += again;
      if (!(again > T{})) break;
    }
    if constexpr (!std::is_same_v<std::decay_t<Again>, std::nullptr_t>) {
      const LoadedEdges loaded(data, bytes, window, weighted, layout_.vertices());
      for (int r = 0; r < options.reentry; ++r) {
        reentries_.fetch_add(1, std::memory_order_relaxed);
        if (!again(worker, loaded, r)) break;
      }
    }
    partial[static_cast<size_t>(worker)].value += local;
  };
  BeginStream();
  const bool from_partitions = source_ != nullptr && options.order == grid::EdgeOrder::kColumn;
  Status fed = from_partitions ? RunPartitions(options, on_buffer) : RunPasses(options, on_buffer);
  Status ended = EndStream(options.order);
  if (!fed.ok()) return fed.error();
  if (!ended.ok()) return ended.error();
  T total{};
  for (const Partial& p : partial) total += p.value;
  return total;
}

}  // namespace graphfs::engine
