// One mounted source directory, FUSE-free: the only place that joins the disk set and its
// I/O engine (striping/), the shared cache (cache/) and the graphs' chunk indexes and
// logical-partition schedules (chunkindex/). The FUSE front (fusefs/) turns requests into
// calls of a Volume and its answers into replies; tests drive a Volume without a mount.
//
//   auto v = Volume::Open(options);            // checks the disks and io_uring; no threads yet
//   v->Start();                                // I/O workers, prefetchers (after any fork)
//   auto f = v->OpenStriped(std::move(stub_fd), *StripedStub::Read(path, st), backing_path);
//   ReadStreams streams;                       // one per open handle
//   auto got = v->Read(**f, streams, offset, length, pid, scratch);   // pinned pieces
//   v->Stop();                                 // schedules, cache, I/O, in that order
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/aligned_buffer.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "volume/graph_jobs.h"
#include "volume/mapped_file.h"
#include "volume/read_ahead.h"
#include "volume/striped_stub.h"
#include "volume/version_reclaim.h"
#include "volume/volume_options.h"

namespace graphfs::volume {

// The volume's own types behind the face (volume/internal/): a front end sees their names only.
class DiskTasks;       // volume/internal/disk_tasks.h: rebuild and scrub run by the daemon
class VolumeCore;      // volume/internal/volume_core.h: disks, I/O engine, cache, indexes, ...
class GraphSchedules;  // volume/internal/graph_schedule.h: the graphs' LP schedules
struct PinnedUnit;     // a cache unit pinned while a PinnedRead lives (volume_core.h)

// What Read hands back: the bytes as pieces (iovecs) in order, valid while this lives —
// cache units stay pinned until then, or the pieces point into the caller's scratch buffer.
class PinnedRead {
 public:
  PinnedRead();
  ~PinnedRead();
  PinnedRead(PinnedRead&&) noexcept;
  PinnedRead& operator=(PinnedRead&&) noexcept;
  const std::vector<iovec>& pieces() const { return pieces_; }
  uint64_t bytes() const { return bytes_; }

 private:
  friend class VolumeCore;  // the read path fills it
  // Opaque here: a front end carries the pins to the reply without knowing the cache.
  std::vector<PinnedUnit> units_;
  std::vector<iovec> pieces_;
  uint64_t bytes_ = 0;
};

// A striped file of the volume, open: its bytes on the disks, its units in the cache. Changes
// through it drop the file's cached units. Made by the volume only (Volume::OpenStriped, a map's
// pieces: MappedFile::Piece::striped), as volume/internal/volume_file.h's StripedVolumeFile.
class VolumeFile {
 public:
  virtual ~VolumeFile() = default;
  virtual uint64_t size() const = 0;  // a compressed file's own size, not its stream's
  virtual std::string id() const = 0;
  virtual StripedStub stub() const = 0;  // what its stub says now (a first write may replace the manifest)
  // A compressed file becomes a plain striped one at its first write or truncate.
  virtual Result<uint64_t> Write(uint64_t offset, const char* data, uint64_t length) = 0;
  virtual Status Truncate(uint64_t size) = 0;
  virtual Status Flush() = 0;  // the manifest, if the size changed
  virtual Status Sync() = 0;   // data, size and layout durable
};

class Volume {
 public:
  // Finds the disk set of the striped graphs under `options.source` and checks every disk
  // (identity, order) and that io_uring works. Fails with the reason, naming the disk.
  static Result<std::unique_ptr<Volume>> Open(const VolumeOptions& options);
  ~Volume();
  Volume(const Volume&) = delete;
  Volume& operator=(const Volume&) = delete;

  // Starts the I/O workers and the cache's prefetchers: threads do not survive a fork, so
  // a daemon calls this after daemonizing.
  Status Start();
  // Stops serving: the graphs' schedules (their loaders stop), then the cache (prefetches
  // cancelled), then the I/O engine (queues drained). Open files stay valid objects but
  // must not be read any more.
  void Stop();

  bool has_disks() const;

  // Opens the striped file whose stub is `stub` (readable; owned from now on) and whose
  // backing path is `backing_path` (its graph directory decides its cache units).
  Result<std::shared_ptr<VolumeFile>> OpenStriped(UniqueFd stub, const StripedStub& info,
                                                  const std::string& backing_path);
  // Looks at the file's chunk index again (at every open): an index built, rebuilt or gone
  // stale since the file was opened changes its cache units from the next read on.
  void RefreshLayout(VolumeFile& file, const std::string& backing_path);

  // Reads [offset, offset + length) of `file` for process `pid`: a read that continues one
  // of `streams` or is large goes through the cache (units loaded once for every reader,
  // read-ahead kept loading ahead of the stream); a small random read is served from cache
  // units that are in memory, else read from the disks into `scratch`, around the cache.
  // Short at the end of the file; empty past it.
  Result<PinnedRead> Read(VolumeFile& file, ReadStreams& streams, uint64_t offset, uint64_t length, uint32_t pid,
                          AlignedBuffer& scratch);

  // Deletes the parts of a striped file on every disk (its last name is gone).
  void RemoveParts(const StripedStub& stub);

  // Faults of the disks (tests of failing disks): errno every I/O to `disk` fails with; 0 heals.
  uint32_t disk_count() const;
  int fault(uint32_t disk) const;
  void InjectFault(uint32_t disk, int error);

  // ---- jobs (`.graphfs/jobs/`, volume/graph_jobs.h) ----
  // The LP schedule of the graph directory `dir` (an absolute backing path), opened on first
  // use or when the old one went stale. Fails with the reason (not a graph, not indexed, stale
  // or damaged index).
  Result<JobGraph> JobGraphFor(const std::string& dir);
  // Where the answers to parked asks of every graph go.
  JobAnswers& job_answers();
  // The job left `graph` (it was removed, or moved to another graph): it is dropped from the
  // graph's LPs and never waited on; the version it ran on is reclaimed if it was its last user,
  // and under one memory budget a schedule no job uses goes at once (its LP window and index go
  // back to the cache).
  void LeaveGraph(JobGraph graph, uint64_t job);
  // For `.graphfs/stats`: every graph's schedule.
  nlohmann::json SchedulesJson();

  // The daemon's resident memory outside everything the one memory budget (memory=) counts, as
  // measured now: the budget sets aside what is beyond its allowance (the cache shrinks or grows
  // back; MemoryBudget::SetUnaccounted, volume/internal/memory_budget.h). Called on the front
  // end's memory samples (250 ms), which also move staging's charge (MemoryBudget::FollowStaging).
  void SetUnaccountedMemory(uint64_t resident_bytes);
  // Reclaims kept graph versions marked for it once their last user left (version_reclaim.h).
  VersionReclaimer& reclaimer() { return reclaimer_; }

  // For `.graphfs/stats`: disks, cache, indexes, graph versions as JSON objects.
  void AddStats(nlohmann::json& j);
  // The figures of the memory the volume holds, as AddStats and SchedulesJson give them (the
  // same names and values, `schedulers` for the latter) but nothing else: `cache` and `frames`
  // (used, staged, buffers_idle_bytes, held), `memory_budget`, `degraded_share`, and per graph
  // its schedule's `graph`, `window`, `memory` and `shared_memory`. For the daemon's memory
  // sampler, which prices memory several times a second: the full stats would cost it the
  // disks, the versions' disk space, every cache counter and every scheduler's counts.
  void AddMemoryStats(nlohmann::json& j);
  // One line per disk the set was opened without (up to the files' parity), naming it, for the
  // daemon's log: "degraded: disk 2 (/disks/2) is missing; files are read through parity".
  std::vector<std::string> DegradedNotes() const;

  // ---- the disk set's tasks (`.graphfs/disks`, docs/parity.md; volume/internal/disk_tasks.h) ----
  // Rebuild missing disk `disk` onto the empty directory `dir` in the background, then read it
  // from there without a remount; `rate` bytes per second read (0: no limit). Errors at once,
  // naming what is wrong: EINVAL (no such disk, not missing, `dir` not empty or of another set,
  // a file without parity), EBUSY (a task runs).
  Status StartRebuild(uint32_t disk, const std::string& dir, uint64_t rate);
  // Scrub every file with sums in the background, repairs under the rows' locks.
  Status StartScrub(uint64_t rate);
  // `.graphfs/disks`: the set, each disk's path and state, the disks missing, and the running
  // or last task ("task": null when none was asked for).
  nlohmann::json DisksJson();

  // ---- the volume's internals (volume/internal/), for its own files and tests/volume/ ----
  // A front end sees only their names: what the face drives (volume_core.h) and the graphs'
  // schedules above it (graph_schedule.h).
  VolumeCore& core() { return *core_; }
  GraphSchedules& schedules() { return *schedules_; }

 private:
  explicit Volume(std::unique_ptr<VolumeCore> core);

  std::unique_ptr<VolumeCore> core_;
  std::unique_ptr<DiskTasks> tasks_;  // after the core: its tasks read through the core's set
  std::unique_ptr<GraphSchedules> schedules_;  // after the core: their loads run through its cache
  // Schedules no job holds keep their graph's files open: dropped before it looks for users.
  VersionReclaimer reclaimer_;
};

}  // namespace graphfs::volume
