// Whether a graph is served by a running graphfs mount, and handing a whole-set task to its
// daemon (graphfs-rebuild and graphfs-scrub while mounted; docs/parity.md): the daemon runs the
// same code under the rows' locks and, for a rebuild, switches its reads to the new disk without a
// remount, which an offline run beside the mount cannot do.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/result.h"

namespace graphfs {

struct LiveMount {
  std::string mountpoint;
  // The directory the mount serves: its fsname, SOURCE as given on graphfs's command line (a relative
  // one is resolved from this process's directory, so it matches only when run from where graphfs was).
  std::string source;
};

// The graphfs mount (type fuse.graphfs in /proc/self/mountinfo) whose source is `path` or a
// directory above it; the newest when several are. nullopt when none is (or `path` is not there).
std::optional<LiveMount> FindLiveMount(const std::string& path);

// Writes `line` ("rebuild I DIR RATE", "scrub RATE") to MOUNT/.graphfs/disks and follows the task
// it starts until it ends, drawing a progress line labelled `tool` when `progress`. The task's
// last status when it is done (its "report" inside) — else an error: the one the write returned
// (the daemon refused the line: EINVAL, EBUSY, ... with the reason, which its status and log hold
// too), ENOTCONN for a dead mount, or EIO "the mount's rebuild failed: WHY" (or stopped) for a
// task that ended otherwise.
Result<nlohmann::json> RunInDaemon(const LiveMount& mount, const std::string& line, bool progress, const char* tool);

// The state the mount gives disk `disk` of its set when it reads it from `dir` (absolute) and it
// is neither missing nor stale (MOUNT/.graphfs/disks: its path and state): a rebuild onto `dir` is
// then done — its daemon switched the disk in once it was read back, or mounted it from the
// registries, whose identity it checked — and a rerun has nothing to hand over. "failing" or
// "avoided" count: they are I/O errors seen since, which a rebuild onto the same directory would
// not mend. nullopt otherwise. Errors: the file unread or not the JSON the daemon writes.
Result<std::optional<std::string>> MountReadsDiskFrom(const LiveMount& mount, uint32_t disk, const std::string& dir);

}  // namespace graphfs
