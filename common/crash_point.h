// Named points at which a tool can be made to die as `kill -9` would, so that a test reaches
// each state a killed run can leave on purpose: the kill tests that sleep a random time before
// the SIGKILL land only where the machine's speed lets them, and a state that lasts a few
// microseconds (graphfs-update's staging directory with its meta but not yet its number, which
// the next run misread: commit 36e26d3) may go unvisited for hundreds of runs.
//
// A tool lists its points in one table (name and what has happened when it is reached; e.g.
// admin/update_crash_points.h) and, at its start, arms the one that GRAPHFS_CRASH_AT names
// (ArmCrashPointFromEnvironment). A name outside the table is an error the tool reports and
// exits on: a test asking for a point that does not exist, or no longer does, must not pass by
// never dying. Code marks a point with CrashPoint(name). Nothing is armed in a process that never
// called ArmCrashPointFromEnvironment (a test calling the library in process, the daemon), so an
// inherited GRAPHFS_CRASH_AT stops only the tools that read it; unarmed, a point costs a compare.
// Compiled into the shipped tools, not a test build of them: the tests stop the binaries that
// are installed.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "common/result.h"

namespace graphfs {

inline constexpr const char* kCrashAtVariable = "GRAPHFS_CRASH_AT";

struct CrashPointInfo {
  std::string_view name;  // what GRAPHFS_CRASH_AT names
  std::string_view when;  // what the run has done when it dies there
};

// Reads GRAPHFS_CRASH_AT. Unset or empty: nothing is armed. A name in `points`: that point is
// armed for the rest of the process. Any other name: EINVAL naming `tool` and its points (the
// process arms nothing). Call once, before any thread starts.
Status ArmCrashPointFromEnvironment(std::string_view tool, std::span<const CrashPointInfo> points);
// The same for a tool's main, as ParseCommandLine is for its arguments: nullopt when the run goes
// on; else the error printed ("TOOL: error: ...") and 2, the usage error's status, to exit with.
std::optional<int> ArmCrashPointOrUsageError(std::string_view tool, std::span<const CrashPointInfo> points);

// At the armed point: one line on stderr ("<tool>: GRAPHFS_CRASH_AT=<name>: killed here"), then
// SIGKILL to the process — no destructor, buffered write, atexit handler or cleanup of the
// caller runs, as with kill -9. Anywhere else: nothing.
void CrashPoint(std::string_view name);

}  // namespace graphfs
