// Turns at the cores for the jobs of a mount: at most `slots` jobs compute on an LP at once.
//
// Why: sixteen jobs time-sliced on two cores each walk their own vertex arrays for every LP,
// and together they walk far more than the caches hold — an edge then costs a cache miss.
// Measured on plain page-cache reads of a scale-24 rmat-local graph (docs/memory-as-cache.md,
// twenty-ninth part): eight sssp jobs took 524 CPU-s all at once and 385 CPU-s two at a time.
// graphfs is the one layer that sees every job, so it can hand out the turns: a job that opted
// in (it writes `yield` when it is done computing on an LP) gets its LP's answer only when a turn
// is free.
// `compute_slots=auto` (the default) gives a turn per core, handed out only while more than twice
// as many jobs take turns (`engage_above`): on P16 at scale 24 (16 jobs, 2 cores) two turns cut
// the wall by 8.5% on a CPU with a 32 MiB L3 (thirty-first part) and left it as it was with a
// 260 MiB L3, where a 4-job mix ran ~5% slower with them (twenty-ninth part).
//
// A job holds a turn from the delivery of an answer marked as a turn until it yields. With no
// more opted-in jobs than max(slots, engage_above) nobody waits and no answer is marked (no
// yield round trips).
// A job's answer that comes while it still holds a turn (it asks for LP k+1 while it computes on
// LP k) waits for its own yield. Waiting answers get free turns oldest first. A turn held longer
// than `longest_turn` is taken back (a hung or slow job holds nobody long); a job that leaves
// gives its turn back and its waiting answer is delivered unmarked.
//
//   ComputeTurns turns(2);
//   turns.Join(7);
//   turns.Offer(7, [](bool turn) { /* reply; with `turn`, the job yields when done */ });
//   turns.Yield(7);
//   turns.Leave(7);
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace graphfs::volume {

class ComputeTurns {
 public:
  using Clock = std::chrono::steady_clock;
  // Called once per Offer: now, on the offering thread, or later on the thread that freed a turn
  // (Yield, Leave, Shutdown, or the timer that takes back an overdue turn). `turn`: the job holds
  // a turn and must yield when it is done with what it was answered.
  using Deliver = std::function<void(bool turn)>;

  // slots 0: off (every answer is delivered at once, unmarked). Turns are handed out only while
  // more than max(slots, engage_above) jobs take them; with fewer, every answer goes at once —
  // `compute_slots=auto` sets engage_above to twice the cores (fusefs/jobs_dir.cc).
  static constexpr Clock::duration kLongestTurn = std::chrono::seconds(5);
  explicit ComputeTurns(unsigned slots, Clock::duration longest_turn = kLongestTurn,
                        unsigned engage_above = 0);
  ~ComputeTurns();  // Shutdown()
  ComputeTurns(const ComputeTurns&) = delete;
  ComputeTurns& operator=(const ComputeTurns&) = delete;

  unsigned slots() const { return slots_; }
  void Join(uint64_t job);   // the job will yield after each turn (idempotent)
  void Leave(uint64_t job);  // gives back its turn; its waiting answer is delivered unmarked
  void Offer(uint64_t job, Deliver deliver);
  void Yield(uint64_t job);  // a job without a turn: nothing happens
  // Delivers every waiting answer unmarked and stops the timer; later Offers deliver at once.
  void Shutdown();

  struct Stats {
    unsigned slots = 0;      // the mount's (constant)
    unsigned engage_above = 0;  // turns only while more jobs than this (and than slots) take them
    uint64_t jobs = 0;       // joined now
    uint64_t computing = 0;  // holding a turn now
    uint64_t waiting = 0;    // answers waiting for a turn now
    uint64_t turns = 0;      // answers delivered as turns
    uint64_t free = 0;       // delivered unmarked (no more jobs than slots, or leaving)
    uint64_t waited = 0;     // turns that waited for one
    double wait_seconds = 0;
    uint64_t overdue = 0;    // turns taken back after longest_turn
    uint64_t stray_yields = 0;  // yields of a job without a turn
  };
  Stats stats() const;

 private:
  struct Waiting {
    uint64_t job = 0;
    Deliver deliver;
    Clock::time_point since;
  };
  struct Ready {
    Deliver deliver;
    bool turn = false;
  };
  // Whether more jobs take turns than the turns are handed out for.
  bool EngagedLocked() const { return joined_.size() > engage_above_; }
  // Gives free turns to waiting answers, oldest first (a job holding one waits for its yield);
  // when too few jobs take turns, delivers them unmarked instead.
  void FillLocked(std::vector<Ready>* out, Clock::time_point now);
  void TimerLoop();
  static void Run(std::vector<Ready>& ready);

  const unsigned slots_;
  const Clock::duration longest_turn_;
  const unsigned engage_above_;  // max(slots, the constructor's engage_above)
  mutable std::mutex mu_;
  std::condition_variable changed_;
  bool stopped_ = false;
  std::unordered_set<uint64_t> joined_;                      // jobs that opted in
  std::unordered_map<uint64_t, Clock::time_point> holding_;  // job -> when its turn began
  std::deque<Waiting> waiting_;
  Stats stats_;
  std::thread timer_;
};

}  // namespace graphfs::volume
