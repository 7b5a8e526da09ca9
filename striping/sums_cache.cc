#include "striping/sums_cache.h"

#include <algorithm>

namespace graphfs {

SumsCache::SumsCache(std::vector<std::optional<UnitSums>> sums, uint64_t unit, uint64_t sum_block)
    : blocks_per_unit_(unit / sum_block) {
  for (auto& s : sums) {
    disks_.push_back(std::make_unique<Disk>());
    disks_.back()->sums = std::move(s);
  }
}

bool SumsCache::has(uint32_t disk) const {
  if (disk >= disks_.size()) return false;
  std::lock_guard<std::mutex> lock(disks_[disk]->mu);
  return disks_[disk]->sums.has_value();
}

void SumsCache::Adopt(uint32_t disk, UnitSums sums) {
  Disk& d = *disks_[disk];
  std::lock_guard<std::mutex> lock(d.mu);
  d.sums.emplace(std::move(sums));
  d.pages.clear();
  d.unsynced = false;
}

void SumsCache::Forget() {
  for (auto& d : disks_) {
    std::lock_guard<std::mutex> lock(d->mu);
    d->pages.clear();
  }
}

Result<std::vector<uint64_t>> SumsCache::Get(uint32_t disk, uint64_t row, uint64_t first_block, uint64_t count) {
  if (!has(disk)) return Error(ENODEV, "no sums for disk " + std::to_string(disk));
  Disk& d = *disks_[disk];
  std::vector<uint64_t> out;
  out.reserve(count);
  const uint64_t first = row * blocks_per_unit_ + first_block;
  std::lock_guard<std::mutex> lock(d.mu);
  for (uint64_t e = first; e < first + count;) {
    const uint64_t page = e / kPageSums;
    auto it = d.pages.find(page);
    if (it == d.pages.end()) {
      auto read = d.sums->ReadEntries(page * kPageSums, kPageSums);
      if (!read.ok()) return read.error();
      it = d.pages.emplace(page, std::move(*read)).first;
    }
    const uint64_t at = e - page * kPageSums;
    const uint64_t take = std::min(kPageSums - at, first + count - e);
    out.insert(out.end(), it->second.begin() + static_cast<long>(at), it->second.begin() + static_cast<long>(at + take));
    e += take;
  }
  return out;
}

Status SumsCache::Put(uint32_t disk, uint64_t row, uint64_t first_block, const std::vector<uint64_t>& sums) {
  if (!has(disk)) return Error(ENODEV, "no sums for disk " + std::to_string(disk));
  Disk& d = *disks_[disk];
  std::lock_guard<std::mutex> lock(d.mu);
  d.unsynced = true;
  GRAPHFS_RETURN_IF_ERROR(d.sums->Write(row, first_block, sums));
  const uint64_t first = row * blocks_per_unit_ + first_block;
  for (uint64_t i = 0; i < sums.size(); ++i) {
    auto it = d.pages.find((first + i) / kPageSums);
    if (it != d.pages.end()) it->second[(first + i) % kPageSums] = sums[i];
  }
  return Status::Ok();
}

Status SumsCache::Cut(uint32_t disk, uint64_t rows, uint64_t part_length) {
  if (!has(disk)) return Error(ENODEV, "no sums for disk " + std::to_string(disk));
  Disk& d = *disks_[disk];
  std::lock_guard<std::mutex> lock(d.mu);
  d.unsynced = true;
  // The header first: a part cut before its header says so would look cut behind our back.
  GRAPHFS_RETURN_IF_ERROR(d.sums->SetPartLength(part_length));
  GRAPHFS_RETURN_IF_ERROR(d.sums->CutRows(rows));
  d.pages.clear();
  return Status::Ok();
}

Status SumsCache::Sync() {
  for (auto& disk : disks_) {
    std::lock_guard<std::mutex> lock(disk->mu);
    if (!disk->sums || !disk->unsynced) continue;
    GRAPHFS_RETURN_IF_ERROR(disk->sums->Sync());
    disk->unsynced = false;
  }
  return Status::Ok();
}

}  // namespace graphfs
