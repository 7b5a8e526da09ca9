// TargetSums: sums[t] += value from a column stream's workers, without an atomic
// read-modify-write per edge.
//
// PageRank-style apps add a value to every edge's target. Done with one atomic add per edge (a
// compare-and-swap loop for a double), the adds were half of PageRank's CPU time: 10 iterations
// over a scale-22 R-MAT took 9.0 CPU-s with them and 4.8 without (the racy version, timing
// only). Here each worker adds into a private window that covers the target partition it is
// in — a column stream's records stay in one target partition for a whole column of blocks —
// and moves its window's sums into `sums` (one atomic add per touched target) only when it
// leaves the partition, when told to (Flush), and at the end (FlushAll). Each target gets one
// atomic add per worker and visit of its partition instead of one per edge.
//
// A window remembers which groups of 8 targets it touched (one bit each), so that a flush scans
// those groups only: through the mount a worker's buffers cross the target partitions often (an
// LP's pieces of a sparse iteration lie in every column of blocks), and scanning whole windows at
// each crossing was 9% of the demo's samples at f = 1, a third of pagerank-delta's own. Groups of
// 64 still left a sparse LP's flushes scanning mostly zeros (about 40% of their samples in the
// zero tests: docs/memory-as-cache.md, nineteenth part).
//
// The order of the additions differs from the atomic version's, as it already differed
// between runs with several workers: doubles, so the sums agree to rounding.
//
// Thread-safety: Add(worker, ...) and Flush(worker) only from that worker (the stream gives
// each reader thread its own index); FlushAll() when no worker runs (after the stream). The
// sums are complete only after FlushAll().
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "grid/partition_range.h"

namespace graphfs::engine {

class TargetSums {
 public:
  // A partition larger than this many vertices gets no window: its targets are added to
  // directly (atomically), since a window per worker would cost 8 bytes per vertex each.
  static constexpr uint64_t kMaxWindowVertices = uint64_t{1} << 22;

  // `sums` has ranges.vertices() entries and outlives this object; `workers` is the stream's
  // reader thread count.
  TargetSums(double* sums, grid::PartitionRange ranges, int workers);
  TargetSums(const TargetSums&) = delete;
  TargetSums& operator=(const TargetSums&) = delete;
  ~TargetSums();  // FlushAll(): nothing added is lost

  void Add(int worker, uint32_t target, double value) {
    Window& w = windows_[static_cast<size_t>(worker)];
    uint64_t i = uint64_t{target} - w.begin;
    if (i >= w.size) [[unlikely]] {
      if (!Move(w, target)) {
        std::atomic_ref<double>(sums_[target]).fetch_add(value, std::memory_order_relaxed);
        return;
      }
      i = uint64_t{target} - w.begin;
    }
    w.groups[i >> (kGroupShift + 6)] |= uint64_t{1} << ((i >> kGroupShift) & 63);
    w.acc[i] += value;
  }

  // Starts loading the worker's slot for `target` into the cache, for an Add a few edges later
  // (EdgeStream's prefetch): the slots are random within a window of 8 MiB at scale 24, and the
  // add's load missing the caches was 87% of pagerank-delta's samples.
  void Prefetch(int worker, uint32_t target) const {
    const Window& w = windows_[static_cast<size_t>(worker)];
    const uint64_t i = uint64_t{target} - w.begin;
    if (i < w.size) __builtin_prefetch(&w.acc[i], 1);
  }

  // Moves the worker's pending sums into `sums` (e.g. before it reads them again itself).
  void Flush(int worker) { Flush(windows_[static_cast<size_t>(worker)]); }
  // Every worker's: call after the stream, before reading `sums`.
  void FlushAll();

  // Targets added to since the last flush, all workers (tests).
  uint64_t Pending() const;

 private:
  static constexpr uint64_t kGroupShift = 3;  // 8 slots a group
  struct alignas(64) Window {
    uint64_t begin = 0;
    uint64_t size = 0;  // 0: no window yet (every target misses it)
    std::unique_ptr<double[]> acc;
    uint64_t capacity = 0;
    // Bit g of groups[g / 64]: slots [8 g, 8 g + 8) were added to since the last flush.
    std::unique_ptr<uint64_t[]> groups;
    // The last partition found too large for a window: its targets are added to directly
    // without looking their partition up again.
    uint64_t direct_begin = 0, direct_end = 0;
  };
  // Flushes `w` and places it over the partition of `target`; false if that partition is too
  // large for a window (the caller adds directly).
  bool Move(Window& w, uint32_t target);
  void Flush(Window& w);

  double* const sums_;
  const grid::PartitionRange ranges_;
  std::vector<Window> windows_;
};

}  // namespace graphfs::engine
