// A striped file: its parts on every disk of the set, its manifest in the stub's xattr.
//
// Reads and writes are split at stripe-unit boundaries, pieces that touch on one disk are
// merged into one vectored run, and the runs go to the disks' queues at once. Bytes past
// the end of a part read as zeros (a part may be shorter than its share after a truncate
// that grew the file). Aligned runs use an O_DIRECT descriptor, so striped data does not
// also sit in the page cache of the part files.
//
// Sequential readers are served from whole stripe units read ahead of them: FUSE hands
// the daemon at most 1 MiB per request, but each disk streams best in units of megabytes,
// and reading the next units ahead keeps all disks busy for a single stream.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "striping/disk_set.h"
#include "striping/io_engine.h"
#include "striping/manifest.h"
#include "striping/stripe_map.h"

namespace graphfs {

inline constexpr uint64_t kDirectAlign = 4096;

// Memory shared by all read-ahead buffers of a mount.
class MemoryBudget {
 public:
  explicit MemoryBudget(uint64_t bytes) : limit_(bytes) {}
  bool TryTake(uint64_t bytes);
  void Give(uint64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  uint64_t limit() const { return limit_; }

 private:
  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
};

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size);  // 4 KiB aligned; empty (ok() false) if memory ran out
  AlignedBuffer(AlignedBuffer&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; o.size_ = 0; }
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept;
  ~AlignedBuffer();
  char* data() { return data_; }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  bool ok() const { return data_ != nullptr; }

 private:
  void Release();
  char* data_ = nullptr;
  size_t size_ = 0;
};

// One stripe unit held in memory by read-ahead.
struct StripeUnit {
  StripeUnit(uint64_t index, uint64_t generation, MemoryBudget* budget, uint64_t charge)
      : index(index), generation(generation), budget(budget), charge(charge) {}
  ~StripeUnit();
  const uint64_t index;
  const uint64_t generation;  // file generation when the load started
  MemoryBudget* budget;
  uint64_t charge;
  AlignedBuffer data;
  uint64_t valid = 0;  // bytes of file content in data
  std::atomic<uint64_t> served{0};       // bytes handed to readers (NoteServed)
  std::atomic<int64_t> last_touch_ns{0};  // steady clock: load start, then each reader request
  // Done with: every byte served, or left alone for a while (a reader that skips data must
  // not pin memory forever): 2 s after a reader last touched it, 30 s if nobody ever did
  // (a deep read-ahead may wait seconds for its reader).
  bool Consumed(int64_t now_ns) const;
  void NoteServed(uint64_t bytes) { served.fetch_add(bytes, std::memory_order_relaxed); }
  IoBatch batch;
  IoRun run;
};

struct StripedFileOptions {
  bool writable = true;
  bool direct_io = true;                   // O_DIRECT for aligned runs
  uint64_t max_run_bytes = 64ull << 20;    // cap when merging touching pieces
  MemoryBudget* readahead_budget = nullptr;  // null: no read-ahead
};

struct ReadStats {
  std::atomic<uint64_t> readahead_hits{0};
  std::atomic<uint64_t> readahead_loads{0};
  std::atomic<uint64_t> direct_reads{0};
};

class StripedFile {
 public:
  // Opens the parts of the file described by `manifest`. `stub_fd` (owned) is a readable
  // descriptor of the stub, used to persist the manifest.
  static Result<std::shared_ptr<StripedFile>> Open(const DiskSet& disks, IoEngine* io, UniqueFd stub_fd,
                                                   const StripeManifest& manifest, const StripedFileOptions& options);
  // Creates the parts of a new, empty striped file (graphfs-stripe).
  static Status CreateParts(const DiskSet& disks, const std::string& file_id);
  ~StripedFile();

  uint64_t size() const { return size_.load(std::memory_order_acquire); }
  StripeManifest manifest() const;
  const StripeMap& map() const { return map_; }
  ReadStats& read_stats() { return read_stats_; }

  // Reads up to `length` bytes at `offset`; fewer at end of file, 0 past it.
  Result<uint64_t> Read(uint64_t offset, uint64_t length, char* buf);
  // Writes all bytes (extending the file if needed); returns `length`.
  Result<uint64_t> Write(uint64_t offset, const char* buf, uint64_t length);
  Status Truncate(uint64_t new_size);
  // Persists the manifest if it changed (size), without forcing it to disk.
  Status Flush();
  // Makes data, size and layout durable: fdatasync of every part, manifest, fsync of the stub.
  Status Sync();

  // The unit with index `unit_index`, read ahead together with the `ahead` units after it.
  // Returns null (not an error) when the read-ahead budget is exhausted; callers then read directly.
  // Room is made only by dropping units readers are done with: evicting prefetched units
  // before they were read would turn deep read-ahead into thrashing. Readers report the
  // bytes they took with StripeUnit::NoteServed.
  Result<std::shared_ptr<StripeUnit>> ReadUnit(uint64_t unit_index, uint32_t ahead);
  uint64_t unit_count() const;  // units covering the current size

 private:
  StripedFile(const DiskSet& disks, IoEngine* io, UniqueFd stub_fd, const StripeManifest& m, StripeMap map,
              const StripedFileOptions& options);
  std::vector<IoRun> PlanRuns(IoKind kind, uint64_t offset, uint64_t length, char* buf) const;
  std::shared_ptr<StripeUnit> StartUnitLoad(uint64_t index);  // units_mu_ held by caller
  bool EvictConsumedUnit();                                   // units_mu_ held by caller
  void InvalidateUnits();
  void MarkModified();

  IoEngine* io_;
  UniqueFd stub_fd_;
  const StripeMap map_;
  const StripedFileOptions options_;
  struct Part {
    UniqueFd fd;      // buffered, read-write (or read-only)
    UniqueFd direct;  // O_DIRECT, for aligned runs
    std::string path;
  };
  std::vector<Part> parts_;

  mutable std::mutex manifest_mu_;
  StripeManifest manifest_;
  bool manifest_dirty_ = false;

  // Truncate excludes reads and writes; reads and writes run concurrently.
  std::shared_mutex rw_;
  std::atomic<uint64_t> size_{0};
  std::atomic<uint64_t> generation_{0};

  std::mutex units_mu_;
  std::map<uint64_t, std::shared_ptr<StripeUnit>> units_;
  std::map<uint64_t, uint64_t> unit_last_use_;
  uint64_t use_tick_ = 0;
  ReadStats read_stats_;
};

// Tracks a few sequential streams inside one open file (one reader thread each), so that
// reads which continue where an earlier one ended are served by read-ahead.
class ReadStreams {
 public:
  // Records the read; returns true if it continues a stream.
  bool Continues(uint64_t offset, uint64_t length);

 private:
  static constexpr int kSlots = 8;
  static constexpr uint64_t kSlack = 8ull << 20;  // async reads arrive slightly out of order
  struct Slot {
    uint64_t next = UINT64_MAX;
    uint64_t last_use = 0;
    uint32_t hits = 0;
  };
  std::mutex mu_;
  Slot slots_[kSlots];
  uint64_t tick_ = 0;
};

}  // namespace graphfs
