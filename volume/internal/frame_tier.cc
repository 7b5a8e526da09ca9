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
  if (from_disk || dropped) {
    rebalance_due_.store(false, std::memory_order_relaxed);
    Rebalance();
  } else {
    Settle();
  }
  return status;
}

void FrameTier::Settle() {
  if (rebalance_due_.exchange(false, std::memory_order_relaxed)) Rebalance();
}

void FrameTier::Rebalance() {
  std::lock_guard<std::mutex> lock(mu_);
  if (budget_ == nullptr) return;
  const uint64_t standing = standing_bytes_.load(std::memory_order_relaxed);
  standing_applied_.store(standing, std::memory_order_relaxed);
  budget_->SetStanding(standing);  // and rebalances
  standing_room_.store(budget_->StandingRoom(), std::memory_order_relaxed);
}

Result<bool> FrameTier::WithHeld(const cache::UnitRequest& request,
                                 const std::function<Status(const char* frame, bool checked)>& use) {
  cache::UnitRef frame = frames_.Peek(request, kDaemonPid);
  if (!frame) return false;
  Status status = use(frame.data(), frame.checked());
  if (!status.ok()) {
    frame.Drop();  // damaged (or the decode failed): read from the disks again next time
    return status.error();
  }
  frame.NoteServed(request.length);
  return true;
}

void FrameTier::Link(uint64_t decoded_file, uint64_t frames_file, uint64_t decoded_bytes) {
  std::lock_guard<std::mutex> lock(links_mu_);
  Linked& l = frames_of_[decoded_file];
  l.frames_file = frames_file;
  l.decoded_bytes = decoded_bytes;
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

bool FrameTier::DecodedKept(const cache::UnitKey& unit, uint64_t bytes, int64_t admitted_for_ns) {
  std::lock_guard<std::mutex> lock(links_mu_);
  if (auto it = standing_.find(unit); it != standing_.end()) return it->second.in_place;
  auto link = frames_of_.find(unit.file);
  if (link == frames_of_.end()) return false;
  Linked& file = link->second;
  const cache::UnitKey frame{file.frames_file, unit.index};
  // The whole file in place of its frames, beside what other files' standing units take.
  const uint64_t room = standing_room_.load(std::memory_order_relaxed);
  const uint64_t others = standing_bytes_.load(std::memory_order_relaxed) - file.standing;
  const bool in_place = file.decoded_bytes > 0 && others + file.decoded_bytes + room / 64 <= room;
  if (in_place) {
    // From the first pass on: frames coming in cannot push it out (the budget moves its bytes
    // out of the frames' share) and newcomers do not evict it (the cache's sole copy). Its frame
    // may be out of memory already (evicted as the frames shrank): the decoded unit is then the
    // only copy all the same.
    frames_.DropAdmitted(frame);
  } else {
    auto pass = first_pass_.find(file.frames_file);
    if (pass == first_pass_.end() || pass->second.read.empty() || pass->second.left > 0) return false;
    if (admitted_for_ns < pass->second.took_ns) return false;
    // Room to spare: the frames' share less what units standing since the budget last split the
    // cache will take from it, with a 64th of it free after this unit's.
    const uint64_t capacity = frames_.capacity();
    const uint64_t standing = standing_bytes_.load(std::memory_order_relaxed);
    const uint64_t applied = standing_applied_.load(std::memory_order_relaxed);
    const uint64_t pending = standing > applied ? standing - applied : 0;
    if (frames_.used() + pending + bytes + capacity / 64 > capacity) return false;
    if (!frames_.DropAdmitted(frame)) return false;
  }
  standing_.emplace(unit, Standing{bytes, in_place});
  file.standing += bytes;
  standing_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  if (in_place) in_place_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  dropped_for_decoded_.fetch_add(1, std::memory_order_relaxed);
  rebalance_due_.store(true, std::memory_order_relaxed);
  return in_place;
}

void FrameTier::DecodedLeft(const cache::UnitKey& unit) {
  std::lock_guard<std::mutex> lock(links_mu_);
  auto it = standing_.find(unit);
  if (it == standing_.end()) return;
  standing_bytes_.fetch_sub(it->second.bytes, std::memory_order_relaxed);
  if (it->second.in_place) in_place_bytes_.fetch_sub(it->second.bytes, std::memory_order_relaxed);
  if (auto link = frames_of_.find(unit.file); link != frames_of_.end()) link->second.standing -= it->second.bytes;
  standing_.erase(it);
  rebalance_due_.store(true, std::memory_order_relaxed);
}

void FrameTier::Detach() {
  std::lock_guard<std::mutex> lock(mu_);
  budget_ = nullptr;
}

}  // namespace graphfs::volume
