// The volume's core: what a mount holds below its jobs. It owns the disk set and the I/O
// engine (striping/), the shared cache and the frame tier in front of it (cache/), the chunk
// layouts of indexed graphs, the stub files of graph versions, the counters of compressed reads,
// the read-cost model and the one memory budget, and serves the two ways bytes leave the disks:
// the FUSE read path (read_path.cc) and the LP loader's bulk copies (lp_copies.cc).
//
// The face (volume/volume.h, what fusefs calls) drives it and holds the graphs' schedules above
// it; the schedules, indexes, mapped pieces and stats take a VolumeCore, never the face, so no
// arrow inside the volume points back up. tests/volume/ reach it through Volume::core().
//
// Not a public header: it names the lower libraries' types (as LevelDB's db_impl.h does).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cache/chunk_cache.h"
#include "cache/unit_layout.h"
#include "chunkindex/lp_memory.h"
#include "common/aligned_buffer.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "striping/disk_set.h"
#include "striping/io_engine.h"
#include "striping/set_hold.h"
#include "striping/striped_file.h"
#include "volume/internal/extent_reads.h"
#include "volume/internal/frame_tier.h"
#include "volume/internal/graph_index.h"
#include "volume/internal/mapped_piece.h"
#include "volume/internal/packed_file.h"
#include "volume/internal/read_cost_model.h"
#include "volume/internal/run_batches.h"
#include "volume/internal/striped_source.h"
#include "volume/internal/degraded_share.h"
#include "volume/internal/memory_budget.h"
#include "volume/read_ahead.h"
#include "volume/striped_stub.h"
#include "volume/version_reclaim.h"
#include "volume/volume.h"
#include "volume/volume_options.h"

namespace graphfs::volume {

class StripedVolumeFile;  // volume/internal/volume_file.h

// What PinnedRead holds for each cache unit its pieces point into (volume.h names it only).
struct PinnedUnit {
  cache::UnitRef ref;
};

// CopyRuns reads from the disks in batches of at most VolumeOptions::runs_batch_bytes, this many
// in flight.
inline constexpr size_t kRunsBatchesInFlight = 8;
// The read path's disk requests: the units of one stripe unit read together, up to this many
// bytes (volume/internal/extent_reads.h).
// Not tied to runs_batch_bytes, though both are 16 MiB, and no relation between them must hold: an
// extent is one request of whole cache units (a reader's miss, read-ahead) into the cache's
// buffers; a batch is the LP loader's buffer of runs read around the cache (CopyRuns), on one
// disk in one or many requests. Neither path reads into the other's memory, and each size was
// measured on its own (docs/benchmarks-history.md: one 16 MiB extent in flight per disk, issue
// 30; eight batches of 16 MiB against two of 64 MiB, issue 16).
inline constexpr uint64_t kMaxExtent = 16ull << 20;

class VolumeCore {
 public:
  // Finds the disk set of the striped graphs under `options.source` and checks every disk
  // (identity, order) and that io_uring works; finishes unpacks a killed daemon left. Fails with
  // the reason, naming the disk.
  static Result<std::unique_ptr<VolumeCore>> Open(const VolumeOptions& options);
  ~VolumeCore();
  VolumeCore(const VolumeCore&) = delete;
  VolumeCore& operator=(const VolumeCore&) = delete;

  // The I/O workers, the cache and its prefetchers, the frame tier, the extent reads.
  Status Start();
  // The frame tier, the extent reads, the cache (prefetches cancelled), then the I/O engine
  // (queues drained). The schedules that load through the cache are stopped before (Volume::Stop).
  void Stop();

  const VolumeOptions& options() const { return options_; }
  const ReadCostModel& read_cost() const { return *read_cost_; }
  const std::string& source() const { return options_.source; }
  bool has_disks() const { return disks_ != nullptr; }

  // Volume::OpenStriped and Volume::RefreshLayout, for the file the volume made.
  Result<std::shared_ptr<StripedVolumeFile>> OpenStriped(UniqueFd stub, const StripedStub& info,
                                                         const std::string& backing_path);
  void RefreshLayout(StripedVolumeFile& file, const std::string& backing_path);

  // Volume::Read (read_path.cc).
  Result<PinnedRead> Read(StripedVolumeFile& file, ReadStreams& streams, uint64_t offset, uint64_t length,
                          uint32_t pid, AlignedBuffer& scratch);

  // Copies the ranges of a striped file into `out` + their out_offset, through the cache:
  // each unit is loaded once (concurrent readers wait for that load) and pinned while
  // copied; units up to the loader's read-ahead window ahead of the copy are prefetched in
  // disk turns, so every disk works at once. Reads past the end are an error. `done_with_units`
  // (the LP loader): nothing more of a unit is wanted after the ranges' last byte in it, so it
  // leaves staging (admitted or dropped) as soon as it is copied, not when fully served.
  // With `place` (an LP's memory; `out` unused) nothing is copied from units in the LP's shared
  // memory: the LP borrows them (pinned while it lives, out of staging at once); pieces of other
  // units are copied into blocks of the LP. `borrowed` (optional) adds the bytes borrowed.
  // With `place`, of a compressed file's unit the LP takes less than half of and the cache does
  // not hold decoded, the runs are decoded from the blocks of its frame alone when the frame
  // tier holds the frame and they lie in at most half of its blocks (PackedFile::DecodePieces):
  // that unit is neither decoded whole nor offered to the cache.
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
  // For each of `ranges` (offset, length) of `source`, a file of `file_size` bytes: whether every
  // unit it lies in is in the cache as readers read it (decoded), so that an LP takes it from
  // memory with no disk read and no decode. One look at the cache per unit, nothing loaded or
  // counted as a lookup.
  std::vector<bool> InMemory(const std::shared_ptr<StripedSource>& source, uint64_t file_size,
                             std::span<const std::pair<uint64_t, uint64_t>> ranges) const;

  // Deletes the parts of a striped file on every disk (its last name is gone).
  void RemoveParts(const std::string& file_id);

  // Faults of the disks (tests of failing disks): errno every I/O to `disk` fails with; 0 heals.
  uint32_t disk_count() const;
  int fault(uint32_t disk) const;
  void InjectFault(uint32_t disk, int error);

  // The one memory budget (memory=): a graph's schedule reserves its LP window and index.
  MemoryBudget& budget() { return budget_; }
  // Under a budget, where the graphs' shared memory adds the freed bytes it keeps resident
  // (SharedArena::Options::idle_counter): the decoded units' cache counts them as its own idle
  // memory. Null without a budget (the window lends the cache part of its idle memory instead).
  const std::shared_ptr<std::atomic<uint64_t>>& shared_idle() const { return shared_idle_; }
  const ReadAhead& read_ahead() const { return read_ahead_; }

  // For `.graphfs/stats` (stats.cc): disks, read path, compressed reads, cache, frames, memory
  // budget, indexes, read-cost model, and the versions `reclaimer` knows of.
  void AddStats(nlohmann::json& j, const VersionReclaimer& reclaimer);
  // Of those, only the objects that say what memory the volume holds — `cache` and `frames`
  // (their resident bytes alone: used, staged, buffers_idle_bytes, held), `memory_budget`,
  // `degraded_share` — with AddStats' names and values; for the daemon's memory sampler, which
  // prices them several times a second (Volume::AddMemoryStats).
  void AddMemoryStats(nlohmann::json& j);
  std::vector<std::string> DegradedNotes() const;

  GraphIndexes& indexes() { return *indexes_; }
  cache::ChunkCache* cache() { return cache_.get(); }  // null before Start and after Stop
  FrameTier* frames() { return frames_.get(); }        // likewise
  const ExtentReads* extent_reads() const { return extents_.get(); }  // likewise
  // Reads the stubs in graph versions' extent maps (a striped graph's versions) through this
  // volume: grid::GraphFile::Open(path, &core.stub_files()).
  const grid::StubFiles& stub_files() const;
  const DiskSet* disk_set() const { return disks_.get(); }
  // The online switch (docs/parity.md, "graphfs-rebuild"): missing disk `disk` is now `dir`
  // (rebuilt, read back, its identity stamped): the set names it, and every file open over the
  // set reads it from now on (StripedFile::AdoptDisk; one that cannot keeps reading through
  // parity, logged). The log says "disk 2 back: /new/dir"; stats drop it from `degraded`.
  Status SwitchDisk(uint32_t disk, const std::string& dir);
  // A disk missing since the mount is there again at its registered path (docs/parity.md, "A disk
  // that comes back under the mount"): taken back if it is this set's (DiskSet::TakeBack; its
  // error otherwise, nothing changed) — stale, and every file open over the set handed it
  // (StripedFile::TakeBackDisk: a file written while it was missing reads its other rows from it
  // and rebuilds those it missed; one that was not reads and writes it whole). Healthy at once
  // only when no write-intent record names it. The log says which and how many open files took it.
  Status TakeBackDisk(uint32_t disk);
  IoEngine* io() { return io_.get(); }
  // Every striped file the volume opens, over its disk set: `writable` or not, read O_DIRECT
  // unless `direct_io` says otherwise (the mount's `direct` option by default), its degraded rows'
  // blocks kept in the mount's share — and a degraded one has the share charged to the budget.
  Result<std::shared_ptr<StripedFile>> OpenFile(UniqueFd stub, const StripeManifest& manifest, bool writable,
                                                std::optional<bool> direct_io = std::nullopt);
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
  explicit VolumeCore(const VolumeOptions& options);
  // A disk the set names again (SwitchDisk, TakeBackDisk): held against offline rebuilds on a
  // writable mount (logged as "`label` back, but not held ..." when it cannot be); and, once no
  // disk is lost and no open file reads through parity, the degraded reads' share given back to
  // the budget (a file that could not take the disk keeps it).
  void HoldDiskBack(const std::string& label, const std::string& dir);
  void ReleaseDegradedShareWhenWhole();
  void RefreshSourceLayout(StripedSource& source, const std::string& backing_path);
  bool ServeFromCache(StripedVolumeFile& file, uint64_t off, uint64_t len, const ReadStreams::Position& stream,
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
  std::shared_ptr<std::atomic<uint64_t>> shared_idle_;  // shared_idle()
  std::unique_ptr<DegradedShare> degraded_share_;  // charged to budget_
  std::unique_ptr<ReadCostModel> read_cost_;
  std::unique_ptr<IoEngineOptions> io_options_;
  std::unique_ptr<DiskSet> disks_;  // null when nothing under the source is striped
  SetHold disk_hold_;  // disks_' disks, held against an offline graphfs-rebuild while mounted writable
  std::unique_ptr<IoEngine> io_;
  ReadAhead read_ahead_;
  std::unique_ptr<PackedCounters> packed_counters_;
  std::unique_ptr<VolumeStubFiles> stub_files_;
  std::unique_ptr<GraphIndexes> indexes_;     // chunk layouts of indexed graphs
  std::unique_ptr<cache::ChunkCache> cache_;  // after io_: its prefetches use it, it goes first
  // Compressed files' frames (volume/internal/frame_tier.h), the cache's first tier; shared with
  // the compressed files that read through it.
  std::shared_ptr<FrameTier> frames_;
  std::unique_ptr<ExtentReads> extents_;      // after the cache: fills its units, goes first
};

}  // namespace graphfs::volume
