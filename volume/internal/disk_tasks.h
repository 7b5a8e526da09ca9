// The disk set's tasks the mount's daemon runs in the background, asked for through
// MOUNTPOINT/.graphfs/disks (docs/parity.md, "graphfs-rebuild" and "graphfs-scrub"): a lost
// disk rebuilt onto a new directory and then switched in without a remount, and a scrub of every
// file with sums. The same code as the offline tools (striping/rebuild.h, striping/scrub.h), given
// the mount's disk set so that each row is done under the lock the daemon's heals and writes
// take. One task at a time; what the last one did (progress, outcome, its error) is kept for
// `.graphfs/disks` and `stats`.
#pragma once

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "striping/set_task.h"

namespace graphfs::volume {

class VolumeCore;

class DiskTasks {
 public:
  explicit DiskTasks(VolumeCore& core) : core_(core) {}
  ~DiskTasks() { Stop(); }
  DiskTasks(const DiskTasks&) = delete;
  DiskTasks& operator=(const DiskTasks&) = delete;

  // Checks the request as graphfs-rebuild does before it writes a byte (the disk in the set and
  // missing from the mount, the directory empty or holding this rebuild, every file with parity,
  // room) and starts it: errors come back at once, naming what is wrong (EBUSY while a task
  // runs). When the rebuild is done and read back, the registries name `dir` and the mount reads
  // the disk from it (VolumeCore::SwitchDisk). `rate`: bytes per second read, 0 for no limit.
  Status StartRebuild(uint32_t disk, const std::string& dir, uint64_t rate);
  // Checks and starts a scrub of every file with sums under the source; repairs are written
  // under the rows' locks and the open files' sums read again (DiskSet::SumsChanged).
  Status StartScrub(uint64_t rate);
  // The running or last task: {"kind", "state": running | done | failed | refused | stopped,
  // "done_bytes", "total_bytes", "rate", "bytes_per_second", "seconds", "error", ...}; null when
  // none was asked for.
  nlohmann::json Json() const;
  // Stops a running task (it stops at its next row; a rebuild resumes from its record when asked
  // again) and waits for it, and the probe of missing disks. For the unmount.
  void Stop();

  // Starts the probe of the disks missing since the mount (none missing: nothing started): every
  // `every`, each missing disk's registered directory is looked at, and one that holds this set's
  // disk is taken back (VolumeCore::TakeBackDisk: stale, until the scrub resyncs it) — never while
  // a task runs (a rebuild of the disk switches it in itself; a scrub keeps the set it began
  // with). One that holds something else (an empty directory, another set's disk) is refused,
  // the log saying what it is once per change. After the fork (a thread): Volume::Start.
  void StartProbe(std::chrono::milliseconds every);
  static constexpr std::chrono::milliseconds kProbeEvery{500};

 private:
  // Marks a task as starting (EBUSY if one runs); `what` names it for the status.
  Status Claim(nlohmann::json what);
  // The task could not start: its error is the status, and the log says why.
  Status Refused(const Error& e);
  // Runs `work` on the task's thread; it returns the outcome's report or an error.
  void Launch(std::function<Result<nlohmann::json>()> work);
  void Ended(const Result<nlohmann::json>& outcome);

  // One look at the missing disks (StartProbe).
  void ProbeMissing();

  VolumeCore& core_;
  mutable std::mutex mu_;
  std::thread thread_;
  bool busy_ = false;  // claimed, until the task ended; under mu_
  bool taking_back_ = false;  // the probe takes a disk back: Claim waits; under mu_
  std::condition_variable taken_back_;
  std::thread probe_;
  bool probe_stop_ = false;  // under mu_
  std::condition_variable probe_wake_;
  std::vector<std::string> refused_;  // per disk, the last refusal logged; the probe's thread only
  nlohmann::json task_;  // what Json shows; under mu_
  std::chrono::steady_clock::time_point started_;
  std::shared_ptr<SetTaskProgress> progress_;
};

}  // namespace graphfs::volume
