#include "fusefs/stale_mount.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "fusefs/mount_table.h"

namespace graphfs {
namespace {

// realpath() cannot resolve the dead mount itself (stat fails), so resolve its parent.
std::string AbsolutePath(const std::string& path) {
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  const size_t slash = trimmed.find_last_of('/');
  const std::string parent = slash == std::string::npos ? "." : (slash == 0 ? "/" : trimmed.substr(0, slash));
  const std::string name = slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
  char real[PATH_MAX];
  if (::realpath(parent.c_str(), real) == nullptr) return trimmed;
  return std::string(real) + (std::string(real) == "/" ? "" : "/") + name;
}

bool DetachAsUser(const std::string& path) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execlp("fusermount3", "fusermount3", "-u", "-z", path.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

Status CleanStaleMount(const std::string& mountpoint, bool* cleaned) {
  *cleaned = false;
  // statfs always asks the daemon; stat may be answered from the kernel's attribute cache.
  struct statfs sfs;
  if (::statfs(mountpoint.c_str(), &sfs) == 0 || errno != ENOTCONN) return Status::Ok();
  const std::string path = AbsolutePath(mountpoint);
  const std::string how = "clean it up with `fusermount3 -u -z " + path + "` and mount again";
  const std::optional<MountEntry> mount = NewestMountAt(path);
  const std::string type = mount ? mount->type : "";
  if (type != "fuse.graphfs")
    return Error(ENOTCONN, path + " is a dead FUSE mount (" + (type.empty() ? "unknown type" : type) +
                               ", not graphfs); " + how);
  // Root detaches directly; other users go through the setuid fusermount3.
  const bool detached = ::umount2(path.c_str(), MNT_DETACH) == 0 || DetachAsUser(path);
  if (!detached || ::statfs(path.c_str(), &sfs) != 0)
    return Error(ENOTCONN, path + " is a stale graphfs mount that could not be detached; " + how);
  *cleaned = true;
  return Status::Ok();
}

}  // namespace graphfs
