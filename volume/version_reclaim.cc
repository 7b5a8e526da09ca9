#include "volume/version_reclaim.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "common/log.h"
#include "common/thread_name.h"
#include "grid/grid_layout.h"
#include "grid/posix_io.h"
#include "striping/graph_files.h"

namespace graphfs::volume {

std::pair<std::string, std::string> ParentAndName(const std::string& graph_dir) {
  std::filesystem::path p = std::filesystem::path(graph_dir).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  std::string parent = p.parent_path().string();
  return {parent.empty() ? "." : parent, p.filename().string()};
}

int64_t VersionOf(const std::string& dir) {
  auto text = grid::ReadRegularFile(dir + "/" + kVersionFile, 64);
  if (!text.ok()) return text.error().code() == ENOENT ? 0 : -1;
  try {
    size_t used = 0;
    const long long v = std::stoll(*text, &used);
    return v >= 0 ? v : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

namespace fs = std::filesystem;

namespace {

// N of "NAME@N" (for `name` = "NAME"), or -1.
int64_t VersionNumber(const std::string& entry, const std::string& name) {
  if (entry.size() <= name.size() + 1 || entry.compare(0, name.size(), name) != 0 || entry[name.size()] != '@')
    return -1;
  const std::string digits = entry.substr(name.size() + 1);
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return -1;
  return std::stoll(digits);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// Every inode reachable under `dir` (not following symlinks): its allocated bytes (a stub's: what
// its parts store on the disks), and how many of its links lie under `dir`.
struct InodeUse {
  uint64_t bytes = 0;
  nlink_t nlink = 0;
  nlink_t links_here = 0;
};
void Walk(const std::string& dir, std::map<std::pair<dev_t, ino_t>, InodeUse>& seen) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st;
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    InodeUse& u = seen[{st.st_dev, st.st_ino}];
    const auto stub = StubManifest(it->path().string(), st);
    u.bytes = stub ? stub->stored_size() : static_cast<uint64_t>(st.st_blocks) * 512;
    u.nlink = S_ISDIR(st.st_mode) ? 1 : st.st_nlink;
    u.links_here += 1;
  }
}

VersionSpace SpaceOf(const std::string& path, int64_t number, bool current) {
  VersionSpace v;
  v.path = path;
  v.number = number;
  v.current = current;
  std::map<std::pair<dev_t, ino_t>, InodeUse> seen;
  Walk(path, seen);
  for (const auto& [id, u] : seen) {
    v.bytes += u.bytes;
    if (u.links_here >= u.nlink) v.exclusive_bytes += u.bytes;
  }
  return v;
}

// Removes what a reclaim removes from `dir` (renamed already) and returns the bytes freed; the
// directory goes too when nothing else is left, else it is named `final_name` again.
// A striped version's stubs go with their parts when they are the last links (the disk set from the
// version's registry, or GRAPH's: `graph`).
Result<uint64_t> RemoveGraphFiles(const std::string& dir, const std::string& final_name, const std::string& graph,
                                  bool* results_left) {
  const VersionSpace space = SpaceOf(dir, -1, false);
  std::error_code ec;
  std::vector<std::string> doomed;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (grid::IsGridFileName(n) || n == ".graphfs") doomed.push_back(e.path().string());
  }
  if (ec) return Error(ec.value(), "list " + dir + ": " + ec.message());
  // meta first: from then on the directory is not a graph, whatever a kill leaves.
  std::sort(doomed.begin(), doomed.end(), [](const std::string& a, const std::string& b) {
    const bool am = ParentAndName(a).second == grid::kMetaFile, bm = ParentAndName(b).second == grid::kMetaFile;
    return am != bm ? am : a < b;
  });
  LazyDiskSet disks({dir, graph});
  for (const std::string& p : doomed) {
    struct stat st;
    const bool directory = ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    GRAPHFS_RETURN_IF_ERROR(directory ? RemoveGraphTree(p, disks) : RemoveGraphFile(p, disks));
  }
  *results_left = !fs::is_empty(dir, ec);
  if (*results_left) {
    if (!Exists(final_name) && ::rename(dir.c_str(), final_name.c_str()) != 0)
      return Error::FromErrno("rename " + dir + " back to " + final_name);
  } else if (::rmdir(dir.c_str()) != 0) {
    return Error::FromErrno("remove " + dir);
  }
  return space.exclusive_bytes;
}

// Finishes the reclaims of GRAPH's versions a kill interrupted (".NAME@N.reclaiming").
Status FinishInterrupted(const std::string& parent, const std::string& name, ReclaimReport& report) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    const std::string n = e.path().filename().string();
    const std::string suffix = ".reclaiming";
    if (n.size() <= 1 + suffix.size() || n[0] != '.' || n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string version = n.substr(1, n.size() - 1 - suffix.size());
    if (VersionNumber(version, name) < 0) continue;
    bool left = false;
    auto freed = RemoveGraphFiles(e.path().string(), parent + "/" + version, parent + "/" + name, &left);
    if (!freed.ok()) return freed.error();
    report.reclaimed.push_back(parent + "/" + version + " (interrupted before)");
    report.bytes_freed += *freed;
  }
  return Status::Ok();
}

}  // namespace

std::vector<std::string> DirectoryUsers(const std::string& dir) {
  std::error_code ec;
  const std::string root = fs::weakly_canonical(dir, ec).string();
  std::vector<std::string> users;
  if (root.empty()) return users;
  auto inside = [&](const std::string& p) { return p == root || (p.size() > root.size() && p.compare(0, root.size(), root) == 0 && p[root.size()] == '/'); };
  auto link = [](const std::string& p) {
    char buf[4096];
    const ssize_t n = ::readlink(p.c_str(), buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  };
  const pid_t self = ::getpid();
  for (const auto& proc : fs::directory_iterator("/proc", ec)) {
    const std::string pid = proc.path().filename().string();
    if (pid.empty() || !std::all_of(pid.begin(), pid.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      continue;
    if (std::stol(pid) == self) continue;
    const std::string base = proc.path().string();
    bool uses = inside(link(base + "/cwd"));
    std::error_code fd_ec;
    for (auto it = fs::directory_iterator(base + "/fd", fd_ec); !uses && !fd_ec && it != fs::directory_iterator();
         it.increment(fd_ec)) {
      if (!inside(link(it->path().string()))) continue;
      // The daemon keeps an O_PATH descriptor of every inode the kernel knows: that is no use.
      std::ifstream info(base + "/fdinfo/" + it->path().filename().string());
      std::string key;
      unsigned long flags = 0;
      while (info >> key) {
        if (key == "flags:") {
          info >> std::oct >> flags;
          break;
        }
      }
      uses = (flags & O_PATH) == 0;
    }
    if (!uses) {
      std::ifstream maps(base + "/maps");
      std::string line;
      while (!uses && std::getline(maps, line)) {
        const size_t slash = line.find('/');
        uses = slash != std::string::npos && inside(line.substr(slash));
      }
    }
    if (!uses) continue;
    std::ifstream comm(base + "/comm");
    std::string name;
    std::getline(comm, name);
    users.push_back(pid + " (" + name + ")");
  }
  return users;
}

Result<std::optional<uint64_t>> KeepOf(const std::string& graph_dir) {
  auto text = grid::ReadRegularFile(graph_dir + "/" + kKeepFile, 64);
  if (!text.ok()) {
    if (text.error().code() == ENOENT) return std::optional<uint64_t>();
    return text.error();
  }
  try {
    size_t used = 0;
    const long long keep = std::stoll(*text, &used);
    if (keep < 0) throw std::invalid_argument("negative");
    return std::optional<uint64_t>(static_cast<uint64_t>(keep));
  } catch (const std::exception&) {
    return Error(EINVAL, graph_dir + "/" + kKeepFile + " is damaged (not a count of versions to keep)");
  }
}

Status WriteKeep(const std::string& dir, uint64_t keep) {
  if (::mkdir((dir + "/.graphfs").c_str(), 0755) != 0 && errno != EEXIST) return Error::FromErrno("create " + dir + "/.graphfs");
  const std::string text = std::to_string(keep) + "\n";
  return grid::WriteWholeFile(dir + "/" + kKeepFile, text.data(), text.size());
}

Result<std::vector<VersionSpace>> ListVersions(const std::string& graph_dir, bool with_users) {
  const auto [parent, name] = ParentAndName(graph_dir);
  auto keep = KeepOf(parent + "/" + name);
  if (!keep.ok()) return keep.error();
  std::vector<std::pair<int64_t, std::string>> kept;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    const std::string n = e.path().filename().string();
    const int64_t number = VersionNumber(n, name);
    if (number >= 0 && Exists(e.path().string() + "/" + grid::kMetaFile)) kept.emplace_back(number, e.path().string());
  }
  if (ec) return Error(ec.value(), "list " + parent + ": " + ec.message());
  std::sort(kept.rbegin(), kept.rend());
  std::vector<VersionSpace> out;
  out.push_back(SpaceOf(parent + "/" + name, VersionOf(parent + "/" + name), true));
  for (size_t k = 0; k < kept.size(); ++k) {
    out.push_back(SpaceOf(kept[k].second, kept[k].first, false));
    out.back().held = !*keep || k < **keep;
  }
  if (with_users)
    for (VersionSpace& v : out) v.users = DirectoryUsers(v.path);
  return out;
}

Result<bool> ReclaimIfUnused(const std::string& version_dir, ReclaimReport* report) {
  if (!Exists(version_dir + "/" + kReclaimMark) || !Exists(version_dir + "/" + grid::kMetaFile)) return false;
  const std::vector<std::string> users = DirectoryUsers(version_dir);
  if (!users.empty()) {
    if (report != nullptr) {
      std::string who;
      for (const std::string& u : users) who += (who.empty() ? "" : ", ") + u;
      report->in_use.push_back(version_dir + ": " + who);
    }
    return false;
  }
  const auto [parent, name] = ParentAndName(version_dir);
  const std::string doomed = parent + "/." + name + ".reclaiming";
  if (::rename(version_dir.c_str(), doomed.c_str()) != 0) return Error::FromErrno("rename " + version_dir + " to " + doomed);
  bool left = false;
  auto freed = RemoveGraphFiles(doomed, version_dir, parent + "/" + name.substr(0, name.rfind('@')), &left);
  if (!freed.ok()) return freed.error();
  if (report != nullptr) {
    report->reclaimed.push_back(version_dir);
    report->bytes_freed += *freed;
    if (left) report->results_left.push_back(version_dir);
  }
  return true;
}

Result<ReclaimReport> ReclaimVersions(const std::string& graph_dir, uint64_t keep) {
  const auto [parent, name] = ParentAndName(graph_dir);
  ReclaimReport report;
  GRAPHFS_RETURN_IF_ERROR(FinishInterrupted(parent, name, report));
  auto versions = ListVersions(graph_dir);
  if (!versions.ok()) return versions.error();
  uint64_t kept = 0;
  for (const VersionSpace& v : *versions) {
    if (v.current || kept++ < keep) continue;
    const std::string mark = v.path + "/" + kReclaimMark;
    if (!Exists(mark)) {
      const std::string dir = v.path + "/.graphfs";  // a graph never updated or indexed has none
      if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return Error::FromErrno("create " + dir);
      const std::string why = "beyond --keep " + std::to_string(keep) + "\n";
      GRAPHFS_RETURN_IF_ERROR(grid::WriteWholeFile(mark, why.data(), why.size()));
    }
    auto done = ReclaimIfUnused(v.path, &report);
    if (!done.ok()) return done.error();
  }
  return report;
}

std::string MarkedVersionOf(const std::string& path) {
  if (path.find('@') == std::string::npos) return "";
  // The file's directory, or the version holding .graphfs/pieces, or the path itself.
  std::string dir = path;
  for (int up = 0; up < 4 && !dir.empty() && dir != "/"; ++up) {
    const auto [parent, name] = ParentAndName(dir);
    const size_t at = name.rfind('@');
    if (at != std::string::npos && at > 0 && VersionNumber(name, name.substr(0, at)) >= 0)
      return Exists(dir + "/" + kReclaimMark) ? dir : "";
    dir = parent;
  }
  return "";
}

void VersionReclaimer::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return;
  started_ = true;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void VersionReclaimer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!started_) return;
    stop_ = true;
    started_ = false;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void VersionReclaimer::Nudge(const std::string& path) {
  const std::string version = MarkedVersionOf(path);
  if (version.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.insert(version);
  }
  cv_.notify_all();
}

uint64_t VersionReclaimer::reclaimed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reclaimed_;
}

uint64_t VersionReclaimer::bytes_freed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_freed_;
}

std::vector<std::string> VersionReclaimer::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {pending_.begin(), pending_.end()};
}

void VersionReclaimer::Run() {
  NameThisThread("gfs-reclaim");
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    // Woken by a nudge, or every few seconds while versions wait for their users.
    cv_.wait_for(lock, std::chrono::seconds(3), [&] { return stop_ || !pending_.empty(); });
    if (stop_) break;
    if (pending_.empty()) continue;
    // Let the request that nudged finish (its descriptors close after it).
    cv_.wait_for(lock, std::chrono::milliseconds(200), [&] { return stop_; });
    if (stop_) break;
    std::set<std::string> batch;
    batch.swap(pending_);
    lock.unlock();
    if (before_check_) before_check_();
    std::set<std::string> again;
    uint64_t reclaimed = 0, freed = 0;
    for (const std::string& v : batch) {
      ReclaimReport report;
      auto done = ReclaimIfUnused(v, &report);
      if (!done.ok()) {
        LogError("reclaiming graph version " + v + ": " + done.error().message());
      } else if (*done) {
        ++reclaimed;
        freed += report.bytes_freed;
        LogError("reclaimed graph version " + v + " (" + std::to_string(report.bytes_freed) + " bytes freed)");
      } else if (Exists(v + "/" + kReclaimMark)) {
        again.insert(v);  // still in use: looked at again later
      }
    }
    lock.lock();
    reclaimed_ += reclaimed;
    bytes_freed_ += freed;
    pending_.insert(again.begin(), again.end());
    if (!again.empty()) cv_.wait_for(lock, std::chrono::seconds(3), [&] { return stop_; });
  }
}

}  // namespace graphfs::volume
