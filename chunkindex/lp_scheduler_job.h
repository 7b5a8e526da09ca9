// What the LP scheduler keeps per job: shared by its files (lp_scheduler.cc: jobs, their
// queues and views; lp_window.cc: the window; lp_loading.cc: the plans handed to the loaders and
// publishing; lp_selection.cc: which chunks make the next LP). Not a public header.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "chunkindex/lp_scheduler.h"

namespace graphfs::chunkindex {

inline double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

struct LpScheduler::Job {
  uint64_t id = 0;
  uint64_t partition_bytes = 0;
  std::vector<uint32_t> need;  // per chunk: its active sources, while not handed out this iteration
  // `need` where no LP loading holds the chunk for it yet: what the next plans may take. A chunk
  // leaves `todo` when planned and `need` when handed out.
  std::vector<uint32_t> todo;
  uint64_t todo_chunks = 0;
  std::vector<uint32_t> guess;  // `need` as this iteration started: what it may need in the next
  std::shared_ptr<const std::vector<uint64_t>> active;  // its active bitmap (null: whole chunks for it)
  uint64_t remaining_chunks = 0;  // not handed out this iteration
  uint64_t remaining_bytes = 0;
  bool in_iteration = false;
  uint64_t tick = 0;  // the scheduler's SetActive count at its last one
  // Per chunk: the share of its bytes its active sources' edges held when their runs were last
  // cut, and the tick they were cut at (LpScheduler::EdgeDense). Cutting runs is the scheduler's
  // largest cost where most sources are active; a share measured once an active set serves
  // every later plan and view of the chunk for that set.
  struct Coverage {
    uint64_t tick = UINT64_MAX;
    float share = 0;
  };
  mutable std::vector<Coverage> coverage;
  // The runs of its active sources cut from chunks it has not taken yet, for `runs_tick`
  // (LpScheduler::RunsOf): a chunk planned for it alone was cut in Plan and again for its view at
  // publish, and one matched against the LPs loading at SetActive again at their publish — two
  // thirds of the cutting, the scheduler's largest cost with everything cached. A chunk's runs
  // leave when it takes the chunk (Assign), all of them at its next active set.
  // At most Options::kept_runs_per_job runs are kept; past them a cut is made into
  // `runs_scratch` and not kept.
  mutable std::unordered_map<uint64_t, std::vector<ByteRun>> runs;
  mutable uint64_t runs_kept = 0;  // in `runs`
  mutable uint64_t runs_tick = UINT64_MAX;
  mutable std::vector<ByteRun> runs_scratch;
  bool waiting = false;  // an ask is parked
  uint64_t ticket = 0;   //   under this ticket
  Clock::time_point wait_start;
  HeldLp holding;            // handed to it, not done
  // With `hold` 2: the LP handed before `holding`, which the job may still read (it asked for
  // the next one while its threads process this one); an ask ends the use of this one instead.
  HeldLp previous;
  uint32_t hold = 1;         // LPs it may hold at once (SetHold)
  std::deque<HeldLp> queue;  // published for it, not asked for yet (oldest first)
  IterationCost cur;
  std::deque<IterationCost> recent;
  IterationCost total;

  // Drops the kept cut of chunk `c` (taken), or every kept cut (a new active set).
  void ForgetRuns(uint64_t c) const {
    if (auto it = runs.find(c); it != runs.end()) {
      runs_kept -= it->second.size();
      runs.erase(it);
    }
  }
  void ForgetRuns() const {
    runs.clear();
    runs_kept = 0;
  }

  bool Wants() const { return in_iteration && remaining_chunks > 0; }
  bool Plannable() const { return in_iteration && todo_chunks > 0; }
  // Waits with nothing to read: an LP must be loaded for it.
  bool Starved() const { return waiting && queue.empty(); }
  // An ask ends the use of the LP it holds — with hold 2, of the one before it (that one is
  // kept as `previous`, still being read).
  void ReleaseOnAsk() {
    previous = hold >= 2 ? std::move(holding) : HeldLp{};
    holding = HeldLp{};
  }
  // A new active set or `done`: both leave it.
  void ReleaseAll() {
    holding = HeldLp{};
    previous = HeldLp{};
  }
  bool Refers(const LogicalPartition* lp) const {
    if (holding.lp.get() == lp || previous.lp.get() == lp) return true;
    for (const HeldLp& h : queue)
      if (h.lp.get() == lp) return true;
    return false;
  }
};

}  // namespace graphfs::chunkindex
