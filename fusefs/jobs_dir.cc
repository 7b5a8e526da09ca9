#include "fusefs/jobs_dir.h"

#include <fcntl.h>
#include <dirent.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "fusefs/control_dir.h"
#include "fusefs/control_parse.h"
#include "fusefs/file_handle.h"
#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

using json = nlohmann::json;

// Bytes a job may write to one of its text files (graph, partition_size, active.list).
constexpr uint64_t kMaxTextBytes = 1ull << 30;
constexpr size_t kMaxJobs = 4096;

struct FileSpec {
  const char* name;
  mode_t mode;
};
// The fixed files of a job directory; `lp-SEQ` and `lp-SEQ.map` come and go.
constexpr FileSpec kJobFiles[] = {
    {"graph", 0644},  {"partition_size", 0644}, {"active", 0200}, {"active.list", 0200},
    {"next", 0400},   {"done", 0200},           {"lease", 0400},  {"status", 0444},
};

const FileSpec* FixedFile(const std::string& name) {
  for (const FileSpec& f : kJobFiles)
    if (name == f.name) return &f;
  return nullptr;
}

// The LP the job holds, if FILE names it.
volume::HeldLp HeldBy(ControlJob& job, const std::string& file, bool* map) {
  const uint64_t seq = ParseLpFileName(file, map);
  if (seq == 0) return {};
  const std::shared_ptr<GraphSchedule> schedule = job.Schedule();
  return schedule ? schedule->scheduler().Holding(job.id, seq) : volume::HeldLp{};
}

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

bool ValidJobName(const std::string& name) {
  if (name.empty() || name.size() > kMaxJobNameLength || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

JobsDir::JobsDir() : root_(std::make_unique<Inode>()) {
  root_->kind = Inode::Kind::kJobsDir;
  root_->control_name = "jobs";
  root_->nlookup = 2;  // never forgotten
}

JobsDir::~JobsDir() { Shutdown(); }

std::shared_ptr<ControlJob> JobsDir::Find(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(name);
  return it == jobs_.end() ? nullptr : it->second;
}

Inode* JobsDir::InodeFor(const std::shared_ptr<ControlJob>& job, const std::string& file) {
  auto& slot = inodes_[{job->id, file}];
  if (!slot) {
    slot = std::make_unique<Inode>();
    slot->kind = file.empty() ? Inode::Kind::kJobDir : Inode::Kind::kJobFile;
    slot->control_name = file;
    slot->job = job;
  }
  slot->nlookup.fetch_add(1);
  return slot.get();
}

int JobsDir::Lookup(Inode& dir, const std::string& name, Inode** out) {
  if (dir.kind == Inode::Kind::kJobsDir) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(name);
    if (it == jobs_.end()) return ENOENT;
    *out = InodeFor(it->second, "");
    return 0;
  }
  if (dir.kind != Inode::Kind::kJobDir) return ENOTDIR;
  {
    std::lock_guard<std::mutex> lock(dir.job->mu);
    if (dir.job->removed) return ENOENT;
  }
  bool map = false;
  if (FixedFile(name) == nullptr && !HeldBy(*dir.job, name, &map)) return ENOENT;
  std::lock_guard<std::mutex> lock(mu_);
  *out = InodeFor(dir.job, name);
  return 0;
}

void JobsDir::Forget(Inode& inode, uint64_t n) {
  if (inode.kind != Inode::Kind::kJobDir && inode.kind != Inode::Kind::kJobFile) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (inode.nlookup.fetch_sub(n) > n) return;
  inodes_.erase({inode.job->id, inode.control_name});
}

void JobsDir::Stat(const Inode& inode, struct stat* st) {
  std::memset(st, 0, sizeof *st);
  st->st_ino = reinterpret_cast<uintptr_t>(&inode);
  if (inode.kind == Inode::Kind::kJobsDir) {
    st->st_mode = S_IFDIR | 01777;  // anyone registers; the sticky bit keeps jobs to their owners
    st->st_nlink = 2;
    return;
  }
  ControlJob& job = *inode.job;
  st->st_uid = job.uid;
  st->st_gid = job.gid;
  st->st_atime = st->st_mtime = st->st_ctime = job.created;
  if (inode.kind == Inode::Kind::kJobDir) {
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
    return;
  }
  st->st_nlink = 1;
  if (const FileSpec* f = FixedFile(inode.control_name)) {
    st->st_mode = S_IFREG | f->mode;
    return;
  }
  bool map = false;
  const volume::HeldLp held = HeldBy(job, inode.control_name, &map);
  st->st_mode = S_IFREG | 0400;
  if (held && !map) st->st_size = static_cast<off_t>(held.bytes());
  st->st_blocks = (st->st_size + 511) / 512;
}

int JobsDir::List(const Inode& dir, std::vector<DirEntry>* out) {
  out->push_back({".", 1, DT_DIR});
  out->push_back({"..", 1, DT_DIR});
  if (dir.kind == Inode::Kind::kJobsDir) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, job] : jobs_) out->push_back({name, 1, DT_DIR});
    return 0;
  }
  if (dir.kind != Inode::Kind::kJobDir) return ENOTDIR;
  for (const FileSpec& f : kJobFiles) out->push_back({f.name, 1, DT_REG});
  std::shared_ptr<GraphSchedule> schedule;
  {
    std::lock_guard<std::mutex> lock(dir.job->mu);
    if (dir.job->removed) return ENOENT;
    schedule = dir.job->schedule;
  }
  if (schedule) {
    auto view = schedule->scheduler().View(dir.job->id);
    if (view.ok() && view->holding_seq != 0 && schedule->scheduler().Holding(dir.job->id, view->holding_seq)) {
      const std::string lp = "lp-" + std::to_string(view->holding_seq);
      out->push_back({lp, 1, DT_REG});
      out->push_back({lp + ".map", 1, DT_REG});
    }
  }
  return 0;
}

int JobsDir::Mkdir(Inode& dir, const std::string& name, uid_t uid, gid_t gid, Inode** out) {
  if (dir.kind != Inode::Kind::kJobsDir) return EPERM;
  if (!ValidJobName(name)) return EINVAL;
  std::lock_guard<std::mutex> lock(mu_);
  if (jobs_.count(name)) return EEXIST;
  if (jobs_.size() >= kMaxJobs) return ENOSPC;
  auto job = std::make_shared<ControlJob>();
  job->id = next_id_++;
  job->name = name;
  job->uid = uid;
  job->gid = gid;
  job->created = std::time(nullptr);
  jobs_[name] = job;
  *out = InodeFor(job, "");
  return 0;
}

void JobsDir::RemoveJob(const std::shared_ptr<ControlJob>& job, const std::string& why) {
  std::shared_ptr<GraphSchedule> schedule;
  {
    std::lock_guard<std::mutex> lock(job->mu);
    if (job->removed) return;
    job->removed = true;
    schedule = std::move(job->schedule);
    job->schedule.reset();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job->name);
    if (it != jobs_.end() && it->second == job) jobs_.erase(it);
  }
  if (schedule) schedule->scheduler().RemoveJob(job->id);
  if (!why.empty()) LogError("job " + job->name + " removed: " + why);
}

int JobsDir::Rmdir(Inode& dir, const std::string& name, uid_t uid) {
  if (dir.kind != Inode::Kind::kJobsDir) return EPERM;
  auto job = Find(name);
  if (!job) return ENOENT;
  if (uid != 0 && uid != job->uid) return EPERM;
  RemoveJob(job, "");
  return 0;
}

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
  } else if (file == "lease") {
    ++job->leases;
    h->lease = true;
  } else if (file == "active" || file == "active.list" || file == "done") {
    if ((flags & O_ACCMODE) == O_RDONLY) return Error(EACCES, file + " is write-only");
  } else if (file == "next") {
    if (writing) return Error(EACCES, "next is read-only");
  } else {
    bool map = false;
    const uint64_t seq = ParseLpFileName(file, &map);
    volume::HeldLp held;
    if (job->schedule && seq != 0) held = job->schedule->scheduler().Holding(job->id, seq);
    if (!held) return Error(ENOENT, file + " is not held by job " + job->name);
    if (writing) return Error(EACCES, file + " is read-only");
    if (map) {
      h->content = held.MapText();
    } else {
      h->starts.push_back(0);
      for (uint32_t i : held.chunks) h->starts.push_back(h->starts.back() + held.lp->chunks[i].length);
      h->held = std::move(held);
    }
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
  if (h->held) {
    // The job's chunks, packed: gather the pieces straight from the LP's buffer.
    const volume::LogicalPartition& lp = *h->held.lp;
    std::vector<iovec> iov;
    const uint64_t end = std::min<uint64_t>(off + size, h->starts.back());
    size_t k = static_cast<size_t>(std::upper_bound(h->starts.begin(), h->starts.end(), off) - h->starts.begin());
    for (uint64_t at = off; at < end && k < h->starts.size(); ++k) {
      const volume::LpChunk& c = lp.chunks[h->held.chunks[k - 1]];
      const uint64_t n = std::min(end, h->starts[k]) - at;
      iov.push_back({lp.bytes.get() + c.lp_offset + (at - h->starts[k - 1]), n});
      at += n;
    }
    if (iov.empty()) return (void)fuse_reply_buf(req, nullptr, 0);
    return (void)fuse_reply_iov(req, iov.data(), static_cast<int>(iov.size()));
  }
  const uint64_t from = std::min<uint64_t>(off, h->content.size());
  fuse_reply_buf(req, h->content.data() + from, std::min<uint64_t>(size, h->content.size() - from));
}

void JobsDir::AskNext(fuse_req_t req, const std::shared_ptr<JobFileHandle>& h, size_t size) {
  ControlJob& job = *h->job;
  std::shared_ptr<GraphSchedule> schedule;
  {
    std::lock_guard<std::mutex> lock(job.mu);
    if (job.removed) return (void)fuse_reply_err(req, ENOENT);
    schedule = job.schedule;
  }
  if (!schedule) {
    Fail(job, Error(EINVAL, "next: write the graph directory to `graph` first"));
    return (void)fuse_reply_err(req, EINVAL);
  }
  {
    std::lock_guard<std::mutex> lock(asks_mu_);
    asks_[req] = PendingAsk{schedule, job.id, 0, false};
  }
  // Registered before the ask is queued: an interrupt that is already pending is noted
  // here, and the request is not touched again once the scheduler may have answered it.
  fuse_req_interrupt_func(req, &JobsDir::OnInterrupt, this);
  const uint64_t ticket = schedule->scheduler().Next(job.id, [this, req, h, size](Result<volume::LpScheduler::Grant> g) {
    {
      std::lock_guard<std::mutex> lock(asks_mu_);
      asks_.erase(req);
    }
    if (!g.ok()) {
      if (g.error().code() != EINTR) Fail(*h->job, g.error().Wrap("next"));
      return (void)fuse_reply_err(req, g.error().code());
    }
    const std::string answer = g->end ? "end\n" : "lp-" + std::to_string(g->held.lp->seq) + "\n";
    {
      std::lock_guard<std::mutex> lock(h->answer_mu);
      h->answer = answer;
    }
    fuse_reply_buf(req, answer.data(), std::min(size, answer.size()));
  });
  bool cancel = false;
  {
    std::lock_guard<std::mutex> lock(asks_mu_);
    auto it = asks_.find(req);
    if (it != asks_.end()) {
      it->second.ticket = ticket;
      if (it->second.interrupted) {
        asks_.erase(it);
        cancel = true;
      }
    }
  }
  if (cancel) schedule->scheduler().Cancel(job.id, ticket);
}

void JobsDir::OnInterrupt(fuse_req_t req, void* self) { static_cast<JobsDir*>(self)->Interrupted(req); }

void JobsDir::Interrupted(fuse_req_t req) {
  PendingAsk ask;
  {
    std::lock_guard<std::mutex> lock(asks_mu_);
    auto it = asks_.find(req);
    if (it == asks_.end()) return;  // answered already
    if (it->second.ticket == 0) {
      it->second.interrupted = true;  // AskNext cancels once it is queued
      return;
    }
    ask = std::move(it->second);
    asks_.erase(it);
  }
  ask.schedule->scheduler().Cancel(ask.job, ask.ticket);
}

Status JobsDir::Write(JobFileHandle& h, const char* data, size_t size, off_t offset) {
  ControlJob& job = *h.job;
  if (h.file == "done") {
    if (const auto schedule = job.Schedule()) schedule->scheduler().Done(job.id);
    return Status::Ok();
  }
  if (h.file != "graph" && h.file != "partition_size" && h.file != "active" && h.file != "active.list")
    return Error(EBADF, h.file + " is not writable");
  uint64_t limit = kMaxTextBytes;
  if (h.file == "active") {
    const std::shared_ptr<GraphSchedule> schedule = job.Schedule();
    if (!schedule) {
      Error e(EINVAL, "active: write the graph directory to `graph` first");
      Fail(job, e);
      return e;
    }
    limit = (schedule->vertices() + 7) / 8;
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
    if (job.schedule) GRAPHFS_RETURN_IF_ERROR(job.schedule->scheduler().SetPartitionBytes(job.id, *bytes));
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
  auto schedule = fs.volume->schedules().Get(*fs.volume, *dir);
  if (!schedule.ok()) return schedule.error().Wrap("graph " + text);
  std::shared_ptr<GraphSchedule> old;
  uint64_t partition_bytes;
  {
    std::lock_guard<std::mutex> lock(job.mu);
    if (job.schedule == *schedule) return Status::Ok();
    old = job.schedule;
    partition_bytes = job.partition_bytes;
  }
  if (old) old->scheduler().RemoveJob(job.id);
  GRAPHFS_RETURN_IF_ERROR((*schedule)->scheduler().AddJob(job.id, partition_bytes));
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
  if (removed) (*schedule)->scheduler().RemoveJob(job.id);
  return Status::Ok();
}

Status JobsDir::CommitActive(ControlJob& job, const std::string& bytes, bool as_list) {
  const std::shared_ptr<GraphSchedule> schedule = job.Schedule();
  if (!schedule) return Error(EINVAL, "active: write the graph directory to `graph` first");
  const uint64_t v = schedule->vertices();
  auto parsed = as_list ? ParseActiveList(bytes, v) : ParseActiveBitmap(bytes, v);
  if (!parsed.ok()) return parsed.error();
  const std::vector<uint64_t>& words = *parsed;
  uint64_t count = 0;
  for (uint64_t w : words) count += static_cast<uint64_t>(std::popcount(w));
  auto chunks = schedule->SetActive(job.id, words);
  if (!chunks.ok()) return chunks.error().Wrap("active");
  std::lock_guard<std::mutex> lock(job.mu);
  job.active_vertices = count;
  job.active_chunks = *chunks;
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

json JobsDir::JobJson(ControlJob& job) {
  json j;
  std::shared_ptr<GraphSchedule> schedule;
  {
    std::lock_guard<std::mutex> lock(job.mu);
    j = {{"name", job.name},
         {"uid", job.uid},
         {"graph", job.graph},
         {"partition_size", job.partition_bytes},
         {"leases", job.leases},
         {"active_vertices", job.active_vertices},
         {"active_chunks", job.active_chunks},
         {"errors", job.errors},
         {"last_error", job.last_error}};
    schedule = job.schedule;
  }
  j["vertices"] = schedule ? schedule->vertices() : 0;
  if (!schedule) {
    j["state"] = "unconfigured";
    return j;
  }
  auto view = schedule->scheduler().View(job.id);
  if (!view.ok()) return j;
  auto cost = [](const volume::IterationCost& c) {
    return json{{"iteration", c.iteration},       {"active_chunks", c.active_chunks},
                {"active_bytes", c.active_bytes}, {"find_seconds", c.find_seconds},
                {"select_seconds", c.select_seconds}, {"load_seconds", c.load_seconds},
                {"wait_seconds", c.wait_seconds}, {"lps", c.lps},
                {"bytes_delivered", c.bytes_delivered}, {"bytes_reused", c.bytes_reused},
                {"finished", c.finished}};
  };
  j["state"] = view->state;
  j["iteration"] = view->iteration;
  j["remaining_chunks"] = view->remaining_chunks;
  j["remaining_bytes"] = view->remaining_bytes;
  j["lp"] = view->holding_seq;
  json recent = json::array();
  for (const auto& c : view->recent) recent.push_back(cost(c));
  j["iterations"] = recent;
  j["total"] = cost(view->total);
  return j;
}

json JobsDir::StatsJson(GraphFs& fs) {
  std::vector<std::shared_ptr<ControlJob>> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, job] : jobs_) jobs.push_back(job);
  }
  json out;
  json list = json::array();
  for (const auto& job : jobs) list.push_back(JobJson(*job));  // with its recent iterations' costs
  out["jobs"] = list;
  json graphs = json::array();
  for (const auto& g : fs.volume->schedules().List()) {
    const volume::SchedulerStats s = g->scheduler().Stats();
    graphs.push_back({{"graph", g->dir()},
                      {"chunks", g->scheduler().chunk_count()},
                      {"striped", g->striped()},
                      {"jobs", s.jobs},
                      {"active_set_queries", g->finds()},
                      {"find_seconds", g->find_seconds()},
                      {"lps_built", s.lps_built},
                      {"lps_preloaded", s.lps_preloaded},
                      {"chunks_loaded", s.chunks_loaded},
                      {"bytes_loaded", s.bytes_loaded},
                      {"bytes_reused", s.bytes_reused},
                      {"bytes_discarded", s.bytes_discarded},
                      {"bytes_delivered", s.bytes_delivered},
                      {"select_seconds", s.select_seconds},
                      {"load_seconds", s.load_seconds},
                      {"load_errors", s.load_errors},
                      {"last_error", s.last_error},
                      {"current_lp", s.current_seq},
                      {"current_holders", s.current_holders}});
  }
  out["schedulers"] = graphs;
  return out;
}

void JobsDir::Shutdown() {
  std::vector<std::shared_ptr<ControlJob>> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, job] : jobs_) jobs.push_back(job);
  }
  for (const auto& job : jobs) RemoveJob(job, "");
}

}  // namespace graphfs
