#include "striping/live_mount.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "common/mount_info.h"
#include "striping/disk_set.h"
#include "striping/progress_line.h"

namespace graphfs {

namespace {

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

bool Under(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         (dir == "/" || path[dir.size()] == '/'));
}

}  // namespace

std::optional<LiveMount> FindLiveMount(const std::string& path) {
  const std::string real = RealPath(path);
  if (real.empty()) return std::nullopt;
  std::optional<LiveMount> found;
  for (const MountInfo& m : ReadMountInfo()) {
    if (m.type != "fuse.graphfs") continue;
    const std::string source = RealPath(m.source);
    if (source.empty() || !Under(real, source)) continue;
    found = LiveMount{m.mountpoint, source};  // later lines are newer mounts
  }
  return found;
}

Result<std::optional<std::string>> MountReadsDiskFrom(const LiveMount& mount, uint32_t disk, const std::string& dir) {
  const std::string file = mount.mountpoint + "/.graphfs/disks";
  auto text = ReadSmallFile(file);
  if (!text.ok()) return text.error();
  try {
    const nlohmann::json j = nlohmann::json::parse(*text);  // kept: the loop iterates a part of it
    for (const auto& d : j.at("disks")) {
      if (d.at("index").get<uint32_t>() != disk || d.at("path").get<std::string>() != dir) continue;
      const std::string state = d.at("state").get<std::string>();
      if (state != "missing" && state != "stale") return std::optional<std::string>(state);
    }
  } catch (const std::exception& e) {
    return Error(EIO, file + ": " + e.what());
  }
  return std::optional<std::string>();
}

Result<nlohmann::json> RunInDaemon(const LiveMount& mount, const std::string& line, bool progress, const char* tool) {
  const std::string file = mount.mountpoint + "/.graphfs/disks";
  {
    const int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return Error::FromErrno("open " + file);
    const ssize_t n = ::write(fd, line.data(), line.size());
    const int err = errno;
    ::close(fd);
    if (n < 0) {
      // The reason is the task's status (and the daemon's log).
      std::string why = std::strerror(err);
      if (auto text = ReadSmallFile(file); text.ok()) {
        try {
          const auto j = nlohmann::json::parse(*text);
          if (j["task"].is_object() && j["task"].contains("error")) why = j["task"]["error"].get<std::string>();
        } catch (const std::exception&) {
        }
      }
      return Error(err, "the mount at " + mount.mountpoint + " refused '" + line.substr(0, line.find('\n')) + "': " + why);
    }
  }
  std::optional<ProgressLine> bar;
  while (true) {
    auto text = ReadSmallFile(file);
    if (!text.ok()) return text.error().Wrap("following the task of the mount at " + mount.mountpoint);
    nlohmann::json task;
    try {
      task = nlohmann::json::parse(*text)["task"];
    } catch (const std::exception& e) {
      return Error(EIO, file + ": " + e.what());
    }
    if (!task.is_object()) return Error(EIO, file + " shows no task after the write");
    const std::string state = task.value("state", std::string());
    const uint64_t done = task.value("done_bytes", uint64_t{0}), total = task.value("total_bytes", uint64_t{0});
    if (!bar && total > 0) bar.emplace(progress, tool, total);
    if (bar) bar->Update(done, "through the mount at " + mount.mountpoint);
    if (state != "running" && state != "starting") {
      if (bar) bar->Finish(done);
      if (state == "done") return task;
      return Error(EIO, "the mount's " + line.substr(0, line.find(' ')) + " " + state + ": " +
                            task.value("error", std::string()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace graphfs
