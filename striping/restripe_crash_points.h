// The points of graphfs-stripe's parity change of a striped file (`--parity K` on a raw file
// striped with another K: StripeOne in restripe.cc copies it, in its own unit, into a new layout,
// then switches its stub to the copy) at which GRAPHFS_CRASH_AT=<name> kills it
// (common/crash_point.h), in the order a run reaches them: the states between its durable steps
// that a killed run can leave, from which a rerun with the same arguments must end with the file
// in the new layout, its bytes unchanged, and neither copy's leftovers on the disks.
// tests/striping/restripe_crash_test.cc stops a run at each and checks that; a point added here is
// tested there without more code. Each kills the run the first time it is reached, in the first
// file converted; a plain file being striped, or a file compressed (not a striped one `--compress
// auto` declines and copies raw), reaches none.
// `pending-parity/NAME.json` is the file's progress record (under the graph's .graphfs/).
#pragma once

#include <array>
#include <string_view>

#include "common/crash_point.h"

namespace graphfs {

inline constexpr std::string_view kStripeCrashParityRecord = "parity-record";
inline constexpr std::string_view kStripeCrashParityParts = "parity-parts";
inline constexpr std::string_view kStripeCrashParityCheckpointed = "parity-checkpointed";
inline constexpr std::string_view kStripeCrashParityCopied = "parity-copied";
inline constexpr std::string_view kStripeCrashParitySwitched = "parity-switched";
inline constexpr std::string_view kStripeCrashParityOldRemoved = "parity-old-removed";
inline constexpr std::string_view kStripeCrashParityRecordRemoved = "parity-record-removed";

inline constexpr std::array<CrashPointInfo, 7> kStripeCrashPoints = {{
    {kStripeCrashParityRecord, "the record names the copy (its new id, nothing copied); no part of the copy yet"},
    {kStripeCrashParityParts, "the copy's parts and sums made, empty; the record says nothing copied"},
    {kStripeCrashParityCheckpointed,
     "a checkpoint: the rows copied so far, their parity and sums synced, and the record says how far; the "
     "rest not copied"},
    {kStripeCrashParityCopied,
     "every row copied, the parts cut to length and synced, parity and sums finished; not verified; the stub "
     "names the old copy"},
    {kStripeCrashParitySwitched, "the stub names the new copy (synced); the old copy's parts are still on the disks"},
    {kStripeCrashParityOldRemoved, "the old copy's parts removed; the record is still there"},
    {kStripeCrashParityRecordRemoved,
     "the record removed: the file is done; the others not begun, the registry's parity not raised yet"},
}};

}  // namespace graphfs
