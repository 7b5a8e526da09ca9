// graphfs-stripe --parity K --compress: a packed stream is written frame by frame at growing
// offsets, but its parity is coded a whole row of data units at a time, from the copy buffer
// (StripeParityWriter::AddRows, as for raw files). StreamRows holds the stream's bytes from the start
// of its first unfinished row and, once the stream has passed a row's end, writes the row to the
// parts with its parity and sums; the last, short row at Finish. Not a public header.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "striping/disk_set.h"
#include "striping/stripe_parity.h"
#include "striping/stripe_map.h"

namespace graphfs::restripe_detail {

class StreamRows {
 public:
  // Continues a stream whose bytes [0, end) are on the parts (what a killed run made durable; 0:
  // a new stream). The rows before the one holding `end` are done; that row's bytes before `end`
  // are read back from the parts, so that its parity is coded from the whole row again.
  static Result<std::unique_ptr<StreamRows>> Open(const DiskSet& disks, const StripeMap& map,
                                                  const std::vector<UniqueFd>& parts, StripeParityWriter& parity,
                                                  uint64_t end);

  // The stream's bytes at `at`, at or after the end of everything written before (a gap between
  // frames reads as zeros, as a hole in a part does).
  Status Write(uint64_t at, std::span<const char> bytes);
  // The stream's bytes before this offset (a row boundary) are on the parts with their rows'
  // parity and sums: a checkpoint may list the frames that end there.
  uint64_t done() const { return start_; }
  // The stream ends at `size`: writes what is held, the last row short.
  Status Finish(uint64_t size);

 private:
  StreamRows(const DiskSet& disks, const StripeMap& map, const std::vector<UniqueFd>& parts, StripeParityWriter& parity)
      : disks_(disks), map_(map), parts_(parts), parity_(parity), row_bytes_(map.unit() * map.data_units()) {}
  // Writes the first `length` bytes held (whole rows, or the last row) and drops them.
  Status WriteHeld(uint64_t length);

  const DiskSet& disks_;
  const StripeMap map_;
  const std::vector<UniqueFd>& parts_;
  StripeParityWriter& parity_;
  const uint64_t row_bytes_;  // a row's data: D units
  uint64_t start_ = 0;        // the stream offset of held_[0], a row's start
  std::string held_;
};

}  // namespace graphfs::restripe_detail
