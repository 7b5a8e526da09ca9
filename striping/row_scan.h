// Whole stripe rows of a file with block sums (manifest version 2), read straight from its parts
// through the disks' backends — every unit of the row, data and parity, each block checked
// against its disk's sums — for the offline tools that check or rebuild everything
// (graphfs-scrub, graphfs-rebuild; docs/parity.md). The daemon's reads go through
// parity_read.h instead, range by range.
//
// A row's units are read at once, one thread per disk, into buffers as long as the row's
// longest unit (the shorter units of the last row are zeros past their end, as the code sees
// them), and the next two rows are asked of the disks (read-ahead) while the caller works on
// this one. Rebuilding works block by block: a block of the row is rebuilt from the slots whose
// same block is good, so two disks with bad blocks at different places of one row are both
// repaired with K = 1.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "striping/disk_backend.h"
#include "striping/disk_set.h"
#include "striping/manifest.h"
#include "striping/parity_codec.h"
#include "striping/stale_rows.h"
#include "striping/stripe_map.h"
#include "striping/unit_sums.h"

namespace graphfs {

// What reading one slot of a row found.
struct SlotScan {
  uint32_t disk = 0;
  uint64_t length = 0;  // bytes the slot holds in this row; 0: none (zeros to the code)
  // Why none of its bytes could be read: its disk or part is lost for the file (RowScanner::lost),
  // or the read failed (read_error). Empty when it was read.
  std::string failed;
  bool read_error = false;            // the part's read failed (EIO: a bad sector); its sums were read
  // The disk is there but missed a write of this row while it was lost (stale_rows.h): its unit
  // is not read (failed says so) and must be rebuilt from the others.
  bool stale = false;
  std::vector<uint64_t> bad_blocks;   // blocks (of B bytes, from the unit's start) that failed their sum
  bool read = false;                  // asked for and read (or failed trying)

  // Whether block `b` of this slot can serve as a source: read, and not bad. Blocks past the
  // slot's length are zeros and always good.
  bool BlockGood(uint64_t b, uint64_t sum_block) const;
};

class RowScanner {
 public:
  // Opens the file's part and sums on every disk of `disks` but `skip` (a disk the caller
  // rebuilds elsewhere; its slots count as lost). A missing disk, a part that is not there, a
  // sums file that is missing or damaged, or a part shorter than its sums header says make that
  // disk lost for the file (lost(d) says why). A disk the file's write-intent records name
  // (stale_rows.h) is opened, but its slots of the rows they mark read as failed (SlotScan::
  // stale). `writable`: repairs may be written to the parts and sums — and a disk with no part or
  // sums of the file whose records mark every row (the file was created while it was missing) gets
  // both made, empty, so that the resync writes every row into them. EINVAL for a file without
  // sums.
  static Result<std::unique_ptr<RowScanner>> Open(const DiskSet& disks, const StripeManifest& m, bool writable,
                                                  std::optional<uint32_t> skip = std::nullopt);

  const StripeMap& map() const { return map_; }
  const StripeManifest& manifest() const { return m_; }
  uint64_t sum_block() const { return m_.sum_block; }
  uint64_t rows() const { return map_.Rows(m_.stored_size()); }
  // Bytes of row `row`'s longest unit: how long its buffers are used.
  uint64_t row_length(uint64_t row) const { return map_.RowUnitLength(row, 0, m_.stored_size()); }
  uint64_t blocks(uint64_t row) const { return (row_length(row) + m_.sum_block - 1) / m_.sum_block; }
  // Why disk `disk`'s units of this file cannot be read; empty when they can.
  const std::string& lost(uint32_t disk) const { return disks_[disk].lost; }
  const std::string& where(uint32_t disk) const { return disks_[disk].where; }
  // The rows disk `disk` missed while it was lost, when the file's records name it.
  const std::optional<StaleRows>& stale(uint32_t disk) const { return disks_[disk].stale; }
  // A resync of disk `disk` is done (every row its records mark rewritten): its part and its sums
  // are cut to the file's size (it may have shrunk while the disk was lost) — the sums of the
  // last row's blocks past the disk's unit made zero blocks' — and their header says the part's
  // length. Sync makes it durable.
  Status CutToFile(uint32_t disk);

  // Reads the slots of row `row` that `want` lists (all when empty) into their buffers and
  // checks each block against its sum; one entry per slot of the row (slots not asked for have
  // read == false). Adds the bytes read per disk to `bytes_read` (N entries) when given.
  std::vector<SlotScan> Read(uint64_t row, std::span<const uint32_t> want = {},
                             std::vector<uint64_t>* bytes_read = nullptr);
  // The buffer of slot `slot`: the row's bytes after Read (row_length of them).
  std::span<char> unit(uint32_t slot) { return {units_[slot].data(), units_[slot].size()}; }

  // Rebuilds bytes [begin, begin+length) of the slots `lost` (at most K) from the same range of
  // the others' buffers. EINVAL beyond K or without parity.
  Status Rebuild(uint64_t row, std::span<const uint32_t> lost, uint64_t begin, uint64_t length);
  // The parity slots whose buffers differ from what the row's data buffers encode to (K > 0).
  Result<std::vector<uint32_t>> ParityMismatches(uint64_t row);

  // Writes blocks [first_block, first_block + count) of slot `slot`'s buffer to its disk, or their
  // sums to its sums file (the sums of what the buffer holds). EBADF unless opened writable.
  Status WriteBlocks(uint64_t row, uint32_t slot, uint64_t first_block, uint64_t count);
  Status WriteSums(uint64_t row, uint32_t slot, uint64_t first_block, uint64_t count);
  // Whether the sums of slot `slot` were read by the last Read (they are, whenever its disk is
  // not lost and its sums file answered, even when the part's read failed), and the sum stored
  // for its block `block`.
  bool HasSums(uint32_t slot) const { return !sums_[slot].empty(); }
  uint64_t StoredSum(uint32_t slot, uint64_t block) const { return sums_[slot][block]; }
  // Makes what was written durable.
  Status Sync();

 private:
  struct Disk {
    std::unique_ptr<DiskBackend> backend;
    std::unique_ptr<DiskFile> part;
    std::optional<UnitSums> sums;
    std::string lost;
    std::string where;  // "disk 2 (/disks/2)"
    std::optional<StaleRows> stale;
    bool dirty = false;
  };
  RowScanner(const StripeManifest& m, StripeMap map) : m_(m), map_(map) {}
  // The bytes [begin, end) of slot's unit in `row` that sum blocks [first_block, first_block +
  // count) cover (cut at the unit's end; empty past it).
  std::pair<uint64_t, uint64_t> BlockSpan(uint64_t row, uint32_t slot, uint64_t first_block, uint64_t count) const;

  StripeManifest m_;
  StripeMap map_;
  std::optional<ParityCodec> codec_;
  bool writable_ = false;
  std::vector<Disk> disks_;
  std::vector<std::string> units_;               // per slot: a unit's bytes
  std::vector<std::vector<uint64_t>> sums_;      // per slot: its stored sums, as last read
  uint64_t row_ = UINT64_MAX;                    // the row in the buffers
};

}  // namespace graphfs
