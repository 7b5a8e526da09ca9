#include "volume/compute_turns.h"

#include <algorithm>

namespace graphfs::volume {

ComputeTurns::ComputeTurns(unsigned slots, Clock::duration longest_turn, unsigned engage_above)
    : slots_(slots), longest_turn_(longest_turn), engage_above_(std::max(slots, engage_above)) {
  if (slots_ > 0) timer_ = std::thread([this] { TimerLoop(); });
}

ComputeTurns::~ComputeTurns() { Shutdown(); }

void ComputeTurns::Run(std::vector<Ready>& ready) {
  for (Ready& r : ready) r.deliver(r.turn);
  ready.clear();
}

void ComputeTurns::Join(uint64_t job) {
  std::lock_guard<std::mutex> lock(mu_);
  joined_.insert(job);
}

void ComputeTurns::FillLocked(std::vector<Ready>* out, Clock::time_point now) {
  const bool engaged = EngagedLocked();
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (holding_.count(it->job) != 0) {  // it yields its turn first
      ++it;
      continue;
    }
    if (!engaged) {  // jobs left: too few take turns for anyone to wait
      ++stats_.free;
      out->push_back(Ready{std::move(it->deliver), false});
      it = waiting_.erase(it);
      continue;
    }
    if (holding_.size() >= slots_) break;
    holding_[it->job] = now;
    ++stats_.turns;
    if (it->since != now) {
      ++stats_.waited;
      stats_.wait_seconds += std::chrono::duration<double>(now - it->since).count();
    }
    out->push_back(Ready{std::move(it->deliver), true});
    it = waiting_.erase(it);
  }
  changed_.notify_all();  // the timer watches the turns held while answers wait
}

void ComputeTurns::Offer(uint64_t job, Deliver deliver) {
  std::vector<Ready> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Clock::time_point now = Clock::now();
    if (stopped_ || slots_ == 0 || joined_.count(job) == 0 || (!EngagedLocked() && holding_.count(job) == 0)) {
      // Off, not a job that yields, or too few jobs take turns: nobody needs to wait.
      ++stats_.free;
      ready.push_back(Ready{std::move(deliver), false});
    } else {
      waiting_.push_back(Waiting{job, std::move(deliver), now});
      FillLocked(&ready, now);
    }
  }
  Run(ready);
}

void ComputeTurns::Yield(uint64_t job) {
  std::vector<Ready> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (holding_.erase(job) == 0) {
      ++stats_.stray_yields;
      return;
    }
    FillLocked(&ready, Clock::now());
  }
  Run(ready);
}

void ComputeTurns::Leave(uint64_t job) {
  std::vector<Ready> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    joined_.erase(job);
    holding_.erase(job);
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if (it->job != job) {
        ++it;
        continue;
      }
      ++stats_.free;
      ready.push_back(Ready{std::move(it->deliver), false});
      it = waiting_.erase(it);
    }
    FillLocked(&ready, Clock::now());
  }
  Run(ready);
}

void ComputeTurns::Shutdown() {
  std::vector<Ready> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    for (Waiting& w : waiting_) {
      ++stats_.free;
      ready.push_back(Ready{std::move(w.deliver), false});
    }
    waiting_.clear();
    holding_.clear();
    changed_.notify_all();
  }
  if (timer_.joinable()) timer_.join();
  Run(ready);
}

// Takes back turns held longer than longest_turn_ while answers wait for one.
void ComputeTurns::TimerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopped_) {
    if (waiting_.empty() || holding_.empty()) {
      changed_.wait(lock);
      continue;
    }
    Clock::time_point oldest = Clock::time_point::max();
    for (const auto& [job, since] : holding_) oldest = std::min(oldest, since);
    const Clock::time_point due = oldest + longest_turn_;
    if (Clock::now() < due) {
      changed_.wait_until(lock, due);
      continue;
    }
    const Clock::time_point now = Clock::now();
    for (auto it = holding_.begin(); it != holding_.end();) {
      if (now - it->second >= longest_turn_) {
        ++stats_.overdue;
        it = holding_.erase(it);
      } else {
        ++it;
      }
    }
    std::vector<Ready> ready;
    FillLocked(&ready, now);
    lock.unlock();
    Run(ready);
    lock.lock();
  }
}

ComputeTurns::Stats ComputeTurns::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.slots = slots_;
  s.engage_above = engage_above_;
  s.jobs = joined_.size();
  s.computing = holding_.size();
  s.waiting = waiting_.size();
  return s;
}

}  // namespace graphfs::volume
