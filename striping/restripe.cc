#include "striping/restripe.h"
#include "striping/restripe_detail.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/crash_point.h"
#include "common/size_parse.h"
#include "common/unique_fd.h"
#include "striping/disk_set.h"
#include "compress/codec.h"
#include "striping/manifest.h"
#include "striping/packed_stream.h"
#include "striping/set_files.h"
#include "striping/part_io.h"
#include "striping/restripe_crash_points.h"
#include "striping/stripe_parity.h"
#include "striping/striped_file.h"

namespace graphfs::restripe_detail {

// Splits PATH into the graph directory and the files to look at.
Result<std::pair<std::string, std::vector<std::string>>> ListTargets(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Error::FromErrno(path);
  std::vector<std::string> names;
  if (S_ISREG(st.st_mode)) {
    std::string p = path;
    size_t slash = p.find_last_of('/');
    std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : p.substr(0, slash));
    names.push_back(slash == std::string::npos ? p : p.substr(slash + 1));
    return std::make_pair(dir, names);
  }
  if (!S_ISDIR(st.st_mode)) return Error(EINVAL, path + " is neither a directory nor a regular file");
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) return Error::FromErrno(path);
  while (struct dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;  // ., .., .graphfs and our own temporary files
    names.push_back(e->d_name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return std::make_pair(path, names);
}


Status FsyncDir(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid() || ::fsync(fd.get()) != 0) return Error::FromErrno("fsync directory " + dir);
  return Status::Ok();
}

Status CopyMetadata(const std::string& from, const struct stat& st, int to_fd) {
  if (::fchown(to_fd, st.st_uid, st.st_gid) != 0) return Error::FromErrno("chown " + from);
  if (::fchmod(to_fd, st.st_mode & 07777) != 0) return Error::FromErrno("chmod " + from);
  ssize_t n = ::llistxattr(from.c_str(), nullptr, 0);
  if (n > 0) {
    std::vector<char> names(static_cast<size_t>(n));
    n = ::llistxattr(from.c_str(), names.data(), names.size());
    for (ssize_t i = 0; i < n;) {
      const char* name = names.data() + i;
      i += static_cast<ssize_t>(std::strlen(name) + 1);
      if (std::strncmp(name, kReservedXattrPrefix, std::strlen(kReservedXattrPrefix)) == 0) continue;
      ssize_t vn = ::lgetxattr(from.c_str(), name, nullptr, 0);
      if (vn < 0) continue;
      std::vector<char> value(static_cast<size_t>(vn));
      vn = ::lgetxattr(from.c_str(), name, value.data(), value.size());
      if (vn >= 0 && ::fsetxattr(to_fd, name, value.data(), static_cast<size_t>(vn), 0) != 0 && errno != ENOTSUP)
        return Error::FromErrno(std::string("copy xattr ") + name + " of " + from);
    }
  }
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  if (::futimens(to_fd, times) != 0) return Error::FromErrno("set times of " + from);
  return Status::Ok();
}

std::string PendingDir(const std::string& graph_dir, const char* kind) {
  return graph_dir + "/" + kRegistryDir + "/" + kind;
}

Status EnsurePendingDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return Error::FromErrno("create " + dir);
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return Error::FromErrno("open " + dir);
  while (struct dirent* e = ::readdir(d))
    if (std::strstr(e->d_name, ".tmp.") != nullptr) ::unlinkat(::dirfd(d), e->d_name, 0);
  ::closedir(d);
  return Status::Ok();
}

// ---- striping ------------------------------------------------------------------------


// pending-stripe/NAME.json (a plain file being striped) and pending-parity/NAME.json (a striped
// file copied into a layout with another K: its old parts are the source).
struct StripeRecord : PendingRecord {
  uint64_t done = 0;    // bytes copied and made durable (with their parity and sums: whole rows)
  uint32_t parity = 0;  // K of the layout being written; records of before have none: 0
  std::string old_id;   // pending-parity: the striped file it replaces
  json ToJson() const {
    json j = PendingRecord::ToJson();
    j["done"] = done;
    j["parity"] = parity;
    if (!old_id.empty()) j["old_id"] = old_id;
    return j;
  }
  void FromJson(const json& j) {
    PendingRecord::FromJson(j);
    done = j.at("done");
    parity = j.value("parity", 0u);
    old_id = j.value("old_id", std::string());
  }
};

int64_t MtimeNs(const struct stat& st) { return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec; }

// A file to stripe: its bytes in its stripe unit.
struct FileNeed {
  std::string name;
  uint64_t bytes = 0;
  uint64_t unit = 0;
};

Status CheckSpace(const DiskSet& disks, const std::vector<FileNeed>& needs_per_file, uint32_t parity) {
  std::vector<uint64_t> need(disks.size(), 0);
  for (const auto& [name, bytes, unit] : needs_per_file) {
    auto map = StripeMap::Create({unit, disks.size(), FirstDiskFor(name, disks.size()), parity});
    for (uint32_t d = 0; d < disks.size(); ++d) need[d] += map->PartSize(d, bytes);
  }
  for (uint32_t d = 0; d < disks.size(); ++d) {
    struct statvfs vfs;
    if (::statvfs(disks.path(d).c_str(), &vfs) != 0) return Error::FromErrno("statvfs " + disks.path(d));
    const uint64_t avail = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    if (need[d] > avail)
      return Error(ENOSPC, "disk " + std::to_string(d) + " (" + disks.path(d) + ") has " + FormatSize(avail) +
                               " free, striping needs " + FormatSize(need[d]) + " there; nothing was changed");
  }
  return Status::Ok();
}

Result<uint64_t> HashParts(const DiskSet& disks, const StripeManifest& m, std::vector<char>& buf) {
  auto map = StripeMap::Create(m.layout);
  if (!map.ok()) return map.error();
  auto parts = OpenParts(disks, m.file_id, O_RDONLY);
  if (!parts.ok()) return parts.error();
  for (const UniqueFd& fd : *parts) ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  for (uint64_t off = 0; off < m.size;) {
    const uint64_t len = std::min<uint64_t>(buf.size(), m.size - off);
    Status s = ReadFromParts(disks, *map, *parts, off, len, buf.data());
    if (!s.ok()) {
      XXH3_freeState(st);
      return s.error();
    }
    XXH3_64bits_update(st, buf.data(), len);
    off += len;
  }
  uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

Result<uint64_t> HashFile(int fd, uint64_t size, std::vector<char>& buf, const std::string& what) {
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  for (uint64_t off = 0; off < size;) {
    auto n = ReadFull(fd, buf.data(), std::min<uint64_t>(buf.size(), size - off), off, what);
    if (!n.ok() || *n == 0) {
      XXH3_freeState(st);
      return n.ok() ? Error(EIO, what + " ended early") : n.error();
    }
    XXH3_64bits_update(st, buf.data(), *n);
    off += *n;
  }
  uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

Status ReplaceWithStub(const Target& t, const struct stat& st, const StripeManifest& m) {
  const std::string path = t.path();
  const std::string stub_tmp = t.dir + "/." + t.name + ".graphfs-stub";
  ::unlink(stub_tmp.c_str());
  {
    UniqueFd stub(::open(stub_tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!stub.valid()) return Error::FromErrno("create " + stub_tmp);
    GRAPHFS_RETURN_IF_ERROR(WriteAll(stub.get(), kStubText, std::strlen(kStubText), 0, "write " + stub_tmp));
    GRAPHFS_RETURN_IF_ERROR(WriteManifestFd(stub.get(), m));
    GRAPHFS_RETURN_IF_ERROR(CopyMetadata(path, st, stub.get()));
    if (::fsync(stub.get()) != 0) return Error::FromErrno("fsync " + stub_tmp);
  }
  if (::rename(stub_tmp.c_str(), path.c_str()) != 0) return Error::FromErrno("replace " + path);
  return FsyncDir(t.dir);
}

Result<ConvertSource> ConvertSource::Open(const DiskSet& disks, const Target& t,
                                          const std::optional<StripeManifest>& old) {
  const std::string path = t.path();
  ConvertSource s;
  s.fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!s.fd.valid()) return Error::FromErrno("open " + path);
  if (::fstat(s.fd.get(), &s.st) != 0) return Error::FromErrno("stat " + path);
  s.size = old ? old->size : static_cast<uint64_t>(s.st.st_size);
  if (old) {
    auto m = StripeMap::Create(old->layout);
    if (!m.ok()) return m.error().Wrap(path);
    s.map = *m;
    auto p = OpenParts(disks, old->file_id, O_RDONLY);
    if (!p.ok()) return p.error().Wrap(path);
    s.parts = std::move(*p);
  }
  return s;
}

Status ConvertSource::Read(const DiskSet& disks, uint64_t off, uint64_t len, char* to, const std::string& path) const {
  if (map) return ReadFromParts(disks, *map, parts, off, len, to);
  auto n = ReadFull(fd.get(), to, len, off, "read " + path);
  if (!n.ok()) return n.error();
  if (*n != len) return Error(EIO, path + " shrank while being converted");
  return Status::Ok();
}

Status SwitchToCopy(const DiskSet& disks, const Target& t, const struct stat& st, uint64_t size,
                    const std::optional<StripeManifest>& old, const StripeManifest& m, const std::string& doing,
                    std::string_view switched, std::string_view old_removed) {
  const std::string path = t.path();
  if (!old) {
    struct stat now;
    if (::stat(path.c_str(), &now) != 0) return Error::FromErrno("stat " + path);
    if (now.st_ino != st.st_ino || static_cast<uint64_t>(now.st_size) != size || MtimeNs(now) != MtimeNs(st))
      return Error(EAGAIN, path + " changed while " + doing + "; run again");
    return ReplaceWithStub(t, st, m);
  }
  // In place: the stub's manifest switches to the new copy in one fsetxattr, made durable, if
  // nothing changed the file meanwhile; the old parts go after.
  UniqueFd stub(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!stub.valid()) return Error::FromErrno("open " + path);
  auto now = ReadManifestFd(stub.get());
  if (!now.ok()) return now.error().Wrap(path);
  if (!now->has_value() || (*now)->file_id != old->file_id || (*now)->size != old->size || (*now)->packed)
    return Error(EAGAIN, path + " changed while " + doing + "; run again");
  GRAPHFS_RETURN_IF_ERROR(WriteManifestFd(stub.get(), m));
  if (::fsync(stub.get()) != 0) return Error::FromErrno("fsync " + path);
  CrashPoint(switched);  // an empty name is no point
  RemovePartsOf(disks, old->file_id);
  CrashPoint(old_removed);
  return Status::Ok();
}

Status StripeOne(const DiskSet& disks, const Target& t, const StripeRequest& req, uint64_t unit,
                 const std::optional<StripeManifest>& striped, std::vector<char>& buf, ConvertReport& report) {
  const std::string path = t.path();
  const std::string pending_dir = PendingDir(t.dir, striped ? "pending-parity" : "pending-stripe");
  const std::string record_path = pending_dir + "/" + t.name + ".json";
  // A stub a killed run left (the original is still in place) is removed by ReplaceWithStub.

  auto source = ConvertSource::Open(disks, t, striped);
  if (!source.ok()) return source.error();
  const UniqueFd& src = source->fd;
  const struct stat& st = source->st;
  const uint64_t size = source->size;

  // Resume a matching pending record; discard a stale one (the file changed since).
  StripeRecord rec;
  static_cast<PendingRecord&>(rec) = {NewId(), size, MtimeNs(st), st.st_ino, unit, FirstDiskFor(t.name, disks.size())};
  rec.parity = req.parity;
  if (striped) {
    rec.first = striped->layout.first_disk;
    rec.old_id = striped->file_id;
  }
  auto old_text = ReadSmallFile(record_path);
  std::optional<StripeRecord> old = old_text.ok() ? ParseRecord<StripeRecord>(*old_text) : std::nullopt;
  const bool resuming = old && old->SameSource(rec) && old->parity == rec.parity && old->old_id == rec.old_id;
  if (resuming) {
    rec = *old;
  } else {
    // (A record whose copy the stub names already was finished by FinishPendingParity.)
    if (old && !(striped && old->id == striped->file_id)) RemovePartsOf(disks, old->id);
    // The record goes first: a part file never exists without a record naming it.
    GRAPHFS_RETURN_IF_ERROR(WriteFileAtomic(record_path, rec.ToJson().dump() + "\n"));
    if (striped) CrashPoint(kStripeCrashParityRecord);
  }
  // Also when resuming: a run killed right after writing the record left no parts.
  GRAPHFS_RETURN_IF_ERROR(StripedFile::CreateParts(disks, rec.id));
  StripeManifest m;
  m.file_id = rec.id;
  m.set_id = disks.set_id();
  m.size = size;
  m.layout = {unit, disks.size(), rec.first, rec.parity};
  if (rec.parity > 0) m.sum_block = req.sum_block;
  auto map = StripeMap::Create(m.layout);
  if (!map.ok()) return map.error();
  // Parity is written a row at a time, so a checkpoint of a file with parity falls on a row.
  std::unique_ptr<StripeParityWriter> parity;
  if (rec.parity > 0) {
    auto w = StripeParityWriter::Open(disks, m, resuming && rec.done % (unit * map->data_units()) == 0);
    if (!w.ok()) return w.error();
    parity = std::move(*w);
    if (!parity->resumed()) rec.done = 0;
  }

  auto opened = OpenParts(disks, rec.id, O_WRONLY);
  if (!opened.ok()) return opened.error();
  std::vector<UniqueFd>& parts = *opened;
  if (striped) CrashPoint(kStripeCrashParityParts);
  ProgressLine progress(req.progress, t.name, size);
  progress.Start(rec.done);
  if (!striped) ::posix_fadvise(src.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  uint64_t since_checkpoint = 0;
  for (uint64_t off = rec.done; off < size;) {
    const uint64_t len = std::min<uint64_t>(buf.size(), size - off);
    GRAPHFS_RETURN_IF_ERROR(source->Read(disks, off, len, buf.data(), path));
    GRAPHFS_RETURN_IF_ERROR(WriteToParts(disks, *map, parts, off, len, buf.data()));
    if (parity) GRAPHFS_RETURN_IF_ERROR(parity->AddRows(off, buf.data(), len, parts));
    if (!striped) ::posix_fadvise(src.get(), static_cast<off_t>(off), static_cast<off_t>(len), POSIX_FADV_DONTNEED);
    off += len;
    since_checkpoint += len;
    if (since_checkpoint >= req.checkpoint || off == size) {
      for (uint32_t d = 0; d < disks.size(); ++d)
        if (::fdatasync(parts[d].get()) != 0) return Error::FromErrno("fsync part on disk " + std::to_string(d));
      if (parity) GRAPHFS_RETURN_IF_ERROR(parity->Sync());
      rec.done = off;
      GRAPHFS_RETURN_IF_ERROR(WriteFileAtomic(record_path, rec.ToJson().dump() + "\n"));
      if (striped && off < size) CrashPoint(kStripeCrashParityCheckpointed);
      since_checkpoint = 0;
    }
    progress.Update(off);
  }
  for (uint32_t d = 0; d < disks.size(); ++d) {
    if (::ftruncate(parts[d].get(), static_cast<off_t>(map->PartSize(d, size))) != 0 || ::fsync(parts[d].get()) != 0)
      return Error::FromErrno("finish part on disk " + std::to_string(d));
  }
  if (parity) GRAPHFS_RETURN_IF_ERROR(parity->Finish());
  if (striped) CrashPoint(kStripeCrashParityCopied);
  progress.Finish(size);

  // Verify: the parts, read back from disk, must hash like the original (a striped source's
  // recorded checksum, else its parts read again).
  Result<uint64_t> want = striped && striped->checksum ? Result<uint64_t>(*striped->checksum)
                          : striped                    ? HashParts(disks, *striped, buf)
                                                       : HashFile(src.get(), size, buf, path);
  if (!want.ok()) return want.error();
  auto got = HashParts(disks, m, buf);
  if (!got.ok()) return got.error();
  if (*got != *want)
    return Error(EIO, path + ": the striped copy does not match the original (checksum); the original is kept");
  if (parity) {
    Status checked = VerifyStripeParity(disks, m);
    if (!checked.ok()) return checked.error().Wrap(path + " (its parity or sums; the original is kept)");
  }
  m.checksum = *want;

  // (A kill after the switch, before the old parts go: the next run's FinishPendingParity.)
  GRAPHFS_RETURN_IF_ERROR(
      SwitchToCopy(disks, t, st, size, striped, m, striped ? "its parity was being written" : "being striped",
                   kStripeCrashParitySwitched, kStripeCrashParityOldRemoved));
  ::unlink(record_path.c_str());
  if (striped) CrashPoint(kStripeCrashParityRecordRemoved);
  report.converted.push_back(t.name);
  report.units.push_back(unit);
  report.bytes += size;
  report.stored += size;
  return Status::Ok();
}

// Finishes what a killed run that gave striped file `t` another K left: when the stub names the
// new copy (`now`), the old parts and the record go; otherwise, unless `keep_unswitched` (this run
// resumes it), the copy's parts and the record go.
void FinishPendingParity(const DiskSet& disks, const Target& t, const StripeManifest& now, bool keep_unswitched) {
  const std::string record_path = PendingDir(t.dir, "pending-parity") + "/" + t.name + ".json";
  auto text = ReadSmallFile(record_path);
  if (!text.ok()) return;
  std::optional<StripeRecord> rec = ParseRecord<StripeRecord>(*text);
  if (rec && rec->id == now.file_id) {
    if (!rec->old_id.empty() && rec->old_id != now.file_id) RemovePartsOf(disks, rec->old_id);
  } else if (keep_unswitched) {
    return;
  } else if (rec && rec->id != now.file_id) {
    RemovePartsOf(disks, rec->id);
  }
  ::unlink(record_path.c_str());
}

// The registry's parity raised to the fewest parity units of the set's files under `graph_dir`
// (its versions' pieces included), once they all have more than it says: it only ever went down
// before the files were rewritten (a mount may then start with that many disks missing).
Status RaiseRegistryParity(const std::string& graph_dir, DiskRegistry registry) {
  auto files = FindStripedFiles(graph_dir);
  if (!files.ok()) return files.error();
  uint32_t fewest = StripeLayout::kMaxParity;
  for (const StripedFileRef& f : *files)
    if (f.manifest.set_id == registry.set_id) fewest = std::min(fewest, f.manifest.layout.parity);
  if (files->empty() || fewest <= registry.parity) return Status::Ok();
  registry.parity = fewest;
  return WriteRegistry(graph_dir, registry);
}

// The stripe unit of `t` (`size` bytes, `st` its stat): req.unit, or req.unit_for's choice.
// With a choice, a pending record of the same source (size, mtime, inode) that a killed run of
// this kind left keeps the unit that run started with: a choice made again could differ (other
// calibrations, another --engine-request), and StripeOne/CompressOne would then throw the
// durable bytes away and start over.
Result<uint64_t> UnitFor(const StripeRequest& req, const Target& t, const struct stat& st, uint64_t size,
                         bool compressing) {
  if (!req.unit_for) return req.unit;
  const std::string record = PendingDir(t.dir, compressing ? "pending-compress" : "pending-stripe") + "/" + t.name + ".json";
  auto text = ReadSmallFile(record, kCompressRecordLimit);
  const std::optional<PendingRecord> pending = text.ok() ? ParseRecord<PendingRecord>(*text) : std::nullopt;
  if (pending && pending->size == size && pending->mtime_ns == MtimeNs(st) && pending->ino == st.st_ino &&
      pending->unit > 0 && pending->unit % kDirectAlign == 0) {
    if (req.progress)
      std::fprintf(stderr, "%s: resuming with unit %s, as the interrupted run started\n", t.name.c_str(),
                   FormatSize(pending->unit).c_str());
    return pending->unit;
  }
  const uint64_t unit = req.unit_for(t.name, size);
  if (unit == 0 || unit % kDirectAlign != 0)
    return Error(EINVAL, t.name + ": stripe unit " + std::to_string(unit) + " is not a positive multiple of 4 KiB");
  return unit;
}

}  // namespace graphfs::restripe_detail

namespace graphfs {

using namespace restripe_detail;

Result<ConvertReport> StripeFiles(const StripeRequest& req) {
  if (req.unit == 0) return Error(EINVAL, "stripe unit must be positive");
  if (req.unit % kDirectAlign != 0) return Error(EINVAL, "stripe unit must be a multiple of 4 KiB");
  if (req.parity > StripeLayout::kMaxParity)
    return Error(EINVAL, "--parity " + std::to_string(req.parity) + ": 0, 1 or 2");
  if (req.parity > 0 && req.parity >= req.disks.size())
    return Error(EINVAL, "--parity " + std::to_string(req.parity) + " needs at least " +
                             std::to_string(req.parity + 1) + " disks (got " + std::to_string(req.disks.size()) +
                             "): every row must keep a data unit");
  if (req.parity > 0 && (req.sum_block < kMinSumBlock || (req.sum_block & (req.sum_block - 1)) != 0))
    return Error(EINVAL, "checksum block " + std::to_string(req.sum_block) + ": a power of two from 4 KiB");
  auto targets = ListTargets(req.path);
  if (!targets.ok()) return targets.error();
  const std::string& graph_dir = targets->first;
  auto set = DiskSet::Claim(req.disks);
  if (!set.ok()) return set.error();
  auto existing = ReadRegistry(graph_dir);
  if (existing.ok() && existing->set_id != set->set_id())
    return Error(EINVAL, graph_dir + " is already striped over another disk set (" + existing->set_id +
                             "); unstripe it first");
  if (::mkdir((graph_dir + "/" + kRegistryDir).c_str(), 0755) != 0 && errno != EEXIST)
    return Error::FromErrno("create " + graph_dir + "/" + kRegistryDir);
  GRAPHFS_RETURN_IF_ERROR(EnsurePendingDir(PendingDir(graph_dir, "pending-stripe")));
  const bool compressing = !req.compress.empty();
  if (compressing && req.compress != kAutoCodec) {
    auto spec = compress::ParseCodecSpec(req.compress, req.record_size);
    if (!spec.ok()) return spec.error();
  }
  if (compressing) {
    GRAPHFS_RETURN_IF_ERROR(EnsurePendingDir(PendingDir(graph_dir, "pending-compress")));
  }
  if (req.change_parity) GRAPHFS_RETURN_IF_ERROR(EnsurePendingDir(PendingDir(graph_dir, "pending-parity")));

  ConvertReport report;
  std::vector<std::pair<Target, std::optional<StripeManifest>>> todo;  // with the manifest of a striped file
  // Striped raw files of the set whose K differs from the request's (change_parity): copied into
  // the request's layout, raw.
  std::vector<bool> relayout;
  std::vector<FileNeed> needs;  // todo's sizes and stripe units
  std::vector<struct stat> stats;  // todo's
  for (const std::string& name : targets->second) {
    Target t{graph_dir, name};
    struct stat st;
    if (::lstat(t.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    auto m = ReadManifest(t.path());
    if (!m.ok()) return m.error();
    if (m->has_value()) {
      ::unlink((PendingDir(graph_dir, "pending-stripe") + "/" + name + ".json").c_str());
      if ((*m)->packed) {
        FinishPendingCompression(*set, t, **m);
        report.skipped.push_back(name + ": already compressed");
        continue;
      }
      const bool other_k = req.change_parity && (*m)->layout.parity != req.parity;
      FinishPendingParity(*set, t, **m, /*keep_unswitched=*/other_k);
      if ((compressing || other_k) && (*m)->set_id == set->set_id()) {
        // Compressed afresh (its new stream gets the request's K), or, without --compress, copied
        // raw into a layout with the request's K in the unit it has.
        auto unit = compressing ? UnitFor(req, t, st, (*m)->size, compressing) : Result<uint64_t>((*m)->layout.unit);
        if (!unit.ok()) return unit.error();
        // (A raw copy keeps the file's own unit: also when `auto` declines to compress it.)
        for (uint64_t u : {*unit, other_k ? (*m)->layout.unit : *unit})
          if (req.parity > 0 && u % req.sum_block != 0)
            return Error(EINVAL, name + ": stripe unit " + std::to_string(u) + " is not a multiple of the checksum block (" +
                                     std::to_string(req.sum_block) + ")");
        todo.emplace_back(t, **m);
        relayout.push_back(other_k);
        needs.push_back({name, (*m)->size, *unit});
        stats.push_back(st);
      } else {
        report.skipped.push_back(name + ": already striped" +
                                 (req.change_parity && !other_k ? " with parity " + std::to_string(req.parity)
                                                                : std::string()));
      }
      continue;
    }
    if (static_cast<uint64_t>(st.st_size) < req.min_size) continue;
    if (st.st_nlink > 1) {
      report.skipped.push_back(name + ": has other hard links");
      continue;
    }
    auto unit = UnitFor(req, t, st, static_cast<uint64_t>(st.st_size), compressing);
    if (!unit.ok()) return unit.error();
    // Sum blocks tile the unit: a unit smaller than the block (or not a multiple) is refused.
    if (req.parity > 0 && *unit % req.sum_block != 0)
      return Error(EINVAL, name + ": stripe unit " + std::to_string(*unit) + " is not a multiple of the checksum block (" +
                               std::to_string(req.sum_block) + ")");
    todo.emplace_back(t, std::nullopt);
    relayout.push_back(false);
    needs.push_back({name, static_cast<uint64_t>(st.st_size), *unit});
    stats.push_back(st);
  }
  GRAPHFS_RETURN_IF_ERROR(CheckSpace(*set, needs, req.parity));
  // The registry's parity is the fewest parity units of the set's files (how many disks a mount
  // may miss): files striped before keep theirs, so it only goes down.
  DiskRegistry registry = set->registry();
  registry.parity = existing.ok() ? std::min(existing->parity, req.parity) : req.parity;
  GRAPHFS_RETURN_IF_ERROR(WriteRegistry(graph_dir, registry));
  std::vector<char> buf;
  if (req.checkpoint == 0) return Error(EINVAL, "checkpoint interval must be positive");
  // Copy in whole rows of units, at most 512 MiB (and no more than a checkpoint) at a time; with
  // parity, in whole rows of data units (each row's parity is encoded from the buffer).
  auto size_buffer = [&](uint64_t unit) {
    const uint64_t step = unit * (req.parity > 0 ? set->size() - req.parity : 1);
    uint64_t chunk = std::min<uint64_t>(std::max<uint64_t>(unit * set->size(), 64ull << 20), 512ull << 20);
    chunk = std::min(chunk, std::max(req.checkpoint, step));
    buf.resize(std::max<uint64_t>(chunk / step, 1) * step);
  };
  for (size_t i = 0; i < todo.size(); ++i) {
    const auto& [t, striped] = todo[i];
    size_buffer(needs[i].unit);
    if (!compressing) {
      GRAPHFS_RETURN_IF_ERROR(StripeOne(*set, t, req, needs[i].unit, striped, buf, report));
      continue;
    }
    auto outcome = CompressOne(*set, t, req, needs[i].unit, striped, buf, report);
    if (!outcome.ok()) return outcome.error();
    if (*outcome == CompressOutcome::kDeclined && (!striped || relayout[i])) {
      // `auto` keeps the raw bytes: the plain file is striped as it is, in the unit raw files get;
      // a striped one of another K is copied raw into the request's K, in its own unit.
      auto unit = striped ? Result<uint64_t>(striped->layout.unit)
                          : UnitFor(req, t, stats[i], needs[i].bytes, /*compressing=*/false);
      if (!unit.ok()) return unit.error();
      size_buffer(*unit);
      GRAPHFS_RETURN_IF_ERROR(StripeOne(*set, t, req, *unit, striped, buf, report));
    }
  }
  // Every file of the set that this run gave the request's K may let the registry's parity rise.
  if (req.change_parity) GRAPHFS_RETURN_IF_ERROR(RaiseRegistryParity(graph_dir, registry));
  return report;
}

}  // namespace graphfs
