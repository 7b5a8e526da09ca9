// graphfs-unstripe of a file with parity and sums: its bytes read row by row through the parity,
// every block verified, so that a plain file comes back with up to K disks missing, failing or
// holding bad blocks (docs/parity.md, "The default K": "graphfs-unstripe restores the plain file,
// also with up to K disks missing"). A compressed file's packed stream is read so too, and each
// of its frames decoded (its own checksum checked) as graphfs-unstripe decodes any.
#include <algorithm>
#include <set>

#include "striping/packed_stream.h"
#include "striping/restripe_detail.h"
#include "striping/row_scan.h"

namespace graphfs::restripe_detail {

namespace {

// Rebuilds, in the scanner's buffers, every block of row `row` that `scans` found bad or could
// not read, from the row's good blocks; counts the data blocks rebuilt. EIO naming the row,
// block and disks where more than K units are bad.
Status RepairRow(RowScanner& s, uint64_t row, const std::vector<SlotScan>& scans, uint64_t& rebuilt_blocks) {
  const StripeMap& map = s.map();
  const uint64_t b = s.sum_block();
  for (uint64_t blk = 0; blk < s.blocks(row); ++blk) {
    std::vector<uint32_t> bad;
    std::string why;
    for (uint32_t slot = 0; slot < scans.size(); ++slot) {
      if (scans[slot].BlockGood(blk, b)) continue;
      bad.push_back(slot);
      why += "; disk " + std::to_string(scans[slot].disk) + ": " +
             (scans[slot].failed.empty() ? "checksum" : scans[slot].failed);
    }
    if (bad.empty()) continue;
    if (bad.size() > map.parity())
      return Error(EIO, "row " + std::to_string(row) + ", block " + std::to_string(blk) + ": " +
                            std::to_string(bad.size()) + " of the row's units are bad there" + why + "; parity " +
                            std::to_string(map.parity()) + " cannot rebuild them");
    const uint64_t begin = blk * b;
    GRAPHFS_RETURN_IF_ERROR(s.Rebuild(row, bad, begin, std::min(b, s.row_length(row) - begin)));
    for (uint32_t slot : bad) rebuilt_blocks += slot < map.data_units() && begin < scans[slot].length;
  }
  return Status::Ok();
}

// A packed stream's bytes at any offset, read through the parity a row at a time. The row read
// last stays in the scanner's buffers: frames are read in order and one may span rows, so each
// row is read once (the directory's, at the end, once more). Rebuilt blocks are counted once
// per row.
class StreamThroughParity {
 public:
  explicit StreamThroughParity(RowScanner& s) : s_(s) {}

  Status Read(uint64_t offset, uint64_t length, char* to) {
    const StripeMap& map = s_.map();
    const uint64_t unit = map.unit(), stored = s_.manifest().stored_size();
    if (offset > stored || length > stored - offset)
      return Error(EIO, "bytes " + std::to_string(offset) + "+" + std::to_string(length) +
                            " lie past the packed stream's end (" + std::to_string(stored) + ")");
    for (uint64_t at = offset; at < offset + length;) {
      const uint64_t row = map.RowOf(at);
      if (row != row_) {
        row_ = UINT64_MAX;
        const std::vector<SlotScan> scans = s_.Read(row);
        uint64_t rebuilt = 0;
        GRAPHFS_RETURN_IF_ERROR(RepairRow(s_, row, scans, rebuilt));
        if (counted_.insert(row).second) rebuilt_blocks_ += rebuilt;
        row_ = row;
      }
      const uint32_t column = static_cast<uint32_t>((at / unit) % map.data_units());
      const uint64_t within = at % unit, n = std::min(unit - within, offset + length - at);
      std::copy_n(s_.unit(column).data() + within, n, to + (at - offset));
      at += n;
    }
    return Status::Ok();
  }
  uint64_t rebuilt_blocks() const { return rebuilt_blocks_; }

 private:
  RowScanner& s_;
  uint64_t row_ = UINT64_MAX;  // the row in the scanner's buffers, repaired
  std::set<uint64_t> counted_;
  uint64_t rebuilt_blocks_ = 0;
};

}  // namespace

Status CopyThroughParity(const DiskSet& disks, const StripeManifest& m, const DataSink& out, uint64_t& rebuilt_blocks) {
  auto scan = RowScanner::Open(disks, m, /*writable=*/false);
  if (!scan.ok()) return scan.error();
  RowScanner& s = **scan;
  const StripeMap& map = s.map();
  for (uint64_t row = 0; row < s.rows(); ++row) {
    const std::vector<SlotScan> scans = s.Read(row);
    GRAPHFS_RETURN_IF_ERROR(RepairRow(s, row, scans, rebuilt_blocks));
    for (uint32_t c = 0; c < map.data_units(); ++c) {
      const uint64_t length = scans[c].length;
      if (length == 0) break;  // the last row's data ends here
      GRAPHFS_RETURN_IF_ERROR(out(map.SlotFileOffset(row, c), s.unit(c).data(), length));
    }
  }
  return Status::Ok();
}

Status CopyPackedThroughParity(const DiskSet& disks, const StripeManifest& m, const DataSink& out,
                               uint64_t& rebuilt_blocks) {
  if (!m.packed) return Error(EINVAL, "striped file " + m.file_id + " is not compressed");
  auto scan = RowScanner::Open(disks, m, /*writable=*/false);
  if (!scan.ok()) return scan.error();
  StreamThroughParity stream(**scan);
  const StreamRead read = [&stream](uint64_t offset, uint64_t length, char* to) {
    return stream.Read(offset, length, to);
  };
  auto dir = ReadPackedDirectory(read, *m.packed);
  if (!dir.ok()) return dir.error();
  if (dir->raw_size() != m.size)
    return Error(EIO, "its compressed units hold " + std::to_string(dir->raw_size()) + " bytes, the manifest says " +
                          std::to_string(m.size));
  Status copied = ForEachPackedUnit(read, *dir, [&](const PackedUnit& u, std::span<const char> raw) {
    return out(u.raw_offset, raw.data(), raw.size());
  });
  rebuilt_blocks += stream.rebuilt_blocks();
  return copied;
}

}  // namespace graphfs::restripe_detail
