// A real small disk for fault tests: a sparse image file on a loop device with its own
// ext4, mounted on a directory; detached and removed when the test ends. It can be made
// to fail like a disk that is pulled (the backing shrinks to nothing: every read and
// write of the device gets EIO) or like one whose filesystem turned read-only after an
// error (ext4's errors=remount-ro), and it fills up like a real one (ENOSPC).
#pragma once

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>

#include <string>

#include "tests/testutil/mount_harness.h"

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
    CommandResult mnt = RunCommand({"mount", "-o", "errors=remount-ro", device_, dir_});
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

  // The filesystem hits an error and, as mounted (errors=remount-ro), turns read-only:
  // reads keep working, every write gets EROFS, files open for writing included.
  bool MakeReadOnly() {
    const std::string name = device_.substr(device_.rfind('/') + 1);
    WriteFile("/sys/fs/ext4/" + name + "/trigger_fs_error", "graphfs test: disk made read-only\n");
    // (The superblock turns read-only; the mount's own flags still say rw.)
    const std::string probe = dir_ + "/.read-only-probe";
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::close(fd);
      ::unlink(probe.c_str());
      return false;
    }
    return errno == EROFS;
  }

 private:
  std::string dir_, image_, device_, error_;
  bool mounted_ = false;
};

}  // namespace graphfs::testing
