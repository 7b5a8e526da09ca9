// The staging area: units loaded ahead of their readers by the prefetch threads, and the
// sweep that offers staged units for admission once their readers are done with them.
#include <algorithm>
#include <chrono>

#include "cache/cache_entry.h"
#include "common/thread_name.h"

namespace graphfs::cache {

void ChunkCache::Prefetch(const UnitRequest& r, uint32_t pid) {
  std::unique_lock<std::mutex> lock(mu_);
  UnitLoad load = ReserveLocked(r, pid, ReserveFor::kPrefetch, /*over_limit=*/false);
  if (!load) return;
  tasks_.push_back(std::make_unique<Task>(Task{std::move(load.entry_), r.source}));
  lock.unlock();
  TellStaged();
  task_ready_.notify_one();
}

void ChunkCache::PrefetchWorker() {
  NameThisThread("gfs-prefetch");
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (tasks_.empty()) {
      if (stopping_) return;
      // Idle: staged units whose readers went away give their memory back.
      if (task_ready_.wait_for(lock, std::chrono::seconds(1)) == std::cv_status::timeout) SweepStaged(NowNs());
      continue;
    }
    std::unique_ptr<Task> task = std::move(tasks_.front());
    tasks_.pop_front();
    Entry& e = *task->entry;
    if (stopping_) {
      FinishLoad(task->entry, Error(ECANCELED, "cache shutting down"));
      continue;
    }
    lock.unlock();
    Result<uint64_t> got = task->source->Load(e.offset - e.skew, e.charge, e.data());
    lock.lock();
    FinishLoad(task->entry, std::move(got));
  }
}

void ChunkCache::Settle() {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now = NowNs();
  std::vector<std::shared_ptr<Entry>> ready;
  for (const auto& e : staged_)
    if (e->state == Entry::State::kReady && e->pins == 0) ready.push_back(e);
  for (const auto& e : ready) Decide(e, now);
}

void ChunkCache::SweepStaged(int64_t now, bool pressed) {
  if (now - last_sweep_ns_ < kSweepIntervalNs && staged_bytes_ <= options_.staging_limit && !pressed) return;
  last_sweep_ns_ = now;
  const int64_t unread_ns = pressed ? kUnreadPressedNs : kUnreadIdleNs;
  std::vector<std::shared_ptr<Entry>> done;
  for (const auto& e : staged_) {
    if (e->state != Entry::State::kReady || e->pins > 0) continue;
    const bool consumed = e->orphan || e->served >= e->length || e->consumed ||
                          (e->served > 0 ? now - e->touched_ns > kServedIdleNs
                                         : now - std::max(e->ready_ns, e->touched_ns) > unread_ns);
    if (consumed) done.push_back(e);
  }
  for (const auto& e : done) Decide(e, now);
}

}  // namespace graphfs::cache
