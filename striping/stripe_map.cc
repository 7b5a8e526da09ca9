#include "striping/stripe_map.h"

#include <algorithm>

namespace graphfs {

Result<StripeMap> StripeMap::Create(const StripeLayout& layout) {
  if (layout.unit == 0) return Error(EINVAL, "stripe unit must be positive");
  if (layout.disks == 0) return Error(EINVAL, "a striped file needs at least one disk");
  if (layout.first_disk >= layout.disks)
    return Error(EINVAL, "first disk " + std::to_string(layout.first_disk) + " is not below disk count " +
                             std::to_string(layout.disks));
  // A row (one unit on every disk) must fit 64 bits: PartSize divides by it.
  if (layout.unit > UINT64_MAX / layout.disks)
    return Error(EINVAL, "stripe unit " + std::to_string(layout.unit) + " times " + std::to_string(layout.disks) +
                             " disks overflows 64 bits");
  return StripeMap(layout);
}

DiskLocation StripeMap::Locate(uint64_t o) const {
  const uint64_t s = layout_.unit, n = layout_.disks;
  const uint64_t unit_index = o / s;
  const uint32_t disk = static_cast<uint32_t>((unit_index % n + layout_.first_disk) % n);
  return {disk, (unit_index / n) * s + o % s};
}

std::vector<StripeExtent> StripeMap::Split(uint64_t offset, uint64_t length) const {
  std::vector<StripeExtent> out;
  const uint64_t s = layout_.unit;
  uint64_t pos = offset;
  const uint64_t end = offset + length;
  while (pos < end) {
    const uint64_t unit_end = (pos / s + 1) * s;
    const uint64_t piece_end = std::min(end, unit_end);
    const DiskLocation loc = Locate(pos);
    out.push_back({loc.disk, loc.disk_offset, pos, piece_end - pos});
    pos = piece_end;
  }
  return out;
}

void StripeMap::AddDiskShare(uint64_t offset, uint64_t length, std::vector<uint64_t>& per_disk) const {
  for (const StripeExtent& e : Split(offset, length))
    if (e.disk < per_disk.size()) per_disk[e.disk] += e.length;
}

uint64_t StripeMap::PartSize(uint32_t disk, uint64_t file_size) const {
  const uint64_t s = layout_.unit, n = layout_.disks;
  const uint64_t row = s * n;
  const uint64_t full_rows = file_size / row;
  const uint64_t rest = file_size % row;
  // Position of `disk` within a row: the row starts on first_disk.
  const uint64_t position = (disk + n - layout_.first_disk) % n;
  uint64_t extra = 0;
  if (rest > position * s) extra = std::min(s, rest - position * s);
  return full_rows * s + extra;
}

std::vector<DiskRun> StripeMap::MergeRuns(const std::vector<StripeExtent>& pieces, uint64_t max_run_bytes) {
  std::vector<StripeExtent> sorted = pieces;
  std::stable_sort(sorted.begin(), sorted.end(), [](const StripeExtent& a, const StripeExtent& b) {
    return a.disk != b.disk ? a.disk < b.disk : a.disk_offset < b.disk_offset;
  });
  std::vector<DiskRun> runs;
  for (const StripeExtent& p : sorted) {
    if (!runs.empty()) {
      DiskRun& last = runs.back();
      if (last.disk == p.disk && last.disk_offset + last.length == p.disk_offset &&
          last.length + p.length <= max_run_bytes) {
        last.length += p.length;
        last.pieces.push_back(p);
        continue;
      }
    }
    runs.push_back({p.disk, p.disk_offset, p.length, {p}});
  }
  return runs;
}

}  // namespace graphfs
