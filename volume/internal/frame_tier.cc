#include "volume/internal/frame_tier.h"

#include <unistd.h>

#include "common/clock.h"
#include "volume/internal/memory_budget.h"

namespace graphfs::volume {

namespace {
// Frames are read for whoever decodes them: the daemon (per-process counts are the decoded
// units', where the readers are known).
const uint32_t kDaemonPid = static_cast<uint32_t>(::getpid());
}  // namespace

FrameTier::FrameTier(const cache::CacheOptions& options, MemoryBudget* budget) : frames_(options), budget_(budget) {}

Status FrameTier::With(const cache::UnitRequest& request, DecodedFile decoded,
                       const std::function<Status(const char* frame, bool from_disk, bool checked)>& use) {
  bool from_disk = false, dropped = false;
  Status status = Status::Ok();
  {
    Result<cache::UnitRef> frame = frames_.Get(request, kDaemonPid);
    if (!frame.ok()) return frame.error();
    from_disk = !frame->hit();
    if (from_disk) {
      std::lock_guard<std::mutex> lock(links_mu_);
      NoteRead(request);
    }
    status = use(frame->data(), from_disk, frame->checked());
    if (status.ok()) {
      frame->MarkChecked();
    } else {
      frame->Drop();  // damaged (or the decode failed): read from the disks again next time
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      dropped = status.ok() && decoded.bytes > 0 && budget_ != nullptr &&
                budget_->DecodedFileFits(decoded.key, decoded.bytes);
    }
    if (dropped) {
      frame->Drop();  // its decoded unit stays: the frame would only take room from it
    } else if (status.ok()) {
      frame->NoteServed(request.length);  // decided on (admitted or not) as the pin goes
    }
  }
  if (from_disk || dropped || rebalance_due_.exchange(false, std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(mu_);
    if (budget_ != nullptr) {
      const uint64_t standing = standing_bytes_.load(std::memory_order_relaxed);
      standing_applied_.store(standing, std::memory_order_relaxed);
      budget_->SetStanding(standing);  // and rebalances
    }
  }
  return status;
}

void FrameTier::Link(uint64_t decoded_file, uint64_t frames_file) {
  std::lock_guard<std::mutex> lock(links_mu_);
  frames_of_[decoded_file] = frames_file;
}

void FrameTier::NoteRead(const cache::UnitRequest& request) {
  FirstPass& pass = first_pass_[request.key.file];
  const int64_t now = NowNs();
  if (pass.read.empty() && request.file_units > 0) {
    pass.read.assign(request.file_units, false);
    pass.left = request.file_units;
    pass.start_ns = now;
  }
  if (request.key.index < pass.read.size() && !pass.read[request.key.index]) {
    pass.read[request.key.index] = true;
    if (--pass.left == 0) pass.took_ns = now - pass.start_ns;
  }
}

void FrameTier::DecodedKept(const cache::UnitKey& unit, uint64_t bytes, int64_t admitted_for_ns) {
  std::lock_guard<std::mutex> lock(links_mu_);
  if (standing_.count(unit) != 0) return;
  auto link = frames_of_.find(unit.file);
  if (link == frames_of_.end()) return;
  auto pass = first_pass_.find(link->second);
  if (pass == first_pass_.end() || pass->second.read.empty() || pass->second.left > 0) return;
  if (admitted_for_ns < pass->second.took_ns) return;
  // Room to spare: the frames' share less what units standing since the budget last split the
  // cache will take from it, with a 64th of it free after this unit's.
  const uint64_t capacity = frames_.capacity();
  const uint64_t standing = standing_bytes_.load(std::memory_order_relaxed);
  const uint64_t applied = standing_applied_.load(std::memory_order_relaxed);
  const uint64_t pending = standing > applied ? standing - applied : 0;
  if (frames_.used() + pending + bytes + capacity / 64 > capacity) return;
  const cache::UnitKey frame{link->second, unit.index};
  if (!frames_.DropAdmitted(frame)) return;
  standing_.emplace(unit, bytes);
  standing_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  dropped_for_decoded_.fetch_add(1, std::memory_order_relaxed);
  rebalance_due_.store(true, std::memory_order_relaxed);
}

void FrameTier::DecodedLeft(const cache::UnitKey& unit) {
  std::lock_guard<std::mutex> lock(links_mu_);
  auto it = standing_.find(unit);
  if (it == standing_.end()) return;
  standing_bytes_.fetch_sub(it->second, std::memory_order_relaxed);
  standing_.erase(it);
  rebalance_due_.store(true, std::memory_order_relaxed);
}

void FrameTier::Detach() {
  std::lock_guard<std::mutex> lock(mu_);
  budget_ = nullptr;
}

}  // namespace graphfs::volume
