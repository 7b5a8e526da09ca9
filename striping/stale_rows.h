// The write-intent record of a striped file with parity (docs/parity.md, "Writes with a disk
// lost"): which rows were written while disk L was lost, md's write-intent bitmap per file and
// lost disk. A write with a disk lost changes the row's parity (and the lost disk's unit, if it
// touches it) on the present disks only: the lost disk keeps its old units and their old sums,
// which still agree. Should it come back (its directory there again at the next mount), those
// rows must never be read from it — they are rebuilt from the others — until a resync rewrote
// them (graphfs-scrub) or the disk was rebuilt whole (graphfs-rebuild).
//
// One file per present disk, DISK/parts/ID.stale-L through the disk's backend (every present
// disk holds a copy, so any one of them tells; readers take the union):
//   [0, 4096)   header: "GFSTALE1", the lost disk L (u32), the row's units N (u32), the file id
//               (u16 length + bytes, from byte 16), XXH3-64 of [0, 4088) at 4088.
//   4096 + r/8  bit r % 8 (least significant first): row r was written while L was lost.
// Bits are only ever set (one byte per write of it, then fsync: a sector write either lands or
// does not), and the file is removed whole once every marked row was rewritten on L and fsynced.
// The record is written and fsynced on every present disk before the journal entry of the row
// (row_journal.h): a row is never changed in place without its bit durable. A header that does
// not verify stands for "every row" (the safe side).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "striping/disk_backend.h"
#include "striping/disk_set.h"

namespace graphfs {

// What the records of one file and one lost disk say.
struct StaleRows {
  bool all = false;            // a record whose header did not verify: every row
  std::vector<uint8_t> bits;   // the union of the records' bitmaps
  bool Has(uint64_t row) const {
    return all || (row / 8 < bits.size() && (bits[row / 8] >> (row % 8) & 1) != 0);
  }
  // Rows below `rows` marked (all of them when `all`).
  uint64_t Count(uint64_t rows) const;
  // Sets the bits of rows [first, end), growing the bitmap to hold them.
  void Mark(uint64_t first, uint64_t end);
};

// "ID.stale-L".
std::string StaleRecordName(const std::string& file_id, uint32_t lost_disk);
// The lost disk a record's file name is of ("ID.stale-3" → 3), for the mount's scan of a disk's
// parts directory; nullopt for any other name.
std::optional<uint32_t> StaleRecordDisk(const std::string& name);

// The records of `file_id` for lost disk `lost`, read from every disk of `disks` but `lost` that
// is there: nullopt when none holds one (the disk missed no write of the file).
Result<std::optional<StaleRows>> LoadStaleRows(const DiskSet& disks, const std::string& file_id, uint32_t lost);
// Removes them from every disk that is there (their names made durable): once every row they
// mark was rewritten on `lost` and fsynced.
Status ClearStaleRows(const DiskSet& disks, const std::string& file_id, uint32_t lost);
// Whether any record for lost disk `lost` is left on a disk of the set that is there (a listing
// of each disk's parts directory).
bool AnyStaleRecordFor(const DiskSet& disks, uint32_t lost);

// The writer's side: marks rows of one file for the disks lost to it, on the disks present to it.
class StaleRowsWriter {
 public:
  // `lost[d]`: disk d is lost for the file (its writes land on the others only). Loads what the
  // records already mark, so that a row is written to them once.
  static Result<std::unique_ptr<StaleRowsWriter>> Open(const DiskSet& disks, const std::string& file_id,
                                                       uint32_t units, const std::vector<bool>& lost);
  // Marks rows [first, end) for every lost disk, durable on every present disk when this
  // returns Ok. Nothing is written for rows marked already.
  Status Mark(uint64_t first, uint64_t end);
  // Disk `disk` is back for this file's writes (a rebuilt disk switched in): no more marks for it.
  void Forget(uint32_t disk);

 private:
  struct Lost {
    uint32_t disk = 0;
    StaleRows rows;
    bool created = false;  // the record files exist on the present disks
  };
  StaleRowsWriter(std::string file_id, uint32_t units) : file_id_(std::move(file_id)), units_(units) {}
  Status Create(Lost& l);

  const std::string file_id_;
  const uint32_t units_;
  std::vector<std::unique_ptr<DiskBackend>> present_;  // one per present disk
  std::vector<Lost> lost_;
};

}  // namespace graphfs
