// Coarse disk reads of cache units: consecutive units of one striped file that lie in one
// stripe unit (one disk, contiguous in its part file) are read in one request straight into
// their cache buffers, whatever the cache's unit size (an index's 256 KiB chunks): the disks see
// stripe-unit-sized requests, the cache sees units.
//
// Each disk has its own list of extents waiting to be read; at most `depth` bytes per disk are
// handed to the I/O engine at a time (always at least one extent: ReadAhead::InFlightDepth, the
// disk's bandwidth × latency), so the disk never waits for the daemon, yet an extent a reader
// waits for (urgent, or hurried when a reader reaches a unit of a queued read-ahead extent) never
// shares the disk with, or sits behind, more than that. Among the others, the one its stream will
// reach first goes first. A disk lost for a file keeps its queue, but the reads of its units are
// rebuilds (StripedFile::Rebuilt), each served by `spread` disks — D units of its row, mostly a
// parity read beside the row's data units, which their own reads share (row_share.h) — so its
// queue hands that many extents to the I/O engine at a time, as deep as a present disk's for each
// disk that serves it: with one at a time, the rebuilds fell behind the present disks' reads of
// the same rows and read again blocks they were to share (docs/parity.md, "Reads").
//
//   ExtentReads reads(cache, disks, depth);
//   reads.Queue({source, disk, /*spread=*/1, {loads...}, /*urgent=*/true, due_ns});
//   reads.Hurry(key);  // a reader waits on this unit
//   reads.Stop();      // queued extents fail (ECANCELED); waits for those in flight
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "cache/chunk_cache.h"
#include "volume/internal/striped_source.h"

namespace graphfs::volume {

class ExtentReads {
 public:
  struct Extent {
    std::shared_ptr<StripedSource> source;  // plain (AlignedLoads), kept alive by the read
    uint32_t disk = 0;                      // where most of its bytes lie: the queue it waits in
    uint32_t spread = 1;                    // disks that serve it: D when its disk is lost (rebuilt)
    std::vector<cache::UnitLoad> units;     // consecutive units of the file, in order
    bool urgent = false;                    // a reader waits on its first unit
    int64_t due_ns = 0;                     // when its stream should reach it (read-ahead)
  };
  struct Stats {
    uint64_t extents = 0, bytes = 0, units = 0;
    uint64_t urgent = 0, hurried = 0, cancelled = 0;
    std::vector<uint64_t> disk_extents, disk_bytes;  // per disk queue: extents and bytes started
    std::vector<uint32_t> disk_peak_in_flight;        // per disk queue: the most extents at once
  };

  // `depth`: bytes per disk handed to the I/O engine at a time (times an extent's spread).
  ExtentReads(cache::ChunkCache& cache, uint32_t disks, uint64_t depth);
  ~ExtentReads();  // Stop()
  ExtentReads(const ExtentReads&) = delete;
  ExtentReads& operator=(const ExtentReads&) = delete;

  void Queue(Extent extent);
  // A reader waits on unit `key`: if a queued extent holds it, that extent goes first.
  void Hurry(const cache::UnitKey& key);
  // Whether `disk` has nothing queued or being read.
  bool Idle(uint32_t disk) const;
  // Queued extents fail with ECANCELED (their readers get the error); waits for those in flight.
  void Stop();
  Stats stats() const;

 private:
  struct Disk {
    std::vector<Extent> queued;
    uint64_t in_flight_bytes = 0;
    uint32_t in_flight = 0;
  };
  static uint64_t Bytes(const Extent& e);
  // Hands the disk's next extents to the I/O engine while it has room (mu_ held; the reads are
  // started after it is released, in `start`).
  void Pick(uint32_t disk, std::vector<Extent>* start);
  void Start(Extent extent);
  void Finished(uint32_t disk, uint64_t bytes);

  cache::ChunkCache& cache_;
  const uint64_t depth_;
  mutable std::mutex mu_;
  std::condition_variable drained_;
  std::vector<Disk> disks_;
  bool stopping_ = false;
  Stats stats_;
};

}  // namespace graphfs::volume
