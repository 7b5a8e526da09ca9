// The LP scheduler's window: the bytes of LPs live and loading, and what is dropped to make room
// (lp_scheduler.h, "the window").
#include <algorithm>
#include <cstring>
#include <tuple>

#include "chunkindex/lp_scheduler.h"
#include "chunkindex/lp_scheduler_job.h"

namespace graphfs::chunkindex {

// ---- the window ----

uint64_t LpScheduler::Window() const {
  if (options_.window_bytes > 0) return options_.window_bytes;
  uint64_t largest = 1;
  for (const auto& [id, j] : jobs_) largest = std::max(largest, j->partition_bytes);
  return 4 * largest;
}

uint64_t LpScheduler::LiveBytes() const {
  uint64_t bytes = 0;
  for (const LiveLp& l : live_) bytes += l.lp->footprint();
  return bytes;
}

bool LpScheduler::Referred(const LogicalPartition* lp) const {
  for (const auto& [id, j] : jobs_)
    if (j->Refers(lp)) return true;
  return false;
}

uint64_t LpScheduler::SpareBytesToDrop() const {
  uint64_t bytes = 0;
  for (const LiveLp& l : live_)
    if (l.spare && !Referred(l.lp.get())) bytes += l.lp->footprint();
  return bytes;
}

bool LpScheduler::Room(uint64_t bytes) const {
  const uint64_t used = LiveBytes() + in_flight_bytes_ - SpareBytesToDrop();
  if (used == 0 || used + bytes <= Window()) return true;
  // A job holding two LPs keeps the one before the last while it waits for the next. When every
  // job waits with nothing queued (or holds nothing) and nothing loads, only an LP for them can
  // free any of the window: one is let past it. Without this, four jobs each waiting and each
  // holding its last LP in a window with no room for a fifth waited forever (the demo's mix).
  if (in_flight_ > 0) return false;
  for (const auto& [id, j] : jobs_) {
    const bool holds = j->holding || j->previous || !j->queue.empty();
    if (!j->Starved() && holds) return false;  // it moves on by itself and frees what it holds
  }
  return true;
}

uint64_t LpScheduler::Budget(bool guess) const {
  uint64_t budget = UINT64_MAX;
  uint64_t holding_two = 0;
  for (const auto& [id, j] : jobs_) {
    holding_two += j->hold >= 2 ? 1 : 0;
    if (guess ? (j->Wants() || j->guess.empty()) : !j->Plannable()) continue;
    budget = std::min(budget, j->partition_bytes);
  }
  if (options_.max_lp_bytes > 0) budget = std::min(budget, options_.max_lp_bytes);
  // Each job holding two may keep one LP while it waits: with LPs of at most 1/(n + 1) of the
  // window, n such LPs still leave room for the next one (Room lets one past the window where
  // older, larger LPs are held).
  if (holding_two > 0) budget = std::min(budget, std::max<uint64_t>(1, Window() / (holding_two + 1)));
  return budget == UINT64_MAX ? 0 : budget;
}

void LpScheduler::Prune() {
  auto stale = [&](const LiveLp& l) {
    if (!l.spare) return true;
    // A guess is of use until every job has started an iteration since it was planned.
    for (const auto& [id, j] : jobs_)
      if (j->tick <= l.tick) return false;
    return true;
  };
  std::erase_if(live_, [&](const LiveLp& l) {
    if (Referred(l.lp.get()) || !stale(l)) return false;
    if (!l.taken) stats_.bytes_discarded += l.lp->size;
    return true;
  });
}

bool LpScheduler::DropSpare() {
  for (auto it = live_.begin(); it != live_.end(); ++it) {
    if (!it->spare || Referred(it->lp.get())) continue;
    if (!it->taken) stats_.bytes_discarded += it->lp->size;
    live_.erase(it);
    return true;
  }
  return false;
}

void LpScheduler::Account() const {
  const auto now = Clock::now();
  const double dt = Seconds(now - account_mark_);
  switch (account_span_) {
    case Span::kLoading: stats_.busy_seconds += dt; break;
    case Span::kFullWhileWaiting: stats_.window_full_while_waiting_seconds += dt; [[fallthrough]];
    case Span::kIdleWhileWaiting: stats_.loader_idle_while_waiting_seconds += dt; break;
    case Span::kOther: break;
  }
  account_mark_ = now;
  bool starved = false;
  for (const auto& [id, j] : jobs_) starved = starved || (j->Starved() && j->Wants());
  if (in_flight_ > 0) account_span_ = Span::kLoading;
  else if (!starved) account_span_ = Span::kOther;
  else account_span_ = Room(Budget(false)) ? Span::kIdleWhileWaiting : Span::kFullWhileWaiting;
  stats_.live_bytes_peak = std::max(stats_.live_bytes_peak, LiveBytes() + in_flight_bytes_);
}

}  // namespace graphfs::chunkindex
