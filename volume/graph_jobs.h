// The volume's jobs service, as the control directory (fusefs/jobs_*.cc) uses it: a graph's
// logical-partition schedule seen through a handle (JobGraph), the view of the LP a job holds
// (LpView), and the answers to asks that had to wait (JobAnswers). The scheduling itself —
// chunkindex's LpScheduler, the loader threads, the LPs' memory — stays behind these types
// (volume/internal/graph_schedule.h, internal); a front end names none of it.
//
//   auto g = volume.JobGraphFor("/src/twitter");    // opened on first use, shared by its jobs
//   g->AddJob(7, 256 << 20);
//   g->SetActive(7, bitmap_words, /*whole_chunks=*/false);
//   const uint64_t ticket = volume.job_answers().NewTicket();
//   if (auto now = g->Next(7, ticket)) { ... } else { /* volume.job_answers().Wait() brings it */ }
//   LpView view = g->Held(7, seq);                   // its edges, gathered for a reply
//   volume.LeaveGraph(std::move(*g), 7);             // the job is gone
#pragma once

#include <sys/uio.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/shared_arena.h"

namespace graphfs::volume {

class GraphSchedule;
class Volume;
class AnswerQueue;  // the schedulers' answer queue (volume/internal/graph_schedule.h)

// The answer to a job's ask for its next LP: the LP it now holds (`seq`), or the end of its
// iteration.
struct NextLp {
  bool end = false;
  uint64_t seq = 0;
};

// An answer to an ask that was parked (JobGraph::Next returned none).
struct JobAnswer {
  JobAnswer(uint64_t t, Result<NextLp> r) : ticket(t), result(std::move(r)) {}
  uint64_t ticket = 0;
  Result<NextLp> result;  // the LP, or why there is none (EINTR: cancelled; ENOENT: the job left)
};

// Where every graph of the mount puts the answers to parked asks; the front end drains it
// (one thread) and replies. Tickets are unique in the mount.
class JobAnswers {
 public:
  JobAnswers();
  ~JobAnswers();
  JobAnswers(const JobAnswers&) = delete;
  JobAnswers& operator=(const JobAnswers&) = delete;

  uint64_t NewTicket();  // for the next ask: above 0, never given twice
  // The oldest answer, waiting for one; none once Close() was called and all were taken.
  std::optional<JobAnswer> Wait();
  std::optional<JobAnswer> WaitFor(std::chrono::steady_clock::duration timeout);
  void Close();  // wakes Wait() for good

 private:
  friend class GraphSchedules;
  std::shared_ptr<AnswerQueue> queue_;  // the schedulers push into it
};

// A job's view of the LP it holds: the edges of its own active sources in the LP's chunks,
// packed one after another in file order (what `lp-SEQ` reads). Keeps the LP alive.
class LpView {
 public:
  // (shared_ptr copies, moves and frees a Held without seeing its definition: the implicit
  // members serve.)
  explicit operator bool() const { return held_ != nullptr; }
  uint64_t seq() const;
  uint64_t bytes() const;  // the view's size
  // The view's bytes [offset, offset + length) (cut at bytes()) as pieces of the LP's memory,
  // appended to `out` in order. Valid while this view lives.
  void Gather(uint64_t offset, uint64_t length, std::vector<iovec>* out) const;

 private:
  friend class JobGraph;
  struct Held;  // the scheduler's view and where each of its pieces starts
  std::shared_ptr<const Held> held_;
};

// One graph's LP schedule as its jobs use it: a handle (copies share it). Jobs of the same
// graph directory get the same schedule, and share its LPs.
class JobGraph {
 public:
  JobGraph() = default;  // none (false)
  explicit operator bool() const { return schedule_ != nullptr; }
  bool operator==(const JobGraph& other) const { return schedule_ == other.schedule_; }

  const std::string& dir() const;  // the graph's absolute backing path
  uint64_t vertices() const;
  // The shared memory its LPs live in, which jobs map read-only (`jobs/NAME/memory`); null
  // when it could not be made (jobs then read their LPs through the daemon).
  const std::shared_ptr<SharedArena>& memory() const;

  Status AddJob(uint64_t job, uint64_t partition_bytes);
  Status SetPartitionBytes(uint64_t job, uint64_t partition_bytes);
  // LPs the job may hold at once, 1 or 2 (chunkindex::LpScheduler::SetHold).
  Status SetHold(uint64_t job, uint32_t lps);
  // Starts the job's next iteration with its active vertices (bitmap words, ceil(V/64) of
  // them, bits past V clear); `whole_chunks`: its LPs hold whole chunks, not only its
  // sources' edges (granularity chunk).
  struct ActiveCounts {
    uint64_t vertices = 0;  // active vertices (bits set)
    uint64_t chunks = 0;    // chunks with an active source
  };
  Result<ActiveCounts> SetActive(uint64_t job, std::vector<uint64_t> words, bool whole_chunks = false);
  // Asks for the job's next LP (ending its use of the one it holds): the answer when it is known
  // now; otherwise none, and it comes through JobAnswers under `ticket` (JobAnswers::NewTicket).
  std::optional<Result<NextLp>> Next(uint64_t job, uint64_t ticket);
  // Answers the parked ask `ticket` with EINTR if it still waits; false otherwise.
  bool Cancel(uint64_t job, uint64_t ticket);
  void Done(uint64_t job);  // the job is done with the LPs it holds

  // The LPs the job holds now, oldest first (none, one, or two with hold 2).
  std::vector<uint64_t> HeldSeqs(uint64_t job) const;
  // The size of its view of LP `seq`, if it holds it (no copy of the view).
  std::optional<uint64_t> HeldBytes(uint64_t job, uint64_t seq) const;
  LpView Held(uint64_t job, uint64_t seq) const;  // empty if it does not hold `seq`
  // The view's description as `lp-SEQ.map` (text, a line per piece) and `lp-SEQ.pieces`
  // (binary: where each piece lies in memory()) give it; none if it does not hold `seq`.
  enum class HeldText { kMap, kPieces };
  std::optional<std::string> Describe(uint64_t job, uint64_t seq, HeldText kind) const;

  // The scheduler's side of a job's `status`: state, iteration, LPs queued, recent
  // iterations' costs (fields added to `j`).
  void AddJobStatus(uint64_t job, nlohmann::json& j) const;

 private:
  friend class Volume;
  friend class GraphSchedules;
  explicit JobGraph(std::shared_ptr<GraphSchedule> schedule);
  std::shared_ptr<GraphSchedule> schedule_;
};

}  // namespace graphfs::volume
