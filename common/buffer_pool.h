// Large aligned buffers kept for reuse. A fresh mapping costs a page fault and a zeroed page
// per 4 KiB on first touch, and its munmap a TLB flush: at a cache's churn (one unit loaded for
// each one evicted, GB/s) that was a fifth of the machine's CPU in a four-job mix (perf, issue
// 18). Buffers given back are kept up to a byte limit and handed out again for requests of
// about their size.
//
// Slices of a graph's shared memory (common/shared_arena.h) are kept the same way, each for
// requests of its own arena: given back to the arena, a slice beyond the arena's idle allowance
// is punched and the next unit populates fresh pages. (Measured in the demo's W1 at
// memory=192M: 18.9k unit loads reused a slice, and still 1.1 GB was populated and punched:
// the arena's idle bytes were charged beside the cache, so every unit evicted into them shrank
// the cache and evicted more; they are charged inside it now, CacheOptions::outside_idle_bytes,
// docs/memory-as-cache.md, thirty-fifth part.) Both kinds share the one limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "common/aligned_buffer.h"
#include "common/shared_arena.h"

namespace graphfs {

class BufferPool {
 public:
  // A request reuses an idle buffer at most 1/kSlackDivisor larger than itself.
  static constexpr size_t kSlackDivisor = 8;

  explicit BufferPool(uint64_t max_idle_bytes) : max_idle_bytes_(max_idle_bytes) {}
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // At least `size` bytes, 4 KiB aligned: an idle buffer of up to size + size/8 bytes (the
  // smallest that fits), else a new one (ok() false if memory ran out). Its bytes are
  // whatever its last user left.
  AlignedBuffer Take(size_t size);
  // Keeps `buffer` for reuse; the longest-idle buffers are released while the idle bytes
  // exceed the limit.
  void Give(AlignedBuffer buffer);
  // Releases the longest-idle buffers until at most `idle_bytes` stay idle (a cache whose
  // capacity shrank answers for its idle buffers too: cache/chunk_cache.h).
  void TrimTo(uint64_t idle_bytes);

  // At least `size` bytes of `arena`: an idle slice of it of up to size + size/8 bytes, else
  // an empty SharedBytes (the caller allocates). Counted as reused when one is found.
  SharedBytes TakeShared(const std::shared_ptr<SharedArena>& arena, size_t size);
  // Keeps a slice of an arena for reuse (heap bytes, or an empty one, are let go).
  void GiveShared(SharedBytes bytes);

  struct Stats {
    uint64_t reused = 0, created = 0, released = 0;  // buffers
    uint64_t idle_bytes = 0, idle_buffers = 0;
  };
  Stats stats() const;

 private:
  struct Idle {
    AlignedBuffer buffer;  // a heap buffer, or
    SharedBytes shared;    //   a slice of an arena
    uint64_t given = 0;    // order of Give calls
  };
  // (arena id, 0 for the heap; bytes)
  using Key = std::pair<uint64_t, size_t>;
  // The smallest idle entry of `arena_id` of at least `size` bytes and at most 1/8 more, taken
  // out of idle_ (mu_ held); false if there is none.
  bool TakeLocked(uint64_t arena_id, size_t size, Idle* out);
  void GiveLocked(Key key, Idle idle);  // mu_ held
  // Takes the longest-idle entries out until at most `keep_bytes` stay; mu_ held. The caller
  // lets them go after dropping the lock, so that munmap (or the arena's punching) is not done
  // under it.
  std::multimap<Key, Idle> ReleaseOldestLocked(uint64_t keep_bytes);
  const uint64_t max_idle_bytes_;
  mutable std::mutex mu_;
  std::multimap<Key, Idle> idle_;  // by arena, then size
  uint64_t gives_ = 0;
  Stats stats_;
};

}  // namespace graphfs
