// graphfs-stripe --parity K: the parity units and the block sums of a file being striped, for the
// offline tools (docs/parity.md). Not a public header: restripe.cc drives it row by row as it
// copies, and checks the result before the stub replaces the file.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "striping/disk_backend.h"
#include "striping/disk_set.h"
#include "striping/manifest.h"
#include "striping/parity_codec.h"
#include "striping/stripe_map.h"
#include "striping/unit_sums.h"

namespace graphfs::restripe_detail {

// Writes each row's K parity units into the parts and the sums of all its units into the
// disks' sums files. `m` is the manifest the file will get (layout with parity, sum_block); the
// bytes it codes are the stored ones (m.stored_size(): a compressed file's packed stream).
class ParityWriter {
 public:
  // The size to open a writer with when the stored bytes' end is not known yet: a packed stream
  // grows frame by frame and its size is known once its directory is written (SetSize).
  static constexpr uint64_t kSizeUnknown = UINT64_MAX;

  // resume: keep the sums files of a killed run (rows below its checkpoint are done); else, or
  // when they cannot be opened as this file's (then `resumed()` is false), start them afresh.
  static Result<std::unique_ptr<ParityWriter>> Open(const DiskSet& disks, const StripeManifest& m, bool resume);

  bool resumed() const { return resumed_; }
  // The stored bytes' final size, for a writer opened with kSizeUnknown: before the rows that
  // hold the end (AddRows) and Finish.
  void SetSize(uint64_t size) { size_ = size; }

  // `data` holds the file's bytes [offset, offset + length): whole rows from a row's start, the
  // last of them short only at the end of the stored bytes (the size). Writes their parity to `parts`
  // (opened for writing) and the sums of every unit, data and parity.
  Status AddRows(uint64_t offset, const char* data, uint64_t length, const std::vector<UniqueFd>& parts);
  // Makes the sums written so far durable (the caller syncs the parts).
  Status Sync();
  // Records every part's final length in its sums header and syncs.
  Status Finish();

 private:
  ParityWriter(const DiskSet& disks, const StripeManifest& m, StripeMap map, ParityCodec codec)
      : disks_(disks), m_(m), size_(m.stored_size()), map_(map), codec_(std::move(codec)) {}
  const DiskSet& disks_;
  StripeManifest m_;
  uint64_t size_;  // of the stored bytes
  StripeMap map_;
  ParityCodec codec_;
  bool resumed_ = false;
  std::vector<std::unique_ptr<DiskBackend>> backends_;
  std::vector<UnitSums> sums_;
  std::vector<std::string> parity_;  // K buffers of a unit
  std::string padded_;               // the short units of the last row, padded with zeros
};

// Reads a file with parity back from its parts (page cache dropped) row by row: every unit's
// blocks against its sums, and each row's parity against the parity its data encodes to. EIO
// naming the disk and row of the first difference. Of a compressed file, its packed stream.
Status VerifyParity(const DiskSet& disks, const StripeManifest& m);

}  // namespace graphfs::restripe_detail
