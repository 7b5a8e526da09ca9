// Where each byte of a striped file lives.
//
// A file striped with unit S over N disks, starting on disk `first`, with K parity units per
// row (K = 0, 1 or 2; docs/parity.md, "Layout on the disks") is cut into data units of S bytes;
// data unit u (file bytes [u*S, (u+1)*S)) lies on disk (first + u) % N, at offset (u/D)*S + o%S
// of that disk's part, where D = N - K. Each row of N units holds D data units, then K parity
// units on the next K disks of the cycle, so parity moves back by K disks per row (md's
// left-symmetric RAID-5 for K = 1) and every unit of row r lies at offset r*S of its disk.
// With K = 0 a row is N data units and this is the parity-blind formula of before:
// byte o on disk (o/S + first) % N at offset (o/(S*N))*S + o%S. Starting different files on
// different disks spreads small files over all disks; the offset on the disk does not depend
// on `first`.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"

namespace graphfs {

struct StripeLayout {
  static constexpr uint32_t kMaxParity = 2;  // what the codec (parity_codec.h) and the tools offer

  uint64_t unit = 0;        // bytes per stripe unit (any positive value; tools use 4 KiB multiples)
  uint32_t disks = 0;       // N >= 1
  uint32_t first_disk = 0;  // disk that holds unit 0, < N
  uint32_t parity = 0;      // K parity units per row, 0..kMaxParity, < N

  uint32_t data_units() const { return disks - parity; }  // D: data units per row
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
  // Validates the layout (unit > 0, disks >= 1, first_disk < disks, parity <= kMaxParity and
  // < disks, unit * disks < 2^64).
  static Result<StripeMap> Create(const StripeLayout& layout);

  const StripeLayout& layout() const { return layout_; }
  uint64_t unit() const { return layout_.unit; }
  uint32_t disks() const { return layout_.disks; }
  uint32_t parity() const { return layout_.parity; }
  uint32_t data_units() const { return layout_.data_units(); }

  // Where a byte of the file (a data byte: parity has no file offset) lies.
  DiskLocation Locate(uint64_t file_offset) const;

  // Splits [offset, offset+length) at stripe-unit boundaries, in file order.
  std::vector<StripeExtent> Split(uint64_t offset, uint64_t length) const;
  // Adds to per_disk[d] the bytes of [offset, offset+length) that live on disk d (disks past
  // per_disk's size are left out). Data bytes only: parity is not read by healthy reads.
  void AddDiskShare(uint64_t offset, uint64_t length, std::vector<uint64_t>& per_disk) const;

  // Number of bytes of a file of `file_size` bytes that live on `disk`, its parity units
  // included: the size that disk's part file has when the file is fully written.
  uint64_t PartSize(uint32_t disk, uint64_t file_size) const;

  // Row geometry, for parity. Slot i of a row is its data column i for i < D, parity unit
  // i - D for i >= D: the codec's unit index (parity_codec.h).
  //
  // The row of the data unit that holds `file_offset`.
  uint64_t RowOf(uint64_t file_offset) const { return file_offset / layout_.unit / data_units(); }
  // Rows a file of `file_size` bytes has (the last one may be short).
  uint64_t Rows(uint64_t file_size) const;
  // The disk that holds slot `slot` (< N) of row `row`; the unit lies at offset row*S there.
  uint32_t SlotDisk(uint64_t row, uint32_t slot) const;
  // The slot of row `row` that disk `disk` (< N) holds: every disk holds one slot of every row.
  uint32_t DiskSlot(uint64_t row, uint32_t disk) const;
  // Bytes slot `slot` of row `row` holds in a file of `file_size` bytes: S for the slots of full
  // rows; in the last row a data unit holds what is left of the file (0 past its end) and a
  // parity unit is as long as the row's first data unit (the code sees the missing bytes of
  // the shorter units as zeros); 0 past the last row.
  uint64_t RowUnitLength(uint64_t row, uint32_t slot, uint64_t file_size) const;
  // File offset of the first byte of data slot `slot` (< D) of row `row`.
  uint64_t SlotFileOffset(uint64_t row, uint32_t slot) const {
    return (row * data_units() + slot) * layout_.unit;
  }

  // Groups the pieces by disk and merges pieces whose disk ranges touch, as long as a
  // run stays within `max_run_bytes`. Runs come out grouped by disk, in disk order.
  static std::vector<DiskRun> MergeRuns(const std::vector<StripeExtent>& pieces, uint64_t max_run_bytes);

 private:
  explicit StripeMap(const StripeLayout& layout) : layout_(layout) {}
  StripeLayout layout_;
};

}  // namespace graphfs
