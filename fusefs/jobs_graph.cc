// A job's `graph` (jobs_dir.h): the graph directory it names, committed at close — checked to
// lie inside SOURCE and to be readable by whoever wrote it — binds the job to that graph's
// schedule (leaving the old one's).
#include "fusefs/jobs_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "fusefs/control_parse.h"
#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

// The daemon reads a job's graph as root and serves it to the job: the directory must
// not lead out of SOURCE through a symlink, and whoever set it must be able to read the
// graph's files themselves (the kernel checked nothing: the job's files are ours).
Result<std::string> ReadableGraphDir(const GraphFs& fs, const std::string& path, const Credentials& writer) {
  char real[PATH_MAX];
  if (::realpath(path.c_str(), real) == nullptr)
    return errno == ENOENT ? Error(ENOENT, path + " is not a graph directory (it does not exist)")
                           : Error::FromErrno(path);
  const std::string dir = real;
  if (dir.rfind(fs.source + "/", 0) != 0)
    return Error(EACCES, path + " resolves to " + dir + ", outside the source directory " + fs.source);
  CallerCredentials as_writer(writer);
  for (const char* name : {"", "/meta", "/column"}) {
    const std::string file = dir + name;
    if (::faccessat(AT_FDCWD, file.c_str(), R_OK | (*name == '\0' ? X_OK : 0), AT_EACCESS) != 0 && errno != ENOENT)
      return Error::FromErrno(file + " (for uid " + std::to_string(writer.uid) + ")");
  }
  return dir;
}

}  // namespace

Status JobsDir::CommitGraph(GraphFs& fs, ControlJob& job, const std::string& text, const Credentials& writer) {
  if (text.empty()) return Error(EINVAL, "graph: empty path");
  auto relative = MountRelative(text, fs.mountpoint, fs.source);
  if (!relative.ok()) return relative.error();
  if (relative->empty())
    return Error(EINVAL, "graph: the mount root cannot be a graph (its .graphfs is the control directory); "
                         "put the graph in a subdirectory");
  auto dir = ReadableGraphDir(fs, fs.source + "/" + *relative, writer);
  if (!dir.ok()) return dir.error().Wrap("graph " + text);
  auto schedule = fs.volume->JobGraphFor(*dir);
  if (!schedule.ok()) return schedule.error().Wrap("graph " + text);
  Attach(*fs.volume);
  volume::JobGraph old;
  uint64_t partition_bytes;
  uint32_t hold;
  {
    std::lock_guard<std::mutex> lock(job.mu);
    if (job.schedule == *schedule) return Status::Ok();
    old = job.schedule;
    partition_bytes = job.partition_bytes;
    hold = job.hold;
  }
  // An open `memory` has the old graph's memory as its backing file, for as long as it is open.
  if (old && MemoryOpen(job))
    return Error(EBUSY, "graph: close `memory` first (it maps the LP memory of the graph the job had)");
  if (old) fs.volume->LeaveGraph(std::move(old), job.id);
  GRAPHFS_RETURN_IF_ERROR(schedule->AddJob(job.id, partition_bytes));
  if (hold != 1) GRAPHFS_RETURN_IF_ERROR(schedule->SetHold(job.id, hold));
  bool removed;
  {
    std::lock_guard<std::mutex> lock(job.mu);
    removed = job.removed;
    if (!removed) {
      job.graph = *relative;
      job.schedule = *schedule;
      job.active_vertices = job.active_chunks = 0;
    }
  }
  // Removed meanwhile: take it out again (outside job.mu: the scheduler may answer its asks,
  // and the answers take job.mu).
  if (removed) fs.volume->LeaveGraph(std::move(*schedule), job.id);
  return Status::Ok();
}

}  // namespace graphfs
