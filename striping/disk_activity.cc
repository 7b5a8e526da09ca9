#include "striping/disk_activity.h"

#include "common/clock.h"

namespace graphfs {

DiskActivity::DiskActivity(uint32_t disks)
    : runs_(disks, 0), last_ns_(NowNs()), busy_ns_(disks, 0), idle_waiting_ns_(disks, 0) {}

void DiskActivity::Advance(int64_t now) const {
  const int64_t dt = now - last_ns_;
  if (dt <= 0) return;
  last_ns_ = now;
  for (size_t d = 0; d < runs_.size(); ++d) {
    if (runs_[d] > 0) {
      busy_ns_[d] += dt;
    } else if (waiting_ > 0) {
      idle_waiting_ns_[d] += dt;
    }
  }
  if (waiting_ > 0) waiting_ns_ += dt;
}

void DiskActivity::Queued(uint32_t disk) {
  std::lock_guard<std::mutex> lock(mu_);
  Advance(NowNs());
  ++runs_[disk];
}

void DiskActivity::Finished(uint32_t disk) {
  std::lock_guard<std::mutex> lock(mu_);
  Advance(NowNs());
  if (runs_[disk] > 0) --runs_[disk];
}

void DiskActivity::ReaderWaits() {
  std::lock_guard<std::mutex> lock(mu_);
  Advance(NowNs());
  ++waiting_;
  ++waits_;
}

void DiskActivity::ReaderDone() {
  std::lock_guard<std::mutex> lock(mu_);
  Advance(NowNs());
  if (waiting_ > 0) --waiting_;
}

DiskActivity::Totals DiskActivity::Read() const {
  std::lock_guard<std::mutex> lock(mu_);
  Advance(NowNs());
  Totals t;
  for (size_t d = 0; d < runs_.size(); ++d) {
    t.busy_seconds.push_back(static_cast<double>(busy_ns_[d]) / 1e9);
    t.idle_while_waiting_seconds.push_back(static_cast<double>(idle_waiting_ns_[d]) / 1e9);
  }
  t.reader_wait_seconds = static_cast<double>(waiting_ns_) / 1e9;
  t.waits = waits_;
  return t;
}

}  // namespace graphfs
