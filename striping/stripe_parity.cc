#include "striping/stripe_parity.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "striping/part_io.h"

namespace graphfs {

Result<std::unique_ptr<StripeParityWriter>> StripeParityWriter::Open(const DiskSet& disks, const StripeManifest& m,
                                                                     bool resume, const std::vector<bool>& lost) {
  auto map = StripeMap::Create(m.layout);
  if (!map.ok()) return map.error();
  auto codec = ParityCodec::Create(m.layout.disks, m.layout.parity);
  if (!codec.ok()) return codec.error();
  if (m.sum_block == 0) return Error(EINVAL, "parity without block sums");
  std::unique_ptr<StripeParityWriter> w(new StripeParityWriter(disks, m, *map, std::move(*codec)));
  w->lost_.assign(disks.size(), false);
  uint32_t lost_count = 0;
  for (uint32_t d = 0; d < disks.size() && d < lost.size(); ++d) lost_count += (w->lost_[d] = lost[d]) ? 1 : 0;
  if (lost_count > m.layout.parity)
    return Error(EIO, "striped file " + m.file_id + ": " + std::to_string(lost_count) + " disks lost, parity " +
                          std::to_string(m.layout.parity));
  for (uint32_t d = 0; d < disks.size(); ++d) {
    if (w->lost_[d]) {
      w->backends_.push_back(nullptr);
      continue;
    }
    auto backend = OpenDiskBackend(disks.path(d));
    if (!backend.ok()) return backend.error();
    w->backends_.push_back(std::move(*backend));
  }
  w->sums_.resize(disks.size());
  if (resume) {
    w->resumed_ = true;
    for (uint32_t d = 0; d < disks.size() && w->resumed_; ++d) {
      if (w->lost_[d]) continue;
      auto sums = UnitSums::Open(*w->backends_[d], SumsHeaderOf(m, d), /*writable=*/true);
      if (!sums.ok()) w->resumed_ = false;
      else w->sums_[d].emplace(std::move(*sums));
    }
  }
  if (!w->resumed_) {
    for (uint32_t d = 0; d < disks.size(); ++d) {
      w->sums_[d].reset();
      if (w->lost_[d]) continue;
      auto sums = UnitSums::Create(*w->backends_[d], SumsHeaderOf(m, d));
      if (!sums.ok()) return sums.error();
      w->sums_[d].emplace(std::move(*sums));
    }
  }
  w->parity_.assign(m.layout.parity, std::string(m.layout.unit, '\0'));
  return w;
}

Status StripeParityWriter::AddRows(uint64_t offset, const char* data, uint64_t length, const std::vector<UniqueFd>& parts) {
  const uint64_t s = map_.unit(), size = size_;
  const uint32_t d = map_.data_units(), k = map_.parity();
  if (length == 0) return Status::Ok();
  if (offset % (s * d) != 0 || (offset + length != size && length % (s * d) != 0))
    return Error(EINVAL, "parity of bytes " + std::to_string(offset) + "+" + std::to_string(length) +
                             ": not whole rows of " + std::to_string(s * d));
  const uint64_t first_row = offset / (s * d);
  const uint64_t end_row = map_.RowOf(offset + length - 1) + 1;
  for (uint64_t r = first_row; r < end_row; ++r) {
    const uint64_t len = map_.RowUnitLength(r, 0, size);
    std::vector<std::span<const char>> units;  // the row's data units, each `len` bytes
    if (map_.RowUnitLength(r, d - 1, size) < len) padded_.assign(size_t{d} * len, '\0');
    for (uint32_t c = 0; c < d; ++c) {
      const uint64_t have = map_.RowUnitLength(r, c, size);
      if (have == len) {
        units.emplace_back(data + (map_.SlotFileOffset(r, c) - offset), len);
      } else {  // the last row's shorter units: zeros past their end, as the code sees them
        char* p = padded_.data() + size_t{c} * len;
        if (have > 0) std::memcpy(p, data + (map_.SlotFileOffset(r, c) - offset), have);
        units.emplace_back(p, len);
      }
    }
    std::vector<std::span<char>> parity;
    for (std::string& p : parity_) parity.emplace_back(p.data(), len);
    GRAPHFS_RETURN_IF_ERROR(codec_.Encode(units, parity));
    for (uint32_t slot = 0; slot < d + k; ++slot) {
      const uint32_t disk = map_.SlotDisk(r, slot);
      const uint64_t have = slot < d ? map_.RowUnitLength(r, slot, size) : len;
      std::span<const char> bytes = slot < d ? units[slot].first(have) : std::span<const char>(parity[slot - d]);
      if (lost_[disk]) continue;  // parity and the other units stand for it
      if (slot >= d)
        GRAPHFS_RETURN_IF_ERROR(WriteAll(parts[disk].get(), bytes.data(), bytes.size(), r * s,
                                         "write parity on disk " + std::to_string(disk) + " (" + disks_.path(disk) + ")"));
      if (have == 0) continue;
      GRAPHFS_RETURN_IF_ERROR(sums_[disk]->Write(r, 0, BlockSums(bytes, m_.sum_block)));
    }
  }
  return Status::Ok();
}

Status StripeParityWriter::Sync() {
  for (std::optional<UnitSums>& s : sums_)
    if (s) GRAPHFS_RETURN_IF_ERROR(s->Sync());
  return Status::Ok();
}

Status StripeParityWriter::Finish() {
  for (uint32_t d = 0; d < sums_.size(); ++d) {
    if (!sums_[d]) continue;
    GRAPHFS_RETURN_IF_ERROR(sums_[d]->SetPartLength(map_.PartSize(d, size_)));
    GRAPHFS_RETURN_IF_ERROR(sums_[d]->Sync());
  }
  return Status::Ok();
}

Status VerifyStripeParity(const DiskSet& disks, const StripeManifest& m) {
  auto map = StripeMap::Create(m.layout);
  if (!map.ok()) return map.error();
  auto codec = ParityCodec::Create(m.layout.disks, m.layout.parity);
  if (!codec.ok()) return codec.error();
  const uint64_t stored = m.stored_size();
  auto parts = OpenParts(disks, m.file_id, O_RDONLY);
  if (!parts.ok()) return parts.error();
  std::vector<UnitSums> sums;
  std::vector<uint64_t> part_lengths;
  for (uint32_t d = 0; d < disks.size(); ++d) {
    ::posix_fadvise((*parts)[d].get(), 0, 0, POSIX_FADV_DONTNEED);
    auto backend = OpenDiskBackend(disks.path(d));
    if (!backend.ok()) return backend.error();
    auto s = UnitSums::Open(**backend, SumsHeaderOf(m, d), /*writable=*/false);
    if (!s.ok()) return s.error();
    struct stat st;
    if (::fstat((*parts)[d].get(), &st) != 0) return Error::FromErrno("stat part on disk " + std::to_string(d));
    // A file written in place may hold a part shorter than its share (grown past it by a
    // truncate or a write further on: the tail reads as zero blocks) and a header shorter than
    // the part (a write grows a part, not its header). Never longer: the header would say bytes
    // were cut behind our back, and bytes past the share would show through a later grow.
    const uint64_t share = map->PartSize(d, stored), length = static_cast<uint64_t>(st.st_size);
    if (s->header().part_length > share)
      return Error(EIO, "sums on disk " + std::to_string(d) + " cover a part of " +
                            std::to_string(s->header().part_length) + " bytes, the file's is " + std::to_string(share));
    if (length > share)
      return Error(EIO, "the part on disk " + std::to_string(d) + " holds " + std::to_string(length) +
                            " bytes, past the file's share of " + std::to_string(share));
    GRAPHFS_RETURN_IF_ERROR(s->CheckPartLength(length));
    part_lengths.push_back(length);
    sums.push_back(std::move(*s));
  }
  const uint32_t n = map->disks(), dn = map->data_units();
  std::vector<std::string> row(n, std::string(map->unit(), '\0'));
  std::vector<std::string> expect(map->parity(), std::string(map->unit(), '\0'));
  for (uint64_t r = 0; r < map->Rows(stored); ++r) {
    const uint64_t len = map->RowUnitLength(r, 0, stored);
    for (uint32_t slot = 0; slot < n; ++slot) {
      const uint32_t disk = map->SlotDisk(r, slot);
      const uint64_t have = map->RowUnitLength(r, slot, stored);
      const std::string where = "disk " + std::to_string(disk) + " (" + disks.path(disk) + "), row " + std::to_string(r);
      std::fill(row[slot].begin(), row[slot].end(), '\0');
      auto got = ReadFull((*parts)[disk].get(), row[slot].data(), have, r * map->unit(), "read " + where);
      if (!got.ok()) return got.error();
      if (*got != have && r * map->unit() + *got < part_lengths[disk])
        return Error(EIO, where + ": the part ends early");
      auto stored = sums[disk].Read(r, 0, (have + m.sum_block - 1) / m.sum_block);
      if (!stored.ok()) return stored.error();
      GRAPHFS_RETURN_IF_ERROR(
          VerifyBlockSums(std::span<const char>(row[slot].data(), have), m.sum_block, *stored, 0, where));
    }
    std::vector<std::span<const char>> data;
    for (uint32_t c = 0; c < dn; ++c) data.emplace_back(row[c].data(), len);
    std::vector<std::span<char>> parity;
    for (std::string& p : expect) parity.emplace_back(p.data(), len);
    GRAPHFS_RETURN_IF_ERROR(codec->Encode(data, parity));
    for (uint32_t j = 0; j < map->parity(); ++j)
      if (std::memcmp(expect[j].data(), row[dn + j].data(), len) != 0)
        return Error(EIO, "disk " + std::to_string(map->SlotDisk(r, dn + j)) + ", row " + std::to_string(r) +
                              ": parity " + std::to_string(j) + " does not match the row's data");
  }
  return Status::Ok();
}

}  // namespace graphfs
