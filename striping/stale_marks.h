// The rows of one open striped file that a disk which came back missed (docs/parity.md, "Writes
// with a disk lost"), as that file's reads see them: loaded from the write-intent records
// (stale_rows.h) when the file is opened, and grown by the file's own writer, which treats the
// disk as lost and marks every row it writes. A read serves the disk's units of the rows not
// marked, and rebuilds the marked ones from the rest of their row, so that nothing the disk
// missed is ever served while the rest of it still carries its share of the reads.
//
// Shared by every list of parts a read was planned with (ParityReader::AdoptDisk publishes new
// lists while reads run), and marked by the writer while no read runs (StripedFile's ReadGate);
// a mutex keeps it right without leaning on that.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>

#include "striping/stale_rows.h"

namespace graphfs {

class StaleMarks {
 public:
  // `why`: what a read failing over the disk's marked rows says ("disk /d1 is stale: ...").
  StaleMarks(StaleRows rows, std::string why) : rows_(std::move(rows)), why_(std::move(why)) {}

  bool Has(uint64_t row) const {
    std::lock_guard<std::mutex> lock(mu_);
    return rows_.Has(row);
  }
  // Rows [first, end) are about to change on the other disks only.
  void Mark(uint64_t first, uint64_t end) {
    std::lock_guard<std::mutex> lock(mu_);
    rows_.Mark(first, end);
  }
  const std::string& why() const { return why_; }

 private:
  mutable std::mutex mu_;
  StaleRows rows_;
  const std::string why_;
};

}  // namespace graphfs
