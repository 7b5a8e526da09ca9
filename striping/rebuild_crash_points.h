// The points of graphfs-rebuild's run (rebuild.h, offline) at which GRAPHFS_CRASH_AT=<name> kills
// it (common/crash_point.h), in the order a run reaches them: the states a killed run can leave
// between its durable steps, from which a rerun with the same arguments must resume and end with
// the lost disk's parts and sums byte for byte, and nothing else, on the new directory DIR.
// tests/striping/rebuild_crash_test.cc stops a run at each and checks that; a point added here is
// tested there without more code. Each point kills the run the first time it is reached: the
// points inside the row loop (unit-written, checkpoint-*, unit-past-checkpoint) and part-ended,
// file-done in the first file that reaches them. `.graphfs-rebuild.json` is the progress record
// (kRebuildRecordFile); DIR.../X.tmp.PID is WriteFileAtomic's temporary copy of X. The mount's
// daemon never arms a point: only the tool's own run (--offline, or no mount serving the set)
// stops at them.
#pragma once

#include <array>
#include <string_view>

#include "common/crash_point.h"

namespace graphfs {

inline constexpr std::string_view kRebuildCrashRecordTmp = "record-tmp";
inline constexpr std::string_view kRebuildCrashStarted = "started";
inline constexpr std::string_view kRebuildCrashUnitWritten = "unit-written";
inline constexpr std::string_view kRebuildCrashCheckpointSynced = "checkpoint-synced";
inline constexpr std::string_view kRebuildCrashCheckpointTmp = "checkpoint-tmp";
inline constexpr std::string_view kRebuildCrashCheckpointed = "checkpointed";
inline constexpr std::string_view kRebuildCrashUnitPastCheckpoint = "unit-past-checkpoint";
inline constexpr std::string_view kRebuildCrashPartEnded = "part-ended";
inline constexpr std::string_view kRebuildCrashFileDone = "file-done";
inline constexpr std::string_view kRebuildCrashReadBack = "read-back";
inline constexpr std::string_view kRebuildCrashIdentityTmp = "identity-tmp";
inline constexpr std::string_view kRebuildCrashIdentityStamped = "identity-stamped";
inline constexpr std::string_view kRebuildCrashRegistrySwitched = "registry-switched";
inline constexpr std::string_view kRebuildCrashRecordRemoved = "record-removed";

inline constexpr std::array<CrashPointInfo, 14> kRebuildCrashPoints = {{
    {kRebuildCrashRecordTmp,
     "the first progress record written to its temporary copy and synced, not renamed: DIR holds only that copy"},
    {kRebuildCrashStarted, "the progress record in place (set, disk, nothing done); no part or sums yet"},
    {kRebuildCrashUnitWritten,
     "the first row's unit and its sums written to DIR/parts (not synced); the record says nothing of them"},
    {kRebuildCrashCheckpointSynced,
     "a checkpoint's part, sums and names synced; the record still names the rows before them"},
    {kRebuildCrashCheckpointTmp, "the checkpoint's record written to its temporary copy and synced, not renamed"},
    {kRebuildCrashCheckpointed, "the record names the file in progress and the first row not yet durable"},
    {kRebuildCrashUnitPastCheckpoint,
     "a unit and its sums written past the record's row: the part holds more rows than the record says"},
    {kRebuildCrashPartEnded,
     "the first file's part cut to its length, its sums' length set, both synced; the record does not name the "
     "file done"},
    {kRebuildCrashFileDone, "the record names the first file done; the next not begun"},
    {kRebuildCrashReadBack,
     "every row written and read back, every part's length checked; write-intent records not cleared, no identity"},
    {kRebuildCrashIdentityTmp, "DIR's identity (.graphfs-disk) written to its temporary copy and synced, not renamed"},
    {kRebuildCrashIdentityStamped,
     "DIR has the disk's identity; every registry still names the lost disk; the record is still there"},
    {kRebuildCrashRegistrySwitched,
     "the first graph's registry names DIR, the other graphs' not yet; the record is still there"},
    {kRebuildCrashRecordRemoved,
     "the record removed: the rebuild is done but for the tool's report (a rerun finds the disk rebuilt: "
     "\"DIR already\", nothing written, exit 0)"},
}};

}  // namespace graphfs
