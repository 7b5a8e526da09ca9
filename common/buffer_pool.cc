#include "common/buffer_pool.h"

#include <algorithm>
#include <utility>

namespace graphfs {

AlignedBuffer BufferPool::Take(size_t size) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = idle_.lower_bound(size);
    if (it != idle_.end() && it->first <= size + size / kSlackDivisor) {
      AlignedBuffer b = std::move(it->second.buffer);
      idle_.erase(it);
      stats_.idle_bytes -= b.size();
      --stats_.idle_buffers;
      ++stats_.reused;
      return b;
    }
    ++stats_.created;
  }
  return AlignedBuffer(size);
}

void BufferPool::Give(AlignedBuffer buffer) {
  if (!buffer.ok()) return;
  std::multimap<size_t, Idle> released;  // unmapped after the lock is dropped
  {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t size = buffer.size();
    idle_.emplace(size, Idle{std::move(buffer), ++gives_});
    stats_.idle_bytes += size;
    ++stats_.idle_buffers;
    released = ReleaseOldestLocked(max_idle_bytes_);
  }
}

void BufferPool::TrimTo(uint64_t idle_bytes) {
  std::multimap<size_t, Idle> released;  // unmapped after the lock is dropped
  std::lock_guard<std::mutex> lock(mu_);
  released = ReleaseOldestLocked(idle_bytes);
}

std::multimap<size_t, BufferPool::Idle> BufferPool::ReleaseOldestLocked(uint64_t keep_bytes) {
  std::multimap<size_t, Idle> released;
  while (stats_.idle_bytes > keep_bytes && !idle_.empty()) {
    // A few dozen idle buffers at most: a scan for the longest idle is cheap.
    auto oldest = std::min_element(idle_.begin(), idle_.end(),
                                   [](const auto& a, const auto& b) { return a.second.given < b.second.given; });
    stats_.idle_bytes -= oldest->first;
    --stats_.idle_buffers;
    ++stats_.released;
    released.insert(idle_.extract(oldest));
  }
  return released;
}

BufferPool::Stats BufferPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace graphfs
