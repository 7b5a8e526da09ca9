// The files of a job directory: open, read (including the asynchronous `next`), write,
// and what a close commits (graph, partition size, active set).
#include "fusefs/jobs_dir.h"

#include <fcntl.h>
#include <dirent.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "fusefs/control_dir.h"
#include "fusefs/control_parse.h"
#include "fusefs/file_handle.h"
#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

// Bytes a job may write to one of its text files (graph, partition_size, active.list).
constexpr uint64_t kMaxTextBytes = 1ull << 30;

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

void Fail(ControlJob& job, const Error& e) {
  std::lock_guard<std::mutex> lock(job.mu);
  ++job.errors;
  job.last_error = e.message();
}

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
  } else if (file == "lease") {
    ++job->leases;
    h->lease = true;
  } else if (file == "active" || file == "active.list" || file == "done") {
    if ((flags & O_ACCMODE) == O_RDONLY) return Error(EACCES, file + " is write-only");
  } else if (file == "next") {
    if (writing) return Error(EACCES, "next is read-only");
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
  if (h->file == "next") {
    if (off == 0) return AskNext(req, h, size);
    std::lock_guard<std::mutex> lock(h->answer_mu);
    const uint64_t from = std::min<uint64_t>(off, h->answer.size());
    return (void)fuse_reply_buf(req, h->answer.data() + from, std::min<uint64_t>(size, h->answer.size() - from));
  }
  if (h->view) {
    // The job's view, packed: gather its pieces straight from the LP's memory. A view of
    // runs may have more pieces in one read than a reply can carry as an iovec (the kernel
    // takes at most UIO_MAXIOV): those are copied into one buffer.
    std::vector<iovec> iov;
    h->view.Gather(off, size, &iov);
    if (iov.empty()) return (void)fuse_reply_buf(req, nullptr, 0);
    const uint64_t end = std::min<uint64_t>(off + size, h->view.bytes());
    Fs(req).counters.Delivered(ReadPath::kLp, end - off);
    constexpr size_t kMaxPieces = 256;
    if (iov.size() > kMaxPieces) {
      // Kept per FUSE thread: a fresh megabyte for every such read costs its page faults.
      thread_local std::string gathered;
      gathered.clear();
      gathered.reserve(end - off);
      for (const iovec& v : iov) gathered.append(static_cast<const char*>(v.iov_base), v.iov_len);
      return (void)fuse_reply_buf(req, gathered.data(), gathered.size());
    }
    return (void)fuse_reply_iov(req, iov.data(), static_cast<int>(iov.size()));
  }
  const uint64_t from = std::min<uint64_t>(off, h->content.size());
  fuse_reply_buf(req, h->content.data() + from, std::min<uint64_t>(size, h->content.size() - from));
}

void JobsDir::AskNext(fuse_req_t req, const std::shared_ptr<JobFileHandle>& h, size_t size) {
  ControlJob& job = *h->job;
  volume::JobGraph schedule;
  {
    std::lock_guard<std::mutex> lock(job.mu);
    if (job.removed) return (void)fuse_reply_err(req, ENOENT);
    schedule = job.schedule;
  }
  if (!schedule) {
    Fail(job, Error(EINVAL, "next: write the graph directory to `graph` first"));
    return (void)fuse_reply_err(req, EINVAL);
  }
  // Registered under its ticket before the scheduler sees it: its answer may come through the
  // queue before Next returns.
  const uint64_t ticket = answers_->NewTicket();
  {
    std::lock_guard<std::mutex> lock(asks_mu_);
    asks_[ticket] = PendingAsk{req, h, size, schedule, job.id};
    ask_tickets_[req] = ticket;
  }
  // An interrupt that is already pending is noted here; the request is not touched again once
  // the scheduler may have answered it.
  fuse_req_interrupt_func(req, &JobsDir::OnInterrupt, this);
  std::optional<Result<volume::NextLp>> now = schedule.Next(job.id, ticket);
  std::optional<PendingAsk> answered;
  bool cancel = false;
  {
    std::lock_guard<std::mutex> lock(asks_mu_);
    auto it = asks_.find(ticket);
    if (it != asks_.end()) {
      if (now) {
        answered = std::move(it->second);
        ask_tickets_.erase(req);
        asks_.erase(it);
      } else {
        it->second.parked = true;
        cancel = it->second.interrupted;
      }
    }
  }
  if (answered) return Answer(*answered, std::move(*now));
  if (cancel) schedule.Cancel(job.id, ticket);
}

void JobsDir::Answer(const PendingAsk& ask, Result<volume::NextLp> g) {
  if (!g.ok()) {
    if (g.error().code() != EINTR) Fail(*ask.h->job, g.error().Wrap("next"));
    return (void)fuse_reply_err(ask.req, g.error().code());
  }
  const std::string answer = g->end ? "end\n" : "lp-" + std::to_string(g->seq) + "\n";
  {
    std::lock_guard<std::mutex> lock(ask.h->answer_mu);
    ask.h->answer = answer;
  }
  fuse_reply_buf(ask.req, answer.data(), std::min(ask.size, answer.size()));
}

void JobsDir::Attach(volume::Volume& volume) {
  std::lock_guard<std::mutex> lock(asks_mu_);
  if (answers_) return;
  volume_ = &volume;
  answers_ = &volume.job_answers();
  answering_ = std::thread([this, answers = answers_] {
    while (std::optional<volume::JobAnswer> a = answers->Wait()) {
      std::optional<PendingAsk> ask;
      {
        std::lock_guard<std::mutex> lock(asks_mu_);
        auto it = asks_.find(a->ticket);
        if (it == asks_.end()) continue;  // cannot happen: each ask gets one answer
        ask = std::move(it->second);
        ask_tickets_.erase(ask->req);
        asks_.erase(it);
      }
      Answer(*ask, std::move(a->result));
    }
  });
}

void JobsDir::OnInterrupt(fuse_req_t req, void* self) { static_cast<JobsDir*>(self)->Interrupted(req); }

void JobsDir::Interrupted(fuse_req_t req) {
  volume::JobGraph schedule;
  uint64_t job = 0, ticket = 0;
  {
    std::lock_guard<std::mutex> lock(asks_mu_);
    auto t = ask_tickets_.find(req);
    if (t == ask_tickets_.end()) return;  // answered already
    PendingAsk& ask = asks_.at(t->second);
    if (!ask.parked) {
      ask.interrupted = true;  // AskNext cancels once the scheduler has parked it
      return;
    }
    schedule = ask.schedule;
    job = ask.job;
    ticket = t->second;
  }
  // The EINTR answer comes through the queue, like any other.
  schedule.Cancel(job, ticket);
}

Status JobsDir::Write(JobFileHandle& h, const char* data, size_t size, off_t offset) {
  ControlJob& job = *h.job;
  if (h.file == "done") {
    if (volume::JobGraph schedule = job.Schedule()) schedule.Done(job.id);
    return Status::Ok();
  }
  if (h.file != "graph" && h.file != "partition_size" && h.file != "granularity" && h.file != "active" &&
      h.file != "active.list")
    return Error(EBADF, h.file + " is not writable");
  uint64_t limit = kMaxTextBytes;
  if (h.file == "active") {
    const volume::JobGraph schedule = job.Schedule();
    if (!schedule) {
      Error e(EINVAL, "active: write the graph directory to `graph` first");
      Fail(job, e);
      return e;
    }
    limit = (schedule.vertices() + 7) / 8;
  }
  const uint64_t end = static_cast<uint64_t>(offset) + size;
  if (end > limit) {
    Error e(h.file == "active" ? EINVAL : EFBIG,
            h.file + ": " + std::to_string(end) + " bytes written, at most " + std::to_string(limit) +
                (h.file == "active" ? " (a bitmap of the graph's vertices) allowed" : " allowed"));
    Fail(job, e);
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
  if (!s.ok()) Fail(*h.job, s.error());
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
  if (h.file == "active") return CommitActive(job, h.written, false);
  if (h.file == "active.list") return CommitActive(job, h.written, true);
  return Status::Ok();
}

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
  {
    std::lock_guard<std::mutex> lock(job.mu);
    if (job.schedule == *schedule) return Status::Ok();
    old = job.schedule;
    partition_bytes = job.partition_bytes;
  }
  // An open `memory` has the old graph's memory as its backing file, for as long as it is open.
  if (old && MemoryOpen(job))
    return Error(EBUSY, "graph: close `memory` first (it maps the LP memory of the graph the job had)");
  if (old) fs.volume->LeaveGraph(std::move(old), job.id);
  GRAPHFS_RETURN_IF_ERROR(schedule->AddJob(job.id, partition_bytes));
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

Status JobsDir::CommitActive(ControlJob& job, const std::string& bytes, bool as_list) {
  volume::JobGraph schedule = job.Schedule();
  if (!schedule) return Error(EINVAL, "active: write the graph directory to `graph` first");
  const uint64_t v = schedule.vertices();
  auto parsed = as_list ? ParseActiveList(bytes, v) : ParseActiveBitmap(bytes, v);
  if (!parsed.ok()) return parsed.error();
  bool whole_chunks;
  {
    std::lock_guard<std::mutex> lock(job.mu);
    whole_chunks = job.whole_chunks;
  }
  auto counts = schedule.SetActive(job.id, std::move(*parsed), whole_chunks);
  if (!counts.ok()) return counts.error().Wrap("active");
  std::lock_guard<std::mutex> lock(job.mu);
  job.active_vertices = counts->vertices;
  job.active_chunks = counts->chunks;
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
