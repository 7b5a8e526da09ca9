// Whether a graphfs-rebuild has nothing left to do because disk I already is DIR (docs/parity.md,
// "graphfs-rebuild"): a rerun after a finished run — one killed after it removed its progress
// record, or one run twice — must say so and succeed rather than fail, and only when what is on
// the disks proves it. A finished run leaves exactly what the disk itself would hold, so the same
// proof holds for a disk never lost: the message says "rebuilt there, or never lost".
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "striping/disk_set.h"
#include "striping/set_files.h"

namespace graphfs {

// `to` (absolute) carries disk `disk`'s identity in the set of `found` and no progress record
// (CheckTarget found so). Ok when it is the disk in place: every registry of the graphs found
// names `to` for the disk, the set opens with it and no write-intent record names it (it missed
// no write), and it holds each file's part (as long as its share) and sums. Else EEXIST saying
// which of these fails and what to do instead (nothing was written). Returns how many of the files
// have a part on the disk.
Result<uint64_t> CheckRebuiltInPlace(const SetFiles& found, DiskRegistry registry, uint32_t disk, const std::string& to);

}  // namespace graphfs
