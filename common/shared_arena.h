// Memory that other processes can map: one memfd per graph, handed to its jobs (through the
// mount, in FUSE passthrough) so that N jobs read one copy of a logical partition's bytes
// without a copy through the daemon. The daemon writes the bytes through its own mapping.
//
// The memfd is sparse: its size (virtual) is far larger than what is ever resident, and a
// slice costs memory only once written. Freed slices are kept resident for reuse (a fresh shmem
// page costs a zeroing fault, which the old glibc-heap LP buffers also paid) up to the larger
// of `idle_limit` and what `budget` leaves: slices taken as Use::kBudgeted (an LP's own
// blocks) and idle bytes share one budget, so idle memory fills only what the LPs do not use
// now — slices of other uses (cached units, which the cache bounds) are outside it. Beyond
// that, free bytes are punched out (`fallocate(PUNCH_HOLE)`), the
// highest first, which also unmaps those pages from every job that still maps them: the
// daemon's bound never depends on what jobs do. A punched page a job touches again reads as
// zeros.
//
// Thread-safe. Slices are granule-aligned (64 KiB), handed out where the most of their granules
// are resident (the lowest such place): the resident ones are reused first, and punching takes
// the highest.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/aligned_buffer.h"
#include "common/result.h"
#include "common/unique_fd.h"

namespace graphfs {

class SharedArena : public std::enable_shared_from_this<SharedArena> {
 public:
  static constexpr uint64_t kGranule = 64 << 10;

  struct Options {
    uint64_t virtual_bytes = 0;  // the memfd's size (sparse), a multiple of kGranule; no default: the
                                 // owner's (the volume's SharedLpMemoryBytes, volume/volume_options.h)
    uint64_t idle_limit = 0;  // freed bytes kept resident at least up to this (0: none)
    uint64_t budget = 0;      // kBudgeted slices + idle bytes kept within this (0: idle_limit alone)
    // Where the arena adds the freed bytes it keeps resident (and takes them out again as they
    // are reused or punched): the owner charges them where the memory came from — the volume to
    // its cache's decoded units, which most of it is (volume/internal/volume_core.cc). Shared by
    // several arenas; null: none.
    std::shared_ptr<std::atomic<uint64_t>> idle_counter;
  };
  // What a slice is for: kBudgeted slices count against Options::budget.
  enum class Use { kOther, kBudgeted };
  struct Stats {
    uint64_t virtual_bytes = 0;
    uint64_t used_bytes = 0;       // in slices handed out
    uint64_t budgeted_bytes = 0;   //   of them Use::kBudgeted
    uint64_t peak_used_bytes = 0;
    uint64_t resident_bytes = 0;   // written at least once and not punched since (used + kept idle)
    uint64_t punched_bytes = 0;    // given back to the kernel so far
    uint64_t slices = 0;           // handed out now
    uint64_t take_failures = 0;    // no room (the caller fell back to the heap)
  };

  // `name` is shown in /proc/PID/fd (memfd:NAME). Errors: memfd_create, ftruncate, mmap.
  static Result<std::shared_ptr<SharedArena>> Create(const std::string& name, const Options& options);
  ~SharedArena();
  SharedArena(const SharedArena&) = delete;
  SharedArena& operator=(const SharedArena&) = delete;

  // The memfd (read-write, close-on-exec; sealed against shrinking and growing).
  int fd() const { return fd_.get(); }
  uint64_t virtual_bytes() const { return options_.virtual_bytes; }
  uint64_t id() const { return id_; }  // unique in the process, never 0
  char* base() const { return base_; }

  // A slice of at least `bytes` (rounded up to the granule), or an error when none is free.
  struct Slice {
    uint64_t offset = 0;
    uint64_t length = 0;
    char* data = nullptr;
    bool budgeted = false;
  };
  Result<Slice> Take(uint64_t bytes, Use use = Use::kOther);
  void Give(const Slice& slice);

  Stats stats() const;

  // Over every arena of the process since it started: bytes faulted in fresh (each a zeroed
  // shmem page) and bytes punched out — the churn a decode or an LP block costs in system time
  // when it cannot reuse a resident slice.
  struct Churn {
    uint64_t populated_bytes = 0;
    uint64_t populated_budgeted_bytes = 0;  // of them for Use::kBudgeted slices (LPs' own blocks)
    uint64_t punched_bytes = 0;
  };
  static Churn ProcessChurn();

 private:
  SharedArena(UniqueFd fd, char* base, const Options& options);
  // Granules [first, first + count): resident bits, under mu_.
  bool Resident(uint64_t granule) const { return (resident_[granule / 64] >> (granule % 64)) & 1; }
  uint64_t CountResident(uint64_t first, uint64_t count) const;
  void SetResident(uint64_t first, uint64_t count, bool resident);
  uint64_t IdleAllowed() const;  // under mu_
  void TrimResident();  // punches free resident bytes beyond IdleAllowed(), highest first
  void ReportIdle();    // tells Options::idle_counter what changed of resident - used; under mu_

  UniqueFd fd_;
  char* base_ = nullptr;
  const Options options_;
  const uint64_t id_;
  mutable std::mutex mu_;
  std::map<uint64_t, uint64_t> free_;  // offset -> length, coalesced
  std::vector<uint64_t> resident_;     // one bit per granule
  uint64_t resident_end_ = 0;          // no granule at or past this offset was ever resident
  Stats stats_;
  uint64_t reported_idle_ = 0;  // what idle_counter holds of this arena's
};

// Bytes of a shared arena, or of the heap where there is no arena (or it is full): freed
// when the last owner lets go. 4 KiB-aligned either way. get() is null if the heap ran out.
class SharedBytes {
 public:
  static constexpr uint64_t kNotShared = ~uint64_t{0};

  SharedBytes() = default;
  // `arena` may be null: heap bytes.
  static SharedBytes Allocate(const std::shared_ptr<SharedArena>& arena, uint64_t bytes,
                              SharedArena::Use use = SharedArena::Use::kOther);
  SharedBytes(SharedBytes&& other) noexcept { *this = std::move(other); }
  SharedBytes& operator=(SharedBytes&& other) noexcept;
  SharedBytes(const SharedBytes&) = delete;
  SharedBytes& operator=(const SharedBytes&) = delete;
  ~SharedBytes() { Reset(); }

  char* get() const { return data_; }
  uint64_t size() const { return size_; }  // as asked (the slice may be larger)
  // What the bytes can hold: the slice's length, or the heap buffer's size.
  uint64_t capacity() const { return slice_.data != nullptr ? slice_.length : heap_.size(); }
  // Where the bytes lie in the arena's memfd, or kNotShared (heap).
  uint64_t offset() const { return slice_.data != nullptr ? slice_.offset : kNotShared; }
  const std::shared_ptr<SharedArena>& arena() const { return arena_; }
  void Reset();

 private:
  std::shared_ptr<SharedArena> arena_;
  SharedArena::Slice slice_;
  AlignedBuffer heap_;  // 4 KiB-aligned like the slices: direct I/O may land in either
  char* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace graphfs
