// Which chunks make the next logical partition (GraphSO's chunk priority with GraphM's
// partition order on ties), what of each to read (whole, or its active sources' runs by the
// cost model), the LP buffer they are packed into, and each job's view of it.
#include <algorithm>
#include <iterator>
#include <tuple>
#include <unordered_map>

#include "chunkindex/lp_scheduler_job.h"

namespace graphfs::chunkindex {

LpScheduler::Selection LpScheduler::Select(const Job* first_for, bool guess) const {
  Selection s;
  std::vector<Taker> takers;  // jobs that would receive the LP, and what they need
  for (const auto& [id, j] : jobs_) {
    // A guess: jobs between iterations need again what they needed. Otherwise what each job
    // needs that no LP holds or loads for it yet.
    if (guess ? (j->Wants() || j->guess.empty()) : !j->Plannable()) continue;
    takers.push_back({j.get(), guess ? j->guess.data() : j->todo.data()});
  }
  if (takers.empty() || (!guess && first_for == nullptr)) return s;
  const uint64_t budget = Budget(guess);  // the takers' smallest partition size, capped (lp_window.cc)

  // GraphM's partition priority: per block, max over the jobs needing it of 1/Nj, times |J_P|.
  // A block's chunks are consecutive ids, so a job's distinct blocks are the changes of block
  // along its needed chunks.
  std::unordered_map<uint32_t, std::pair<uint32_t, double>> block_claim;  // block -> (jobs, max 1/Nj)
  for (const Taker& t : takers) {
    uint64_t blocks = 0;
    uint32_t last = UINT32_MAX;
    for (uint64_t c = 0; c < chunks_.size(); ++c) {
      if (t.need[c] != 0 && chunks_[c].block != last) {
        ++blocks;
        last = chunks_[c].block;
      }
    }
    last = UINT32_MAX;
    for (uint64_t c = 0; c < chunks_.size(); ++c) {
      if (t.need[c] == 0 || chunks_[c].block == last) continue;
      last = chunks_[c].block;
      auto& [count, inv] = block_claim[last];
      ++count;
      inv = std::max(inv, 1.0 / static_cast<double>(blocks));
    }
  }

  struct Candidate {
    double priority;
    bool diagonal;
    double partition_priority;
    uint64_t id;
  };
  std::vector<Candidate> candidates;
  std::vector<bool> asked(chunks_.size(), false);  // may be the first pick
  for (uint64_t c = 0; c < chunks_.size(); ++c) {
    uint32_t jobs = 0, active = 0;
    for (const Taker& t : takers) {
      if (t.need[c] == 0) continue;
      ++jobs;
      active = std::max(active, t.need[c]);
      asked[c] = asked[c] || guess || t.job == first_for;
    }
    if (jobs == 0) continue;
    const auto& [count, inv] = block_claim[chunks_[c].block];
    candidates.push_back({static_cast<double>(jobs) * active * chunks_[c].mean_source_degree,
                          options_.diagonal_first && chunks_[c].diagonal, inv * count, c});
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(b.priority, b.partition_priority, b.diagonal, a.id) <
           std::tie(a.priority, a.partition_priority, a.diagonal, b.id);
  });
  // The LP is made for `first_for`: every chunk it needs comes before the chunks only others
  // need (each part in priority order), so a sparse job gets its whole iteration in one LP.
  // Ordered by priority alone, a sparse job's chunks (few active sources: low priority) went
  // one per LP, each LP filled with the dense jobs' chunks: in the peer's mix bfs waited 1.5 s
  // through 13 LPs for 34k edges, and sssp 0.3 s an iteration through 24 LPs for 4,845 edges.
  // A dense `first_for` needs every chunk, so its order does not change.
  if (!guess)
    std::stable_partition(candidates.begin(), candidates.end(), [&](const Candidate& c) { return asked[c.id]; });
  // The first pick is the best chunk `first_for` needs (a waiting job, else the one with the
  // least queued), so every LP serves it — of the column the LP planned before ended in, when
  // it needs one there (below).
  if (candidates.empty()) return s;
  uint64_t first_id = candidates.front().id;
  {
    auto best = std::find_if(candidates.begin(), candidates.end(), [&](const Candidate& c) { return asked[c.id]; });
    auto here = std::find_if(candidates.begin(), candidates.end(), [&](const Candidate& c) {
      return asked[c.id] && chunks_[c.id].column == last_column_;
    });
    if (here != candidates.end()) {
      first_id = here->id;
    } else if (best != candidates.end()) {
      first_id = best->id;
    }
  }
  // Then grouped by target partition (column of blocks): the first pick's column first, the
  // others in the order of their best chunk, priority order within each. An engine adds into a
  // window of the target partition it is in and moves the window's sums out when it leaves it
  // (engines/core/target_sums.h); an LP of chunks picked by priority alone lies in every column,
  // so with ~30 LPs an iteration each target got a flush (a scattered atomic add) per LP —
  // about one per edge, where a stream over `column` has one per target and pass: 2.6 of
  // pagerank-delta's 12 CPU-s through the mount at f = 1/2 against 0.46 on plain
  // (docs/memory-as-cache.md, twenty-second part). A job reads an LP in chunk order, so the
  // next LP starting in the column this one ended in keeps the window where it is. Which
  // chunks an iteration loads is unchanged; an LP that fits the iteration is unchanged; the
  // asked chunks still come first. Diagonal chunks (Options::diagonal_first, the mount's
  // default) still come first among equal priorities within their column.
  {
    std::unordered_map<uint32_t, size_t> rank;  // column -> order of first appearance
    rank.emplace(chunks_[first_id].column, 0);
    for (const Candidate& c : candidates) rank.emplace(chunks_[c.id].column, rank.size());
    std::stable_sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
      return std::pair(!asked[a.id] && !guess, rank[chunks_[a.id].column]) <
             std::pair(!asked[b.id] && !guess, rank[chunks_[b.id].column]);
    });
  }
  // The budget counts what each chunk's plan holds; after this many chunks in a row that do not
  // fit, the LP is full enough (planning every remaining chunk would cost more than it gains).
  constexpr int kMisfitsBeforeFull = 64;

  // Disk balance (striped files): each disk is filled up to its share of the budget; a chunk
  // whose disk is full waits (see the header).
  const bool balance = options_.disks > 1 && options_.chunk_disks.size() == chunks_.size() && budget != UINT64_MAX;
  const uint64_t share = balance ? budget / options_.disks : 0;
  std::vector<uint64_t> on_disk(balance ? options_.disks : 0, 0);
  // Calls f(disk, bytes) for each disk's share of `bytes` of chunk c (a plan's bytes spread
  // like the chunk's).
  auto for_each_disk = [&](uint64_t c, uint64_t bytes, auto&& f) {
    const uint64_t length = std::max<uint64_t>(1, chunks_[c].length);
    for (const DiskBytes& d : options_.chunk_disks[c])
      f(d.disk, static_cast<uint64_t>(static_cast<unsigned __int128>(d.bytes) * bytes / length));
  };
  auto fits_disks = [&](uint64_t c, uint64_t bytes) {
    bool fits = true;
    for_each_disk(c, bytes, [&](uint32_t d, uint64_t b) { fits = fits && (on_disk[d] == 0 || on_disk[d] + b <= share); });
    return fits;
  };

  // The disks' part of the LP (Options::max_lp_disk_bytes): a chunk that would take it past the
  // cap does not fit, like one past the budget.
  const uint64_t disk_budget = options_.max_lp_disk_bytes > 0 ? options_.max_lp_disk_bytes : UINT64_MAX;
  auto fits = [&](uint64_t bytes, uint64_t disk) {
    return s.bytes + bytes <= budget && s.disk_bytes + disk <= disk_budget;
  };
  std::vector<std::pair<uint64_t, ChunkReadPlan>> picked;
  auto take = [&](uint64_t c, ChunkReadPlan plan) {
    s.bytes += plan.bytes;
    s.disk_bytes += DiskCost(c, plan);
    if (balance) for_each_disk(c, plan.bytes, [&](uint32_t d, uint64_t b) { on_disk[d] += b; });
    picked.emplace_back(c, std::move(plan));
  };
  take(first_id, Plan(first_id, takers));

  struct Deferred {
    uint64_t id;
    ChunkReadPlan plan;
    bool planned;
    bool taken = false;
  };
  std::vector<Deferred> deferred;  // priority order
  int misfits = 0;
  for (const Candidate& c : candidates) {
    if (c.id == first_id) continue;
    const uint64_t least = std::min(chunks_[c.id].length, MinPlanBytes(c.id, takers));
    if (!fits(least, MinDiskCost(c.id, least))) {
      if (++misfits >= kMisfitsBeforeFull) break;
      continue;
    }
    if (balance && !fits_disks(c.id, least)) {
      deferred.push_back({c.id, {}, false});
      if (++misfits >= kMisfitsBeforeFull) break;
      continue;
    }
    ChunkReadPlan plan = Plan(c.id, takers);
    if (!fits(plan.bytes, DiskCost(c.id, plan))) {  // a smaller one may still fit
      Remember(c.id, takers, std::move(plan));
      if (++misfits >= kMisfitsBeforeFull) break;
      continue;
    }
    if (balance && !fits_disks(c.id, plan.bytes)) {
      deferred.push_back({c.id, std::move(plan), true});
      if (++misfits >= kMisfitsBeforeFull) break;
      continue;
    }
    misfits = 0;
    take(c.id, std::move(plan));
  }
  // What no other disk could take fills the rest of the budget, in priority order.
  misfits = 0;
  for (Deferred& d : deferred) {
    if (misfits >= kMisfitsBeforeFull) {
      ++s.deferred;
      continue;
    }
    if (!d.planned) {
      const uint64_t least = std::min(chunks_[d.id].length, MinPlanBytes(d.id, takers));
      if (!fits(least, MinDiskCost(d.id, least))) {
        ++misfits;
        ++s.deferred;
        continue;
      }
      d.plan = Plan(d.id, takers);
      d.planned = true;
    }
    if (!fits(d.plan.bytes, DiskCost(d.id, d.plan))) {
      ++misfits;
      ++s.deferred;
      continue;
    }
    misfits = 0;
    d.taken = true;
    take(d.id, std::move(d.plan));
  }
  // Chunks planned and left for a later LP (misfits and the disk balance's): the next
  // selection finds their plans in the memo.
  for (Deferred& d : deferred)
    if (d.planned && !d.taken) Remember(d.id, takers, std::move(d.plan));
  if (balance) s.busiest_disk_bytes = *std::max_element(on_disk.begin(), on_disk.end());
  std::sort(picked.begin(), picked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [id, plan] : picked) {
    s.ids.push_back(id);
    s.plans.push_back(std::move(plan));
  }
  return s;
}

uint64_t LpScheduler::MinPlanBytes(uint64_t c, std::span<const Taker> takers) const {
  // Every active source has at least one edge in the chunk.
  uint64_t most = 0;
  for (const Taker& t : takers) most = std::max<uint64_t>(most, t.need[c]);
  return most * edge_size_;
}

ChunkReadPlan LpScheduler::WholePlan(uint64_t c) const {
  const uint64_t length = chunks_[c].length;
  ChunkReadPlan whole;
  whole.whole = true;
  whole.extents.push_back({0, length});
  whole.bytes = whole.disk_bytes = length;
  if (chunks_[c].stored_length > 0) whole.disk_bytes = chunks_[c].stored_length;
  whole.seconds = whole.whole_seconds = options_.cost.Seconds(whole.disk_bytes, 1);
  return whole;
}

bool LpScheduler::NeedsAll(const Job& j, uint64_t c, uint64_t active) const {
  const ChunkInfo& info = chunks_[c];
  return !j.active || !LoadsAsRuns(c) || (info.num_sources > 0 && active >= info.num_sources);
}

bool LpScheduler::Dense(uint64_t c, uint64_t active) const {
  // Each active source is at least one run; the whole chunk is its edges.
  const uint64_t edges = chunks_[c].length / std::max<uint64_t>(edge_size_, 1);
  const uint64_t per_run = options_.scan_edges_per_run;
  if (per_run == 0) return false;
  if (active * per_run >= edges) return true;
  const uint64_t resident_per_run = options_.resident_scan_edges_per_run;
  if (resident_per_run > per_run && Resident(c) && active * resident_per_run >= edges) {
    ++stats_.resident_whole;
    return true;
  }
  return false;
}

bool LpScheduler::EdgeDense(const Job& j, uint64_t c) const {
  const double share = options_.edge_dense_share;
  if (share <= 0 || share > 1 || c >= j.coverage.size()) return false;
  const Job::Coverage& k = j.coverage[c];
  return k.tick == j.tick && k.share >= share;
}

void LpScheduler::NoteCoverage(const Job& j, uint64_t c, std::span<const ByteRun> runs) const {
  if (c >= j.coverage.size() || chunks_[c].length == 0) return;
  uint64_t bytes = 0;
  for (const ByteRun& r : runs) bytes += r.length;
  j.coverage[c] = {j.tick, static_cast<float>(static_cast<double>(bytes) / static_cast<double>(chunks_[c].length))};
}

const std::vector<ByteRun>& LpScheduler::RunsOf(const Job& j, uint64_t c) const {
  if (j.runs_tick != j.tick) {
    j.ForgetRuns();
    j.runs_tick = j.tick;
  }
  if (auto it = j.runs.find(c); it != j.runs.end()) {
    ++stats_.runs_reused;
    return it->second;
  }
  const bool keep = j.runs_kept < options_.kept_runs_per_job;
  std::vector<ByteRun>& cut = keep ? j.runs[c] : j.runs_scratch;
  const uint64_t* bitmap = j.active->data();
  options_.runs->ActiveRuns(c, std::span<const uint64_t* const>(&bitmap, 1), &cut);
  NoteCoverage(j, c, cut);
  ++stats_.runs_cut;
  if (keep) j.runs_kept += cut.size();
  return cut;
}

std::vector<LpScheduler::TakerKey> LpScheduler::KeyOf(uint64_t c, std::span<const Taker> takers) {
  std::vector<TakerKey> key;
  for (const Taker& t : takers)
    if (t.need[c] != 0) key.push_back({t.job->id, t.job->tick, t.need[c]});
  return key;
}

void LpScheduler::Remember(uint64_t c, std::span<const Taker> takers, ChunkReadPlan plan) const {
  if (!LoadsAsRuns(c)) return;  // a whole plan costs nothing to make again
  if (plan_memo_extents_ + plan.extents.size() > kPlanMemoExtents) {
    plan_memo_.clear();
    plan_memo_extents_ = 0;
  }
  PlanMemo& m = plan_memo_[c];
  plan_memo_extents_ -= m.plan.extents.size();
  m.takers = KeyOf(c, takers);
  m.plan = std::move(plan);
  plan_memo_extents_ += m.plan.extents.size();
}

ChunkReadPlan LpScheduler::Plan(uint64_t c, std::span<const Taker> takers) const {
  const ChunkInfo& info = chunks_[c];
  if (!LoadsAsRuns(c)) return WholePlan(c);
  if (auto it = plan_memo_.find(c); it != plan_memo_.end()) {
    // Taken out either way: a plan taken is the LP's, a stale one is of no use.
    const bool same = it->second.takers == KeyOf(c, takers);
    ChunkReadPlan memo = std::move(it->second.plan);
    plan_memo_extents_ -= memo.extents.size();
    plan_memo_.erase(it);
    if (same) {
      ++stats_.plans_reused;
      return memo;
    }
  }
  ++stats_.plans_made;
  ChunkReadPlan whole = WholePlan(c);
  std::vector<const uint64_t*> bitmaps;
  const Job* only = nullptr;  // the one job whose runs these are, if there is one
  for (const Taker& t : takers) {
    if (t.need[c] == 0) continue;
    // A job that reads the chunk whole (no bitmap, every source active, or dense) needs all of it.
    if (NeedsAll(*t.job, c, t.need[c]) || Dense(c, t.need[c]) || EdgeDense(*t.job, c)) return whole;
    bitmaps.push_back(t.job->active->data());
    only = bitmaps.size() == 1 ? t.job : nullptr;
  }
  std::vector<ByteRun> shared;  // the runs of several takers' bitmaps
  if (only == nullptr) {
    options_.runs->ActiveRuns(c, bitmaps, &shared);
    ++stats_.runs_cut;
  }
  const std::vector<ByteRun>& runs = only != nullptr ? RunsOf(*only, c) : shared;
  if (only != nullptr && EdgeDense(*only, c)) return whole;
  ChunkReadPlan plan = PlanChunkRead(info.offset, info.length, runs, options_.cost, info.stored_length);
  // No run at all would mean the bitmaps and the active-chunk answer disagree; the whole
  // chunk keeps every job that needs it moving.
  return plan.extents.empty() ? whole : plan;
}

// Byte runs in file order (the jobs' views and the runs a chunk's takers took are kept so).
static bool ByOffset(const ByteRun& a, const ByteRun& b) { return a.offset < b.offset; }

ChunkReadPlan LpScheduler::ReferencePlan(uint64_t c, std::vector<ByteRun>& runs, bool whole) const {
  const ChunkInfo& info = chunks_[c];
  if (!whole && !runs.empty()) {
    // Callers hand them ascending (NoteTaken merges each view in); the sort is a safeguard that
    // costs one pass (it was 2% of the machine's CPU in a four-job W4 profile, under mu_).
    if (!std::is_sorted(runs.begin(), runs.end(), ByOffset)) std::sort(runs.begin(), runs.end(), ByOffset);
    std::vector<ByteRun> merged;
    for (const ByteRun& r : runs) {
      if (!merged.empty() && r.offset <= merged.back().end())
        merged.back().length = std::max(merged.back().end(), r.end()) - merged.back().offset;
      else
        merged.push_back(r);
    }
    runs.swap(merged);
    return PlanChunkRead(info.offset, info.length, runs, options_.cost, info.stored_length);
  }
  return WholePlan(c);
}

void LpScheduler::NoteTaken(uint64_t c, std::span<const ViewPiece> pieces, std::vector<ByteRun>* taken,
                            bool* taken_whole) {
  const ChunkInfo& info = chunks_[c];
  std::vector<ByteRun> mine;
  for (const ViewPiece& p : pieces) mine.push_back({p.file_offset - info.offset, p.length});
  const bool whole = mine.size() == 1 && mine[0].offset == 0 && mine[0].length == info.length;
  // A view's pieces are ascending and touching ones merged: ReferencePlan leaves them as they are.
  stats_.offline_unshared_disk_bytes += ReferencePlan(c, mine, whole).disk_bytes;
  *taken_whole = *taken_whole || whole;
  if (!whole) {  // kept ascending: the jobs' views merged, not concatenated
    std::vector<ByteRun> merged;
    merged.reserve(taken->size() + mine.size());
    std::merge(taken->begin(), taken->end(), mine.begin(), mine.end(), std::back_inserter(merged), ByOffset);
    taken->swap(merged);
  }
}

bool LpScheduler::PiecesOf(const Job& j, uint64_t c, const LogicalPartition& lp, size_t first, size_t last,
                           std::vector<ViewPiece>* out) const {
  const ChunkInfo& info = chunks_[c];
  // A dense job takes the whole chunk where the LP holds it whole; where the LP holds runs (it
  // was planned while the job's sources were sparse, or for other jobs), it takes its runs.
  const bool held_whole = last == first + 1 && lp.extents[first].file_offset == info.offset &&
                          lp.extents[first].length == info.length;
  bool all = NeedsAll(j, c, j.need[c]) || (held_whole && (Dense(c, j.need[c]) || EdgeDense(j, c)));
  const std::vector<ByteRun>* cut = nullptr;
  if (!all) {
    cut = &RunsOf(j, c);
    all = held_whole && EdgeDense(j, c);
  }
  const std::vector<ByteRun> whole_chunk(all ? 1 : 0, ByteRun{0, info.length});
  const std::vector<ByteRun>& runs = all ? whole_chunk : *cut;
  const size_t before = out->size();
  size_t k = first;
  for (const ByteRun& r : runs) {
    const uint64_t at = info.offset + r.offset, end = at + r.length;
    while (k < last && lp.extents[k].file_offset + lp.extents[k].length <= at) ++k;
    if (k == last || lp.extents[k].file_offset > at || end > lp.extents[k].file_offset + lp.extents[k].length) {
      out->resize(before);  // not all of it is in the LP
      return false;
    }
    const LpExtent& e = lp.extents[k];
    const uint64_t lp_at = e.lp_offset + (at - e.file_offset);
    if (out->size() > before && out->back().file_offset + out->back().length == at &&
        out->back().lp_offset + out->back().length == lp_at) {
      out->back().length += r.length;
    } else {
      out->push_back({c, at, r.length, lp_at});
    }
  }
  return true;
}

std::shared_ptr<LogicalPartition> LpScheduler::MakeLp(const Selection& s) const {
  auto lp = std::make_shared<LogicalPartition>();
  uint64_t at = 0;
  for (size_t i = 0; i < s.ids.size(); ++i) {
    const ChunkInfo& info = chunks_[s.ids[i]];
    for (const ByteRun& r : s.plans[i].extents) {
      lp->extents.push_back({s.ids[i], info.offset + r.offset, r.length, at, s.plans[i].whole});
      at += r.length;
    }
  }
  lp->chunks = s.ids.size();
  lp->size = at;
  lp->memory = LpMemory(options_.memory);  // the loader allocates what it needs
  return lp;
}

}  // namespace graphfs::chunkindex
