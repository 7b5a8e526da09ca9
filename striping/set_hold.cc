#include "striping/set_hold.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace graphfs {

namespace {

// Opens disk directory `dir` and locks it as `how` says (LOCK_SH or LOCK_EX), without waiting.
Result<UniqueFd> LockDir(const std::string& dir, int how) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return Error::FromErrno("open disk directory " + dir);
  while (::flock(fd.get(), how | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    return Error::FromErrno(errno == EWOULDBLOCK ? EBUSY : errno, "lock disk directory " + dir);
  }
  return fd;
}

std::string Comm(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

}  // namespace

std::string LockHolders(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "";
  char dev_inode[64];
  std::snprintf(dev_inode, sizeof dev_inode, "%02x:%02x:%llu", major(st.st_dev), minor(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  std::ifstream in("/proc/locks");
  std::string line, holders;
  while (std::getline(in, line)) {
    // "1: FLOCK  ADVISORY  READ 6686 fe:00:3366915 0 EOF"; a waiter's line has "->" after the id
    // (it holds nothing).
    if (line.find("->") != std::string::npos) continue;
    std::istringstream fields(line);
    std::string id, kind, advisory, mode, pid, where;
    fields >> id >> kind >> advisory >> mode >> pid >> where;
    if (kind != "FLOCK" || where != dev_inode) continue;
    // The pid is the locker's: a daemon that forked into the background after taking the lock
    // shows its parent's, gone since — such a holder is left unnamed rather than misnamed.
    const std::string name = Comm(pid);
    if (name.empty()) continue;
    holders += (holders.empty() ? "" : ", ") + std::string("pid ") + pid + " (" + name + ")";
  }
  return holders;
}

Result<SetHold> SetHold::Serve(const DiskSet& set) {
  SetHold hold;
  for (uint32_t d = 0; d < set.size(); ++d) {
    if (set.state(d) == DiskState::kMissing) continue;
    auto fd = LockDir(set.path(d), LOCK_SH);
    if (!fd.ok()) {
      if (fd.error().code() != EBUSY) return fd.error();
      const std::string who = LockHolders(set.path(d));
      return Error(EBUSY, "disk " + std::to_string(d) + " (" + set.path(d) + ") of set " + set.set_id() +
                              " is held by an offline graphfs-rebuild" + (who.empty() ? "" : " (" + who + ")") +
                              ": mount once it has ended");
    }
    hold.dirs_.push_back(std::move(*fd));
  }
  return hold;
}

Status SetHold::ServeDisk(const std::string& dir) {
  auto fd = LockDir(dir, LOCK_SH);
  if (!fd.ok()) return fd.error();
  dirs_.push_back(std::move(*fd));
  return Status::Ok();
}

Result<SetHold> SetHold::Exclusive(const DiskSet& set, const std::string& tool) {
  SetHold hold;
  for (uint32_t d = 0; d < set.size(); ++d) {
    if (set.state(d) == DiskState::kMissing) continue;
    auto fd = LockDir(set.path(d), LOCK_EX);
    if (!fd.ok()) {
      if (fd.error().code() != EBUSY) return fd.error().Wrap(tool);
      const std::string who = LockHolders(set.path(d));
      return Error(EBUSY, "disk " + std::to_string(d) + " (" + set.path(d) + ") of set " + set.set_id() +
                              " is in use by a running graphfs mount or another offline run" +
                              (who.empty() ? "" : " (" + who + ")") + ": " + tool +
                              " beside a mount would miss the rows its writes change and clear the write-intent "
                              "records it still needs; unmount it first, or run without --offline to have the "
                              "mount's daemon do the work");
    }
    hold.dirs_.push_back(std::move(*fd));
  }
  return hold;
}

}  // namespace graphfs
