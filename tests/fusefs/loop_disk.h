// A real small disk for fault tests: a sparse image file on a loop device with its own
// ext4, mounted on a directory; detached and removed when the test ends. It can be made
// to fail like a disk that is pulled (the backing shrinks to nothing: every read and
// write of the device gets EIO), and it fills up like a real one (ENOSPC).
#pragma once

#include <sys/mount.h>

#include <string>

#include "tests/fusefs/mount_harness.h"

namespace graphfs::testing {

class LoopDisk {
 public:
  // Creates a disk of `bytes` under `dir` (image `dir`.img, mounted at `dir`).
  LoopDisk(const std::string& dir, uint64_t bytes) : dir_(dir), image_(dir + ".img") {
    if (RunCommand({"truncate", "-s", std::to_string(bytes), image_}).status != 0) {
      error_ = "cannot create " + image_;
      return;
    }
    CommandResult dev = RunCommand({"losetup", "-f", "--show", image_});
    if (dev.status != 0) {
      error_ = "losetup: " + dev.output;
      return;
    }
    device_ = dev.output.substr(0, dev.output.find('\n'));
    CommandResult mkfs = RunCommand({"mkfs.ext4", "-q", "-F", device_});
    if (mkfs.status != 0) {
      error_ = "mkfs.ext4: " + mkfs.output;
      return;
    }
    CommandResult mnt = RunCommand({"mount", device_, dir_});
    if (mnt.status != 0) error_ = "mount: " + mnt.output;
    mounted_ = mnt.status == 0;
  }
  ~LoopDisk() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
    if (!device_.empty()) RunCommand({"losetup", "-d", device_});
    ::unlink(image_.c_str());
  }
  LoopDisk(const LoopDisk&) = delete;
  LoopDisk& operator=(const LoopDisk&) = delete;

  bool ok() const { return mounted_; }
  const std::string& error() const { return error_; }
  const std::string& device() const { return device_; }

  // The disk is pulled: its backing shrinks to nothing, so the device ends at sector 0.
  bool Pull() {
    return RunCommand({"truncate", "-s", "0", image_}).status == 0 &&
           RunCommand({"losetup", "-c", device_}).status == 0;
  }

 private:
  std::string dir_, image_, device_, error_;
  bool mounted_ = false;
};

}  // namespace graphfs::testing
