#include "fusefs/jobs_dir.h"

#include <fcntl.h>
#include <dirent.h>
#include <sched.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <ctime>
#include <optional>
#include <thread>

#include "fusefs/control_dir.h"
#include "fusefs/control_parse.h"
#include "fusefs/file_handle.h"
#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

constexpr size_t kMaxJobs = 4096;

struct FileSpec {
  const char* name;
  mode_t mode;
};
// The fixed files of a job directory; `lp-SEQ`, `lp-SEQ.map` and `lp-SEQ.pieces` come and go.
constexpr FileSpec kJobFiles[] = {
    {"graph", 0644}, {"partition_size", 0644}, {"granularity", 0644}, {"hold", 0644},   {"active", 0200},
    {"active.list", 0200}, {"next", 0600}, {"done", 0200}, {"lease", 0400}, {"status", 0444}, {"memory", 0400},
};

const FileSpec* FixedFile(const std::string& name) {
  for (const FileSpec& f : kJobFiles)
    if (name == f.name) return &f;
  return nullptr;
}

// The size of the job's view of the LP FILE names, if the job holds it.
std::optional<uint64_t> HeldBy(ControlJob& job, const std::string& file, LpFile* kind) {
  const uint64_t seq = ParseLpFileName(file, kind);
  if (seq == 0) return std::nullopt;
  const volume::JobGraph schedule = job.Schedule();
  return schedule ? schedule.HeldBytes(job.id, seq) : std::nullopt;
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

void JobsDir::StartTurns(std::optional<unsigned> slots) {
  if (turns_) return;
  if (slots) {
    if (*slots > 0) turns_ = std::make_unique<volume::ComputeTurns>(*slots);
    return;
  }
  // auto: a turn per CPU the daemon may run on, handed out only when more than twice as many jobs
  // take turns — where their vertex state no longer shares the caches (docs/memory-as-cache.md,
  // thirty-first part).
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const unsigned cores = std::max(1u, sched_getaffinity(0, sizeof cpus, &cpus) == 0
                                          ? static_cast<unsigned>(CPU_COUNT(&cpus))
                                          : std::thread::hardware_concurrency());
  turns_ = std::make_unique<volume::ComputeTurns>(cores, volume::ComputeTurns::kLongestTurn, 2 * cores);
}

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

bool JobsDir::MemoryOpen(const ControlJob& job) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = inodes_.find({job.id, "memory"});
  if (it == inodes_.end()) return false;
  std::lock_guard<std::mutex> inode_lock(it->second->mu);
  return it->second->passthrough_opens > 0;
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
  LpFile kind;
  if (FixedFile(name) == nullptr && !HeldBy(*dir.job, name, &kind)) return ENOENT;
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
    if (inode.control_name == "memory") {
      const volume::JobGraph schedule = job.Schedule();
      if (schedule && schedule.memory()) st->st_size = static_cast<off_t>(schedule.memory()->virtual_bytes());
    }
    return;
  }
  LpFile kind;
  const std::optional<uint64_t> held = HeldBy(job, inode.control_name, &kind);
  st->st_mode = S_IFREG | 0400;
  if (held && kind == LpFile::kView) st->st_size = static_cast<off_t>(*held);
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
  volume::JobGraph schedule;
  {
    std::lock_guard<std::mutex> lock(dir.job->mu);
    if (dir.job->removed) return ENOENT;
    schedule = dir.job->schedule;
  }
  if (schedule) {
    for (const uint64_t seq : schedule.HeldSeqs(dir.job->id)) {
      const std::string lp = "lp-" + std::to_string(seq);
      out->push_back({lp, 1, DT_REG});
      out->push_back({lp + ".map", 1, DT_REG});
      out->push_back({lp + ".pieces", 1, DT_REG});
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
  volume::JobGraph schedule;
  {
    std::lock_guard<std::mutex> lock(job->mu);
    if (job->removed) return;
    job->removed = true;
    schedule = std::move(job->schedule);
    job->schedule = volume::JobGraph();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job->name);
    if (it != jobs_.end() && it->second == job) jobs_.erase(it);
  }
  if (schedule) volume_.load()->LeaveGraph(std::move(schedule), job->id);
  // After the scheduler let go of it: an answer of its that waits for a turn is delivered now.
  if (turns_) turns_->Leave(job->id);
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

void JobsDir::Shutdown() {
  std::vector<std::shared_ptr<ControlJob>> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, job] : jobs_) jobs.push_back(job);
  }
  for (const auto& job : jobs) RemoveJob(job, "");
  if (turns_) turns_->Shutdown();
  // Their parked asks were answered (ENOENT) into the queue: reply to them, then stop.
  volume::JobAnswers* answers;
  {
    std::lock_guard<std::mutex> lock(asks_mu_);
    answers = answers_;
  }
  if (answers) answers->Close();
  if (answering_.joinable()) answering_.join();
}

}  // namespace graphfs
