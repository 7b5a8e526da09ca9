// WriteFileAtomic (disk_set.h) with a crash point (common/crash_point.h) between the temporary
// copy's sync and its rename: a kill there leaves `PATH.tmp.PID` synced beside PATH, the state a
// tool's rerun must clean up (graphfs-rebuild's points, rebuild_crash_points.h). Apart from
// disk_set.h, which most of the tree includes. Defined in disk_set.cc.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace graphfs {

// `crash_point` empty: WriteFileAtomic itself. Removes the copies of `path` that dead writers left
// first (RemoveDeadWritersCopies).
Status WriteFileAtomicCrashingAt(const std::string& path, const std::string& content, std::string_view crash_point);

// The writer's pid when `name` is a temporary copy WriteFileAtomic made of a file named `of`
// (`of.tmp.PID`, PID decimal digits only); nullopt for any other name.
std::optional<pid_t> TemporaryCopyPid(std::string_view name, std::string_view of);

// Removes the temporary copies of `path` whose writer is no process any more: one killed between
// its copy's sync and its rename leaves it, and nothing else would ever remove it (disks.json's
// directory, a disk's root). A copy whose pid is alive is kept — another writer's, under way,
// whose rename must find it (or, the pid reused since, left for a later writer). EIO-like errors
// of the removal name the copy; a directory that cannot be listed is left to the write to report.
Status RemoveDeadWritersCopies(const std::string& path);

}  // namespace graphfs
