// The `.graphfs/jobs/` control tree: jobs register with `mkdir`, name their graph and
// partition size, write their active vertices, and read their logical partitions (the
// protocol is in README.md, "The control directory"). Each job directory and file is a
// virtual inode owned here; the scheduling itself is the volume's (the graph's
// volume::JobGraph, volume/graph_jobs.h).
//
// A job ends with `rmdir`, or when the last open handle of its `lease` file closes —
// which the kernel does when the process exits or is killed, so nobody waits on a dead job.
// A read of `next` that has to wait does not hold a FUSE thread: the scheduler parks it under
// a ticket and puts its answer in the mount's answer queue (volume::JobAnswers) when a loader
// publishes an LP for it; one thread here takes the answers out and replies. An interrupt
// (the reader got a signal, or was killed) cancels it: EINTR comes the same way, at once.
#pragma once

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse_lowlevel.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/jobs_protocol.h"
#include "common/result.h"
#include "fusefs/credentials.h"
#include "volume/compute_turns.h"
#include "volume/graph_jobs.h"

namespace graphfs {

struct GraphFs;
struct Inode;
struct DirEntry;

inline constexpr size_t kMaxJobNameLength = 64;

// Whether NAME may name a job: 1-64 of [A-Za-z0-9._-], not starting with '.'.
bool ValidJobName(const std::string& name);

// One registered job.
struct ControlJob {
  uint64_t id = 0;  // unique in the mount; also its id in the scheduler
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  time_t created = 0;

  std::mutex mu;  // guards the fields below
  bool removed = false;
  std::string graph;  // as the job named it, relative to the mount root
  volume::JobGraph schedule;
  // Until it writes partition_size: the protocol's default, which the client's users get too.
  uint64_t partition_bytes = jobs_protocol::kDefaultPartitionBytes;
  // `granularity`: "vertex" (default) — its LPs hold its active sources' edges; "chunk" — the
  // whole chunks with an active source, as an engine that re-enters loaded edges wants (the
  // other sources' edges are the ones reentry follows). Applies from the next `active`.
  bool whole_chunks = false;
  // `hold`: LPs it may hold at once, 1 (default) or 2 — with 2, reading `next` ends its use of
  // the LP handed before the last one, so it may ask for LP k+1 while it still reads LP k.
  uint32_t hold = 1;
  // It wrote "turns" to `next`: it writes "yield" when done computing on an LP answered as a
  // turn, so its answers may wait for one (volume/compute_turns.h).
  bool yields = false;
  uint64_t active_vertices = 0;
  uint64_t active_chunks = 0;
  int leases = 0;
  uint64_t errors = 0;
  std::string last_error;

  // Its graph's schedule: null until `graph` is written, and again once the job is removed.
  volume::JobGraph Schedule() {
    std::lock_guard<std::mutex> lock(mu);
    return schedule;
  }
  // Counts an error of the job's (a refused write, commit or ask) and keeps its message for
  // `status` and the stats.
  void Fail(const Error& e) {
    std::lock_guard<std::mutex> lock(mu);
    ++errors;
    last_error = e.message();
  }
};

// An open file of a job.
struct JobFileHandle {
  std::shared_ptr<ControlJob> job;
  std::string file;     // "graph", "active", "next", "lp-3", ...
  std::string content;  // what a reader of a small file sees (taken at open)
  std::string written;  // bytes written since open, committed at flush
  bool dirty = false;
  bool lease = false;
  Credentials opener;  // who opened it: a graph written here must be readable by them
  volume::LpView view;       // lp-SEQ: the job's view of the LP
  std::shared_ptr<SharedArena> memory;  // memory: the graph's LP memory, opened in passthrough
  std::mutex answer_mu;
  std::string answer;  // next: the last answer, for reads past offset 0
  // next opened read-write: its answers carry the LP's pieces, and a write of "done" is `done`
  // (an LP in 2 requests instead of ~14: jobs_next.cc).
  bool next_read_write = false;
};

class JobsDir {
 public:
  JobsDir();
  ~JobsDir();
  JobsDir(const JobsDir&) = delete;
  JobsDir& operator=(const JobsDir&) = delete;

  Inode& root() { return *root_; }

  // Names under jobs/. Lookup raises the inode's lookup count; Forget lowers it.
  int Lookup(Inode& dir, const std::string& name, Inode** out);
  void Forget(Inode& inode, uint64_t n);
  static void Stat(const Inode& inode, struct stat* st);
  int List(const Inode& dir, std::vector<DirEntry>* out);

  int Mkdir(Inode& dir, const std::string& name, uid_t uid, gid_t gid, Inode** out);
  int Rmdir(Inode& dir, const std::string& name, uid_t uid);

  Result<std::shared_ptr<JobFileHandle>> Open(GraphFs& fs, Inode& inode, int flags, const Credentials& who);
  void Read(fuse_req_t req, const std::shared_ptr<JobFileHandle>& h, size_t size, off_t offset);
  Status Write(JobFileHandle& h, const char* data, size_t size, off_t offset);
  Status Flush(GraphFs& fs, JobFileHandle& h);
  void Release(GraphFs& fs, JobFileHandle& h);

  // For `.graphfs/stats`: every job and every graph schedule.
  nlohmann::json StatsJson(GraphFs& fs);
  // Removes every job (unmount), answering waiting readers.
  void Shutdown();
  // Turns at the cores for jobs that yield: at most `slots` compute at once (0: no turns; unset:
  // the daemon's CPUs, once more than twice as many jobs take turns). Called once the daemon
  // serves (its timer thread starts after the fork), before any job.
  void StartTurns(std::optional<unsigned> slots);

 private:
  // A read of `next` not answered yet.
  struct PendingAsk {
    fuse_req_t req = nullptr;
    std::shared_ptr<JobFileHandle> h;
    size_t size = 0;
    volume::JobGraph schedule;
    uint64_t job = 0;
    bool parked = false;       // the scheduler parked it: its answer comes through the queue
    bool interrupted = false;  // an interrupt came before it was parked
  };
  // `next` (jobs_next.cc).
  void ReadNext(fuse_req_t req, const std::shared_ptr<JobFileHandle>& h, size_t size, uint64_t off);
  static void OnInterrupt(fuse_req_t req, void* self);
  void Interrupted(fuse_req_t req);
  void AskNext(fuse_req_t req, const std::shared_ptr<JobFileHandle>& h, size_t size);
  void Answer(const PendingAsk& ask, Result<volume::NextLp> g);  // replies to the read, in turn
  void Reply(const PendingAsk& ask, const std::string& line, const std::string& pieces, bool turn);
  // Binds the jobs to the mount's volume and starts the thread that replies to parked asks
  // (once: one volume and one answer queue per mount). Before a job's first graph.
  void Attach(volume::Volume& volume);
  Status Commit(GraphFs& fs, JobFileHandle& h);  // at close (jobs_files.cc)
  // `graph` (jobs_graph.cc).
  Status CommitGraph(GraphFs& fs, ControlJob& job, const std::string& text, const Credentials& writer);
  bool MemoryOpen(const ControlJob& job);  // its `memory` file is open (mapped, maybe)
  // `active`, `active.list` (jobs_active.cc).
  Status CommitActive(ControlJob& job, const std::string& bytes, bool as_list);
  void RemoveJob(const std::shared_ptr<ControlJob>& job, const std::string& why);
  Inode* InodeFor(const std::shared_ptr<ControlJob>& job, const std::string& file);  // mu_ held
  std::shared_ptr<ControlJob> Find(const std::string& name);
  static nlohmann::json JobJson(ControlJob& job);

  std::unique_ptr<Inode> root_;
  std::mutex mu_;  // guards the maps and next_id_
  std::map<std::string, std::shared_ptr<ControlJob>> jobs_;
  std::map<std::pair<uint64_t, std::string>, std::unique_ptr<Inode>> inodes_;  // (job id, file) -> inode
  uint64_t next_id_ = 1;
  std::mutex asks_mu_;  // guards the two maps and answers_
  std::unordered_map<uint64_t, PendingAsk> asks_;         // by ticket
  std::unordered_map<fuse_req_t, uint64_t> ask_tickets_;  // the same asks by request (interrupts)
  volume::JobAnswers* answers_ = nullptr;
  std::atomic<volume::Volume*> volume_{nullptr};  // set by Attach, before any job has a graph
  std::thread answering_;
  std::unique_ptr<volume::ComputeTurns> turns_;  // null: no turns (StartTurns not called, or 0)
};

}  // namespace graphfs
