#include "chunkindex/index_install.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>  // renameat2, RENAME_EXCHANGE
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "chunkindex/chunk_index.h"

namespace graphfs::chunkindex {

namespace {

constexpr const char* kBuildingPrefix = "index.building-";
constexpr const char* kOldPrefix = "index.old-";

void RemoveAll(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// The PID a build directory is named after, or 0 if the name has none.
pid_t PidOf(const std::string& name, const std::string& prefix) {
  const std::string digits = name.substr(prefix.size());
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) return 0;
  return static_cast<pid_t>(std::strtol(digits.c_str(), nullptr, 10));
}

// A process with this PID exists (EPERM: it exists, owned by someone else).
bool Alive(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace

std::string BuildDirPath(const std::string& graph_dir) {
  return graph_dir + "/.graphfs/" + kBuildingPrefix + std::to_string(::getpid());
}

void SweepDeadBuilds(const std::string& graph_dir) {
  const std::string graphfs_dir = graph_dir + "/.graphfs";
  std::vector<std::string> building, old;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(graphfs_dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(kBuildingPrefix, 0) == 0 && !Alive(PidOf(name, kBuildingPrefix))) building.push_back(name);
    if (name.rfind(kOldPrefix, 0) == 0 && !Alive(PidOf(name, kOldPrefix))) old.push_back(name);
  }
  // A build killed between moving the index aside and moving its own in: the
  // index it set aside is complete (it was the index), so it is the index again.
  const std::string index = IndexPath(graph_dir);
  if (!old.empty() && !Exists(index) && ::rename((graphfs_dir + "/" + old.back()).c_str(), index.c_str()) == 0) {
    old.pop_back();
  }
  for (const std::string& name : building) RemoveAll(graphfs_dir + "/" + name);
  for (const std::string& name : old) RemoveAll(graphfs_dir + "/" + name);
}

Status InstallIndex(const std::string& graph_dir, const std::string& built) {
  const std::string index = IndexPath(graph_dir);
  if (::renameat2(AT_FDCWD, built.c_str(), AT_FDCWD, index.c_str(), RENAME_EXCHANGE) == 0) {
    RemoveAll(built);  // now holds the previous index
    return Status::Ok();
  }
  if (errno == ENOENT && !Exists(index)) {  // the first index of this graph
    if (::rename(built.c_str(), index.c_str()) != 0) return Error::FromErrno("rename " + built + " -> " + index);
    return Status::Ok();
  }
  if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) {
    return Error::FromErrno("exchange " + built + " <-> " + index);
  }
  // No RENAME_EXCHANGE on this filesystem: two renames, the window covered by SweepDeadBuilds.
  const std::string old = graph_dir + "/.graphfs/" + kOldPrefix + std::to_string(::getpid());
  if (::rename(index.c_str(), old.c_str()) != 0) return Error::FromErrno("rename " + index + " -> " + old);
  if (::rename(built.c_str(), index.c_str()) != 0) {
    Error e = Error::FromErrno("rename " + built + " -> " + index);
    (void)::rename(old.c_str(), index.c_str());
    return e;
  }
  RemoveAll(old);
  return Status::Ok();
}

}  // namespace graphfs::chunkindex
