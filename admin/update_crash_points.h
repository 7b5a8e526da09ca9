// The points of graphfs-update's in-place sequence at which GRAPHFS_CRASH_AT=<name> kills it
// (common/crash_point.h), in the order a run reaches them: the states a killed run can leave,
// which the next run's recovery (RecoverUpdate, graph_update.h) must turn into the old version or
// the new one, whole. tests/admin/update_crash_test.cc stops a run at each and checks that; a
// point added here is tested there without more code. `.NAME.update/` is the staging directory.
// The three points of the version's files (blocks, files, meta) are also reached by a run with
// -o, which writes the same files into OUTPUT (version_writer.cc).
#pragma once

#include <array>
#include <string_view>

#include "common/crash_point.h"

namespace graphfs::admin {

inline constexpr std::string_view kCrashStagingMade = "staging-made";
inline constexpr std::string_view kCrashNumbered = "numbered";
inline constexpr std::string_view kCrashBlocksWritten = "blocks-written";
inline constexpr std::string_view kCrashFilesWritten = "files-written";
inline constexpr std::string_view kCrashMetaWritten = "meta-written";
inline constexpr std::string_view kCrashIndexed = "indexed";
inline constexpr std::string_view kCrashSynced = "synced";
inline constexpr std::string_view kCrashSwapped = "swapped";
inline constexpr std::string_view kCrashOldNamed = "old-named";

inline constexpr std::array<CrashPointInfo, 9> kUpdateCrashPoints = {{
    {kCrashStagingMade, "`.NAME.update/` and its `.graphfs/` made, nothing written in them"},
    {kCrashNumbered, "the new version's number (`.graphfs/version`) written, no graph file yet"},
    {kCrashBlocksWritten, "every block written or linked (and the delta piece); no offsets, column, row, meta"},
    {kCrashFilesWritten, "offsets, column and row written (compacted if it was); no meta"},
    {kCrashMetaWritten, "meta written (the staging directory is a whole graph); no index, keep count or sync"},
    {kCrashIndexed, "the new version indexed (when the old one had an index)"},
    {kCrashSynced, "the keep count written and the staging directory synced: the last point before the swap"},
    {kCrashSwapped, "swapped: GRAPH is the new version, the old one is `.NAME.update/`"},
    {kCrashOldNamed, "the old version renamed `NAME@N`; old versions not reclaimed yet"},
}};

}  // namespace graphfs::admin
