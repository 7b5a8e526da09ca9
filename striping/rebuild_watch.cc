#include "striping/rebuild_watch.h"

#include <algorithm>
#include <utility>

namespace graphfs {

void RebuildWatch::Passed(const std::string& file_id, uint64_t next_row) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t& p = passed_[file_id];
  p = std::max(p, next_row);
}

void RebuildWatch::Written(const std::string& file_id, uint64_t first, uint64_t end) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = passed_.find(file_id);
  if (it == passed_.end()) return;  // not reached yet: the rebuild reads what the rows hold then
  end = std::min(end, it->second);
  if (first >= end) return;
  std::set<uint64_t>& rows = written_[file_id];
  for (uint64_t r = first; r < end; ++r) count_ += rows.insert(r).second ? 1 : 0;
}

std::map<std::string, std::set<uint64_t>> RebuildWatch::TakeWritten() {
  std::lock_guard<std::mutex> lock(mu_);
  count_ = 0;
  return std::exchange(written_, {});
}

uint64_t RebuildWatch::written() const {
  std::lock_guard<std::mutex> lock(mu_);
  return count_;
}

void RebuildWatch::Created(CreatedFile file) {
  std::lock_guard<std::mutex> lock(mu_);
  created_.push_back(std::move(file));
}

std::vector<RebuildWatch::CreatedFile> RebuildWatch::TakeCreated() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(created_, {});
}

void RebuildWatch::Removed(const std::string& file_id) {
  std::lock_guard<std::mutex> lock(mu_);
  removed_.insert(file_id);
}

bool RebuildWatch::removed(const std::string& file_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return removed_.count(file_id) != 0;
}

std::set<std::string> RebuildWatch::RemovedFiles() const {
  std::lock_guard<std::mutex> lock(mu_);
  return removed_;
}

void RebuildWatch::Hold() {
  std::lock_guard<std::mutex> lock(mu_);
  holding_ = true;
}

void RebuildWatch::Release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    holding_ = false;
  }
  released_.notify_all();
}

bool RebuildWatch::holding() const {
  std::lock_guard<std::mutex> lock(mu_);
  return holding_;
}

void RebuildWatch::AwaitRelease() const {
  std::unique_lock<std::mutex> lock(mu_);
  released_.wait(lock, [this] { return !holding_; });
}

}  // namespace graphfs
