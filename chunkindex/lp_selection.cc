// Which chunks make the next logical partition (GraphSO's chunk priority with GraphM's
// partition order on ties), and the LP buffer they are packed into.
#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "chunkindex/lp_scheduler_job.h"

namespace graphfs::chunkindex {

LpScheduler::Selection LpScheduler::Select(bool only_waiting) const {
  Selection s;
  std::vector<const Job*> takers;  // jobs that would receive the LP
  uint64_t budget = UINT64_MAX;
  bool any_asker = false;
  for (const auto& [id, j] : jobs_) {
    if (!j->Wants()) continue;
    takers.push_back(j.get());
    budget = std::min(budget, j->partition_bytes);
    any_asker |= !only_waiting || static_cast<bool>(j->waiter);
  }
  if (!any_asker) return s;

  // GraphM's partition priority: per block, max over the jobs needing it of 1/Nj, times |J_P|.
  // A block's chunks are consecutive ids, so a job's distinct blocks are the changes of block
  // along its needed chunks.
  std::unordered_map<uint32_t, std::pair<uint32_t, double>> block_claim;  // block -> (jobs, max 1/Nj)
  for (const Job* j : takers) {
    uint64_t blocks = 0;
    uint32_t last = UINT32_MAX;
    for (uint64_t c = 0; c < chunks_.size(); ++c) {
      if (j->need[c] != 0 && chunks_[c].block != last) {
        ++blocks;
        last = chunks_[c].block;
      }
    }
    last = UINT32_MAX;
    for (uint64_t c = 0; c < chunks_.size(); ++c) {
      if (j->need[c] == 0 || chunks_[c].block == last) continue;
      last = chunks_[c].block;
      auto& [count, inv] = block_claim[last];
      ++count;
      inv = std::max(inv, 1.0 / static_cast<double>(blocks));
    }
  }

  struct Candidate {
    double priority;
    double partition_priority;
    uint64_t id;
  };
  std::vector<Candidate> candidates;
  std::vector<bool> asked(chunks_.size(), false);
  for (uint64_t c = 0; c < chunks_.size(); ++c) {
    uint32_t jobs = 0, active = 0;
    for (const Job* j : takers) {
      if (j->need[c] == 0) continue;
      ++jobs;
      active = std::max(active, j->need[c]);
      asked[c] = asked[c] || !only_waiting || static_cast<bool>(j->waiter);
    }
    if (jobs == 0) continue;
    const auto& [count, inv] = block_claim[chunks_[c].block];
    candidates.push_back({static_cast<double>(jobs) * active * chunks_[c].mean_source_degree, inv * count, c});
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(b.priority, b.partition_priority, a.id) < std::tie(a.priority, a.partition_priority, b.id);
  });
  // The first pick is the best chunk some waiting job needs, so every LP serves one.
  auto first = std::find_if(candidates.begin(), candidates.end(), [&](const Candidate& c) { return asked[c.id]; });
  s.ids.push_back(first->id);
  s.bytes += chunks_[first->id].length;
  for (const Candidate& c : candidates) {
    const uint64_t length = chunks_[c.id].length;
    if (c.id == first->id || s.bytes + length > budget) continue;  // a smaller chunk may still fit
    s.ids.push_back(c.id);
    s.bytes += length;
  }
  std::sort(s.ids.begin(), s.ids.end());
  return s;
}

std::shared_ptr<LogicalPartition> LpScheduler::MakeLp(const Selection& s) const {
  auto lp = std::make_shared<LogicalPartition>();
  lp->chunks.reserve(s.ids.size());
  uint64_t at = 0;
  for (uint64_t id : s.ids) {
    lp->chunks.push_back({id, chunks_[id].offset, chunks_[id].length, at});
    at += chunks_[id].length;
  }
  lp->size = at;
  lp->bytes = std::make_unique_for_overwrite<char[]>(std::max<uint64_t>(at, 1));
  return lp;
}

}  // namespace graphfs::chunkindex
