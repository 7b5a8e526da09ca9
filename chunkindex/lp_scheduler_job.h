// What the LP scheduler keeps per job: shared by its files (lp_scheduler.cc: the lock-step
// protocol and the builder thread; lp_selection.cc: which chunks make the next LP). Not a
// public header.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "chunkindex/lp_scheduler.h"

namespace graphfs::chunkindex {

struct LpScheduler::Job {
  uint64_t id = 0;
  uint64_t partition_bytes = 0;
  std::vector<uint32_t> need;  // per chunk: its active sources, while not handed out this iteration
  std::vector<uint32_t> guess;  // `need` as this iteration started: what it may need in the next
  std::shared_ptr<const std::vector<uint64_t>> active;  // its active bitmap (null: whole chunks for it)
  uint64_t remaining_chunks = 0;
  uint64_t remaining_bytes = 0;
  bool in_iteration = false;
  Reply waiter;  // a pending Next
  uint64_t ticket = 0;
  Clock::time_point wait_start;
  HeldLp holding;   // handed to it, not done
  HeldLp assigned;  // built for it, not asked for yet
  IterationCost cur;
  std::deque<IterationCost> recent;
  IterationCost total;

  bool Wants() const { return in_iteration && remaining_chunks > 0; }
};

}  // namespace graphfs::chunkindex
