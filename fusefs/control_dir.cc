#include "fusefs/control_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <sstream>

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
  if (fs.readahead_budget)
    j["readahead"] = {{"memory_used", fs.readahead_budget->used()}, {"memory_limit", fs.readahead_budget->limit()}};
  j["inodes"] = fs.inodes.size();
  j["cache_size"] = fs.options.cache_bytes;
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
  std::istringstream in(data);
  long disk = -1, err = -1;
  if (!(in >> disk >> err) || disk < 0 || err < 0 || err > 4095 || fs.io == nullptr ||
      static_cast<uint64_t>(disk) >= fs.io->disks())
    return Error(EINVAL, "fault: expected 'DISK ERRNO' with DISK below the disk count");
  fs.io->InjectFault(static_cast<uint32_t>(disk), static_cast<int>(err));
  LogError("fault injection: disk " + std::to_string(disk) + " now fails with errno " + std::to_string(err));
  return Status::Ok();
}

}  // namespace graphfs
