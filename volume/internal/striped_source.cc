#include "volume/internal/striped_source.h"

namespace graphfs::volume {

void StripedSource::DiskShare(uint64_t offset, uint64_t length, std::vector<uint64_t>& per_disk) const {
  if (packed_) {
    packed_->DiskShare(offset, length, per_disk);
    return;
  }
  file_->map().AddDiskShare(offset, length, per_disk);
}

void StripedSource::DropChunkLayout() {
  std::lock_guard<std::mutex> lock(mu_);
  written_ = true;
  if (packed_ || std::string(layout_->kind()) == "block") return;
  layout_ = std::make_shared<cache::BlockLayout>(file_->map().unit());
  layout_note_ = "stripe-aligned blocks (written through the mount since it was indexed)";
}

bool StripedSource::SetLayout(std::shared_ptr<const cache::UnitLayout> layout, std::string note) {
  std::lock_guard<std::mutex> lock(mu_);
  if (packed_) return false;  // its units are its compressed units, whatever the index says
  layout_note_ = std::move(note);
  if (written_ || layout == layout_) return false;
  const bool both_blocks = std::string(layout->kind()) == "block" && std::string(layout_->kind()) == "block";
  layout_ = std::move(layout);
  return !both_blocks;  // blocks of the same unit size mean the same units
}

}  // namespace graphfs::volume
