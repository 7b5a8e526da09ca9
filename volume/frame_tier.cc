#include "volume/frame_tier.h"

#include <unistd.h>

#include "volume/memory_budget.h"

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
    std::lock_guard<std::mutex> lock(mu_);
    if (budget_ != nullptr) budget_->Rebalance();
  }
  return status;
}

void FrameTier::Detach() {
  std::lock_guard<std::mutex> lock(mu_);
  budget_ = nullptr;
}

}  // namespace graphfs::volume
