// A disk's state as the mount reports it (`.graphfs/stats`; docs/parity.md, "Reads", step 5):
// what the disk set found when it was opened (a missing disk) joined with what reads of the
// I/O engine found since (DiskCounters). disk_set.h's DiskState says what each state means.
#pragma once

#include <cstdint>

#include "striping/disk_set.h"
#include "striping/io_engine.h"

namespace graphfs {

// kMissing when the set found no disk there; else kAvoided while the engine leaves its reads
// alone (IoEngine::failing: reads returned errors and no probe has succeeded since); else
// kFailing once any of its I/O failed or a block read from it did not match its sum since the
// engine started (errors, checksum_errors: counted, like ZFS's, until the next mount); else
// kHealthy. `disk` < both sizes.
DiskState CurrentDiskState(const DiskSet& disks, const IoEngine& io, uint32_t disk);

}  // namespace graphfs
