#include "striping/disk_set.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/crash_point.h"
#include "common/unique_fd.h"
#include "striping/atomic_write.h"
#include "striping/json_fields.h"
#include "striping/stale_rows.h"
#include "striping/stripe_map.h"

namespace graphfs {

namespace {

using json = nlohmann::json;

Result<DiskIdentity> ReadIdentity(const std::string& disk) {
  struct stat st;
  if (::stat(disk.c_str(), &st) != 0) return Error::FromErrno("disk " + disk);
  if (!S_ISDIR(st.st_mode)) return Error(ENOTDIR, "disk " + disk + " is not a directory");
  auto text = ReadSmallFile(disk + "/" + kDiskIdentityFile, 64 << 10);
  if (!text.ok()) return text.error();
  auto id = DecodeDiskIdentity(*text);
  if (!id.ok())
    return Error(EINVAL, "disk " + disk + ": damaged identity file " + kDiskIdentityFile + ": " + id.error().message());
  return id;
}

std::string Absolute(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) != nullptr) return buf;
  return path;
}

}  // namespace

std::string NewId() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

uint32_t FirstDiskFor(const std::string& name, uint32_t disks) {
  return static_cast<uint32_t>(XXH3_64bits(name.data(), name.size()) % disks);
}

Result<std::string> ReadSmallFile(const std::string& path, size_t limit) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Error::FromErrno("open " + path);
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::FromErrno("read " + path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > limit) return Error(EFBIG, path + " is larger than " + std::to_string(limit) + " bytes");
  }
  return out;
}

Status WriteFileAtomic(const std::string& path, const std::string& content) {
  return WriteFileAtomicCrashingAt(path, content, {});
}

std::optional<pid_t> TemporaryCopyPid(std::string_view name, std::string_view of) {
  if (name.size() <= of.size() + 5 || !name.starts_with(of) || name.substr(of.size(), 5) != ".tmp.") return std::nullopt;
  const std::string_view digits = name.substr(of.size() + 5);
  if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return static_cast<pid_t>(std::stol(std::string(digits)));
}

Status RemoveDeadWritersCopies(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return Status::Ok();  // the write's own create says what is wrong with it
  std::vector<std::string> dead;
  while (struct dirent* e = ::readdir(d)) {
    const std::optional<pid_t> pid = TemporaryCopyPid(e->d_name, base);
    // kill(pid, 0): EPERM is a live process of another user; only ESRCH says none is.
    if (pid && *pid != ::getpid() && ::kill(*pid, 0) != 0 && errno == ESRCH) dead.push_back(e->d_name);
  }
  ::closedir(d);
  for (const std::string& name : dead)
    if (::unlink((dir + "/" + name).c_str()) != 0 && errno != ENOENT)
      return Error::FromErrno("remove " + dir + "/" + name + " (a killed writer's copy of " + base + ")");
  return Status::Ok();
}

Status WriteFileAtomicCrashingAt(const std::string& path, const std::string& content, std::string_view crash_point) {
  GRAPHFS_RETURN_IF_ERROR(RemoveDeadWritersCopies(path));
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd.valid()) return Error::FromErrno("create " + tmp);
    size_t done = 0;
    while (done < content.size()) {
      ssize_t n = ::write(fd.get(), content.data() + done, content.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        Error e = Error::FromErrno("write " + tmp);
        ::unlink(tmp.c_str());
        return e;
      }
      done += static_cast<size_t>(n);
    }
    if (::fsync(fd.get()) != 0) {
      Error e = Error::FromErrno("fsync " + tmp);
      ::unlink(tmp.c_str());
      return e;
    }
  }
  CrashPoint(crash_point);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Error e = Error::FromErrno("rename " + tmp + " to " + path);
    ::unlink(tmp.c_str());
    return e;
  }
  std::string dir = path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/'));
  if (dir.empty()) dir = ".";
  UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd.valid()) ::fsync(dfd.get());
  return Status::Ok();
}

Result<DiskSet> DiskSet::Claim(const std::vector<std::string>& raw_paths) {
  if (raw_paths.empty()) return Error(EINVAL, "no disks given");
  std::vector<std::string> paths;
  for (const auto& p : raw_paths) {
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) return Error::FromErrno("disk " + p);
    if (!S_ISDIR(st.st_mode)) return Error(ENOTDIR, "disk " + p + " is not a directory");
    paths.push_back(Absolute(p));
  }
  for (size_t i = 0; i < paths.size(); ++i)
    for (size_t j = i + 1; j < paths.size(); ++j)
      if (paths[i] == paths[j]) return Error(EINVAL, "disk " + paths[i] + " is listed twice");

  // Existing identities decide the set; every stamped disk must agree with its position.
  std::string set_id;
  std::vector<bool> stamped(paths.size(), false);
  for (size_t i = 0; i < paths.size(); ++i) {
    auto id = ReadIdentity(paths[i]);
    if (!id.ok()) {
      if (id.error().code() == ENOENT) continue;
      return id.error();
    }
    stamped[i] = true;
    if (set_id.empty()) set_id = id->set_id;
    if (id->set_id != set_id)
      return Error(EINVAL, "disk " + paths[i] + " belongs to another disk set (" + id->set_id +
                               "); give disks of one set, or blank disks");
    if (id->index != i || id->count != paths.size())
      return Error(EINVAL, "disk " + paths[i] + " is disk " + std::to_string(id->index) + " of " +
                               std::to_string(id->count) + " in its set, but was given as disk " +
                               std::to_string(i) + " of " + std::to_string(paths.size()) +
                               " (give the disks in their original order)");
  }
  if (set_id.empty()) set_id = NewId();
  for (size_t i = 0; i < paths.size(); ++i) {
    if (::mkdir((paths[i] + "/parts").c_str(), 0700) != 0 && errno != EEXIST)
      return Error::FromErrno("create " + paths[i] + "/parts");
    if (stamped[i]) continue;
    const DiskIdentity id{set_id, static_cast<uint32_t>(i), static_cast<uint32_t>(paths.size())};
    GRAPHFS_RETURN_IF_ERROR(WriteFileAtomic(paths[i] + "/" + kDiskIdentityFile, EncodeDiskIdentity(id)));
  }
  return DiskSet(set_id, paths, 0, std::vector<bool>(paths.size(), false));
}

Result<DiskSet> DiskSet::Open(const DiskRegistry& registry) {
  if (registry.disks.empty()) return Error(EINVAL, "disk set " + registry.set_id + " lists no disks");
  std::vector<bool> missing(registry.disks.size(), false);
  std::vector<size_t> gone;
  for (size_t i = 0; i < registry.disks.size(); ++i) {
    const std::string& disk = registry.disks[i];
    const std::string label = "disk " + std::to_string(i) + " (" + disk + ")";
    auto id = ReadIdentity(disk);
    if (!id.ok()) {
      // No directory or no identity in it: not mounted, or the disk is gone. Parity may cover
      // it; anything else (a damaged identity, a file where the directory was) is refused.
      if (id.error().code() == ENOENT) {
        missing[i] = true;
        gone.push_back(i);
        continue;
      }
      return id.error().Wrap(label);
    }
    if (id->set_id != registry.set_id)
      return Error(ENODEV, label + " is a foreign disk: it belongs to set " + id->set_id + ", expected " +
                               registry.set_id);
    if (id->index != i)
      return Error(ENODEV, label + " carries disk " + std::to_string(id->index) +
                               " of the set: disks swapped? expected disk " + std::to_string(i));
    if (id->count != registry.disks.size())
      return Error(ENODEV, label + " belongs to a set of " + std::to_string(id->count) + " disks, registry lists " +
                               std::to_string(registry.disks.size()));
    struct stat st;
    if (::stat((disk + "/parts").c_str(), &st) != 0) return Error::FromErrno(label + ": parts directory");
  }
  if (gone.size() > registry.parity) {
    // "disks 1 (/d1) and 3 (/d3) of set 9a…07 are missing: no .graphfs-disk there (not
    // mounted?); its files survive 1"
    std::string names;
    for (size_t j = 0; j < gone.size(); ++j) {
      names += j == 0 ? "" : (j + 1 == gone.size() ? " and " : ", ");
      names += std::to_string(gone[j]) + " (" + registry.disks[gone[j]] + ")";
    }
    return Error(ENODEV, std::string(gone.size() == 1 ? "disk " : "disks ") + names + " of set " + registry.set_id +
                             (gone.size() == 1 ? " is" : " are") + " missing: no " + kDiskIdentityFile +
                             " there (not mounted?); its files survive " +
                             (registry.parity == 0 ? std::string("no missing disk (no parity)")
                                                   : std::to_string(registry.parity)));
  }
  DiskSet set(registry.set_id, registry.disks, registry.parity, std::move(missing));
  // A disk that is there but missed writes while it was lost: the other disks hold write-intent
  // records for it (stale_rows.h). Its stale units must never be served as they are.
  for (uint32_t d = 0; d < set.size(); ++d)
    if (set.state(d) != DiskState::kMissing && AnyStaleRecordFor(set, d)) set.shared_->stale[d] = true;
  return set;
}

const char* DiskStateName(DiskState state) {
  switch (state) {
    case DiskState::kHealthy: return "healthy";
    case DiskState::kMissing: return "missing";
    case DiskState::kFailing: return "failing";
    case DiskState::kAvoided: return "avoided";
    case DiskState::kStale: return "stale";
  }
  return "?";
}

DiskSet::DiskSet(std::string set_id, std::vector<std::string> paths, uint32_t parity, std::vector<bool> missing)
    : set_id_(std::move(set_id)), size_(static_cast<uint32_t>(paths.size())), parity_(parity),
      shared_(std::make_shared<Shared>()) {
  shared_->paths = std::move(paths);
  shared_->stale.assign(missing.size(), false);
  shared_->rebuilds.resize(missing.size());
  shared_->missing = std::move(missing);
}

std::string DiskSet::path(uint32_t disk) const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  return shared_->paths[disk];
}

DiskState DiskSet::state(uint32_t disk) const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  if (shared_->missing[disk]) return DiskState::kMissing;
  return shared_->stale[disk] ? DiskState::kStale : DiskState::kHealthy;
}

void DiskSet::ClearStale(uint32_t disk) const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  shared_->stale[disk] = false;
}

std::shared_ptr<RebuildWatch> DiskSet::WatchRebuild(uint32_t disk) const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  shared_->rebuilds[disk] = std::make_shared<RebuildWatch>();
  return shared_->rebuilds[disk];
}

void DiskSet::EndRebuild(uint32_t disk) const {
  std::shared_ptr<RebuildWatch> watch;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    watch = std::move(shared_->rebuilds[disk]);
  }
  if (watch) watch->Release();
}

std::shared_ptr<RebuildWatch> DiskSet::rebuild(uint32_t disk) const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  return shared_->rebuilds[disk];
}

void DiskSet::BeginCreate() const {
  std::unique_lock<std::mutex> lock(shared_->mu);
  for (;;) {
    std::shared_ptr<RebuildWatch> held;
    for (const auto& w : shared_->rebuilds)
      if (w && w->holding()) held = w;
    if (!held) break;
    lock.unlock();
    held->AwaitRelease();
    lock.lock();
  }
  // Counted under the same lock as the check: a hold that begins after it waits for this creation.
  ++shared_->creating;
}

void DiskSet::EndCreate(const RebuildWatch::CreatedFile* file) const {
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    // Told before the count drops: a rebuild awaiting the creations then finds the file.
    if (file != nullptr)
      for (const auto& w : shared_->rebuilds)
        if (w) w->Created(*file);
    --shared_->creating;
  }
  shared_->creations_done.notify_all();
}

void DiskSet::AwaitCreations() const {
  std::unique_lock<std::mutex> lock(shared_->mu);
  shared_->creations_done.wait(lock, [this] { return shared_->creating == 0; });
}

void DiskSet::NoteRemoved(const std::string& file_id) const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  for (const auto& w : shared_->rebuilds)
    if (w) w->Removed(file_id);
}

bool DiskSet::degraded() const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  for (bool m : shared_->missing)
    if (m) return true;
  return false;
}

std::vector<std::string> DiskSet::DegradedNotes() const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  std::vector<std::string> notes;
  for (uint32_t d = 0; d < size_; ++d) {
    if (shared_->missing[d])
      notes.push_back("degraded: disk " + std::to_string(d) + " (" + shared_->paths[d] +
                      ") is missing; files are read through parity");
    if (shared_->stale[d])
      notes.push_back("stale: disk " + std::to_string(d) + " (" + shared_->paths[d] +
                      ") is back but missed writes while it was lost; the files written meanwhile read it through "
                      "parity until graphfs-scrub resyncs it");
  }
  return notes;
}

DiskRegistry DiskSet::registry() const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  return {set_id_, shared_->paths, parity_};
}

std::string DiskSet::PartPath(uint32_t disk, const std::string& file_id) const {
  return path(disk) + "/parts/" + file_id;
}

Status DiskSet::Replace(uint32_t disk, const std::string& dir) const {
  if (disk >= size_)
    return Error(EINVAL, "disk " + std::to_string(disk) + ": the set has disks 0.." + std::to_string(size_ - 1));
  if (state(disk) != DiskState::kMissing)
    return Error(EINVAL, "disk " + std::to_string(disk) + " (" + path(disk) + ") is not missing: nothing to switch");
  const std::string label = "disk " + std::to_string(disk) + " (" + dir + ")";
  auto id = ReadIdentity(dir);
  if (!id.ok()) return id.error().Wrap(label);
  if (id->set_id != set_id_ || id->index != disk || id->count != size_)
    return Error(EINVAL, label + " carries disk " + std::to_string(id->index) + " of " + std::to_string(id->count) +
                             " of set " + id->set_id + ", not disk " + std::to_string(disk) + " of set " + set_id_);
  struct stat st;
  if (::stat((dir + "/parts").c_str(), &st) != 0) return Error::FromErrno(label + ": parts directory");
  std::lock_guard<std::mutex> lock(shared_->mu);
  shared_->paths[disk] = Absolute(dir);
  shared_->missing[disk] = false;
  return Status::Ok();
}

Status DiskSet::TakeBack(uint32_t disk) const {
  if (disk >= size_)
    return Error(EINVAL, "disk " + std::to_string(disk) + ": the set has disks 0.." + std::to_string(size_ - 1));
  if (state(disk) != DiskState::kMissing)
    return Error(EINVAL, "disk " + std::to_string(disk) + " (" + path(disk) + ") is not missing: nothing to take back");
  const std::string dir = path(disk);
  const std::string label = "disk " + std::to_string(disk) + " (" + dir + ")";
  auto id = ReadIdentity(dir);
  if (!id.ok()) {
    if (id.error().code() == ENOENT) {
      struct stat st;
      if (::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        return Error(ENODEV, label + ": the directory is there but holds no " + std::string(kDiskIdentityFile) +
                                 " (an empty directory, or the disk not mounted on it): not this set's disk");
      return Error(ENOENT, label + ": not there");
    }
    return Error(EINVAL, label + ": " + id.error().message());
  }
  if (id->set_id != set_id_ || id->index != disk || id->count != size_)
    return Error(EINVAL, label + " holds disk " + std::to_string(id->index) + " of " + std::to_string(id->count) +
                             " of set " + id->set_id + ", not disk " + std::to_string(disk) + " of " +
                             std::to_string(size_) + " of set " + set_id_);
  struct stat st;
  if (::stat((dir + "/parts").c_str(), &st) != 0)
    return Error(EINVAL, label + " carries this set's identity but no readable parts directory: " + std::strerror(errno));
  std::lock_guard<std::mutex> lock(shared_->mu);
  if (!shared_->missing[disk]) return Error(EINVAL, label + " is not missing: nothing to take back");
  if (shared_->rebuilds[disk])
    return Error(EBUSY, label + " is there again, but the daemon rebuilds it elsewhere: the rebuild's switch decides");
  // Missing and stale change together: no read sees the disk present and in step before the
  // files have been asked about their records.
  shared_->missing[disk] = false;
  shared_->stale[disk] = true;
  return Status::Ok();
}

void DiskSet::Track(std::weak_ptr<StripedFile> file) const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  // Drop the closed ones now and then, so the list follows the files open, not all ever opened.
  if (shared_->files.size() >= 64 && (shared_->files.size() & (shared_->files.size() - 1)) == 0)
    std::erase_if(shared_->files, [](const std::weak_ptr<StripedFile>& f) { return f.expired(); });
  shared_->files.push_back(std::move(file));
}

std::vector<std::shared_ptr<StripedFile>> DiskSet::OpenFiles() const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  std::erase_if(shared_->files, [](const std::weak_ptr<StripedFile>& f) { return f.expired(); });
  std::vector<std::shared_ptr<StripedFile>> open;
  for (const std::weak_ptr<StripedFile>& f : shared_->files)
    if (auto file = f.lock()) open.push_back(std::move(file));
  return open;
}

std::mutex& DiskSet::RowLock(const std::string& file_id, uint64_t row) const {
  const uint64_t h = XXH3_64bits_withSeed(file_id.data(), file_id.size(), row);
  return shared_->row_locks[h % shared_->row_locks.size()];
}

Result<DiskRegistry> ReadRegistry(const std::string& graph_dir) {
  const std::string path = graph_dir + "/" + kRegistryDir + "/" + kRegistryFile;
  auto text = ReadSmallFile(path);
  if (!text.ok()) return text.error();
  auto r = DecodeRegistry(*text);
  if (!r.ok()) return Error(EINVAL, "damaged disk registry " + path + ": " + r.error().message());
  return r;
}

Status WriteRegistry(const std::string& graph_dir, const DiskRegistry& registry) {
  const std::string dir = graph_dir + "/" + kRegistryDir;
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return Error::FromErrno("create " + dir);
  return WriteFileAtomic(dir + "/" + kRegistryFile, EncodeRegistry(registry));
}

std::string EncodeRegistry(const DiskRegistry& registry) {
  // `parity` is new (issue 44): a reader of before ignores it, and its absence means 0.
  const json j = {{"version", 1}, {"set", registry.set_id}, {"disks", registry.disks}, {"parity", registry.parity}};
  return j.dump(2) + "\n";
}

Result<DiskRegistry> DecodeRegistry(const std::string& text) {
  auto parsed = ParseJson(text);
  if (!parsed.ok()) return parsed.error();
  const json& j = *parsed;
  auto set = StringField(j, "set");
  if (!set.ok()) return set.error();
  DiskRegistry r;
  r.set_id = std::move(*set);
  if (!j.contains("disks") || !j["disks"].is_array()) return Error(EINVAL, "no array 'disks'");
  for (const json& d : j["disks"]) {
    if (!d.is_string()) return Error(EINVAL, "a disk path is not a string: " + ShownJson(d));
    r.disks.push_back(d.get<std::string>());
  }
  if (j.contains("parity")) {
    auto parity = UnsignedField(j, "parity", StripeLayout::kMaxParity);
    if (!parity.ok()) return parity.error();
    if (*parity >= r.disks.size() && *parity > 0)
      return Error(EINVAL, "parity " + std::to_string(*parity) + " over " + std::to_string(r.disks.size()) + " disks");
    r.parity = static_cast<uint32_t>(*parity);
  }
  return r;
}

std::string EncodeDiskIdentity(const DiskIdentity& id) {
  const json j = {{"version", 1}, {"set", id.set_id}, {"index", id.index}, {"count", id.count}};
  return j.dump() + "\n";
}

Result<DiskIdentity> DecodeDiskIdentity(const std::string& text) {
  auto parsed = ParseJson(text);
  if (!parsed.ok()) return parsed.error();
  const json& j = *parsed;
  auto set = StringField(j, "set");
  if (!set.ok()) return set.error();
  auto index = UnsignedField(j, "index", UINT32_MAX);
  if (!index.ok()) return index.error();
  auto count = UnsignedField(j, "count", UINT32_MAX);
  if (!count.ok()) return count.error();
  if (*index >= *count)
    return Error(EINVAL, "disk " + std::to_string(*index) + " of a set of " + std::to_string(*count));
  return DiskIdentity{std::move(*set), static_cast<uint32_t>(*index), static_cast<uint32_t>(*count)};
}

std::vector<std::string> FindRegistries(const std::string& root, int max_depth) {
  std::vector<std::string> found;
  struct stat st;
  if (::stat((root + "/" + kRegistryDir + "/" + kRegistryFile).c_str(), &st) == 0) found.push_back(root);
  if (max_depth <= 0) return found;
  DIR* dir = ::opendir(root.c_str());
  if (dir == nullptr) return found;
  while (struct dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) continue;
    std::string child = root + "/" + e->d_name;
    if (e->d_type == DT_UNKNOWN && (::lstat(child.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))) continue;
    auto sub = FindRegistries(child, max_depth - 1);
    found.insert(found.end(), sub.begin(), sub.end());
  }
  ::closedir(dir);
  return found;
}

}  // namespace graphfs
