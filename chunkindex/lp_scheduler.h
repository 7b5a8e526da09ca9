// The logical-partition scheduler of one graph: GraphSO's repartition-centric
// execution with GraphM's shared, synchronous traversal.
//
// Jobs hand in the active chunks of their coming iteration (ActiveChunkFinder's
// answer for their active vertices). The scheduler builds logical partitions
// (LPs): the highest-priority chunks that some job still needs this iteration,
// up to the partition size, re-sorted by chunk id so the load stays sequential.
// An LP is loaded once (through the loader: the daemon's cache and striping) and handed to every
// job for which it holds active chunks: each such job gets it queued and reads it at its own pace.
// A job that leaves is never waited on.
//
//   priority of chunk C   Pri(C) = N(J) · N(A) · mean source degree
//     N(J)  jobs in an iteration that still need C
//     N(A)  active sources of C: the largest count among those jobs (a lower
//           bound of their union, which only a second query would give)
//   between chunks of equal priority, GraphM's partition order
//     Pri(P) = max over jobs j needing block P of (1 / Nj) · |J_P|
//     Nj = blocks job j still needs, |J_P| = jobs needing P
//   then (Options::diagonal_first) chunks of diagonal blocks (i, i) — CLIP's diagonal-first
//   order, where loaded-data reentry gains most —, then chunk id.
// Within an LP the chunks are then grouped by target partition (ChunkInfo::column): the first
// pick's column first (the column the LP planned before ended in, where a job needs a chunk
// there), the others in the order of their best chunk. An engine sums into one target
// partition's window at a time and moves it out when it leaves the partition; LPs that each
// lay in every column cost it a flush per target and LP (lp_selection.cc).
//
// The first chunk picked is the best one needed by the job that has waited longest with
// nothing queued (else by the job with the fewest bytes queued), so every LP serves a job
// that needs one (a job that is busy elsewhere cannot stall the others); the rest are the
// best of what any job in an iteration needs. Jobs that have not asked yet but need chunks
// of the LP get it queued, for their next asks.
//
// Vertex-granular LPs (Options::runs): a chunk whose edges are in source order holds each
// source's edges as one run, so an LP need not hold whole chunks. Per chunk it holds either
// the whole chunk or only the runs of the sources active for some job that receives it, the
// gaps between runs read through where that is cheaper than another request — whichever
// the cost model (chunkindex/read_cost.h) says the disks serve faster. Each job's view then
// holds exactly its own active sources' edges of the chunk. The budget (partition size)
// counts what the LP holds, so a sparse iteration fits in few LPs.
//
// Disk balance (Options::disks): an LP loads in the time of its busiest disk. Priorities
// scatter an LP's chunks over the file, so left alone its disks' shares differ by a fifth or
// more; the selection therefore fills each disk up to its share of the budget and lets a
// chunk whose disk is full wait for the next LP while chunks on other disks are still
// candidates — the priority order decides within each disk, and what no other disk can take
// fills the rest (a sparse iteration that fits in one LP is not changed).
//
// Loading ahead (a window, not lock step). LPs are planned and loaded before anyone asks for
// them, several at once (one per loader thread that takes a plan), as long as the LPs that are
// live — queued for a job, held by one, or loading — fit in Options::window_bytes. A fast job goes through LP k+1, k+2...
// while a slow one still holds LP k; the only thing that makes a job wait for another is a full
// window (memory), never the other job's progress. A chunk is planned at most once per job and
// iteration (`Job::todo`): the next plan takes what some job needs that no LP loading or loaded
// holds for it yet.
//
// Across iterations: a job that starts an iteration first takes, from the live LPs (those other
// jobs still hold or have queued, and unused guesses), every chunk it needs that they hold —
// without a load ("late assignment": GraphM's sharing when the jobs are an iteration apart).
// When no job needs anything (all are between iterations, computing), one LP is loaded on a
// guess: what each of those jobs needed in its last iteration, if that was at least half of the
// file (dense jobs need the same chunks again; a sparse frontier moves on). Unused, it is dropped
// when every job has started a new iteration, or when the window needs the room.
//
// Who does what (no call goes up a layer). The scheduler decides; it has no thread of its own.
// The volume's loader threads take plans (TakePlan: the next LP to load, its extents fixed),
// fill each LP's memory and hand it back (Finish: published to its jobs, or abandoned on an
// error). An ask (Next) is answered at once when the job has an LP queued or its iteration is
// over; otherwise it is parked under its ticket, and its answer goes into the LpAnswers queue
// (chunkindex/lp_answers.h) that the front end drains — from Finish, Cancel, SetActive,
// RemoveJob, or the destructor.
//
// Thread-safe. Each ask gets exactly one answer: returned by Next, or pushed once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "chunkindex/active_chunk_finder.h"
#include "chunkindex/logical_partition.h"
#include "chunkindex/lp_answers.h"
#include "chunkindex/read_cost.h"
#include "chunkindex/source_runs.h"
#include "common/result.h"
#include "common/shared_arena.h"

namespace graphfs::chunkindex {

// What the scheduler knows of a chunk of the partition file it serves (`column`).
struct ChunkInfo {
  uint64_t offset = 0;  // in the file
  uint64_t length = 0;
  uint32_t block = 0;   // block id (i * P + j): GraphM's partition
  double mean_source_degree = 0;
  uint32_t num_sources = 0;  // distinct sources (0: unknown); a job with this many active needs it all
  bool diagonal = false;     // of a diagonal block (i, i)
  uint64_t stored_length = 0;  // compressed: its frame's bytes on the disks (0: `length`, as it is)
  // Its target partition (j of block (i, j)). An LP's chunks are grouped by it (lp_selection.cc
  // says why); all 0 (unknown) leaves the priority order as it is.
  uint32_t column = 0;
};

// A chunk's bytes on one disk of a striped file.
struct DiskBytes {
  uint32_t disk = 0;
  uint64_t bytes = 0;
};

// The cost of one iteration of one job, for stats.
struct IterationCost {
  uint64_t iteration = 0;
  uint64_t active_chunks = 0;
  uint64_t active_bytes = 0;       // of those chunks
  double find_seconds = 0;         // identifying the active chunks (caller-measured)
  double select_seconds = 0;       // choosing and sorting the chunks of its LPs
  double load_seconds = 0;         // loading its LPs (shared with the other holders)
  double wait_seconds = 0;         // blocked in Next
  uint64_t lps = 0;                // LPs handed to it
  uint64_t bytes_delivered = 0;    // bytes of its chunks in those LPs
  uint64_t bytes_reused = 0;       // of those, taken from LPs already live (late assignment), not loaded for it
  uint64_t lp_bytes = 0;           // sizes of the LPs it held (loaded once, shared with the other holders)
  uint64_t whole_chunks = 0;       // its chunks in those LPs, loaded whole
  uint64_t partial_chunks = 0;     //   or as runs of active sources
  bool finished = false;           // "end" reached
};

struct JobView {
  uint64_t id = 0;
  uint64_t partition_bytes = 0;
  std::string state;               // "idle", "waiting", "holding", "ready" (LPs queued, not asked for), "working"
  uint64_t iteration = 0;          // iterations started
  uint64_t remaining_chunks = 0;   // this iteration, not handed out yet
  uint64_t remaining_bytes = 0;
  uint64_t holding_seq = 0;        // LP it holds, else the first queued (0: none)
  uint64_t previous_seq = 0;       // with hold 2: the LP handed before, still its (0: none)
  uint32_t hold = 1;               // LPs it may hold at once
  uint64_t queued = 0;             // LPs queued for it, not asked for yet
  uint64_t queued_bytes = 0;       //   their view bytes
  double waiting_seconds = 0;      // of the ask it is blocked in now (0: not waiting)
  std::vector<IterationCost> recent;  // newest last, at most kRecentIterations
  IterationCost total;             // sums over all iterations (iteration = count)
};

struct SchedulerStats {
  uint64_t lps_built = 0;
  uint64_t lp_handouts = 0;        // (LP, job) pairs, late assignments too: above lps_built when jobs shared LPs
  uint64_t lps_preloaded = 0;      // loaded ahead: none of the jobs it went to was waiting for it
  uint64_t lps_guessed = 0;        // loaded on a guess of the jobs' next iteration
  uint64_t chunks_loaded = 0;
  uint64_t bytes_loaded = 0;       // read through the loader
  uint64_t bytes_reused = 0;       // view bytes handed from LPs already live (late assignment)
  uint64_t bytes_discarded = 0;    // LPs loaded, then taken by no job (a wrong guess, a job that left)
  uint64_t bytes_delivered = 0;    // view bytes handed to jobs (sum over holders of their views)
  // The cost model's choices (chunks of built LPs): read whole, as runs, or whole because the
  // chunk's edges are not in source order; the bytes the runs left unread; the model's seconds.
  uint64_t chunks_whole = 0;
  uint64_t chunks_partial = 0;
  uint64_t chunks_unsorted = 0;
  uint64_t extents_loaded = 0;
  uint64_t bytes_skipped = 0;
  // Disk balance: chunks passed over for an LP because their disk had its share already (taken
  // by a later LP instead), and per LP the planned bytes of its busiest disk, summed.
  uint64_t chunks_deferred = 0;
  uint64_t planned_busiest_disk_bytes = 0;
  double model_seconds = 0;        // the plans' cost
  // The offline reference (an optimum per chunk and LP round): for every chunk of every
  // published LP, the cost model's plan for exactly the jobs that took the chunk from it,
  // knowing their active sets — no guessed preloads, no plans for bitmaps that changed, no
  // chunks nobody took. `planned_disk_bytes` is what the selections planned to read (before
  // the cache and the reuse of preloaded LPs); `offline_unshared_disk_bytes` the same
  // reference if no two jobs shared a load (each job's own plan per chunk).
  uint64_t planned_disk_bytes = 0;
  uint64_t offline_disk_bytes = 0;
  uint64_t offline_unshared_disk_bytes = 0;
  double model_whole_seconds = 0;  //   and what reading every chunk whole would have cost
  double select_seconds = 0;
  // Chunk plans the selections made (each cuts the takers' active runs source by source) and
  // plans they took from the memo of plans an earlier selection made and left (LpScheduler::
  // plan_memo_) instead of planning again.
  uint64_t plans_made = 0;
  uint64_t plans_reused = 0;
  // Chunks whose active runs were cut (SourceRuns::ActiveRuns), and a job's cuts that served
  // again (Job::runs: its plan's cut at its view's publish, a match against a loading LP's at
  // its publish) instead of cutting anew.
  uint64_t runs_cut = 0;
  uint64_t runs_reused = 0;
  // Chunks in memory as the jobs read them, as the volume last said (SetResident), and the
  // times a job's chunk was weighed whole only because of it (Options::resident_scan_edges_per_run).
  uint64_t resident_chunks = 0;
  uint64_t resident_whole = 0;
  double load_seconds = 0;         // summed over the loaders (they overlap)
  double loader_cpu_seconds = 0;   // the loader threads' own CPU while loading (not the I/O workers')
  uint64_t load_errors = 0;
  // The window: LPs live (queued, held, or unused guesses) and loading, in bytes and count.
  uint64_t window_bytes = 0;
  uint64_t live_lps = 0;
  uint64_t live_bytes = 0;
  uint64_t live_unit_bytes = 0;  // of live_bytes: the cached units the LPs are made of (pinned; the cache's memory)
  uint64_t live_bytes_peak = 0;    // live + loading, at most
  uint64_t lps_in_flight = 0;
  uint64_t loading_bytes = 0;
  // Seconds some job waited for an LP with none loading (the disks idle for the LPs), and the
  // part of them the window was full (memory held by LPs other jobs had not finished).
  double loader_idle_while_waiting_seconds = 0;
  double window_full_while_waiting_seconds = 0;
  double busy_seconds = 0;         // some LP loading
  uint64_t jobs = 0;
  std::string last_error;
};

class LpScheduler {
 public:
  static constexpr size_t kRecentIterations = 64;

  struct Options {
    // Load ahead of the asks (the window, and a guess between iterations). false: an LP is
    // planned only for a job that waits with nothing queued, one at a time.
    bool prefetch_next = true;
    // Bytes of LPs live and loading at once (0: 4 x the largest partition size of the jobs).
    uint64_t window_bytes = 0;
    // An LP's size is the smallest partition size of the jobs it serves, and at most this (0: no
    // cap). The volume sets a quarter of the window, so several LPs pipeline.
    uint64_t max_lp_bytes = 0;
    // What an LP's plans read from the disks (ChunkReadPlan::disk_bytes; a chunk in memory as the
    // jobs read it, SetResident, costs none) is at most this (0: no cap); an LP takes its first
    // chunk whatever it costs. The partition budget counts what an LP holds, and a sparse
    // iteration over a permuted graph's compressed column holds a few bytes of every chunk while
    // reading every frame: one LP was a whole pass of the disks for the jobs that had asked
    // when it was planned, and a job that asked a moment later waited for a pass of its own
    // beside it (R-MAT's W4 tail at scale 24: one LP per job and iteration, each ~1,200 chunks;
    // docs/memory-as-cache.md, thirtieth part). Cut into LPs of this much reading, the pass is
    // a stream of LPs the later jobs join at the next one. The volume sets its LP window.
    uint64_t max_lp_disk_bytes = 0;
    // Among chunks of equal priority and partition order, diagonal blocks' first.
    bool diagonal_first = false;
    // Whole chunks, or vertex-granular: the runs of active sources' edges of the file's
    // source-sorted chunks (`runs`, which must then be given and outlive the scheduler; its
    // unsorted chunks load whole).
    enum class Granularity { kChunk, kVertex };
    Granularity granularity = Granularity::kChunk;
    const SourceRuns* runs = nullptr;
    ReadCost cost;  // chooses per chunk between its runs and the whole chunk
    // A job whose active sources in a chunk are at least 1/this of the chunk's edges gets the
    // whole chunk (its engine skips the inactive sources' edges, as it does reading the file)
    // instead of the runs of its active sources: cutting, handing out and gathering a run costs
    // the daemon and the job about as much as scanning this many edges (docs/memory-as-cache.md,
    // "Dense iterations"). 0: always the runs.
    uint32_t scan_edges_per_run = 32;
    // The same for a chunk in memory as the jobs read it (SetResident: a decoded unit the cache
    // holds): reading it whole costs no disk and no decode, and the jobs skip an inactive
    // source's edge in a few nanoseconds (their bit test in a sequential scan), while each run
    // costs the daemon a cut, a piece and its share of the view's text. A job reads such a chunk
    // whole once it has an active source per this many of the chunk's edges (docs/memory-as-cache.md,
    // twenty-fifth part: with the graph in memory the daemon's CPU −40%, the jobs' scan of the
    // inactive edges costing them less than that; 256 saved less, 4096 no more). 0, or not above
    // scan_edges_per_run: the rule above for every chunk.
    uint32_t resident_scan_edges_per_run = 1024;
    // A job whose active sources' edges are at least this share of a chunk's bytes reads it
    // whole too (the rule above counts sources; in a skewed graph a third of the sources may
    // hold nearly all the edges). The share is known only once the job's runs in the chunk
    // were cut for its current active set; from then on the chunk is whole for it in every plan
    // and view, instead of its runs cut again for each (docs/memory-as-cache.md, twenty-third
    // part). 0 (or above 1): never.
    double edge_dense_share = 0.875;
    // A job's cuts kept until it takes their chunks (Job::runs), at most this many runs (16 bytes
    // each; 4 MiB: a window's chunks of a sparse set hold some 50k); past them a cut is not kept.
    uint64_t kept_runs_per_job = 1 << 18;
    // Where the file's bytes lie (a striped file): per chunk, its bytes on each disk it touches;
    // `disks` their count (below 2, or no list: no balancing). Chunks the cache holds are weighed like the others: counting them as free
    // made LPs less balanced, not more (BENCHMARKS.md, issue 16) — what a small cache holds
    // when an LP is planned is often gone by the time it is loaded.
    uint32_t disks = 0;
    std::vector<std::vector<DiskBytes>> chunk_disks;
    // Where LPs' bytes live (null: the heap): memory the jobs map, one copy for all of them.
    std::shared_ptr<SharedArena> memory;
    // Where answers to parked asks go (null: a queue of its own, answers()).
    std::shared_ptr<LpAnswers> answers;
  };

  // `chunks` is the catalog of the file's chunks (index = chunk id).
  LpScheduler(std::vector<ChunkInfo> chunks, Options options);
  explicit LpScheduler(std::vector<ChunkInfo> chunks) : LpScheduler(std::move(chunks), Options{}) {}
  ~LpScheduler();  // Stop(), and answers parked asks with ECANCELED
  LpScheduler(const LpScheduler&) = delete;
  LpScheduler& operator=(const LpScheduler&) = delete;

  uint64_t chunk_count() const { return chunks_.size(); }

  Status AddJob(uint64_t job, uint64_t partition_bytes);
  Status SetPartitionBytes(uint64_t job, uint64_t partition_bytes);
  // How many LPs the job may hold at once: 1 (default) — an ask ends its use of the LP it holds;
  // 2 — an ask ends its use of the LP handed before that one, so a job may ask for LP k+1 while
  // its threads still read LP k (the round trip hidden behind its work). The end of an
  // iteration keeps the last LP handed until the next ask, active set or `done`.
  Status SetHold(uint64_t job, uint32_t lps);
  // The job is gone: it is dropped from every LP and never waited on.
  void RemoveJob(uint64_t job);

  // Starts the job's next iteration with these active chunks (any order; ids below
  // chunk_count()) and, for vertex-granular LPs, its active bitmap (ceil(V/64) words; null:
  // whole chunks for this job). Drops whatever LP the job still held and answers its pending
  // ask, if any, with ECANCELED.
  Status SetActive(uint64_t job, std::span<const ActiveChunk> active, double find_seconds,
                   std::shared_ptr<const std::vector<uint64_t>> words = nullptr);

  using Grant = LpGrant;
  const std::shared_ptr<LpAnswers>& answers() const { return answers_; }
  // Asks for the job's next LP; ends its use of the one it holds. Returns the answer when it is
  // known now (an LP queued for the job, the end of its iteration, an error); otherwise none:
  // the ask is parked and its answer is pushed to answers() under `ticket` (from
  // answers()->NewTicket(); unique among the asks parked there).
  std::optional<Result<Grant>> Next(uint64_t job, uint64_t ticket);
  // Answers the parked ask `ticket` with EINTR if it is still waiting; false otherwise.
  bool Cancel(uint64_t job, uint64_t ticket);
  // The job is done with the LPs it holds.
  void Done(uint64_t job);

  Result<JobView> View(uint64_t job) const;
  std::vector<JobView> Views() const;
  SchedulerStats Stats() const;
  // The LP the job holds (delivered and not done; with hold 2 also the one before), if its
  // sequence number is `seq`.
  HeldLp Holding(uint64_t job, uint64_t seq) const;
  // The same without copying the view: its size (nothing if the job does not hold LP `seq`),
  // or `visit` called with it under the scheduler's lock (false if not held). A sparse view
  // has tens of thousands of pieces; a lookup or stat of lp-SEQ copied them every time.
  std::optional<uint64_t> HoldingBytes(uint64_t job, uint64_t seq) const;
  // The sequence numbers of the LPs `job` holds now, the one handed before first (hold 2); empty
  // for an unknown job. (A readdir of the job's directory asks: no JobView copied for two numbers.)
  std::vector<uint64_t> HeldSeqs(uint64_t job) const;
  bool VisitHolding(uint64_t job, uint64_t seq, const std::function<void(const HeldLp&)>& visit) const;

  // ---- for the loaders (the volume's threads) ----
 private:
  struct Selection;  // the chunks a plan reads and why (below)

 public:
  // An LP to load: its extents are fixed; the loader fills lp().memory and hands it to Finish.
  class LoadPlan {
   public:
    LoadPlan(LoadPlan&&) noexcept;
    LoadPlan& operator=(LoadPlan&&) noexcept;
    ~LoadPlan();
    LogicalPartition& lp() { return *lp_; }

   private:
    friend class LpScheduler;
    LoadPlan();
    std::shared_ptr<LogicalPartition> lp_;
    std::unique_ptr<Selection> sel_;
    bool guess_ = false;
    double select_seconds_ = 0;
    uint64_t tick_ = 0;
    std::chrono::steady_clock::time_point start_;
  };
  // Blocks until an LP is due (some job needs chunks no LP holds for it, and the window has
  // room; or a guess between iterations), then plans it. None once Stop() was called.
  std::optional<LoadPlan> TakePlan();
  // The plan's LP is loaded (`status` ok: every extent placed in lp().memory) or failed:
  // published to the jobs that need it, or its chunks planned again. `loader_cpu_seconds`:
  // the loading thread's own CPU, for stats.
  void Finish(LoadPlan plan, Status status, double loader_cpu_seconds);
  // The chunks in memory as the jobs read them (`resident[c]`, one per chunk; shorter: the
  // rest are not), as the volume sees its cache now; weighed by resident_scan_edges_per_run
  // from the next plan or view on. The volume calls it at every SetActive, never under a lock of
  // its own (the scheduler never calls into the volume).
  void SetResident(std::vector<bool> resident);
  // TakePlan() returns none from now on; plans taken may still Finish.
  void Stop();
  // Blocks until no LP loads and none is due (tests, with loaders running).
  void WaitIdle();

 private:
  struct Job;
  // A job an LP would be handed to, and what it needs per chunk (what no LP holds for it yet, or
  // for a guess what it needed in its last iteration).
  struct Taker {
    const Job* job;
    const uint32_t* need;
  };
  struct Selection {
    std::vector<uint64_t> ids;           // ascending
    std::vector<ChunkReadPlan> plans;    // per id: what of it to read
    uint64_t bytes = 0;
    uint64_t disk_bytes = 0;             // what its plans read from the disks (Options::max_lp_disk_bytes)
    uint64_t deferred = 0;               // chunks left for a later LP by the disk balance
    uint64_t busiest_disk_bytes = 0;     // planned, of the busiest disk
  };
  // A published LP some job holds or has queued, or an unused guess (`spare`).
  struct LiveLp {
    std::shared_ptr<const LogicalPartition> lp;
    bool spare = false;
    bool taken = false;     // some job took a piece of it
    uint64_t tick = 0;      // SetActive count when it was planned
  };
  // A chunk's extents in an LP: [first, last), consecutive (ascending file offsets).
  struct ChunkSpan {
    uint64_t chunk;
    size_t first, last;
    bool whole;
    bool taken_whole = false;        // some job took all of the chunk
    std::vector<ByteRun> taken;      // the runs the jobs took (chunk-relative), for the reference
  };
  using Replies = std::vector<LpAnswer>;
  using Clock = std::chrono::steady_clock;

  bool PlanDue() const;                 // mu_ held: a loader should plan an LP now
  const Job* FirstFor() const;          // mu_ held: whose chunk the next LP starts with (null: nobody's)
  bool GuessDue() const;                // mu_ held: nobody needs anything; a dense job's next iteration can be guessed
  uint64_t Budget(bool guess) const;    // mu_ held: the next LP's size bound
  uint64_t Window() const;              // mu_ held
  uint64_t LiveBytes() const;           // mu_ held: live LPs
  bool Room(uint64_t bytes) const;      // mu_ held: `bytes` more fit in the window (or only an LP can free it)
  void Prune();                         // mu_ held: drops LPs nobody holds or has queued, and stale guesses
  bool DropSpare();                     // mu_ held: the oldest unused guess leaves the window
  void Account() const;                 // mu_ held: closes the accounting span (idle while waiting)
  uint64_t SpareBytesToDrop() const;    // mu_ held: unused guesses nobody has queued
  bool Referred(const LogicalPartition* lp) const;  // mu_ held: some job holds it or has it queued
  // Chunks for the next LP: candidates are chunks some job in an iteration still needs; the
  // first pick is one `first` needs. `guess`: nobody needs anything now; select what the jobs
  // between iterations needed in their last one.
  Selection Select(const Job* first, bool guess) const;  // mu_ held
  // A lower bound of Plan(c, takers).bytes that costs no decoding.
  uint64_t MinPlanBytes(uint64_t c, std::span<const Taker> takers) const;  // mu_ held
  // What of chunk `c` to read for the jobs that need it (whole, or runs by the cost model):
  // the memo's plan when an earlier selection made it for the same takers, else a new one.
  ChunkReadPlan Plan(uint64_t c, std::span<const Taker> takers) const;  // mu_ held
  // A plan Select made and did not take (the chunk did not fit this LP) goes to the memo for
  // the next selections.
  void Remember(uint64_t c, std::span<const Taker> takers, ChunkReadPlan plan) const;  // mu_ held
  ChunkReadPlan WholePlan(uint64_t c) const;  // the whole chunk, one request
  // What reading chunk c by `plan` costs the disks (Options::max_lp_disk_bytes): none for a
  // chunk in memory as the jobs read it (SetResident), else the plan's disk bytes; MinDiskCost
  // a lower bound of it before the plan is made (a compressed chunk costs its frame).
  uint64_t DiskCost(uint64_t c, const ChunkReadPlan& plan) const { return Resident(c) ? 0 : plan.disk_bytes; }
  uint64_t MinDiskCost(uint64_t c, uint64_t least_bytes) const {
    return Resident(c) ? 0 : chunks_[c].stored_length > 0 ? chunks_[c].stored_length : least_bytes;
  }
  bool Resident(uint64_t c) const { return c < resident_.size() && resident_[c]; }
  // Chunk c can be loaded as runs of sources (vertex granularity, and it is source-sorted).
  bool LoadsAsRuns(uint64_t c) const {
    return options_.granularity == Options::Granularity::kVertex && options_.runs != nullptr && options_.runs->sorted(c);
  }
  // Whether job j, with `active` sources of chunk c active, needs all of it: it has no bitmap,
  // the chunk is not source-sorted, or every source of it is active.
  bool NeedsAll(const Job& j, uint64_t c, uint64_t active) const;
  // Whether `active` sources of chunk c are enough that their runs would cost more than the whole
  // chunk (Options::scan_edges_per_run, or resident_scan_edges_per_run for a chunk in memory): a
  // job with that many reads the chunk whole.
  bool Dense(uint64_t c, uint64_t active) const;
  // Whether job j's runs in chunk c, cut for its current active set, held at least
  // Options::edge_dense_share of the chunk's bytes: it then reads the chunk whole.
  bool EdgeDense(const Job& j, uint64_t c) const;
  // Records what job j's runs `runs` in chunk c hold, for EdgeDense.
  void NoteCoverage(const Job& j, uint64_t c, std::span<const ByteRun> runs) const;
  // Job j's active sources' runs in chunk c (its bitmap's: never null here), cut once per active
  // set and kept until it takes the chunk (Job::runs); their coverage noted.
  const std::vector<ByteRun>& RunsOf(const Job& j, uint64_t c) const;
  // Job j's view of chunk c in `lp` (its extents [first, last)); false if the extents miss
  // some of its active sources' edges (its active set changed since the LP was planned).
  bool PiecesOf(const Job& j, uint64_t c, const LogicalPartition& lp, size_t first, size_t last,
                std::vector<ViewPiece>* out) const;  // mu_ held
  // The offline reference's plan for chunk `c` given the runs its takers took (sorted and
  // merged in place), or the whole chunk when one of them took all of it.
  ChunkReadPlan ReferencePlan(uint64_t c, std::vector<ByteRun>& runs, bool whole) const;
  // Adds a job's pieces of chunk `c` to the chunk's takings and its own plan to the unshared
  // reference.
  void NoteTaken(uint64_t c, std::span<const ViewPiece> pieces, std::vector<ByteRun>* taken,
                 bool* taken_whole);  // mu_ held
  std::shared_ptr<LogicalPartition> MakeLp(const Selection& s) const;
  static std::vector<ChunkSpan> SpansOf(const LogicalPartition& lp);
  // Hands job j its pieces of every chunk of `lp` it still needs: answers its ask or queues
  // them. Returns its view bytes (0: nothing for it).
  // `select_seconds`, `load_seconds`: what the LP cost (0 for one already live).
  uint64_t Assign(Job& j, const std::shared_ptr<const LogicalPartition>& lp, std::vector<ChunkSpan>& spans,
                  double select_seconds, double load_seconds, Clock::time_point now, Replies* replies);  // mu_ held
  // Publishes a loaded LP: assigns it to every job that needs some of its chunks.
  void Publish(std::shared_ptr<LogicalPartition> lp, const Selection& sel, bool guess, double select_seconds,
               double load_seconds, uint64_t tick, Replies* replies);  // mu_ held
  // A load failed: its chunks are to plan again for the jobs it was planned for; the waiting ones
  // among them get the error.
  void Abandon(const LogicalPartition& lp, const Error& error, Replies* replies);  // mu_ held
  void FinishIteration(Job& j);  // mu_ held
  static JobView ViewOf(const Job& j, Clock::time_point now);
  void Send(Replies& replies) { answers_->Push(replies); }

  const std::vector<ChunkInfo> chunks_;
  const uint64_t edge_size_;
  uint64_t total_bytes_ = 0;  // of all chunks
  const Options options_;
  const std::shared_ptr<LpAnswers> answers_;

  mutable std::mutex mu_;
  std::condition_variable cv_;       // wakes the loaders
  std::condition_variable idle_cv_;  // WaitIdle
  bool stop_ = false;
  std::map<uint64_t, std::unique_ptr<Job>> jobs_;
  std::vector<LiveLp> live_;         // ascending seq
  std::vector<const LogicalPartition*> loading_;  // planned, loading (extents fixed, bytes being filled)
  uint64_t in_flight_ = 0;           // LPs loading
  uint64_t in_flight_bytes_ = 0;
  bool error_backoff_ = false;       // a load failed: plan only for a job that waits
  uint64_t next_seq_ = 1;
  uint64_t ticks_ = 0;               // SetActive calls
  uint64_t generation_ = 0;          // bumped by every change of what jobs need
  uint64_t guess_tried_generation_ = UINT64_MAX;
  // What the time since account_mark_ counts as (Account()).
  enum class Span { kOther, kLoading, kIdleWhileWaiting, kFullWhileWaiting };
  mutable Clock::time_point account_mark_ = Clock::now();
  mutable Span account_span_ = Span::kOther;
  mutable SchedulerStats stats_;
  // Plans selections made and left (mu_ held). With LPs small beside the chunks, a selection
  // plans dozens of candidates that do not fit (up to kMisfitsBeforeFull in a row), and the
  // next one plans the same again: at scale-22 f = 1/8 (LPs of 6 MiB) cutting runs was 7.6 of
  // the LP loaders' 18 CPU-seconds. A plan depends on the jobs that need the chunk, their
  // active sets and how many of its sources are active for them: `takers` says which (job id,
  // its SetActive tick, its need) it was made for, and another set of takers plans anew.
  struct TakerKey {
    uint64_t job;
    uint64_t tick;
    uint32_t need;
    bool operator==(const TakerKey&) const = default;
  };
  struct PlanMemo {
    std::vector<TakerKey> takers;
    ChunkReadPlan plan;
  };
  static std::vector<TakerKey> KeyOf(uint64_t c, std::span<const Taker> takers);
  // Bounds the memo's extents (16 bytes each): past it the memo starts again empty.
  static constexpr uint64_t kPlanMemoExtents = 64 * 1024;
  mutable std::map<uint64_t, PlanMemo> plan_memo_;  // by chunk
  std::vector<bool> resident_;  // SetResident's: per chunk, in memory as the jobs read it
  mutable uint64_t plan_memo_extents_ = 0;
  // The column (ChunkInfo::column) the view of the LP planned last ends in: the next LP's first
  // pick is of it when a job it serves needs one there (lp_selection.cc). mu_ held.
  uint32_t last_column_ = UINT32_MAX;
};

}  // namespace graphfs::chunkindex
