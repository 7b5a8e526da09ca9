// What starts once the daemon has forked and before the loop (session.h, StartServing): threads
// do not survive fuse_daemonize's fork, so the volume's (I/O workers, prefetchers, loaders) and
// the memory-peak thread start here, after the daemon's nice value is set.
#include <dirent.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "fusefs/control_dir.h"
#include "fusefs/graphfs.h"
#include "fusefs/session.h"

namespace graphfs {

namespace {

// Linux nice values are per thread: every thread the process has now (a sanitizer's own among
// them) gets it, and every thread started later inherits it.
Status SetDaemonNice(int nice) {
  std::vector<pid_t> tids{0};
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') tids.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
    ::closedir(d);
  }
  for (pid_t tid : tids)
    if (::setpriority(PRIO_PROCESS, static_cast<id_t>(tid), nice) != 0)
      return Error::FromErrno("nice=" + std::to_string(nice) +
                              " (a lower value needs CAP_SYS_NICE); the daemon keeps the priority it inherited");
  return Status::Ok();
}

}  // namespace

Status StartServing(GraphFs& fs) {
  if (fs.options.nice != 0) {
    const Status niced = SetDaemonNice(fs.options.nice);
    if (!niced.ok()) LogError(niced.error().message());
  }
  // The volume's threads (I/O workers, prefetchers) must start after the fork.
  GRAPHFS_RETURN_IF_ERROR(fs.volume->Start());
  fs.jobs.StartTurns(fs.options.compute_slots);
  // The memory nothing in the split accounts for is charged to the budget (memory=).
  fs.memory_peak.Start([&fs] { return MemoryByUseNow(fs); }, std::chrono::milliseconds(100),
                       [&fs](uint64_t other) { fs.volume->SetUnaccountedMemory(other); });
  return Status::Ok();
}

}  // namespace graphfs
