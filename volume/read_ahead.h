// Read-ahead, decided in one place: which reads continue a sequential stream (ReadStreams,
// one per open file), how far ahead of a stream or of the logical-partition loader units
// are loaded (ReadAhead::StreamWindow, LoaderWindow), and how the cache's staging area is
// shared among the readers that are streaming now (ReadAhead::Share).
//
// FUSE hands the daemon at most 1 MiB per request, so without read-ahead a sequential
// reader would keep one disk busy at a time. The window grows with the stream (never more
// than it has read so far: engines that skip inactive blocks jump, and a deep read-ahead
// past what they want only burns disk time — the kernel ramps up the same way), is at most
// `units` stripe units, and at most an equal share of the staging area for every reader
// that read in the last second — so several streams each get their nearest units first
// instead of one deep window leaving another reader to wait on a miss.
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
  // Records the read. Returns 0 if it does not continue a stream, else the bytes the stream
  // has read so far including this read (read-ahead grows with it, like the kernel's).
  uint64_t Continues(uint64_t offset, uint64_t length);

 private:
  static constexpr int kSlots = 8;
  static constexpr uint64_t kSlack = 8ull << 20;  // async reads arrive slightly out of order
  struct Slot {
    uint64_t next = UINT64_MAX;
    uint64_t last_use = 0;
    uint64_t run = 0;  // bytes read by the stream
  };
  std::mutex mu_;
  Slot slots_[kSlots];
  uint64_t tick_ = 0;
};

struct ReadAheadOptions {
  bool off = false;          // readahead=0
  uint64_t units = 0;        // stripe units ahead of a stream; 0: two per disk
  uint64_t staging_limit = 1ull << 30;  // the cache's staging area (readahead_mem)
};

class ReadAhead {
 public:
  explicit ReadAhead(const ReadAheadOptions& options) : options_(options) {}

  bool off() const { return options_.off; }
  // Records that process `pid` looked up a unit of file `file` (any lookup: a stream, a
  // small read, the loader): it counts as streaming for a second.
  void NoteReader(uint64_t file, uint32_t pid);
  // Bytes one reader may keep loading ahead of itself: an equal share of the staging area
  // for every reader that read in the last second (the whole area when nobody did).
  uint64_t Share() const;
  // Bytes to keep loading ahead of a stream that has read `stream_bytes` so far, in a file
  // striped in units of `unit` bytes over `disks` disks.
  uint64_t StreamWindow(uint64_t stream_bytes, uint64_t unit, uint32_t disks) const;
  // The logical-partition loader's window: two stripe units per disk, within its share.
  uint64_t LoaderWindow(uint64_t unit, uint32_t disks) const;

 private:
  const ReadAheadOptions options_;
  mutable std::mutex mu_;
  std::map<std::pair<uint64_t, uint32_t>, int64_t> last_read_ns_;  // (file, pid)
  int64_t last_prune_ns_ = 0;
};

}  // namespace graphfs::volume
