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
#include "volume/internal/memory_budget.h"
#include "volume/read_ahead.h"
#include "volume/striped_stub.h"
#include "volume/version_reclaim.h"
#include "volume/volume_options.h"

// The lower libraries' types the internals below name (their headers are included by the
// volume's own files, not here: a front end that includes this sees none of them).
namespace graphfs {
class DiskSet;
class IoEngine;
struct IoEngineOptions;
class StripedFile;
}  // namespace graphfs
namespace graphfs::cache {
class ChunkCache;
class UnitRef;
class UnitLoad;
class UnitLayout;
struct UnitExtent;
}  // namespace graphfs::cache
namespace graphfs::chunkindex {
class LpMemory;
}
namespace graphfs::grid {
class StubFiles;
}

namespace graphfs::volume {

class StripedSource;
class VolumeFile;
class ExtentReads;
class GraphIndexes;
class GraphSchedules;
class VolumeStubFiles;
struct PackedCounters;
class FrameTier;
struct CopyRange;
struct ReadCostModel;  // volume/internal/read_cost_model.h

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
  friend class Volume;
  std::vector<cache::UnitRef> units_;
  std::vector<iovec> pieces_;
  uint64_t bytes_ = 0;
};

// CopyRuns reads from the disks in batches of at most VolumeOptions::runs_batch_bytes, this many
// in flight.
inline constexpr size_t kRunsBatchesInFlight = 8;
// The read path's disk requests: the units of one stripe unit read together, up to this many
// bytes (volume/internal/extent_reads.h).
inline constexpr uint64_t kMaxExtent = 16ull << 20;


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

  const VolumeOptions& options() const { return options_; }
  const ReadCostModel& read_cost() const { return *read_cost_; }  // volume/internal/read_cost_model.h
  const std::string& source() const { return options_.source; }
  bool has_disks() const { return disks_ != nullptr; }

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
  // Copies the ranges of a striped file into `out` + their out_offset, through the cache:
  // each unit is loaded once (concurrent readers wait for that load) and pinned while
  // copied; units up to the loader's read-ahead window ahead of the copy are prefetched in
  // disk turns, so every disk works at once. Reads past the end are an error. `done_with_units`
  // (the LP loader): nothing more of a unit is wanted after the ranges' last byte in it, so it
  // leaves staging (admitted or dropped) as soon as it is copied, not when fully served.
  // With `place` (an LP's memory; `out` unused) nothing is copied from units in the LP's shared
  // memory: the LP borrows them (pinned while it lives, out of staging at once); pieces of other
  // units are copied into blocks of the LP. `borrowed` (optional) adds the bytes borrowed.
  Status CopyRanges(const std::shared_ptr<StripedSource>& source, uint64_t file_size,
                    const std::vector<CopyRange>& ranges, char* out, uint32_t pid, bool done_with_units = false,
                    chunkindex::LpMemory* place = nullptr, uint64_t* borrowed = nullptr);

  // Copies runs of a striped file (parts of cache units: a vertex-granular LP's extents) into
  // `out` + their out_offset without loading whole units: a run whose units are in the cache
  // is copied from them; the others are read straight from the disks (widened to the direct
  // I/O alignment, touching ones merged, every disk at once) and never enter the cache, which
  // holds only whole units. `ranges` ascending and disjoint. Adds what it did to `report`.
  struct RunsReport {
    uint64_t from_cache = 0;   // bytes taken from cached units
    uint64_t borrowed = 0;     //   of those, placed where the unit lies (an LP made of it, no copy)
    uint64_t disk_bytes = 0;   // bytes the disks read for the others
    uint64_t requests = 0;     // read requests (merged spans)
    std::vector<uint64_t> per_disk;  // disk_bytes by disk: the busiest one bounds the copy's time
  };
  // `scratch` (optional) keeps the read buffers between calls (kRunsBatchesInFlight ×
  // runs_batch_bytes), so a loader does not fault fresh pages in for every LP.
  // With `place` (an LP's memory; `out` and `scratch` unused) nothing is copied from the disks'
  // reads: each batch is read into a block of the LP's own memory, and each range is placed
  // where its bytes landed (chunkindex/lp_memory.h); the gaps a batch read through stay in it.
  // Cached runs in the LP's shared memory are borrowed (LpMemory::Borrow: the LP pins the unit);
  // others are copied into one block of the LP.
  Status CopyRuns(const std::shared_ptr<StripedSource>& source, uint64_t file_size, const std::vector<CopyRange>& ranges,
                  char* out, uint32_t pid, RunsReport* report, std::vector<AlignedBuffer>* scratch = nullptr,
                  chunkindex::LpMemory* place = nullptr);

  // Deletes the parts of a striped file on every disk (its last name is gone).
  void RemoveParts(const StripedStub& stub) { RemoveParts(stub.file_id()); }
  void RemoveParts(const std::string& file_id);

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

  // The one memory budget (memory=): a graph's schedule reserves its LP window and index.
  MemoryBudget& budget() { return budget_; }
  // Reclaims kept graph versions marked for it once their last user left (version_reclaim.h).
  VersionReclaimer& reclaimer() { return reclaimer_; }
  const ReadAhead& read_ahead() const { return read_ahead_; }

  // For `.graphfs/stats`: disks, cache and indexes as JSON objects.
  void AddStats(nlohmann::json& j);
  // One line per disk the set was opened without (up to the files' parity), naming it, for the
  // daemon's log: "degraded: disk 2 (/disks/2) is missing; files are read through parity".
  std::vector<std::string> DegradedNotes() const;

  // ---- internals: for the volume's own files and tests/volume/ ----
  // What they return are the volume's internal services and the lower libraries' types
  // (declared above, not defined): their users include those headers themselves.
  GraphIndexes& indexes() { return *indexes_; }       // volume/internal/graph_index.h
  GraphSchedules& schedules() { return *schedules_; }  // volume/internal/graph_schedule.h
  cache::ChunkCache* cache() { return cache_.get(); }  // null before Start and after Stop
  FrameTier* frames() { return frames_.get(); }        // likewise
  const ExtentReads* extent_reads() const { return extents_.get(); }  // likewise
  // Reads the stubs in graph versions' extent maps (a striped graph's versions) through this
  // volume: grid::GraphFile::Open(path, &volume.stub_files()).
  const grid::StubFiles& stub_files() const;
  const DiskSet* disk_set() const { return disks_.get(); }
  IoEngine* io() { return io_.get(); }
  // The cache's view of a striped file of this volume, keyed by its id (and `key_scope`: the
  // cache tells units apart by file key and unit number, so one file cut into units two ways —
  // a stub read as a map's piece in blocks and, by its own name, in its index's chunks — needs
  // two keys). A compressed file's source decodes its units (its directory is read here).
  Result<std::shared_ptr<StripedSource>> MakeSource(std::shared_ptr<StripedFile> file, const std::string& backing_path,
                                                    const std::string& key_scope = "");
  // The counters of reads of compressed files (stats: "compressed").
  PackedCounters& packed_counters() { return *packed_counters_; }
  // Forgets the cached units of `source` (after its bytes or size changed).
  void Invalidate(StripedSource& source);

 private:
  explicit Volume(const VolumeOptions& options);
  void RefreshSourceLayout(StripedSource& source, const std::string& backing_path);
  bool ServeFromCache(VolumeFile& file, uint64_t off, uint64_t len, const ReadStreams::Position& stream,
                      ReadStreams& streams, uint32_t pid, PinnedRead* out, Status* error);
  // Units a read reserved for itself (loads[from..]) but will not take: awaited and let go.
  void DropReserved(std::vector<cache::UnitLoad>& loads, size_t from, uint32_t pid);
  // A unit a read needs, on its way before the reader blocks: in memory (nothing to do), being
  // loaded (a queued read-ahead extent is hurried), or missed — then reserved for this reader
  // (returned: Await it) and read with the rest of its stripe unit in one urgent disk request
  // (coarse reads whatever the unit size). Empty when someone else loads it: Get waits for it.
  cache::UnitLoad StartCoarse(const std::shared_ptr<StripedSource>& src, const cache::UnitLayout& layout,
                              uint64_t generation, uint64_t file_size, const cache::UnitExtent& u, uint32_t pid);
  // Queues the read of unit `u` (reserved as `first`) and of the units after it that lie in its
  // stripe unit and are not in memory, up to kMaxExtent (within staging unless `over_limit`).
  // Returns the end of the last unit it took.
  uint64_t QueueExtent(const std::shared_ptr<StripedSource>& src, const cache::UnitLayout& layout,
                       uint64_t generation, uint64_t file_size, const cache::UnitExtent& u, cache::UnitLoad first,
                       uint32_t pid, bool urgent, bool over_limit, int64_t due_ns);
  // Read-ahead of a stream of a plain striped file: the units of [from, to) not in memory, in
  // extents; within `share` bytes of `read_end` whatever staging allows, beyond it only for
  // disks with nothing to do. Returns where it stopped.
  uint64_t ReadAheadExtents(const std::shared_ptr<StripedSource>& src, const cache::UnitLayout& layout,
                            uint64_t generation, uint64_t file_size, uint64_t read_end, uint64_t from, uint64_t to,
                            uint64_t share, uint32_t pid);

  const VolumeOptions options_;  // with memory_bytes, what the budget made of them (Budgeted)
  MemoryBudget budget_;           // before the schedules: their reservations refer to it
  std::unique_ptr<ReadCostModel> read_cost_;
  std::unique_ptr<IoEngineOptions> io_options_;
  std::unique_ptr<DiskSet> disks_;  // null when nothing under the source is striped
  std::unique_ptr<IoEngine> io_;
  ReadAhead read_ahead_;
  std::unique_ptr<PackedCounters> packed_counters_;
  std::unique_ptr<VolumeStubFiles> stub_files_;
  std::unique_ptr<GraphIndexes> indexes_;     // chunk layouts of indexed graphs
  std::unique_ptr<cache::ChunkCache> cache_;  // after io_: its prefetches use it, it goes first
  // Compressed files' frames (volume/internal/frame_tier.h), the cache's first tier; shared with the
  // compressed files that read through it.
  std::shared_ptr<FrameTier> frames_;
  std::unique_ptr<ExtentReads> extents_;      // after the cache: fills its units, goes first
  std::unique_ptr<GraphSchedules> schedules_;  // after the cache: their loads run through it
  // Schedules no job holds keep their graph's files open: dropped before it looks for users.
  VersionReclaimer reclaimer_;
};

// A striped file of the volume, open: its bytes on the disks, its units in the cache.
// Changes through it drop the file's cached units (before and after, so that a unit loaded
// while a write was in flight does not outlive it).
class VolumeFile {
 public:
  VolumeFile(Volume& volume, std::shared_ptr<StripedFile> file, std::shared_ptr<StripedSource> source,
             std::string backing_path)
      : volume_(volume), file_(std::move(file)), source_(std::move(source)), backing_path_(std::move(backing_path)) {}

  uint64_t size() const;  // a compressed file's own size, not its stream's
  std::string id() const;
  StripedStub stub() const;  // what its stub says now (Unpack replaces the manifest)
  // A compressed file becomes a plain striped one at its first write or truncate (Unpack).
  Result<uint64_t> Write(uint64_t offset, const char* data, uint64_t length);
  Status Truncate(uint64_t size);
  Status Flush();  // the manifest, if the size changed
  Status Sync();   // data, size and layout durable

  // The file's bytes as the cache sees them now (readers keep the copy for their read: an
  // unpacked file's old source stays readable until they let go).
  std::shared_ptr<StripedSource> shared_source() const;

 private:
  std::shared_ptr<StripedFile> file() const;
  void NoteChange(StripedSource& source);
  // A compressed file's first change: its units are decoded into a new plain striped file,
  // made durable, and the stub's manifest switched to it in one fsetxattr + fsync — before the
  // switch the compressed file is whole, after it the plain one is; the old parts go last.
  Status Unpack();
  // Unpack if the file is still compressed (once, whoever comes first).
  Status MakePlain();

  Volume& volume_;
  mutable std::mutex mu_;  // file_ and source_ (replaced once, by Unpack)
  std::shared_ptr<StripedFile> file_;
  std::shared_ptr<StripedSource> source_;
  std::mutex unpack_mu_;  // one Unpack; changes wait for it
  const std::string backing_path_;
};

}  // namespace graphfs::volume
