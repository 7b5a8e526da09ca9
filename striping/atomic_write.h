// WriteFileAtomic (disk_set.h) with a crash point (common/crash_point.h) between the temporary
// copy's sync and its rename: a kill there leaves `PATH.tmp.PID` synced beside PATH, the state a
// tool's rerun must clean up (graphfs-rebuild's points, rebuild_crash_points.h). Apart from
// disk_set.h, which most of the tree includes. Defined in disk_set.cc.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace graphfs {

// `crash_point` empty: WriteFileAtomic itself.
Status WriteFileAtomicCrashingAt(const std::string& path, const std::string& content, std::string_view crash_point);

}  // namespace graphfs
