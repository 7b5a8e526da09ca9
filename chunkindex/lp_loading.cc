// The LP scheduler's side of loading: which plan is due, the plans handed to the loaders
// (TakePlan), their results (Finish), and publishing a loaded LP to the jobs that need it.
#include <algorithm>
#include <cstring>
#include <tuple>

#include "chunkindex/lp_scheduler.h"
#include "chunkindex/lp_scheduler_job.h"

namespace graphfs::chunkindex {

// ---- planning and loading ----

const LpScheduler::Job* LpScheduler::FirstFor() const {
  // A job that waits with nothing queued comes first, the longest waiting first.
  const Job* best = nullptr;
  for (const auto& [id, j] : jobs_) {
    if (j->Starved() && j->Plannable() && (best == nullptr || j->wait_start < best->wait_start)) best = j.get();
  }
  if (best != nullptr || !options_.prefetch_next || error_backoff_) return best;
  // Then the job with the fewest bytes queued, so one fast job cannot take the whole window.
  uint64_t least = UINT64_MAX;
  for (const auto& [id, j] : jobs_) {
    if (!j->Plannable()) continue;
    uint64_t queued = 0;
    for (const HeldLp& h : j->queue) queued += h.bytes();
    if (queued < least) {
      least = queued;
      best = j.get();
    }
  }
  return best;
}

bool LpScheduler::GuessDue() const {
  if (!options_.prefetch_next || error_backoff_ || guess_tried_generation_ == generation_) return false;
  bool guesses = false;
  for (const auto& [id, j] : jobs_) {
    if (j->Plannable()) return false;  // real work first
    guesses = guesses || (!j->Wants() && !j->guess.empty());
  }
  if (!guesses) return false;
  for (const LiveLp& l : live_)
    if (l.spare && !l.taken) return false;  // one guess at a time
  return Room(Budget(true));
}

bool LpScheduler::PlanDue() const {
  if (stop_) return false;
  if (!options_.prefetch_next && in_flight_ > 0) return false;
  if (FirstFor() != nullptr) return Room(Budget(false));
  return in_flight_ == 0 && GuessDue();
}

std::optional<LpScheduler::LoadPlan> LpScheduler::TakePlan() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || PlanDue(); });
    if (stop_) return std::nullopt;
    const Job* first = FirstFor();
    const bool guess = first == nullptr;
    const auto t0 = Clock::now();
    auto sel = std::make_unique<Selection>(Select(first, guess));
    const double select_seconds = Seconds(Clock::now() - t0);
    stats_.select_seconds += select_seconds;
    if (guess) guess_tried_generation_ = generation_;
    if (sel->ids.empty()) {
      idle_cv_.notify_all();
      continue;
    }
    last_column_ = chunks_[sel->ids.back()].column;  // ids ascending: the view ends in it
    LoadPlan plan;
    plan.lp_ = MakeLp(*sel);
    while (!Room(plan.lp_->size) && DropSpare()) {
    }
    // Planned: no other plan takes these chunks for these jobs.
    if (!guess) {
      for (uint64_t c : sel->ids) {
        for (auto& [id, j] : jobs_) {
          if (!j->in_iteration || j->todo[c] == 0) continue;
          j->todo[c] = 0;
          --j->todo_chunks;
        }
      }
    }
    plan.lp_->seq = next_seq_++;
    plan.sel_ = std::move(sel);
    plan.guess_ = guess;
    plan.select_seconds_ = select_seconds;
    plan.tick_ = ticks_;
    plan.start_ = Clock::now();
    ++in_flight_;
    in_flight_bytes_ += plan.lp_->size;
    loading_.push_back(plan.lp_.get());
    Account();
    return plan;
  }
}

void LpScheduler::Finish(LoadPlan plan, Status status, double loader_cpu_seconds) {
  std::shared_ptr<LogicalPartition> lp = std::move(plan.lp_);
  if (status.ok() && !lp->memory.Seal(lp->size))
    status = Error(EIO, "the loader left bytes of LP " + std::to_string(lp->seq) + " without a place in memory");
  const double load_seconds = Seconds(Clock::now() - plan.start_);
  Replies replies;
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
    in_flight_bytes_ -= lp->size;
    std::erase(loading_, lp.get());
    stats_.load_seconds += load_seconds;
    stats_.loader_cpu_seconds += loader_cpu_seconds;
    if (!status.ok()) {
      ++stats_.load_errors;
      stats_.last_error = status.error().message();
      error_backoff_ = true;
      Abandon(*lp, status.error(), &replies);
    } else {
      error_backoff_ = false;
      Publish(std::move(lp), *plan.sel_, plan.guess_, plan.select_seconds_, load_seconds, plan.tick_, &replies);
    }
    Prune();
    Account();
  }
  Send(replies);
  cv_.notify_all();
  idle_cv_.notify_all();
}

std::vector<LpScheduler::ChunkSpan> LpScheduler::SpansOf(const LogicalPartition& lp) {
  std::vector<ChunkSpan> spans;
  for (size_t i = 0; i < lp.extents.size(); ++i) {
    const LpExtent& e = lp.extents[i];
    if (spans.empty() || spans.back().chunk != e.chunk) spans.push_back({e.chunk, i, i, e.whole, false, {}});
    spans.back().last = i + 1;
  }
  return spans;
}

uint64_t LpScheduler::Assign(Job& j, const std::shared_ptr<const LogicalPartition>& lp, std::vector<ChunkSpan>& spans,
                             double select_seconds, double load_seconds, Clock::time_point now, Replies* replies) {
  if (!j.Wants()) return 0;
  HeldLp held{lp, {}, 0};
  for (ChunkSpan& span : spans) {
    if (j.need[span.chunk] == 0) continue;
    // A job whose active set changed since the LP was planned may miss some of its runs: it
    // keeps needing the chunk (its new `todo` has it).
    const size_t before = held.pieces.size();
    if (!PiecesOf(j, span.chunk, *lp, span.first, span.last, &held.pieces)) continue;
    NoteTaken(span.chunk, std::span<const ViewPiece>(held.pieces).subspan(before), &span.taken, &span.taken_whole);
    j.need[span.chunk] = 0;
    j.ForgetRuns(span.chunk);  // taken: not cut for this active set again
    if (j.todo[span.chunk] != 0) {  // planned in no LP for it, or in one loading that now comes too late
      j.todo[span.chunk] = 0;
      --j.todo_chunks;
    }
    --j.remaining_chunks;
    j.remaining_bytes -= chunks_[span.chunk].length;
    ++(span.whole ? j.cur.whole_chunks : j.cur.partial_chunks);
  }
  if (held.pieces.empty()) return 0;
  for (const ViewPiece& p : held.pieces) held.view_bytes += p.length;
  const uint64_t mine = held.bytes();
  j.cur.lp_bytes += lp->size;
  j.cur.lps += 1;
  j.cur.bytes_delivered += mine;
  j.cur.select_seconds += select_seconds;
  j.cur.load_seconds += load_seconds;
  stats_.bytes_delivered += mine;
  if (j.Starved()) {
    j.cur.wait_seconds += Seconds(now - j.wait_start);
    j.holding = held;
    replies->push_back({j.ticket, Grant{false, std::move(held)}});
    j.waiting = false;
  } else {
    j.queue.push_back(std::move(held));
  }
  return mine;
}

void LpScheduler::Publish(std::shared_ptr<LogicalPartition> lp, const Selection& sel, bool guess,
                          double select_seconds, double load_seconds, uint64_t tick, Replies* replies) {
  std::shared_ptr<const LogicalPartition> shared = std::move(lp);
  std::vector<ChunkSpan> spans = SpansOf(*shared);
  const auto now = Clock::now();
  uint64_t holders = 0;
  bool any_waited = false;
  for (auto& [id, jp] : jobs_) {
    const bool waited = jp->Starved();
    if (Assign(*jp, shared, spans, select_seconds, load_seconds, now, replies) == 0) continue;
    ++holders;
    any_waited = any_waited || waited;
  }
  for (ChunkSpan& span : spans) {
    if (span.taken.empty() && !span.taken_whole) continue;  // nobody took it: the reference reads nothing
    stats_.offline_disk_bytes += ReferencePlan(span.chunk, span.taken, span.taken_whole).disk_bytes;
  }
  for (const LpExtent& e : shared->extents) stats_.bytes_loaded += e.length;
  stats_.chunks_loaded += shared->chunks;
  stats_.extents_loaded += shared->extents.size();
  for (size_t i = 0; i < sel.ids.size(); ++i) {
    const ChunkReadPlan& plan = sel.plans[i];
    if (!plan.whole) ++stats_.chunks_partial;
    else if (options_.granularity == Options::Granularity::kVertex && !LoadsAsRuns(sel.ids[i])) ++stats_.chunks_unsorted;
    else ++stats_.chunks_whole;
    stats_.bytes_skipped += chunks_[sel.ids[i]].length - plan.bytes;
    stats_.planned_disk_bytes += plan.disk_bytes;
    stats_.model_seconds += plan.seconds;
    stats_.model_whole_seconds += plan.whole_seconds;
  }
  stats_.chunks_deferred += sel.deferred;
  stats_.planned_busiest_disk_bytes += sel.busiest_disk_bytes;
  ++stats_.lps_built;
  if (guess) ++stats_.lps_guessed;
  if (holders > 0 && !any_waited) ++stats_.lps_preloaded;
  stats_.lp_handouts += holders;
  live_.push_back({std::move(shared), guess, holders > 0, tick});
}

void LpScheduler::Abandon(const LogicalPartition& lp, const Error& error, Replies* replies) {
  const auto now = Clock::now();
  for (auto& [id, jp] : jobs_) {
    Job& j = *jp;
    if (!j.in_iteration) continue;
    bool planned_for_it = false;
    for (const LpExtent& e : lp.extents) {
      if (j.need[e.chunk] == 0 || j.todo[e.chunk] != 0) continue;
      j.todo[e.chunk] = j.need[e.chunk];  // to plan again
      ++j.todo_chunks;
      planned_for_it = true;
    }
    // It gets the error; what it needs stays, so asking again retries.
    if (planned_for_it && j.Starved()) {
      j.cur.wait_seconds += Seconds(now - j.wait_start);
      replies->push_back({j.ticket, error.Wrap("loading a logical partition")});
      j.waiting = false;
    }
  }
}

}  // namespace graphfs::chunkindex
