// The files of a job directory, as handles: who may open which file and what a reader of a
// small file sees (taken at open), reads (`next` in jobs_next.cc, an LP's view through
// lp_read.cc), writes kept until close, and what a close commits — `graph` (jobs_graph.cc),
// `active` and `active.list` (jobs_active.cc), `partition_size`, `granularity` and `hold` here — and the
// `lease` whose last close removes the job.
#include "fusefs/jobs_dir.h"

#include <fcntl.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "fusefs/control_parse.h"
#include "fusefs/graphfs.h"
#include "fusefs/read_paths.h"

namespace graphfs {

namespace {

// Bytes a job may write to one of its text files (graph, partition_size, active.list).
constexpr uint64_t kMaxTextBytes = 1ull << 30;

}  // namespace

Result<std::shared_ptr<JobFileHandle>> JobsDir::Open(GraphFs& fs, Inode& inode, int flags, const Credentials& who) {
  (void)fs;
  if (inode.kind != Inode::Kind::kJobFile) return Error(EISDIR, "not a job file");
  const std::shared_ptr<ControlJob>& job = inode.job;
  const std::string& file = inode.control_name;
  const bool writing = (flags & O_ACCMODE) != O_RDONLY;
  const bool owner = who.uid == 0 || who.uid == job->uid;
  auto h = std::make_shared<JobFileHandle>();
  h->job = job;
  h->file = file;
  h->opener = who;
  if (file == "status") {
    if (writing) return Error(EACCES, "status is read-only");
    h->content = JobJson(*job).dump(2) + "\n";
    return h;
  }
  if (!owner) return Error(EACCES, "job " + job->name + " belongs to another user");
  std::lock_guard<std::mutex> lock(job->mu);
  if (job->removed) return Error(ENOENT, "job " + job->name + " was removed");
  if (file == "graph") {
    h->content = job->graph.empty() ? "" : job->graph + "\n";
  } else if (file == "partition_size") {
    h->content = std::to_string(job->partition_bytes) + "\n";
  } else if (file == "granularity") {
    h->content = job->whole_chunks ? "chunk\n" : "vertex\n";
  } else if (file == "hold") {
    h->content = std::to_string(job->hold) + "\n";
  } else if (file == "lease") {
    ++job->leases;
    h->lease = true;
  } else if (file == "active" || file == "active.list" || file == "done") {
    if ((flags & O_ACCMODE) == O_RDONLY) return Error(EACCES, file + " is write-only");
  } else if (file == "next") {
    if ((flags & O_ACCMODE) == O_WRONLY) return Error(EACCES, "next is read or read-write, not write-only");
    h->next_read_write = writing;
  } else if (file == "memory") {
    if (writing) return Error(EACCES, "memory is read-only");
    if (!job->schedule) return Error(EINVAL, "memory: write the graph directory to `graph` first");
    h->memory = job->schedule.memory();
    if (!h->memory) return Error(EOPNOTSUPP, "memory: the graph's LPs are not in shared memory (see the daemon's log)");
  } else {
    LpFile kind;
    const uint64_t seq = ParseLpFileName(file, &kind);
    if (!job->schedule || seq == 0) return Error(ENOENT, file + " is not held by job " + job->name);
    if (writing) {
      if (!job->schedule.HeldBytes(job->id, seq)) return Error(ENOENT, file + " is not held by job " + job->name);
      return Error(EACCES, file + " is read-only");
    }
    if (kind != LpFile::kView) {
      std::optional<std::string> text = job->schedule.Describe(
          job->id, seq, kind == LpFile::kMap ? volume::JobGraph::HeldText::kMap : volume::JobGraph::HeldText::kPieces);
      if (!text) return Error(ENOENT, file + " is not held by job " + job->name);
      h->content = std::move(*text);
      return h;
    }
    h->view = job->schedule.Held(job->id, seq);
    if (!h->view) return Error(ENOENT, file + " is not held by job " + job->name);
  }
  return h;
}

void JobsDir::Read(fuse_req_t req, const std::shared_ptr<JobFileHandle>& h, size_t size, off_t offset) {
  const uint64_t off = static_cast<uint64_t>(offset);
  if (h->file == "next") return ReadNext(req, h, size, off);
  if (h->view) return ReadLp(req, h->view, size, off);
  const uint64_t from = std::min<uint64_t>(off, h->content.size());
  fuse_reply_buf(req, h->content.data() + from, std::min<uint64_t>(size, h->content.size() - from));
}

Status JobsDir::Write(JobFileHandle& h, const char* data, size_t size, off_t offset) {
  ControlJob& job = *h.job;
  if (h.file == "done") {
    if (volume::JobGraph schedule = job.Schedule()) schedule.Done(job.id);
    return Status::Ok();
  }
  if (h.file == "next") {
    // Each write is one word, taken at once (nothing waits for the close).
    const std::string word = TrimBlanks(std::string(data, size));
    if (word == "done") {
      if (volume::JobGraph schedule = job.Schedule()) schedule.Done(job.id);
      return Status::Ok();
    }
    if (word == "yield") {  // done computing on the LP answered as a turn
      if (turns_) turns_->Yield(job.id);
      return Status::Ok();
    }
    if (word == "turns") {  // from now on it yields after each turn (jobs_next.cc)
      // Joined under the job's lock: RemoveJob marks it removed under it before it leaves.
      std::lock_guard<std::mutex> lock(job.mu);
      if (job.removed) return Error(ENOENT, "next: the job was removed");
      job.yields = true;
      if (turns_) turns_->Join(job.id);
      return Status::Ok();
    }
    Error e(EINVAL, "next: '" + word.substr(0, 32) + "' written; the words it takes are done, turns and yield");
    job.Fail(e);
    return e;
  }
  if (h.file != "graph" && h.file != "partition_size" && h.file != "granularity" && h.file != "hold" &&
      h.file != "active" && h.file != "active.list")
    return Error(EBADF, h.file + " is not writable");
  uint64_t limit = kMaxTextBytes;
  if (h.file == "active") {
    const volume::JobGraph schedule = job.Schedule();
    if (!schedule) {
      Error e(EINVAL, "active: write the graph directory to `graph` first");
      job.Fail(e);
      return e;
    }
    limit = (schedule.vertices() + 7) / 8;
  }
  const uint64_t end = static_cast<uint64_t>(offset) + size;
  if (end > limit) {
    Error e(h.file == "active" ? EINVAL : EFBIG,
            h.file + ": " + std::to_string(end) + " bytes written, at most " + std::to_string(limit) +
                (h.file == "active" ? " (a bitmap of the graph's vertices) allowed" : " allowed"));
    job.Fail(e);
    return e;
  }
  if (h.written.size() < end) h.written.resize(end, '\0');
  std::memcpy(h.written.data() + offset, data, size);
  h.dirty = true;
  return Status::Ok();
}

Status JobsDir::Flush(GraphFs& fs, JobFileHandle& h) {
  if (!h.dirty) return Status::Ok();
  h.dirty = false;
  Status s = Commit(fs, h);
  h.written.clear();
  if (!s.ok()) h.job->Fail(s.error());
  return s;
}

Status JobsDir::Commit(GraphFs& fs, JobFileHandle& h) {
  ControlJob& job = *h.job;
  {
    std::lock_guard<std::mutex> lock(job.mu);
    if (job.removed) return Error(ENOENT, "job " + job.name + " was removed");
  }
  if (h.file == "graph") return CommitGraph(fs, job, TrimBlanks(h.written), h.opener);
  if (h.file == "partition_size") {
    auto bytes = ParsePartitionSize(h.written);
    if (!bytes.ok()) return bytes.error();
    std::lock_guard<std::mutex> lock(job.mu);
    job.partition_bytes = *bytes;
    if (job.schedule) GRAPHFS_RETURN_IF_ERROR(job.schedule.SetPartitionBytes(job.id, *bytes));
    return Status::Ok();
  }
  if (h.file == "granularity") {
    const std::string value = TrimBlanks(h.written);
    if (value != "vertex" && value != "chunk")
      return Error(EINVAL, "granularity: '" + value + "' is neither vertex nor chunk");
    std::lock_guard<std::mutex> lock(job.mu);
    job.whole_chunks = value == "chunk";
    return Status::Ok();
  }
  if (h.file == "hold") {
    const std::string value = TrimBlanks(h.written);
    if (value != "1" && value != "2")
      return Error(EINVAL, "hold: '" + value.substr(0, 32) + "' written; a job holds 1 or 2 LPs at once");
    const uint32_t lps = value == "2" ? 2 : 1;
    std::lock_guard<std::mutex> lock(job.mu);
    job.hold = lps;
    if (job.schedule) GRAPHFS_RETURN_IF_ERROR(job.schedule.SetHold(job.id, lps));
    return Status::Ok();
  }
  if (h.file == "active") return CommitActive(job, h.written, false);
  if (h.file == "active.list") return CommitActive(job, h.written, true);
  return Status::Ok();
}

void JobsDir::Release(GraphFs& fs, JobFileHandle& h) {
  if (h.dirty) (void)Flush(fs, h);
  if (!h.lease) return;
  bool last;
  {
    std::lock_guard<std::mutex> lock(h.job->mu);
    last = --h.job->leases == 0;
  }
  if (last) RemoveJob(h.job, "its lease was closed (the process ended or closed it)");
}

}  // namespace graphfs
