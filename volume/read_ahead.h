// Read-ahead, decided in one place: which reads continue a sequential stream (ReadStreams,
// one per open file), how far ahead of a stream or of the logical-partition loader units
// are loaded (ReadAhead::StreamWindow, LoaderWindow), and how the cache's staging area is
// shared among the readers that are streaming now (ReadAhead::Share).
//
// FUSE hands the daemon at most 1 MiB per request, so without read-ahead a sequential
// reader would keep one disk busy at a time. A stream's window reaches the next stripe unit of
// every disk as soon as the stream is seen (a whole stripe row: a reader of a file striped at
// 16 MiB is served by all disks at once, not by the one its next unit lies on), grows with
// what the stream has read, and stops at `units` stripe units or, by default, at each disk's
// depth: two stripe units or bandwidth × kReactionSeconds of reading, whichever is more.
// The staging area (readahead_mem) is a ceiling, not the working size: each stream keeps an
// equal share of it for every reader that read in the last second, and beyond its share loads
// only units of disks that have nothing to do (volume/internal/extent_reads.h), so a small area never
// leaves a disk idle and a large one never lets one deep window starve the others.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

namespace graphfs::volume {

// Tracks a few sequential streams inside one open file (one reader thread each), so that
// reads which continue where an earlier one ended are served by read-ahead.
class ReadStreams {
 public:
  struct Position {
    uint64_t run = 0;    // bytes the stream has read so far including this read; 0: not a stream
    int slot = -1;       // the stream's, for NoteAhead
    uint64_t ahead = 0;  // read-ahead was started up to here (a file offset)
  };
  // Records the read. `run` grows with the stream (read-ahead grows with it, like the kernel's).
  Position Continues(uint64_t offset, uint64_t length);
  // The stream in `slot` has read-ahead started up to `offset` (so the next read looks further).
  void NoteAhead(int slot, uint64_t offset);

 private:
  static constexpr int kSlots = 8;
  static constexpr uint64_t kSlack = 8ull << 20;  // async reads arrive slightly out of order
  struct Slot {
    uint64_t next = UINT64_MAX;
    uint64_t last_use = 0;
    uint64_t run = 0;    // bytes read by the stream
    uint64_t ahead = 0;  // read-ahead started up to here
  };
  std::mutex mu_;
  Slot slots_[kSlots];
  uint64_t tick_ = 0;
};

// readahead_mem='s default, written once: ReadAheadOptions starts from it, the cache's staging
// area is given it (the cache has no default of its own), and the mount options show it.
inline constexpr uint64_t kDefaultReadaheadMem = 1ull << 30;

struct ReadAheadOptions {
  bool off = false;          // readahead=0
  uint64_t units = 0;        // stripe units ahead of a stream; 0: each disk's depth (see above)
  uint64_t staging_limit = kDefaultReadaheadMem;  // the cache's staging area (readahead_mem): a ceiling
  // The disks' model, with no default of its own: the read-cost model's (graphfs-calibrate's,
  // else chunkindex::ReadCost's defaults), given by set_disk_model when the volume opens.
  double disk_bytes_per_second = 0;     // one disk's sequential rate; 0: unknown (windows of 2 units)
  double disk_seconds_per_request = 0;  // what one more request costs it
};

// How long the read path takes to turn a finished disk request into the next one (FUSE round
// trip, wake-ups, a busy machine): each disk keeps at least this much reading queued.
inline constexpr double kReactionSeconds = 0.1;
// How long the daemon takes from one disk request's completion to handing the disk the next
// one it has queued (an I/O worker's turn): what a disk must have in flight to cover.
inline constexpr double kTurnaroundSeconds = 0.002;

class ReadAhead {
 public:
  explicit ReadAhead(const ReadAheadOptions& options) : options_(options) {}

  bool off() const { return options_.off; }
  // The disks' measured rate and cost per request, once known (graphfs-calibrate's records).
  void set_disk_model(double bytes_per_second, double seconds_per_request) {
    if (bytes_per_second > 0) options_.disk_bytes_per_second = bytes_per_second;
    if (seconds_per_request >= 0) options_.disk_seconds_per_request = seconds_per_request;
  }
  double disk_bytes_per_second() const { return options_.disk_bytes_per_second; }
  // Records that process `pid` looked up a unit of file `file` (any lookup: a stream, a
  // small read, the loader): it counts as streaming for a second.
  void NoteReader(uint64_t file, uint32_t pid);
  // Bytes one reader may keep loading ahead of itself: an equal share of the staging area
  // for every reader that read in the last second (the whole area when nobody did).
  uint64_t Share() const;
  // Bytes to keep loading ahead of a stream that has read `stream_bytes` so far, in a file
  // striped in units of `unit` bytes over `disks` disks (not capped by Share: the caller loads
  // beyond its share only for idle disks).
  uint64_t StreamWindow(uint64_t stream_bytes, uint64_t unit, uint32_t disks) const;
  // Bytes worth keeping queued on one disk: two extents of `extent` bytes or kReactionSeconds
  // of its reading, whichever is more.
  uint64_t DiskDepth(uint64_t extent) const;
  // Bytes one disk needs in flight so that it never waits for the daemon between requests:
  // bandwidth × (its cost per request + kTurnaroundSeconds). More than that only shares the
  // disk between requests — the one a reader waits for would finish later.
  uint64_t InFlightDepth() const;
  // The logical-partition loader's window: two stripe units per disk, within its share.
  uint64_t LoaderWindow(uint64_t unit, uint32_t disks) const;

 private:
  ReadAheadOptions options_;  // set before any reader comes
  mutable std::mutex mu_;
  std::map<std::pair<uint64_t, uint32_t>, int64_t> last_read_ns_;  // (file, pid)
  int64_t last_prune_ns_ = 0;
};

}  // namespace graphfs::volume
