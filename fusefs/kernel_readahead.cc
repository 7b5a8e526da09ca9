#include "fusefs/kernel_readahead.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "fusefs/graphfs.h"
#include "fusefs/mount_table.h"

namespace graphfs {

Status SetKernelReadAhead(const std::string& mountpoint, uint64_t bytes) {
  const std::optional<MountEntry> mount = NewestMountAt(mountpoint);
  if (!mount) return Error(ENOENT, "no mount at " + mountpoint + " in /proc/self/mountinfo");
  const std::string knob_path = "/sys/class/bdi/" + mount->device + "/read_ahead_kb";
  std::ofstream knob(knob_path);
  knob << bytes / 1024 << "\n";
  knob.flush();
  if (!knob) return Error(errno != 0 ? errno : EIO, "could not write " + knob_path + ": " + std::strerror(errno));
  return Status::Ok();
}

void ApplyKernelReadAheadOnce(GraphFs& fs) {
  std::call_once(fs.kernel_readahead_set, [&fs] {
    if (fs.mountpoint.empty() || fs.options.kernel_readahead == 0) return;
    Status s = SetKernelReadAhead(fs.mountpoint, fs.options.kernel_readahead);
    if (!s.ok())
      LogError("kernel read-ahead of " + fs.mountpoint + " stays at the kernel's default: " + s.error().message());
  });
}

}  // namespace graphfs
