// The sums file of one part (docs/parity.md, "Checksums"): the XXH3-64 of every block of B bytes
// of every unit a disk holds of a striped file — data or parity — kept on that same disk as
// DISK/parts/ID.sums (through its DiskBackend), so that a lost disk takes only its own sums
// with it. A read verifies the blocks it gets against them before serving a byte or feeding a
// unit to reconstruction (row_repair.h), which is how a flipped bit on a raw part is found.
//
// Format (all integers little-endian):
//   [0, 4096)  header: "GFSUMS1\n", unit S, block B, the part's expected length, the disk's
//              index, the layout's disks / first disk / parity, the file id (u16 length +
//              bytes), zeros, and at 4088 the XXH3-64 of bytes [0, 4088).
//   then       one u64 per block: block b of the unit of row r at 4096 + (r*S/B + b)*8.
// A stored sum is XXH3-64 of the block padded with zeros to B bytes, XOR the XXH3-64 of B
// zero bytes: an all-zero block's sum is 0. So a hole in the sums file — entries never written,
// as past the end of a file grown by truncate — stands for zero blocks, just as a hole in the
// part reads as zeros and codes to zero parity; and the last, short block of a unit keeps its
// sum when the file grows.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "striping/disk_backend.h"
#include "striping/manifest.h"
#include "striping/stripe_map.h"

namespace graphfs {

inline constexpr uint64_t kSumsHeaderSize = 4096;

struct SumsHeader {
  std::string file_id;       // at most kMaxFileId bytes
  uint32_t disk = 0;         // the disk's index in the set: which slot of each row it holds
  StripeLayout layout;       // the file's
  uint64_t sum_block = 0;    // B: a power of two that divides layout.unit
  uint64_t part_length = 0;  // the part's length when its sums were written
  static constexpr size_t kMaxFileId = 1024;
};

// The header file `m`'s sums on disk `disk` must have (all but the part's length, which is 0).
SumsHeader SumsHeaderOf(const StripeManifest& m, uint32_t disk);
// The header's 4096 bytes. The header must be valid (CheckSumsHeader).
std::string EncodeSumsHeader(const SumsHeader& header);
// EIO "damaged sums header: ..." for anything EncodeSumsHeader would not have written.
Result<SumsHeader> DecodeSumsHeader(std::span<const char> bytes);
// EINVAL naming the field unless the layout is one StripeMap takes, disk < disks, B is a power
// of two that divides the unit and the file id fits.
Status CheckSumsHeader(const SumsHeader& header);

// The stored sum of one block (at most B bytes; a shorter one is the end of its unit).
uint64_t BlockSum(std::span<const char> block, uint64_t sum_block);
// The same of a block that lies in pieces (at most B bytes in all, in order): a read placed
// straight into the caller's buffers, whose boundaries need not fall on blocks.
uint64_t BlockSumOfPieces(std::span<const std::span<const char>> pieces, uint64_t sum_block);
// The stored sums of `bytes` cut into blocks of B from its start (the last may be shorter).
std::vector<uint64_t> BlockSums(std::span<const char> bytes, uint64_t sum_block);
// Checks `bytes` (blocks of B from its start, the last may be shorter) against `sums`, one
// per block. EINVAL for a count that does not fit; EIO naming WHAT, the block
// (`first_block` + its index) and the stored and read sums for the first that differs.
Status VerifyBlockSums(std::span<const char> bytes, uint64_t sum_block, std::span<const uint64_t> sums,
                       uint64_t first_block, const std::string& what);

// One part's sums file, open through its disk's backend.
class UnitSums {
 public:
  static std::string FileName(const std::string& file_id) { return file_id + ".sums"; }
  // Offset in the sums file of block `block` of the unit of row `row`.
  static uint64_t Offset(uint64_t row, uint64_t block, uint64_t unit, uint64_t sum_block) {
    return kSumsHeaderSize + (row * (unit / sum_block) + block) * 8;
  }

  // Makes an empty sums file with `header` (replacing one that was there) and syncs it.
  static Result<UnitSums> Create(DiskBackend& disk, const SumsHeader& header);
  // Opens the sums file of `expected.file_id` and checks its header against `expected` (all
  // but part_length, which the file's header gives): EIO naming the field that differs, or the
  // damage. ENOENT when there is none.
  static Result<UnitSums> Open(DiskBackend& disk, const SumsHeader& expected, bool writable);

  const SumsHeader& header() const { return header_; }

  // Writes the sums of blocks [first_block, first_block + sums.size()) of row `row`'s unit.
  Status Write(uint64_t row, uint64_t first_block, std::span<const uint64_t> sums);
  // Reads `count` sums from block `first_block` of row `row`'s unit; entries past the end of
  // the file are 0 (the sum of a zero block).
  Result<std::vector<uint64_t>> Read(uint64_t row, uint64_t first_block, uint64_t count);
  // Reads `count` sums from entry `first` of the file (entry r*S/B + b is block b of row r's
  // unit): pages of sums across rows, for a reader that keeps them. Entries past the end are 0.
  Result<std::vector<uint64_t>> ReadEntries(uint64_t first, uint64_t count);
  // Records the part's new length in the header.
  Status SetPartLength(uint64_t part_length);
  // EIO when the part, `part_size` bytes long now, is shorter than the header says: it was cut
  // behind our back, and its lost bytes would read as zeros.
  Status CheckPartLength(uint64_t part_size) const;
  Status Sync() { return file_->Sync(); }
  // Drops the sums of every row from `rows` on (a file cut short: its rows past the end must
  // read as zero blocks again if it grows). A file that holds none of them is left as it is.
  Status CutRows(uint64_t rows) {
    const uint64_t end = Offset(rows, 0, header_.layout.unit, header_.sum_block);
    auto size = file_->Size();
    if (!size.ok()) return size.error();
    return *size > end ? file_->Truncate(end) : Status::Ok();
  }

 private:
  UnitSums(std::unique_ptr<DiskFile> file, SumsHeader header) : file_(std::move(file)), header_(std::move(header)) {}
  std::unique_ptr<DiskFile> file_;
  SumsHeader header_;
};

}  // namespace graphfs
