#include "fusefs/control_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fusefs/control_parse.h"
#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

using json = nlohmann::json;
const time_t kMountTime = std::time(nullptr);

}  // namespace

const std::vector<const char*>& ControlFileNames() {
  static const std::vector<const char*> names = {"stats", "fault"};
  return names;
}

void FillControlStat(const Inode& inode, struct stat* st) {
  if (inode.kind == Inode::Kind::kJobsDir || inode.kind == Inode::Kind::kJobDir ||
      inode.kind == Inode::Kind::kJobFile) {
    JobsDir::Stat(inode, st);
    st->st_atime = st->st_mtime = st->st_ctime = std::max(st->st_mtime, kMountTime);
    return;
  }
  std::memset(st, 0, sizeof *st);
  st->st_ino = reinterpret_cast<uintptr_t>(&inode);
  st->st_uid = 0;
  st->st_gid = 0;
  st->st_atime = st->st_mtime = st->st_ctime = kMountTime;
  if (inode.kind == Inode::Kind::kControlDir) {
    st->st_mode = S_IFDIR | 0555;
    st->st_nlink = 2;
  } else {
    st->st_mode = S_IFREG | (inode.control_name == "fault" ? 0600 : 0444);
    st->st_nlink = 1;
    st->st_size = 0;  // generated at open; read until EOF
  }
}

std::string ProcessName(uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  if (!std::getline(in, name)) return "(exited)";
  return name;
}

json RenderCache(const cache::CacheStats& c) {
  json procs = json::array();
  for (const cache::ProcessStats& p : c.processes) {
    procs.push_back({{"pid", p.pid},
                     {"name", ProcessName(p.pid)},
                     {"hits", p.hits},
                     {"misses", p.misses},
                     {"bypassed", p.bypassed},
                     {"bytes_served", p.bytes_served},
                     {"bytes_from_cache", p.bytes_from_cache},
                     {"bytes_loaded", p.bytes_loaded},
                     {"bytes_loaded_per_disk", p.disk_bytes},
                     {"bytes_bypassed", p.bytes_bypassed}});
  }
  const uint64_t lookups = c.hits + c.misses;
  // Of the bytes handed to readers from the cache, the share that cost no disk read.
  const double byte_hit_ratio =
      c.bytes_served == 0 ? 0.0 : 1.0 - std::min(1.0, static_cast<double>(c.bytes_loaded) / static_cast<double>(c.bytes_served));
  return {{"policy", cache::PolicyName(c.policy)},
          {"capacity", c.capacity},
          {"used", c.used},
          {"units", c.units},
          {"staged", c.staged},
          {"staged_units", c.staged_units},
          {"hits", c.hits},
          {"misses", c.misses},
          {"hit_ratio", lookups == 0 ? 0.0 : static_cast<double>(c.hits) / static_cast<double>(lookups)},
          {"bypassed", c.bypassed},
          {"admissions", c.admissions},
          {"rejections", c.rejections},
          {"evictions", c.evictions},
          {"prefetches", c.prefetches},
          {"prefetches_skipped", c.prefetches_skipped},
          {"load_errors", c.load_errors},
          {"byte_hit_ratio", byte_hit_ratio},
          {"bytes_served", c.bytes_served},
          {"bytes_from_cache", c.bytes_from_cache},
          {"bytes_loaded", c.bytes_loaded},
          {"prefetched_unused_bytes", c.prefetched_unused_bytes},
          {"bytes_bypassed", c.bytes_bypassed},
          {"processes", procs}};
}

std::string RenderStats(GraphFs& fs) {
  json j;
  j["source"] = fs.source;
  j["io_mode"] = fs.options.shared_queue ? "shared" : "perdisk";
  json disks = json::array();
  if (fs.io && fs.disks) {
    for (uint32_t d = 0; d < fs.io->disks(); ++d) {
      const DiskCounters& c = fs.io->counters(d);
      disks.push_back({{"index", d},
                       {"path", fs.disks ? fs.disks->path(d) : ""},
                       {"bytes_read", c.bytes_read.load()},
                       {"bytes_written", c.bytes_written.load()},
                       {"reads", c.reads.load()},
                       {"writes", c.writes.load()},
                       {"errors", c.errors.load()},
                       {"queued", c.queued.load()},
                       {"fault", fs.io->fault(d)}});
    }
  }
  j["disks"] = disks;
  const MountCounters& m = fs.counters;
  j["requests"] = {{"striped_reads", m.striped_reads.load()},
                   {"striped_writes", m.striped_writes.load()},
                   {"passthrough_reads", m.passthrough_reads.load()},
                   {"passthrough_writes", m.passthrough_writes.load()},
                   {"bytes_read", m.bytes_read.load()},
                   {"bytes_written", m.bytes_written.load()},
                   {"errors", m.errors.load()}};
  if (fs.cache) j["cache"] = RenderCache(fs.cache->Stats());
  json indexes = json::array();
  for (const GraphIndexes::IndexState& s : fs.indexes.List())
    indexes.push_back({{"graph", s.dir},
                       {"in_use", s.loaded},
                       {"column_chunks", s.column_chunks},
                       {"row_chunks", s.row_chunks},
                       {"error", s.error}});
  j["indexes"] = indexes;
  nlohmann::json jobs = fs.jobs.StatsJson(fs);
  j["jobs"] = jobs["jobs"];
  j["schedulers"] = jobs["schedulers"];
  j["inodes"] = fs.inodes.size();
  // Handles the kernel holds, not counting the one this read comes through (it is handed
  // over after the content is made).
  j["open_files"] = fs.handles.files();
  j["open_dirs"] = fs.handles.dirs();
  return j.dump(2) + "\n";
}

Result<std::string> OpenControlFile(GraphFs& fs, const Inode& inode, int flags, uid_t caller) {
  const bool writing = (flags & O_ACCMODE) != O_RDONLY;
  if (inode.control_name == "stats") {
    if (writing) return Error(EACCES, "stats is read-only");
    return RenderStats(fs);
  }
  if (inode.control_name == "fault") {
    if (caller != 0) return Error(EACCES, "fault injection is for root");
    std::ostringstream out;
    if (fs.io)
      for (uint32_t d = 0; d < fs.io->disks(); ++d) out << d << " " << fs.io->fault(d) << "\n";
    return out.str();
  }
  return Error(ENOENT, "no such control file");
}

Status WriteControlFile(GraphFs& fs, const Inode& inode, const std::string& data, uid_t caller) {
  if (inode.control_name != "fault") return Error(EACCES, "read-only control file");
  if (caller != 0) return Error(EACCES, "fault injection is for root");
  auto fault = ParseFaultLine(data, fs.io == nullptr ? 0 : fs.io->disks());
  if (!fault.ok()) return fault.error();
  fs.io->InjectFault(fault->disk, fault->error);
  LogError("fault injection: disk " + std::to_string(fault->disk) + " now fails with errno " +
           std::to_string(fault->error));
  return Status::Ok();
}

}  // namespace graphfs
