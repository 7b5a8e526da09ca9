#include "fusefs/control_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
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

std::string RenderStats(GraphFs& fs) {
  json j;
  j["source"] = fs.source;
  j["io_mode"] = fs.options.io;
  fs.volume->AddStats(j);  // disks, cache, indexes
  const MountCounters& m = fs.counters;
  j["requests"] = {{"striped_reads", m.striped_reads.load()},
                   {"striped_writes", m.striped_writes.load()},
                   {"plain_reads", m.plain_reads.load()},
                   {"plain_writes", m.plain_writes.load()},
                   {"bytes_read", m.bytes_read.load()},
                   {"bytes_written", m.bytes_written.load()},
                   {"errors", m.errors.load()}};
  // Every request the kernel sent, by opcode (the daemon's reply to this read not yet).
  json kernel = json::object();
  for (const auto& [name, count] : fs.channel.RequestCounts()) kernel[name] = count;
  j["kernel_requests"] = std::move(kernel);
  fs.passthrough.AddStats(fs.channel, j);
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
    for (uint32_t d = 0; d < fs.volume->disk_count(); ++d) out << d << " " << fs.volume->fault(d) << "\n";
    return out.str();
  }
  return Error(ENOENT, "no such control file");
}

Status WriteControlFile(GraphFs& fs, const Inode& inode, const std::string& data, uid_t caller) {
  if (inode.control_name != "fault") return Error(EACCES, "read-only control file");
  if (caller != 0) return Error(EACCES, "fault injection is for root");
  auto fault = ParseFaultLine(data, fs.volume->disk_count());
  if (!fault.ok()) return fault.error();
  fs.volume->InjectFault(fault->disk, fault->error);
  LogError("fault injection: disk " + std::to_string(fault->disk) + " now fails with errno " +
           std::to_string(fault->error));
  return Status::Ok();
}

}  // namespace graphfs
