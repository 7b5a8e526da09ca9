// graphfs-unstripe's side of restripe.h: a striped (or compressed) file back to a plain one,
// crash-safe (a pending-unstripe record), and finishing the ones a killed run left.
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

#include "common/size_parse.h"
#include "common/unique_fd.h"
#include "striping/disk_set.h"
#include "striping/journal_replay.h"
#include "compress/codec.h"
#include "striping/manifest.h"
#include "striping/packed_stream.h"
#include "striping/part_io.h"
#include "striping/striped_file.h"


namespace graphfs::restripe_detail {

Status UnstripeOne(const DiskSet& disks, const Target& t, const StripeManifest& m, bool show, std::vector<char>& buf,
                   ConvertReport& report) {
  const std::string path = t.path();
  const std::string record_path = PendingDir(t.dir, "pending-unstripe") + "/" + t.name + ".json";
  const std::string tmp = t.dir + "/." + t.name + ".graphfs-plain";
  GRAPHFS_RETURN_IF_ERROR(WriteFileAtomic(record_path, json{{"id", m.file_id}}.dump() + "\n"));

  auto map = StripeMap::Create(m.layout);
  if (!map.ok()) return map.error();
  // A file with sums is read through its parity, which does without up to K disks' parts.
  std::vector<UniqueFd> parts;
  if (m.sum_block == 0) {
    auto opened = OpenParts(disks, m.file_id, O_RDONLY);
    if (!opened.ok()) return opened.error();
    parts = std::move(*opened);
  }
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return Error::FromErrno("stat " + path);
  // Free space: the plain file needs the whole size on the source filesystem.
  struct statvfs vfs;
  if (::statvfs(t.dir.c_str(), &vfs) == 0 && static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize < m.size)
    return Error(ENOSPC, t.dir + " has " + FormatSize(static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize) +
                             " free, " + t.name + " needs " + FormatSize(m.size) + "; nothing was changed");
  UniqueFd out(::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!out.valid()) return Error::FromErrno("create " + tmp);
  ProgressLine progress(show, t.name, m.size);
  XXH3_state_t* hs = XXH3_createState();
  XXH3_64bits_reset(hs);
  // The plain bytes at `off`, in order: hashed and written out.
  auto write_out = [&](uint64_t off, const char* data, uint64_t len) -> Status {
    XXH3_64bits_update(hs, data, len);
    Status w = WriteAll(out.get(), data, len, off, "write " + tmp);
    if (!w.ok()) ::unlink(tmp.c_str());
    progress.Update(off + len);
    return w;
  };
  // Blocks a copy through the parity rebuilt (`of`: of which bytes), for the report.
  auto note_rebuilt = [&](uint64_t rebuilt, const std::string& of) {
    if (rebuilt > 0)
      report.notes.push_back(t.name + ": " + std::to_string(rebuilt) + " block(s) of " + FormatSize(m.sum_block) + of +
                             " rebuilt from parity (missing disk, failed read or bad checksum)");
  };
  Status copied = Status::Ok();
  if (m.packed && m.sum_block != 0) {
    // A compressed file with sums: its packed stream read through the parity, then decoded.
    uint64_t rebuilt = 0;
    copied = CopyPackedThroughParity(disks, m, write_out, rebuilt);
    if (!copied.ok()) copied = copied.error().Wrap(path + " (compressed; the striped file is kept)");
    if (copied.ok()) note_rebuilt(rebuilt, " of its packed stream");
  } else if (m.packed) {
    // A compressed file: every unit decoded from its frame, its checksum verified.
    auto dir = ReadPackedDirectory(disks, *map, parts, *m.packed);
    if (!dir.ok()) {
      copied = dir.error();
    } else if (dir->raw_size() != m.size) {
      copied = Error(EIO, "its compressed units hold " + std::to_string(dir->raw_size()) +
                              " bytes, the manifest says " + std::to_string(m.size));
    } else {
      copied = ForEachPackedUnit(disks, *map, parts, *dir, [&](const PackedUnit& u, std::span<const char> raw) {
        return write_out(u.raw_offset, raw.data(), raw.size());
      });
    }
    if (!copied.ok()) copied = copied.error().Wrap(path + " (compressed; the striped file is kept)");
  } else if (m.sum_block != 0) {
    uint64_t rebuilt = 0;
    copied = CopyThroughParity(disks, m, write_out, rebuilt);
    if (!copied.ok()) copied = copied.error().Wrap(path + " (the striped file is kept)");
    if (copied.ok()) note_rebuilt(rebuilt, "");
  } else {
    for (uint64_t off = 0; off < m.size && copied.ok();) {
      const uint64_t len = std::min<uint64_t>(buf.size(), m.size - off);
      copied = ReadFromParts(disks, *map, parts, off, len, buf.data());
      if (copied.ok()) copied = write_out(off, buf.data(), len);
      off += len;
    }
  }
  if (!copied.ok()) {
    XXH3_freeState(hs);
    return copied;
  }
  const uint64_t hash = XXH3_64bits_digest(hs);
  XXH3_freeState(hs);
  progress.Finish(m.size);
  if (m.checksum && *m.checksum != hash) {
    ::unlink(tmp.c_str());
    return Error(EIO, path + ": the striped data does not match the checksum recorded when it was striped; "
                             "the striped file is kept");
  }
  if (::ftruncate(out.get(), static_cast<off_t>(m.size)) != 0) return Error::FromErrno("size " + tmp);
  GRAPHFS_RETURN_IF_ERROR(CopyMetadata(path, st, out.get()));
  if (::fsync(out.get()) != 0) return Error::FromErrno("fsync " + tmp);
  out.reset();
  if (::rename(tmp.c_str(), path.c_str()) != 0) return Error::FromErrno("replace " + path);
  GRAPHFS_RETURN_IF_ERROR(FsyncDir(t.dir));
  RemovePartsOf(disks, m.file_id);
  ::unlink(record_path.c_str());
  report.converted.push_back(t.name);
  report.bytes += m.size;
  return Status::Ok();
}

// Finishes what killed unstripe runs left: parts of files that are plain again.
void FinishPendingUnstripes(const DiskSet& disks, const std::string& graph_dir) {
  const std::string dir = PendingDir(graph_dir, "pending-unstripe");
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.size() <= 5 || n.substr(n.size() - 5) != ".json") continue;
    const std::string name = n.substr(0, n.size() - 5);
    auto m = ReadManifest(graph_dir + "/" + name);
    if (m.ok() && m->has_value()) continue;  // still striped: the main loop redoes it
    auto text = ReadSmallFile(dir + "/" + n);
    if (text.ok()) {
      try {
        RemovePartsOf(disks, json::parse(*text).at("id").get<std::string>());
      } catch (...) {
      }
    }
    ::unlink((dir + "/" + n).c_str());
  }
  ::closedir(d);
}

}  // namespace graphfs::restripe_detail

namespace graphfs {

using namespace restripe_detail;

Result<ConvertReport> UnstripeFiles(const UnstripeRequest& req) {
  auto targets = ListTargets(req.path);
  if (!targets.ok()) return targets.error();
  const std::string& graph_dir = targets->first;
  auto registry = ReadRegistry(graph_dir);
  if (!registry.ok()) {
    if (registry.error().code() == ENOENT) return ConvertReport{};  // nothing striped here
    return registry.error();
  }
  if (!req.disks.empty()) {
    if (req.disks.size() != registry->disks.size())
      return Error(EINVAL, "--disks lists " + std::to_string(req.disks.size()) + " disks, the registry has " +
                               std::to_string(registry->disks.size()));
    registry->disks = req.disks;
  }
  auto set = DiskSet::Open(*registry);
  if (!set.ok()) return set.error();
  GRAPHFS_RETURN_IF_ERROR(EnsurePendingDir(PendingDir(graph_dir, "pending-unstripe")));
  FinishPendingUnstripes(*set, graph_dir);
  ConvertReport report;
  std::vector<char> buf(64ull << 20);
  for (const std::string& name : targets->second) {
    Target t{graph_dir, name};
    ::unlink((graph_dir + "/." + name + ".graphfs-plain").c_str());
    auto m = ReadManifest(t.path());
    if (!m.ok()) return m.error();
    if (!m->has_value()) continue;
    if ((*m)->set_id != set->set_id()) {
      report.skipped.push_back(name + ": striped over another disk set");
      continue;
    }
    // A stub with other links (graph versions share unchanged files so, graphfs-update): its
    // parts are the other names' bytes too, and unstriping removes them.
    if (struct stat st; ::stat(t.path().c_str(), &st) == 0 && st.st_nlink > 1) {
      report.skipped.push_back(name + ": shared with another graph version (hard links)");
      continue;
    }
    // The parts are read as they are: writes a killed mount journaled must be in place first.
    auto current = ReplayRowJournal(*set, t.path(), **m);
    if (!current.ok()) return current.error();
    GRAPHFS_RETURN_IF_ERROR(UnstripeOne(*set, t, *current, req.progress, buf, report));
  }
  // When nothing in the directory is striped any more, it no longer needs the disks (a graph
  // version's extent maps may still read striped pieces under .graphfs/pieces/).
  auto all = ListTargets(graph_dir);
  bool any = false;
  if (all.ok())
    for (const auto& n : all->second) {
      auto m = ReadManifest(graph_dir + "/" + n);
      any |= m.ok() && m->has_value();
    }
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(graph_dir + "/.graphfs/pieces", ec)) {
    auto m = ReadManifest(e.path().string());
    any |= m.ok() && m->has_value();
  }
  if (!any) ::unlink((graph_dir + "/" + kRegistryDir + "/" + kRegistryFile).c_str());
  return report;
}

}  // namespace graphfs
