// The control directory MOUNTPOINT/.graphfs/: files a shell can read and write.
//   stats  JSON snapshot: bytes and requests per disk, read-ahead, mount counters.
//   fault  (root only) "DISK ERRNO" makes every I/O to DISK fail with ERRNO, "DISK 0"
//          clears it; for fault-injection tests.
//   disks  JSON: the disk set, each disk's path and state, the disks missing, the running or last
//          rebuild or scrub (progress, outcome). Root or the mount's owner writes one line to
//          start one: "rebuild I DIR [RATE]" (missing disk I onto the empty directory DIR, then
//          read from there without a remount) or "scrub [RATE]" (docs/parity.md); a write that
//          cannot start returns the error (EINVAL, EBUSY, ...) and the log says why.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/result.h"

namespace graphfs {

struct GraphFs;
struct Inode;

inline constexpr const char* kControlDirName = ".graphfs";

const std::vector<const char*>& ControlFileNames();
void FillControlStat(const Inode& inode, struct stat* st);
// Content a reader of the file sees, generated at open. Checks permissions for writers.
Result<std::string> OpenControlFile(GraphFs& fs, const Inode& inode, int flags, uid_t caller);
Status WriteControlFile(GraphFs& fs, const Inode& inode, const std::string& data, uid_t caller);
std::string RenderStats(GraphFs& fs);
// {"by_use", "lps"} of stats.memory as of now, and stats.memory_budget (for the peak sampler,
// fusefs/memory_peak.h): priced as RenderStats prices them, from the volume's memory figures
// alone (volume::Volume::AddMemoryStats), so that sampling costs little.
nlohmann::json MemoryByUseNow(GraphFs& fs);

}  // namespace graphfs
