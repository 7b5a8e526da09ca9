// The disks a graph is striped over, and proof that they are the right ones.
//
// Every disk directory carries an identity file `.graphfs-disk` naming the set it belongs
// to and its index in that set. A graph directory striped over a set records the set in
// `GRAPH/.graphfs/disks.json` (the registry). Mounting checks every registered disk: a
// foreign or swapped disk is refused with a message naming it, so a wrong /etc/fstab line can
// never serve bytes from the wrong disk. A missing disk is accepted as long as no more are
// missing than the registry's `parity` — the fewest parity units (K) of the files striped over
// the set, so every file can still be read through parity (docs/parity.md) — and the set then
// says which disks are missing; with more missing, or with no parity, it is refused naming them.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.h"
#include "striping/rebuild_watch.h"

namespace graphfs {

inline constexpr const char* kDiskIdentityFile = ".graphfs-disk";
inline constexpr const char* kRegistryDir = ".graphfs";
inline constexpr const char* kRegistryFile = "disks.json";

struct DiskRegistry {
  std::string set_id;
  std::vector<std::string> disks;  // absolute paths, in index order
  // The smallest parity K of the files striped over the set: how many disks may be missing at
  // mount. 0 in registries written before parity existed (none of their files had any).
  uint32_t parity = 0;
};

// What is known of a disk. The set itself knows kHealthy and kMissing (as Open found them); the
// other two come from what reads found since (disk_health.h joins the set with the I/O engine's
// counters): kFailing, present and read but some of its I/O failed or returned blocks whose sums
// did not match; kAvoided, its reads returned errors lately, so reads of files with parity go
// around it but for a probe each second (IoEngine::AvoidReads) until one succeeds. kStale (found
// by Open too): the disk is there, but files were written while it was lost (their write-intent
// records, stale_rows.h, are on the other disks), so those files read it through parity until
// graphfs-scrub resyncs the rows (ClearStale) or graphfs-rebuild replaces it.
enum class DiskState { kHealthy, kMissing, kFailing, kAvoided, kStale };
class StripedFile;
// "healthy", "missing", "failing", "avoided", "stale": the names `.graphfs/stats` and the tools print.
const char* DiskStateName(DiskState state);

// Copies of a DiskSet share one state: the disks' paths and states (which a rebuilt disk switched
// in online changes: Replace), the files open over the set, the row locks and the sums epoch. The
// mount holds one set for its life and hands it (by reference) to every file it opens.
class DiskSet {
 public:
  // For graphfs-stripe: claims `paths` as one set. Disks that already carry an identity
  // must all belong to the same set, at the index their position gives; blank disks are
  // stamped. Fails (naming the disk) on foreign or reordered disks.
  static Result<DiskSet> Claim(const std::vector<std::string>& paths);

  // For the mount and offline tools: opens a registered set and verifies each disk. Up to
  // registry.parity disks may be missing (no identity file: not mounted, or gone); they are
  // kMissing in the set. More than that is ENODEV naming every missing disk.
  static Result<DiskSet> Open(const DiskRegistry& registry);

  const std::string& set_id() const { return set_id_; }
  uint32_t size() const { return size_; }
  // By value: a disk switched online (Replace) changes it under a running mount.
  std::string path(uint32_t disk) const;
  std::string PartPath(uint32_t disk, const std::string& file_id) const;
  // kHealthy, kMissing or kStale (as found by Open, or since Replace, TakeBack and ClearStale; Claim finds
  // every disk healthy).
  DiskState state(uint32_t disk) const;
  bool degraded() const;
  // One line per missing or stale disk for the log, naming it: "degraded: disk 2 (/disks/2) is
  // missing; files are read through parity". Empty when every disk is there and in step.
  std::vector<std::string> DegradedNotes() const;
  // A stale disk was resynced (graphfs-scrub rewrote every row the records marked, and removed
  // them): healthy again. Files open before still read it through parity until reopened.
  void ClearStale(uint32_t disk) const;
  // The mount's daemon rebuilds missing disk `disk` (rebuild.h): the writes of files that lost it
  // go on, and tell the rebuild the rows they changed behind it (RebuildWatch), until EndRebuild,
  // which also lets go writes the switch held.
  std::shared_ptr<RebuildWatch> WatchRebuild(uint32_t disk) const;
  void EndRebuild(uint32_t disk) const;
  // The rebuild of `disk` running now, or nullptr.
  std::shared_ptr<RebuildWatch> rebuild(uint32_t disk) const;
  // A file created by the daemon while disks are missing (file_creation.h) is held like a write
  // for a rebuild's last pass: BeginCreate waits while a rebuild holds the writes, then counts the
  // creation as under way; EndCreate (with the file, once durable and named: told to every
  // rebuild running, RebuildWatch::Created; nullptr: given up) ends it; AwaitCreations, called
  // by a rebuild that holds the writes, returns once none is under way.
  void BeginCreate() const;
  void EndCreate(const RebuildWatch::CreatedFile* file) const;
  void AwaitCreations() const;
  // The parts of `file_id` are about to be removed: every rebuild running drops the file.
  void NoteRemoved(const std::string& file_id) const;

  DiskRegistry registry() const;

  // The online switch (docs/parity.md, "graphfs-rebuild"): missing disk `disk` is now `dir`,
  // which must carry the disk's identity (this set, this index; graphfs-rebuild stamps it once
  // every part was read back) and a parts directory. The set's path and state change; the files
  // open over the set still read the disk through parity until each is handed it
  // (StripedFile::AdoptDisk, for each of OpenFiles()). EINVAL naming what is wrong, and nothing
  // changes, when the disk is not missing or `dir` is not it.
  Status Replace(uint32_t disk, const std::string& dir) const;
  // A disk missing since the set was opened is there again under a running mount (its directory
  // readable at the registered path): the mount's daemon probes for it (volume/internal/
  // disk_tasks.h). It is taken back only if it carries this set's identity at this index — else an
  // error naming what it is, and nothing changes: ENOENT when no directory is there yet, ENODEV
  // when the directory holds no identity (an empty one, or the disk not mounted on it), EINVAL
  // when it is another set's disk or another index (or its identity is damaged), EBUSY while the
  // daemon rebuilds the disk elsewhere (its switch would find it no longer missing). Taken back, it is kStale — never healthy at once: files
  // written while it was missing hold records of the rows it missed, and until the caller has
  // handed it to the files open (StripedFile::TakeBackDisk) and found no record left
  // (AnyStaleRecordFor, then ClearStale), reads must treat it so.
  Status TakeBack(uint32_t disk) const;

  // Files opened over the set (StripedFile::Open tracks those with block sums): the ones still
  // open, for a switch to reach.
  void Track(std::weak_ptr<StripedFile> file) const;
  std::vector<std::shared_ptr<StripedFile>> OpenFiles() const;

  // The lock of row `row` of striped file `file_id`, one for every copy of the set: a read's heal
  // of the row, a write's in-place writes of it, and a rebuild or scrub run by the mount's
  // daemon of it take it, so none of them sees the row half written by another. Rows share a
  // fixed number of locks (by hash): hold one at a time.
  std::mutex& RowLock(const std::string& file_id, uint64_t row) const;
  // Bumped when blocks' sums on the disks were rewritten behind the open files' backs (a scrub
  // run by the daemon): each open file's reads drop the sums they kept (SumsCache) and read them
  // again.
  uint64_t sums_epoch() const { return shared_->sums_epoch.load(std::memory_order_acquire); }
  void SumsChanged() const { shared_->sums_epoch.fetch_add(1, std::memory_order_acq_rel); }

 private:
  struct Shared {
    mutable std::mutex mu;
    std::vector<std::string> paths;  // absolute paths, in index order; under mu
    std::vector<bool> missing;       // per disk; under mu
    std::vector<bool> stale;         // per disk; under mu
    std::vector<std::shared_ptr<RebuildWatch>> rebuilds;  // per disk, while the daemon rebuilds it; under mu
    std::vector<std::weak_ptr<StripedFile>> files;  // under mu
    int creating = 0;                                // files created now (BeginCreate); under mu
    std::condition_variable creations_done;
    std::array<std::mutex, 256> row_locks;
    std::atomic<uint64_t> sums_epoch{0};
  };
  DiskSet(std::string set_id, std::vector<std::string> paths, uint32_t parity, std::vector<bool> missing);
  std::string set_id_;
  uint32_t size_ = 0;
  uint32_t parity_ = 0;
  std::shared_ptr<Shared> shared_;
};

// Registry file I/O. Writes are atomic (temp file, fsync, rename, fsync directory).
Result<DiskRegistry> ReadRegistry(const std::string& graph_dir);
Status WriteRegistry(const std::string& graph_dir, const DiskRegistry& registry);

// What a disk's identity file says: the set it belongs to and its place in it.
struct DiskIdentity {
  std::string set_id;
  uint32_t index = 0;
  uint32_t count = 0;
};

// The file contents, without I/O (Read*/Write*/Claim use these; the fuzz target
// tests/fuzz/stripe_manifest_fuzz.cc feeds them damaged files). Decode errors say what is
// wrong but not which file: callers add that.
std::string EncodeRegistry(const DiskRegistry& registry);
Result<DiskRegistry> DecodeRegistry(const std::string& text);
std::string EncodeDiskIdentity(const DiskIdentity& identity);
Result<DiskIdentity> DecodeDiskIdentity(const std::string& text);

// Graph directories below `root` (itself included, at most `max_depth` levels down) that
// carry a registry. Hidden directories are not entered.
std::vector<std::string> FindRegistries(const std::string& root, int max_depth);

// Random 128-bit identifier as 32 hex digits.
std::string NewId();
// The disk that holds unit 0 of a file named `name` (files of a graph start on different disks,
// so their first units do not all load one disk).
uint32_t FirstDiskFor(const std::string& name, uint32_t disks);

// Writes `content` to `path` atomically and durably.
Status WriteFileAtomic(const std::string& path, const std::string& content);
Result<std::string> ReadSmallFile(const std::string& path, size_t limit = 1 << 20);

}  // namespace graphfs
