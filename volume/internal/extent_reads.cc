#include "volume/internal/extent_reads.h"

#include <algorithm>
#include <cstring>

#include "common/aligned_buffer.h"

namespace graphfs::volume {

ExtentReads::ExtentReads(cache::ChunkCache& cache, uint32_t disks, uint64_t depth)
    : cache_(cache), depth_(depth), disks_(std::max<uint32_t>(1, disks)) {
  stats_.disk_extents.assign(disks_.size(), 0);
  stats_.disk_bytes.assign(disks_.size(), 0);
  stats_.disk_peak_in_flight.assign(disks_.size(), 0);
}

ExtentReads::~ExtentReads() { Stop(); }

uint64_t ExtentReads::Bytes(const Extent& e) {
  const cache::UnitLoad& first = e.units.front();
  const cache::UnitLoad& last = e.units.back();
  return (last.offset() - last.skew() + last.charge()) - (first.offset() - first.skew());
}

void ExtentReads::Queue(Extent extent) {
  if (extent.units.empty()) return;
  std::vector<Extent> start;
  bool queued = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) {
      const uint32_t d = std::min<uint32_t>(extent.disk, static_cast<uint32_t>(disks_.size() - 1));
      extent.disk = d;
      disks_[d].queued.push_back(std::move(extent));
      Pick(d, &start);
      queued = true;
    } else {
      ++stats_.cancelled;
    }
  }
  if (!queued)  // the volume is stopping: its readers get an error, never a hang
    for (const cache::UnitLoad& u : extent.units) cache_.Complete(u, Error(ECANCELED, "volume stopping"));
  for (Extent& e : start) Start(std::move(e));
}

void ExtentReads::Pick(uint32_t disk, std::vector<Extent>* start) {
  Disk& d = disks_[disk];
  while (!d.queued.empty()) {
    // Urgent extents first, in the order they came; then the one due soonest.
    auto best = std::min_element(d.queued.begin(), d.queued.end(), [](const Extent& a, const Extent& b) {
      if (a.urgent != b.urgent) return a.urgent;
      return !a.urgent && a.due_ns < b.due_ns;
    });
    const uint64_t bytes = Bytes(*best);
    // At least one extent per disk that serves it, more while they stay within that many depths.
    const uint32_t spread = std::max<uint32_t>(1, best->spread);
    if (d.in_flight >= spread && d.in_flight_bytes + bytes > depth_ * spread) return;
    ++d.in_flight;
    d.in_flight_bytes += bytes;
    stats_.disk_peak_in_flight[disk] = std::max(stats_.disk_peak_in_flight[disk], d.in_flight);
    ++stats_.extents;
    stats_.bytes += bytes;
    ++stats_.disk_extents[disk];
    stats_.disk_bytes[disk] += bytes;
    stats_.units += best->units.size();
    if (best->urgent) ++stats_.urgent;
    start->push_back(std::move(*best));
    d.queued.erase(best);
  }
}

void ExtentReads::Start(Extent e) {
  // Unit i's buffer holds the file's pages [P_i, Q_i). It reads its own pages up to the next
  // unit's first page P_{i+1}; a page two units share (a unit boundary inside a page) is read
  // into the later unit's buffer and copied into the earlier one's after the read.
  const uint64_t page = kDirectAlign;
  const size_t n = e.units.size();
  std::vector<iovec> iov;
  iov.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const cache::UnitLoad& u = e.units[i];
    const uint64_t own = i + 1 < n ? (e.units[i + 1].offset() / page - u.offset() / page) * page : u.charge();
    if (own > 0) iov.push_back({u.buffer(), own});
  }
  const uint64_t begin = e.units.front().offset() - e.units.front().skew();
  const uint64_t bytes = Bytes(e);
  const uint32_t disk = e.disk;
  const bool urgent = e.urgent;
  const StripedFile& file = e.source->file();
  file.ReadAsync(begin, std::move(iov), urgent, [this, e = std::move(e), bytes, disk](Status s) {
    const size_t n = e.units.size();
    if (s.ok()) {
      for (size_t i = n - 1; i-- > 0;) {
        const cache::UnitLoad& u = e.units[i];
        const cache::UnitLoad& next = e.units[i + 1];
        const uint64_t first_page = u.offset() / page, next_page = next.offset() / page;
        if ((u.offset() - u.skew() + u.charge()) / page > next_page)  // shares next's first page
          std::memcpy(u.buffer() + (next_page - first_page) * page, next.buffer(), page);
      }
    }
    for (const cache::UnitLoad& u : e.units)
      cache_.Complete(u, s.ok() ? Result<uint64_t>(u.charge()) : Result<uint64_t>(s.error()));
    Finished(disk, bytes);
  });
}

void ExtentReads::Finished(uint32_t disk, uint64_t bytes) {
  std::vector<Extent> start;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Disk& d = disks_[disk];
    --d.in_flight;
    d.in_flight_bytes -= bytes;
    if (!stopping_) Pick(disk, &start);
    drained_.notify_all();
  }
  // Extents picked here are in flight: Stop waits for them, so `this` outlives their start.
  for (Extent& e : start) Start(std::move(e));
}

void ExtentReads::Hurry(const cache::UnitKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  for (Disk& d : disks_) {
    for (Extent& e : d.queued) {
      if (e.urgent) continue;
      for (const cache::UnitLoad& u : e.units) {
        if (u.key() == key) {
          e.urgent = true;
          ++stats_.hurried;
          return;
        }
      }
    }
  }
}

bool ExtentReads::Idle(uint32_t disk) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (disk >= disks_.size()) return false;
  return disks_[disk].queued.empty() && disks_[disk].in_flight == 0;
}

void ExtentReads::Stop() {
  std::vector<Extent> cancelled;
  std::unique_lock<std::mutex> lock(mu_);
  stopping_ = true;
  for (Disk& d : disks_) {
    for (Extent& e : d.queued) cancelled.push_back(std::move(e));
    d.queued.clear();
  }
  stats_.cancelled += cancelled.size();
  lock.unlock();
  for (const Extent& e : cancelled)
    for (const cache::UnitLoad& u : e.units) cache_.Complete(u, Error(ECANCELED, "volume stopping"));
  lock.lock();
  drained_.wait(lock, [&] {
    for (const Disk& d : disks_)
      if (d.in_flight > 0) return false;
    return true;
  });
}

ExtentReads::Stats ExtentReads::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace graphfs::volume
