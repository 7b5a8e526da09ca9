#include "striping/stream_rows.h"

#include <algorithm>

#include "striping/part_io.h"

namespace graphfs::restripe_detail {

Result<std::unique_ptr<StreamRows>> StreamRows::Open(const DiskSet& disks, const StripeMap& map,
                                                     const std::vector<UniqueFd>& parts, StripeParityWriter& parity,
                                                     uint64_t end) {
  std::unique_ptr<StreamRows> rows(new StreamRows(disks, map, parts, parity));
  rows->start_ = end / rows->row_bytes_ * rows->row_bytes_;
  rows->held_.assign(end - rows->start_, '\0');
  GRAPHFS_RETURN_IF_ERROR(ReadFromParts(disks, map, parts, rows->start_, rows->held_.size(), rows->held_.data()));
  return rows;
}

Status StreamRows::Write(uint64_t at, std::span<const char> bytes) {
  const uint64_t end = start_ + held_.size();
  if (at < end)
    return Error(EINVAL, "stream bytes at " + std::to_string(at) + " after bytes up to " + std::to_string(end) +
                             ": a packed stream is written in order");
  held_.append(at - end, '\0');
  held_.append(bytes.data(), bytes.size());
  if (held_.size() >= row_bytes_) GRAPHFS_RETURN_IF_ERROR(WriteHeld(held_.size() / row_bytes_ * row_bytes_));
  return Status::Ok();
}

Status StreamRows::Finish(uint64_t size) {
  const uint64_t end = start_ + held_.size();
  if (size < end)
    return Error(EINVAL, "a packed stream of " + std::to_string(size) + " bytes, but bytes up to " +
                             std::to_string(end) + " were written");
  held_.append(size - end, '\0');
  parity_.SetSize(size);
  return WriteHeld(held_.size());
}

Status StreamRows::WriteHeld(uint64_t length) {
  if (length == 0) return Status::Ok();
  GRAPHFS_RETURN_IF_ERROR(WriteToParts(disks_, map_, parts_, start_, length, held_.data()));
  GRAPHFS_RETURN_IF_ERROR(parity_.AddRows(start_, held_.data(), length, parts_));
  held_.erase(0, length);
  start_ += length;
  return Status::Ok();
}

}  // namespace graphfs::restripe_detail
