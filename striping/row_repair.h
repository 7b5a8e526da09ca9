// Rebuilding a byte range of some units of one stripe row from the rest of the row
// (docs/parity.md, "Reads: verified, degraded, self-healing", step 3): which D units to read,
// and the ParityCodec call that turns their bytes into the missing ones.
//
// The code works byte by byte, so rebuilding bytes [begin, begin+length) of a unit takes the
// same range of D others, not whole units. Units of the last row that are shorter than the
// range (or absent) count as zeros past their end, as when their parity was encoded: such a
// unit costs no read at all for the bytes past its end, and serves even from a failed disk.
//
// PlanRowRepair and RebuildRange are the pieces the asynchronous read path will use (it reads
// the sources on the disks' workers); RepairRange joins them with a synchronous reader for the
// tools (scrub, rebuild, unstripe with a disk missing), re-planning when a source fails too.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "striping/parity_codec.h"
#include "striping/stripe_map.h"

namespace graphfs {

// One unit of the row to read: `read_length` bytes at `disk_offset` of `disk` (the range's
// start within the unit), then zeros up to the range's length. read_length is 0 for a unit
// that holds none of the range.
struct RowSource {
  uint32_t slot;
  uint32_t disk;
  uint64_t disk_offset;
  uint64_t read_length;
};

struct RowRepairPlan {
  uint64_t row = 0;
  uint64_t begin = 0;             // the range, within each unit of the row
  uint64_t length = 0;
  std::vector<uint32_t> rebuild;  // the slots asked for, in the order they were given
  std::vector<RowSource> sources; // D units, in slot order
  // The slots ParityCodec::Reconstruct treats as lost: the ones asked for, and the unreadable
  // ones it would otherwise take as sources. At most K.
  std::vector<uint32_t> lost;
};

// Plans the rebuild of bytes [begin, begin+length) of the units in slots `rebuild` of row `row`
// of a file whose parts hold `stored_size` bytes (its packed stream's, if compressed), reading
// none of the slots in `failed` (missing or failing disks, sums that did not match; the slots
// asked for need not be listed). EINVAL for a slot >= N, a range past the unit, a row past the
// file or a layout without parity; EIO when fewer than D units are left to read from, naming
// every failed disk: "row 17: disks 1, 3 failed, parity 1".
Result<RowRepairPlan> PlanRowRepair(const StripeMap& map, uint64_t stored_size, uint64_t row,
                                    std::span<const uint32_t> rebuild, std::span<const uint32_t> failed,
                                    uint64_t begin, uint64_t length);

// The same, with why each failed slot failed, for the error: "row 17: disks 1, 3 failed (disk
// 1: why; disk 3: why), parity 1".
Result<RowRepairPlan> PlanRowRepair(const StripeMap& map, uint64_t stored_size, uint64_t row,
                                    std::span<const uint32_t> rebuild, std::span<const uint32_t> failed,
                                    uint64_t begin, uint64_t length, const std::map<uint32_t, std::string>& why);

// Rebuilds the plan's units. `sources[i]` holds plan.sources[i]'s bytes: plan.length bytes of
// which the first read_length were read (the rest is zeroed here). `out[j]` (plan.length bytes)
// receives the range of slot plan.rebuild[j].
Status RebuildRange(const ParityCodec& codec, const RowRepairPlan& plan, std::span<const std::span<char>> sources,
                    std::span<const std::span<char>> out);

// Reads `source.read_length` bytes of a unit into `out` (that long): verified against the
// unit's sums where it has them. An error marks the source's slot failed.
using RowSourceReader = std::function<Status(const RowSource& source, std::span<char> out)>;

// Plans, reads the sources through `read` and rebuilds, like the two calls above; a source whose
// read fails joins `failed` and the row is planned again, until D sources were read or more
// than K slots failed: EIO naming every failed disk with why ("row 17: disks 1, 3 failed (disk 1:
// ...; disk 3: ...), parity 1").
Status RepairRange(const StripeMap& map, const ParityCodec& codec, uint64_t stored_size, uint64_t row,
                   std::span<const uint32_t> rebuild, std::span<const uint32_t> failed, uint64_t begin,
                   std::span<const std::span<char>> out, const RowSourceReader& read);

}  // namespace graphfs
