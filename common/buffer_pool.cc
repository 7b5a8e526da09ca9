#include "common/buffer_pool.h"

#include <algorithm>
#include <utility>

namespace graphfs {

bool BufferPool::TakeLocked(uint64_t arena_id, size_t size, Idle* out) {
  auto it = idle_.lower_bound(Key{arena_id, size});
  if (it == idle_.end() || it->first.first != arena_id || it->first.second > size + size / kSlackDivisor) return false;
  *out = std::move(it->second);
  stats_.idle_bytes -= it->first.second;
  --stats_.idle_buffers;
  ++stats_.reused;
  idle_.erase(it);
  return true;
}

AlignedBuffer BufferPool::Take(size_t size) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Idle idle;
    if (TakeLocked(0, size, &idle)) return std::move(idle.buffer);
    ++stats_.created;
  }
  return AlignedBuffer(size);
}

SharedBytes BufferPool::TakeShared(const std::shared_ptr<SharedArena>& arena, size_t size) {
  if (arena == nullptr) return SharedBytes();
  std::lock_guard<std::mutex> lock(mu_);
  Idle idle;
  if (TakeLocked(arena->id(), size, &idle)) return std::move(idle.shared);
  ++stats_.created;
  return SharedBytes();
}

void BufferPool::GiveLocked(Key key, Idle idle) {
  idle.given = ++gives_;
  idle_.emplace(key, std::move(idle));
  stats_.idle_bytes += key.second;
  ++stats_.idle_buffers;
}

void BufferPool::Give(AlignedBuffer buffer) {
  if (!buffer.ok()) return;
  std::multimap<Key, Idle> released;  // unmapped after the lock is dropped
  std::lock_guard<std::mutex> lock(mu_);
  const size_t size = buffer.size();
  GiveLocked(Key{0, size}, Idle{std::move(buffer), SharedBytes(), 0});
  released = ReleaseOldestLocked(max_idle_bytes_);
}

void BufferPool::GiveShared(SharedBytes bytes) {
  if (bytes.get() == nullptr || bytes.offset() == SharedBytes::kNotShared) return;
  std::multimap<Key, Idle> released;  // given back to their arenas after the lock is dropped
  std::lock_guard<std::mutex> lock(mu_);
  const Key key{bytes.arena()->id(), bytes.capacity()};
  GiveLocked(key, Idle{AlignedBuffer(), std::move(bytes), 0});
  released = ReleaseOldestLocked(max_idle_bytes_);
}

void BufferPool::TrimTo(uint64_t idle_bytes) {
  std::multimap<Key, Idle> released;  // unmapped after the lock is dropped
  std::lock_guard<std::mutex> lock(mu_);
  released = ReleaseOldestLocked(idle_bytes);
}

std::multimap<BufferPool::Key, BufferPool::Idle> BufferPool::ReleaseOldestLocked(uint64_t keep_bytes) {
  std::multimap<Key, Idle> released;
  while (stats_.idle_bytes > keep_bytes && !idle_.empty()) {
    // A few hundred idle entries at most (the limit over the smallest unit): a scan for the
    // longest idle is cheap beside the load each one saves.
    auto oldest = std::min_element(idle_.begin(), idle_.end(),
                                   [](const auto& a, const auto& b) { return a.second.given < b.second.given; });
    stats_.idle_bytes -= oldest->first.second;
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
