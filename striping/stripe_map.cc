#include "striping/stripe_map.h"

#include <algorithm>

namespace graphfs {

Result<StripeMap> StripeMap::Create(const StripeLayout& layout) {
  if (layout.unit == 0) return Error(EINVAL, "stripe unit must be positive");
  if (layout.disks == 0) return Error(EINVAL, "a striped file needs at least one disk");
  if (layout.first_disk >= layout.disks)
    return Error(EINVAL, "first disk " + std::to_string(layout.first_disk) + " is not below disk count " +
                             std::to_string(layout.disks));
  if (layout.parity > StripeLayout::kMaxParity)
    return Error(EINVAL, "parity " + std::to_string(layout.parity) + ": 0 to " +
                             std::to_string(StripeLayout::kMaxParity) + " parity units per row");
  if (layout.parity >= layout.disks)
    return Error(EINVAL, "parity " + std::to_string(layout.parity) + " needs at least " +
                             std::to_string(layout.parity + 1) + " disks (got " + std::to_string(layout.disks) +
                             "): every row must keep a data unit");
  // A row (one unit on every disk) must fit 64 bits.
  if (layout.unit > UINT64_MAX / layout.disks)
    return Error(EINVAL, "stripe unit " + std::to_string(layout.unit) + " times " + std::to_string(layout.disks) +
                             " disks overflows 64 bits");
  return StripeMap(layout);
}

DiskLocation StripeMap::Locate(uint64_t o) const {
  const uint64_t s = layout_.unit, n = layout_.disks;
  const uint64_t unit_index = o / s;
  // Data unit u is on disk (first + u) % N whatever K is: a row's parity takes the K disks
  // after its data, and the next row's data goes on from there.
  const uint32_t disk = static_cast<uint32_t>((unit_index % n + layout_.first_disk) % n);
  return {disk, (unit_index / data_units()) * s + o % s};
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
  const uint64_t rows = Rows(file_size);
  if (rows == 0) return 0;
  // Every row before the last is full and puts one unit on every disk; the last row's unit on
  // this disk may be short, or absent.
  const uint64_t last = rows - 1;
  return last * layout_.unit + RowUnitLength(last, DiskSlot(last, disk), file_size);
}

uint64_t StripeMap::Rows(uint64_t file_size) const {
  const uint64_t s = layout_.unit, d = data_units();
  const uint64_t units = file_size / s + (file_size % s != 0);
  return units / d + (units % d != 0);
}

uint32_t StripeMap::SlotDisk(uint64_t row, uint32_t slot) const {
  // (first + row*D + slot) % N, without letting row*D wrap.
  const unsigned __int128 n = layout_.disks;
  const unsigned __int128 at = layout_.first_disk + (row % n) * data_units() + slot;
  return static_cast<uint32_t>(at % n);
}

uint32_t StripeMap::DiskSlot(uint64_t row, uint32_t disk) const {
  const uint64_t n = layout_.disks;
  return static_cast<uint32_t>((disk + n - SlotDisk(row, 0)) % n);
}

uint64_t StripeMap::RowUnitLength(uint64_t row, uint32_t slot, uint64_t file_size) const {
  if (slot >= data_units()) slot = 0;  // parity is as long as the row's longest (first) data unit
  // Rows past the file can be asked about: 128 bits keep (row*D + slot)*S from wrapping.
  const unsigned __int128 start = (static_cast<unsigned __int128>(row) * data_units() + slot) * layout_.unit;
  if (start >= file_size) return 0;
  return std::min<uint64_t>(layout_.unit, file_size - static_cast<uint64_t>(start));
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
