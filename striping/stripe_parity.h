// The parity units and block sums of a file written whole, row by row in order, straight into its
// parts (docs/parity.md): graphfs-stripe --parity K striping a file (raw bytes, or a compressed
// file's packed stream), graph versions' new files (admin/graph_disks.h), and the plain copy a
// compressed file's first write makes (the volume's unpack). Writes to a file in place go through
// the row journal instead (parity_write.h). VerifyStripeParity reads such a file back whole.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "striping/disk_backend.h"
#include "striping/disk_set.h"
#include "striping/manifest.h"
#include "striping/parity_codec.h"
#include "striping/stripe_map.h"
#include "striping/unit_sums.h"

namespace graphfs {

// Writes each row's K parity units into the parts and the sums of all its units into the
// disks' sums files. `m` is the manifest the file will get (layout with parity, sum_block); the
// bytes it codes are the stored ones (m.stored_size(): a compressed file's packed stream).
class StripeParityWriter {
 public:
  // The size to open a writer with when the stored bytes' end is not known yet: a packed stream
  // grows frame by frame and its size is known once its directory is written (SetSize).
  static constexpr uint64_t kSizeUnknown = UINT64_MAX;

  // resume: keep the sums files of a killed run (rows below its checkpoint are done); else, or
  // when they cannot be opened as this file's (then `resumed()` is false), start them afresh.
  // `lost`: disks whose parts the file has not (created while they were missing: file_creation.h)
  // — neither their parity units nor their sums are written, and reads rebuild them from the rest
  // of their rows (at most K of them). Empty: every disk.
  static Result<std::unique_ptr<StripeParityWriter>> Open(const DiskSet& disks, const StripeManifest& m, bool resume,
                                                          const std::vector<bool>& lost = {});

  bool resumed() const { return resumed_; }
  // The stored bytes' final size, for a writer opened with kSizeUnknown: before the rows that
  // hold the end (AddRows) and Finish.
  void SetSize(uint64_t size) { size_ = size; }

  // `data` holds the file's bytes [offset, offset + length): whole rows from a row's start, the
  // last of them short only at the end of the stored bytes (the size). Writes their parity to `parts`
  // (opened for writing; a lost disk's not open) and the sums of every unit, data and parity, but
  // those of lost disks.
  Status AddRows(uint64_t offset, const char* data, uint64_t length, const std::vector<UniqueFd>& parts);
  // Makes the sums written so far durable (the caller syncs the parts).
  Status Sync();
  // Records every part's final length in its sums header and syncs.
  Status Finish();

 private:
  StripeParityWriter(const DiskSet& disks, const StripeManifest& m, StripeMap map, ParityCodec codec)
      : disks_(disks), m_(m), size_(m.stored_size()), map_(map), codec_(std::move(codec)) {}
  const DiskSet& disks_;
  StripeManifest m_;
  uint64_t size_;  // of the stored bytes
  StripeMap map_;
  ParityCodec codec_;
  bool resumed_ = false;
  std::vector<bool> lost_;  // per disk
  std::vector<std::unique_ptr<DiskBackend>> backends_;  // nullptr for a lost disk
  std::vector<std::optional<UnitSums>> sums_;           // empty for a lost disk
  std::vector<std::string> parity_;  // K buffers of a unit
  std::string padded_;               // the short units of the last row, padded with zeros
};

// Reads a file with parity back from its parts (page cache dropped) row by row: every unit's
// blocks against its sums, and each row's parity against the parity its data encodes to. EIO
// naming the disk and row of the first difference. Of a compressed file, its packed stream.
// A part may end before its share of the file (a file grown past it reads zeros there) and its
// header may say less than the part holds; a header or a part longer than the share is EIO.
Status VerifyStripeParity(const DiskSet& disks, const StripeManifest& m);

}  // namespace graphfs
