// graphfs-unstripe of a file with parity and sums: its bytes read row by row through the parity,
// every block verified, so that a plain file comes back with up to K disks missing, failing or
// holding bad blocks (docs/parity.md, "The default K": "graphfs-unstripe restores the plain file,
// also with up to K disks missing").
#include <algorithm>

#include "striping/restripe_detail.h"
#include "striping/row_scan.h"

namespace graphfs::restripe_detail {

Status CopyThroughParity(const DiskSet& disks, const StripeManifest& m, const DataSink& out, uint64_t& rebuilt_blocks) {
  auto scan = RowScanner::Open(disks, m, /*writable=*/false);
  if (!scan.ok()) return scan.error();
  RowScanner& s = **scan;
  const StripeMap& map = s.map();
  const uint64_t b = m.sum_block;
  for (uint64_t row = 0; row < s.rows(); ++row) {
    const std::vector<SlotScan> scans = s.Read(row);
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
    for (uint32_t c = 0; c < map.data_units(); ++c) {
      const uint64_t length = scans[c].length;
      if (length == 0) break;  // the last row's data ends here
      GRAPHFS_RETURN_IF_ERROR(out(map.SlotFileOffset(row, c), s.unit(c).data(), length));
    }
  }
  return Status::Ok();
}

}  // namespace graphfs::restripe_detail
