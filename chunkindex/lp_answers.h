// Where the LP schedulers put the answers to asks that had to wait: a job's `next` is
// answered when a loader publishes an LP for it, long after the ask returned. The front end
// (fusefs: one thread per mount) takes them out and replies to the parked requests; the
// scheduler never calls up into it. One queue serves every graph of a mount, so tickets are
// unique across schedulers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include "chunkindex/logical_partition.h"
#include "common/result.h"

namespace graphfs::chunkindex {

struct LpAnswer {
  LpAnswer(uint64_t ticket, Result<LpGrant> result);
  // Out of line (lp_answers.cc): inlined into vectors' reallocations, GCC 12 warned of the
  // result's variant as maybe uninitialized (a false positive, -Wmaybe-uninitialized).
  LpAnswer(LpAnswer&& other) noexcept;
  LpAnswer& operator=(LpAnswer&& other) noexcept;
  ~LpAnswer();

  uint64_t ticket = 0;     // the ask's (LpAnswers::NewTicket)
  Result<LpGrant> result;  // the grant, or why there is none (EINTR: cancelled; ENOENT: the job left)
};

class LpAnswers {
 public:
  // A ticket for the next ask: above 0, never given twice.
  uint64_t NewTicket();
  void Push(LpAnswer answer);
  void Push(std::vector<LpAnswer>& answers);  // in order; empties `answers`
  // The oldest answer, waiting for one; none once Close() was called and every answer was taken.
  std::optional<LpAnswer> Wait();
  // The same, giving up after `timeout` (none).
  std::optional<LpAnswer> WaitFor(std::chrono::steady_clock::duration timeout);
  // Wakes Wait() for good; later Push()es are still kept for a Wait() that drains them.
  void Close();
  size_t pending() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<LpAnswer> queue_;
  uint64_t next_ticket_ = 1;
  bool closed_ = false;
};

}  // namespace graphfs::chunkindex
