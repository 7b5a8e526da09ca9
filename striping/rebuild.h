// graphfs-rebuild (docs/parity.md, "graphfs-rebuild"): puts a lost disk's units — data and
// parity of every striped file of the set, with their sums — onto a new disk directory, then
// makes the set's registries name it.
//
// Checked before anything is written: the disk index is in the set; the new directory exists and
// is empty (but for `lost+found`), or carries a rebuild in progress of this same set and disk,
// which is resumed; it is not a disk of another set nor another disk of this one; every file
// striped over the set has sums and parity K >= 1; it has room for what the disk held. A file whose
// row journal holds writes its killed writer did not finish is replayed before its rows are read
// (journal_replay.h; refused, naming the file, when it cannot be written).
//
// Then, file by file and row by row: the disk's unit of the row is rebuilt block by block from the
// same block of the row's other units, each verified against its sums (a bad source block is
// rebuilt around, as long as at most K units of the row are bad there), and written to
// DIR/parts/ID with its sums in DIR/parts/ID.sums. Every `checkpoint` bytes the part and sums are
// made durable and the progress record DIR/.graphfs-rebuild.json (the files done, the file and row
// reached) is rewritten atomically: killed, a rerun resumes from it. Each row written is read back
// from the new disk (O_DIRECT) and checked against its sums on a thread of its own while the next
// rows are rebuilt (rebuild_read_back.h; a resumed run reads back the rows the killed one wrote
// too). At the end, once every part was read back whole and its length checked, the directory
// gets the disk's identity (.graphfs-disk, set and index), every registry of the set's graphs is
// rewritten with the new path for the disk, and the record is removed.
//
// Offline, no writable mount may serve the set meanwhile (its writes would not reach the new
// directory, and the records marking them would be cleared at the end): the run holds the set's
// disks (set_hold.h) and is refused, EBUSY, while a daemon holds them. A read-only mount keeps
// reading the disk through parity until it is mounted again. Or the mount's daemon runs it
// (`rebuild I DIR` written to MOUNTPOINT/.graphfs/disks; RebuildRequest::live): then each row's
// rebuild holds the row's lock (DiskSet::RowLock), which the daemon's heals and writes take too;
// writes go on, and the rows they change behind the rebuild are done again (rebuild_watch.h),
// the last of them — at most 16 rows, for at most `max_hold` — with the writes held, which stay
// held until the registries name the new directory and the daemon has switched its files to it (switch_in: DiskSet::Replace,
// StripedFile::AdoptDisk) without a remount. A resumed run does again the rows the killed one
// had passed that the write-intent records (stale_rows.h) mark.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "striping/disk_set.h"
#include "striping/set_task.h"

namespace graphfs {

inline constexpr const char* kRebuildRecordFile = ".graphfs-rebuild.json";

// The longest a daemon's rebuild holds the writes of the files that lost the disk while it does
// their last rows again and switches the disk in (RebuildRequest::max_hold). The writes are held
// only once at most kRebuildRowsToHold rows are left (rebuild.cc), done at full speed; this bounds
// the pause when those rows read slower than they should (a disk slow or failing): past it the
// hold is given up after the row under way, the writes go on, and the rows left are done in the
// next pass. 3 s covers 16 rows of the largest stripe unit (16 MiB) read at 100 MB/s per disk
// (2.7 s) — a pause of the order of a disk's own worst case (an error retry, a cache flush),
// which writers already live with; 4 MiB units (the usual) take 0.7 s.
inline constexpr std::chrono::milliseconds kMaxRebuildHold{3000};

struct RebuildRequest {
  // Graph directories or directories holding graphs: every graph striped over the set must be
  // among them, for the new disk to hold all of the set's units.
  std::vector<std::string> paths;
  uint32_t disk = 0;                 // the index of the disk to rebuild in the set
  std::string to;                    // the new disk's directory
  std::vector<std::string> disks;    // overrides the registered disk paths (same order); empty: registry
  uint64_t rate = 0;                 // bytes per second read from the other disks together; 0: no limit
  bool progress = true;              // progress line on stderr
  uint64_t checkpoint = 256ull << 20;  // bytes written between durable progress records
  // Set when the mount's daemon runs the rebuild: its set (the disk to rebuild must be missing
  // in it), whose row locks the rebuild takes row by row; `paths` is then the mount's source.
  const DiskSet* live = nullptr;
  SetTaskProgress* task = nullptr;  // progress and cancel, for a runner in the background
  // With `live`: switches the mount to the new disk (DiskSet::Replace, StripedFile::AdoptDisk),
  // called at the end with the writes of the files that lost the disk still held (RebuildWatch).
  std::function<Status(const std::string& dir)> switch_in;
  // With `live`: the longest the writes are held for the last rows and the switch (a hold is
  // given up past it, once it has done a row, and tried again at the next pass).
  std::chrono::milliseconds max_hold = kMaxRebuildHold;
};

struct RebuildReport {
  std::string set_id;
  std::string to;                    // the new disk's absolute path
  uint64_t files = 0;                // files with units on the disk
  uint64_t bytes = 0;                // bytes of units written (this run)
  uint64_t bad_source_blocks = 0;    // blocks of other disks that failed their sum (graphfs-scrub repairs them)
  // Rows done again: written behind a rebuild run by the daemon, marked by the write-intent records
  // after a resume (written since the killed run passed them), or of a file whose size changed.
  uint64_t redone_rows = 0;
  // Run by the daemon: rows done again while the writes were held (at most kRebuildRowsToHold
  // per hold, the rows of the writes under way when it began, which finish first, and those of
  // files whose size changed), holds given up past max_hold, and the longest hold in seconds.
  uint64_t held_rows = 0;
  uint64_t holds_given_up = 0;
  double longest_hold_seconds = 0;
  bool resumed = false;
  // Nothing was done: the directory is the disk already, every registry names it and it holds
  // every file's part and sums, in step (rebuild_in_place.h) — a finished run's rerun.
  bool in_place = false;
  double rebuild_seconds = 0;        // rebuilding and writing (this run)
  double verify_seconds = 0;         // the read back left after the last row was written
  std::vector<std::string> registries;  // graph directories whose registry now names the new disk
};

// What PrepareRebuild found and checked, for RunRebuild.
struct PreparedRebuild;
struct PreparedRebuildDeleter {
  void operator()(PreparedRebuild* p) const;
};
using PreparedRebuildPtr = std::unique_ptr<PreparedRebuild, PreparedRebuildDeleter>;

// Every check above, before a byte is written (the daemon answers a bad `rebuild` line with
// these errors at once): the set, the disk index (missing in `live` when given), the new
// directory, the files' parity, their journals, the room.
Result<PreparedRebuildPtr> PrepareRebuild(const RebuildRequest& request);
// The rebuild itself, then the identity and the registries.
Result<RebuildReport> RunRebuild(PreparedRebuild& prepared);
// Both.
Result<RebuildReport> Rebuild(const RebuildRequest& request);

}  // namespace graphfs
