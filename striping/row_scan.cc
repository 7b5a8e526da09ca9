#include "striping/row_scan.h"

#include <fcntl.h>

#include <algorithm>
#include <cstring>
#include <thread>

namespace graphfs {

bool SlotScan::BlockGood(uint64_t b, uint64_t sum_block) const {
  if (b * sum_block >= length) return true;  // zeros past the unit's end
  if (!read || !failed.empty()) return false;
  return !std::binary_search(bad_blocks.begin(), bad_blocks.end(), b);
}

Result<std::unique_ptr<RowScanner>> RowScanner::Open(const DiskSet& disks, const StripeManifest& m, bool writable,
                                                     std::optional<uint32_t> skip) {
  if (m.sum_block == 0) return Error(EINVAL, "striped file " + m.file_id + " has no block sums");
  if (m.layout.disks != disks.size())
    return Error(EINVAL, "striped file " + m.file_id + " spans " + std::to_string(m.layout.disks) +
                             " disks, the set has " + std::to_string(disks.size()));
  auto map = StripeMap::Create(m.layout);
  if (!map.ok()) return map.error();
  std::unique_ptr<RowScanner> s(new RowScanner(m, *map));
  s->writable_ = writable;
  if (m.layout.parity > 0) {
    auto codec = ParityCodec::Create(m.layout.disks, m.layout.parity);
    if (!codec.ok()) return codec.error();
    s->codec_.emplace(std::move(*codec));
  }
  const uint32_t n = disks.size();
  s->disks_.resize(n);
  for (uint32_t d = 0; d < n; ++d) {
    Disk& disk = s->disks_[d];
    disk.where = "disk " + std::to_string(d) + " (" + disks.path(d) + ")";
    if (skip && *skip == d) {
      disk.lost = "being rebuilt elsewhere";
      continue;
    }
    if (disks.state(d) == DiskState::kMissing) {
      disk.lost = "missing";
      continue;
    }
    auto backend = OpenDiskBackend(disks.path(d));
    if (!backend.ok()) {
      disk.lost = backend.error().message();
      continue;
    }
    disk.backend = std::move(*backend);
    auto stale = LoadStaleRows(disks, m.file_id, d);
    if (!stale.ok()) return stale.error();
    // A file created while the disk was missing (file_creation.h) has no part nor sums on it, and
    // its records mark every row: nothing of the disk's is needed, so a resync makes both, empty,
    // and rewrites every row into them (a run killed meanwhile leaves a part the next one resumes:
    // every row is still marked). Any other file's part or sums missing is damage: lost.
    const bool missed_every_row = writable && *stale && (*stale)->Count(s->rows()) == s->rows();
    DiskFileOptions o;
    o.writable = writable;
    auto part = disk.backend->Open(m.file_id, o);
    if (!part.ok() && part.error().code() == ENOENT && missed_every_row) {
      o.create = true;
      part = disk.backend->Open(m.file_id, o);
    }
    if (!part.ok()) {
      disk.lost = "part: " + part.error().message();
      continue;
    }
    auto sums = UnitSums::Open(*disk.backend, SumsHeaderOf(m, d), writable);
    if (!sums.ok() && sums.error().code() == ENOENT && missed_every_row) {
      sums = UnitSums::Create(*disk.backend, SumsHeaderOf(m, d));
      // Named for good before any row is written: the records go once the rows are, and must
      // not outlive names a crash could take back.
      if (sums.ok())
        if (Status named = disk.backend->SyncNames(); !named.ok()) return named.error().Wrap(disk.where);
    }
    if (!sums.ok()) {
      disk.lost = "sums: " + sums.error().message();
      continue;
    }
    auto size = (*part)->Size();
    if (!size.ok()) {
      disk.lost = size.error().message();
      continue;
    }
    if (Status cut = sums->CheckPartLength(*size); !cut.ok()) {
      disk.lost = cut.error().message();
      continue;
    }
    disk.stale = std::move(*stale);
    disk.part = std::move(*part);
    disk.sums.emplace(std::move(*sums));
  }
  s->units_.assign(n, std::string(m.layout.unit, '\0'));
  s->sums_.assign(n, {});
  return s;
}

std::vector<SlotScan> RowScanner::Read(uint64_t row, std::span<const uint32_t> want,
                                       std::vector<uint64_t>* bytes_read) {
  const uint32_t n = map_.disks();
  const uint64_t b = m_.sum_block, len = row_length(row), stored = m_.stored_size();
  row_ = row;
  std::vector<SlotScan> scans(n);
  std::vector<bool> asked(n, want.empty());
  for (uint32_t slot : want)
    if (slot < n) asked[slot] = true;
  std::vector<std::thread> readers;
  for (uint32_t slot = 0; slot < n; ++slot) {
    SlotScan& sc = scans[slot];
    sc.disk = map_.SlotDisk(row, slot);
    sc.length = map_.RowUnitLength(row, slot, stored);
    sums_[slot].clear();
    if (!asked[slot]) continue;
    sc.read = true;
    std::memset(units_[slot].data(), 0, len);  // the short units of the last row: zeros past their end
    if (sc.length == 0) continue;
    Disk& disk = disks_[sc.disk];
    if (!disk.lost.empty()) {
      sc.failed = disk.where + ": " + disk.lost;
      continue;
    }
    if (disk.stale && disk.stale->Has(row)) {
      sc.failed = disk.where + ": stale (the row was written while the disk was lost)";
      sc.stale = true;
      continue;
    }
    readers.emplace_back([this, &sc, &disk, slot, row, b] {
      const uint64_t blocks = (sc.length + b - 1) / b;
      // The sums first: a unit whose read fails is rebuilt and checked against them.
      auto sums = disk.sums->Read(row, 0, blocks);
      if (!sums.ok()) {
        sc.failed = disk.where + ": sums: " + sums.error().message();
        return;
      }
      sums_[slot] = std::move(*sums);
      auto got = disk.part->Read(row * map_.unit(), std::span<char>(units_[slot].data(), sc.length));
      if (!got.ok()) {
        sc.failed = got.error().message();
        sc.read_error = true;
        return;
      }
      // A part that ends early holds a hole there: zeros, which their sums will catch.
      for (uint64_t k = 0; k < blocks; ++k) {
        const uint64_t at = k * b, size = std::min(b, sc.length - at);
        if (BlockSum(std::span<const char>(units_[slot].data() + at, size), b) != sums_[slot][k])
          sc.bad_blocks.push_back(k);
      }
    });
  }
  for (std::thread& t : readers) t.join();
  // The tools read rows in order: the next two rows' units are asked of the disks now, so that
  // they stream while the caller checks, rebuilds and writes this one.
  for (Disk& disk : disks_)
    if (disk.part && disk.part->native_fd() >= 0)
      ::posix_fadvise(disk.part->native_fd(), static_cast<off_t>((row + 1) * map_.unit()),
                      static_cast<off_t>(2 * map_.unit()), POSIX_FADV_WILLNEED);
  if (bytes_read != nullptr)
    for (const SlotScan& sc : scans)
      if (sc.read && !sc.read_error && sc.failed.empty()) (*bytes_read)[sc.disk] += sc.length;
  return scans;
}

Status RowScanner::Rebuild(uint64_t row, std::span<const uint32_t> lost, uint64_t begin, uint64_t length) {
  if (!codec_) return Error(EINVAL, "striped file " + m_.file_id + " has no parity to rebuild from");
  if (row != row_) return Error(EINVAL, "row " + std::to_string(row) + " is not the one read");
  if (begin + length > row_length(row)) return Error(EINVAL, "rebuild past the row's units");
  std::vector<std::span<char>> units;
  for (std::string& u : units_) units.emplace_back(u.data() + begin, length);
  return codec_->Reconstruct(units, lost);
}

Result<std::vector<uint32_t>> RowScanner::ParityMismatches(uint64_t row) {
  if (!codec_) return std::vector<uint32_t>{};
  const uint32_t d = map_.data_units(), k = map_.parity();
  const uint64_t len = row_length(row);
  std::vector<std::span<const char>> data;
  for (uint32_t c = 0; c < d; ++c) data.emplace_back(units_[c].data(), len);
  std::vector<std::string> expect(k, std::string(len, '\0'));
  std::vector<std::span<char>> parity;
  for (std::string& p : expect) parity.emplace_back(p.data(), len);
  GRAPHFS_RETURN_IF_ERROR(codec_->Encode(data, parity));
  std::vector<uint32_t> differ;
  for (uint32_t j = 0; j < k; ++j)
    if (std::memcmp(expect[j].data(), units_[d + j].data(), len) != 0) differ.push_back(d + j);
  return differ;
}

std::pair<uint64_t, uint64_t> RowScanner::BlockSpan(uint64_t row, uint32_t slot, uint64_t first_block,
                                                    uint64_t count) const {
  const uint64_t b = m_.sum_block, length = map_.RowUnitLength(row, slot, m_.stored_size());
  return {first_block * b, std::min(length, (first_block + count) * b)};
}

Status RowScanner::WriteBlocks(uint64_t row, uint32_t slot, uint64_t first_block, uint64_t count) {
  Disk& dk = disks_[map_.SlotDisk(row, slot)];
  if (!writable_ || !dk.part) return Error(EBADF, dk.where + ": not open for repairs");
  const auto [begin, end] = BlockSpan(row, slot, first_block, count);
  if (begin >= end) return Status::Ok();
  GRAPHFS_RETURN_IF_ERROR(
      dk.part->Write(row * map_.unit() + begin, std::span<const char>(units_[slot].data() + begin, end - begin)));
  dk.dirty = true;
  return Status::Ok();
}

Status RowScanner::WriteSums(uint64_t row, uint32_t slot, uint64_t first_block, uint64_t count) {
  Disk& dk = disks_[map_.SlotDisk(row, slot)];
  if (!writable_ || !dk.sums) return Error(EBADF, dk.where + ": not open for repairs");
  const auto [begin, end] = BlockSpan(row, slot, first_block, count);
  if (begin >= end) return Status::Ok();
  const std::vector<uint64_t> sums =
      BlockSums(std::span<const char>(units_[slot].data() + begin, end - begin), m_.sum_block);
  GRAPHFS_RETURN_IF_ERROR(dk.sums->Write(row, first_block, sums));
  if (sums_[slot].size() >= first_block + sums.size())
    std::copy(sums.begin(), sums.end(), sums_[slot].begin() + static_cast<std::ptrdiff_t>(first_block));
  dk.dirty = true;
  return Status::Ok();
}

Status RowScanner::CutToFile(uint32_t disk) {
  Disk& dk = disks_[disk];
  if (!writable_ || !dk.part || !dk.sums) return Error(EBADF, dk.where + ": not open for repairs");
  const uint64_t size = m_.stored_size(), share = map_.PartSize(disk, size);
  auto now = dk.part->Size();
  if (!now.ok()) return now.error();
  // The header first when cutting (it never says more than the part holds); rows past the end
  // lose their sums, so a file grown again reads zero blocks there.
  GRAPHFS_RETURN_IF_ERROR(dk.sums->SetPartLength(std::min(*now, share)));
  const uint64_t rows = map_.Rows(size);
  GRAPHFS_RETURN_IF_ERROR(dk.sums->CutRows(rows));
  if (rows > 0) {
    // The last row's unit on this disk may be shorter than the part held (the file shrank while
    // the disk was lost): the resync rewrote its blocks up to its new end, and the blocks past it
    // are cut from the part, so their sums are made the zero blocks' — else, once the file grows
    // again, they read as damaged, and as EIO with K other disks lost.
    const uint64_t last = rows - 1, b = m_.sum_block, at = last * map_.unit();
    const uint64_t kept = map_.RowUnitLength(last, map_.DiskSlot(last, disk), size);
    const uint64_t held = *now > at ? std::min<uint64_t>(map_.unit(), *now - at) : 0;
    const uint64_t from = (kept + b - 1) / b, to = (held + b - 1) / b;
    if (to > from) GRAPHFS_RETURN_IF_ERROR(dk.sums->Write(last, from, std::vector<uint64_t>(to - from, 0)));
  }
  if (*now > share) GRAPHFS_RETURN_IF_ERROR(dk.part->Truncate(share));
  dk.dirty = true;
  return Status::Ok();
}

Status RowScanner::Sync() {
  for (Disk& d : disks_) {
    if (!d.dirty) continue;
    GRAPHFS_RETURN_IF_ERROR(d.part->Sync());
    GRAPHFS_RETURN_IF_ERROR(d.sums->Sync());
    d.dirty = false;
  }
  return Status::Ok();
}

}  // namespace graphfs
