// Where each byte of a striped file lives.
//
// A file striped with unit S over N disks, starting on disk `first`, keeps byte o on
// disk (o/S + first) % N at offset (o/(S*N))*S + o%S of that disk's part file. Starting
// different files on different disks spreads small files over all disks; the offset on
// the disk does not depend on `first`.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"

namespace graphfs {

struct StripeLayout {
  uint64_t unit = 0;        // bytes per stripe unit (any positive value; tools use 4 KiB multiples)
  uint32_t disks = 0;       // N >= 1
  uint32_t first_disk = 0;  // disk that holds unit 0, < N
};

struct DiskLocation {
  uint32_t disk;
  uint64_t disk_offset;
};

// One piece of a request: a range of the file that lies contiguously on one disk.
struct StripeExtent {
  uint32_t disk;
  uint64_t disk_offset;
  uint64_t file_offset;
  uint64_t length;
};

// Pieces of one request that touch on the same disk, to be issued as one vectored I/O.
struct DiskRun {
  uint32_t disk;
  uint64_t disk_offset;
  uint64_t length;
  std::vector<StripeExtent> pieces;  // in disk-offset order; each piece's file range
};

class StripeMap {
 public:
  // Validates the layout (unit > 0, disks >= 1, first_disk < disks, unit * disks < 2^64).
  static Result<StripeMap> Create(const StripeLayout& layout);

  const StripeLayout& layout() const { return layout_; }
  uint64_t unit() const { return layout_.unit; }
  uint32_t disks() const { return layout_.disks; }

  DiskLocation Locate(uint64_t file_offset) const;

  // Splits [offset, offset+length) at stripe-unit boundaries, in file order.
  std::vector<StripeExtent> Split(uint64_t offset, uint64_t length) const;
  // Adds to per_disk[d] the bytes of [offset, offset+length) that live on disk d (disks past
  // per_disk's size are left out).
  void AddDiskShare(uint64_t offset, uint64_t length, std::vector<uint64_t>& per_disk) const;

  // Number of bytes of a file of `file_size` bytes that live on `disk`: the size
  // that disk's part file has when the file is fully written.
  uint64_t PartSize(uint32_t disk, uint64_t file_size) const;

  // Groups the pieces by disk and merges pieces whose disk ranges touch, as long as a
  // run stays within `max_run_bytes`. Runs come out grouped by disk, in disk order.
  static std::vector<DiskRun> MergeRuns(const std::vector<StripeExtent>& pieces, uint64_t max_run_bytes);

 private:
  explicit StripeMap(const StripeLayout& layout) : layout_(layout) {}
  StripeLayout layout_;
};

}  // namespace graphfs
