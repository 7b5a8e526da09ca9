// READ: the handle's kind picks the path (read_paths.h: ordinary, striped, extent map; a job's
// files in jobs_files.cc; the control files' snapshots here), and the handler's thread CPU is
// counted per path around it (`.graphfs/stats`: CPU per delivered GB, control_dir.cc).
#include <algorithm>
#include <memory>
#include <string>

#include "common/clock.h"
#include "fusefs/file_handle.h"
#include "fusefs/graphfs.h"
#include "fusefs/read_paths.h"

namespace graphfs {

namespace {

// Adds the thread's CPU from here to the end of the scope to a read path's counter.
class ReadCpu {
 public:
  ReadCpu(MountCounters& counters, FileHandle::Kind kind) : counters_(counters), start_(ThreadCpuNs()) {
    switch (kind) {
      case FileHandle::Kind::kJob: path_ = static_cast<int>(ReadPath::kLp); break;
      case FileHandle::Kind::kStriped: path_ = static_cast<int>(ReadPath::kStriped); break;
      case FileHandle::Kind::kMapped: path_ = static_cast<int>(ReadPath::kMapped); break;
      case FileHandle::Kind::kPlain: path_ = static_cast<int>(ReadPath::kOrdinary); break;
      default: path_ = -1;
    }
  }
  ~ReadCpu() {
    if (path_ >= 0) counters_.path_cpu_ns[path_].fetch_add(static_cast<uint64_t>(ThreadCpuNs() - start_), std::memory_order_relaxed);
  }
  ReadCpu(const ReadCpu&) = delete;
  ReadCpu& operator=(const ReadCpu&) = delete;

 private:
  MountCounters& counters_;
  int64_t start_;
  int path_ = -1;
};

void Read(fuse_req_t req, fuse_ino_t, size_t size, off_t offset, fuse_file_info* fi) {
  GraphFs& fs = Fs(req);
  FileHandle& h = FileHandleOf(fi);
  ReadCpu cpu(fs.counters, h.kind);
  switch (h.kind) {
    case FileHandle::Kind::kPlain:
      return ReadPlain(req, h, size, offset);
    case FileHandle::Kind::kStriped:
      return ReadStriped(req, h, size, offset);
    case FileHandle::Kind::kMapped:
      return ReadMapped(req, h, size, offset);
    // The reply must not point into the handle: once the kernel has the reply, the reader
    // may close the file, and RELEASE frees the handle on another thread while this one is
    // still returning from writev (TSan sees that as a race). A job file's handle is shared
    // for the call; a control file's bytes are copied (they are small).
    case FileHandle::Kind::kJob: {
      const std::shared_ptr<JobFileHandle> job = h.job;
      return fs.jobs.Read(req, job, size, offset);
    }
    case FileHandle::Kind::kControl: {
      const uint64_t off = std::min<uint64_t>(static_cast<uint64_t>(offset), h.content.size());
      const std::string part = h.content.substr(off, std::min<uint64_t>(size, h.content.size() - off));
      return (void)fuse_reply_buf(req, part.data(), part.size());
    }
  }
}

}  // namespace

void AddReadOps(fuse_lowlevel_ops& ops) { ops.read = Read; }

}  // namespace graphfs
