#include "chunkindex/lp_scheduler.h"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "chunkindex/lp_scheduler_job.h"

namespace graphfs::chunkindex {

namespace {

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

void Add(IterationCost& sum, const IterationCost& c) {
  sum.iteration += 1;
  sum.active_chunks += c.active_chunks;
  sum.active_bytes += c.active_bytes;
  sum.find_seconds += c.find_seconds;
  sum.select_seconds += c.select_seconds;
  sum.load_seconds += c.load_seconds;
  sum.wait_seconds += c.wait_seconds;
  sum.lps += c.lps;
  sum.bytes_delivered += c.bytes_delivered;
  sum.bytes_reused += c.bytes_reused;
  sum.lp_bytes += c.lp_bytes;
  sum.whole_chunks += c.whole_chunks;
  sum.partial_chunks += c.partial_chunks;
}

Error Gone(uint64_t job) { return Error(ENOENT, "job " + std::to_string(job) + " is not registered"); }

}  // namespace

LpScheduler::LoadPlan::LoadPlan() = default;
LpScheduler::LoadPlan::LoadPlan(LoadPlan&&) noexcept = default;
LpScheduler::LoadPlan& LpScheduler::LoadPlan::operator=(LoadPlan&&) noexcept = default;
LpScheduler::LoadPlan::~LoadPlan() = default;

LpScheduler::LpScheduler(std::vector<ChunkInfo> chunks, Options options)
    : chunks_(std::move(chunks)),
      edge_size_(options.runs != nullptr ? options.runs->edge_size() : 1),
      options_(std::move(options)),
      answers_(options_.answers ? options_.answers : std::make_shared<LpAnswers>()) {
  for (const ChunkInfo& c : chunks_) total_bytes_ += c.length;
}

LpScheduler::~LpScheduler() {
  Stop();
  Replies replies;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, j] : jobs_) {
      if (j->waiting) replies.push_back({j->ticket, Error(ECANCELED, "the scheduler is shutting down")});
      j->waiting = false;
    }
  }
  Send(replies);
}

void LpScheduler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  idle_cv_.notify_all();
}

Status LpScheduler::AddJob(uint64_t job, uint64_t partition_bytes) {
  if (partition_bytes == 0) return Error(EINVAL, "partition size must be above 0");
  std::lock_guard<std::mutex> lock(mu_);
  if (jobs_.count(job)) return Error(EEXIST, "job " + std::to_string(job) + " is already registered");
  auto j = std::make_unique<Job>();
  j->id = job;
  j->partition_bytes = partition_bytes;
  j->need.assign(chunks_.size(), 0);
  j->todo.assign(chunks_.size(), 0);
  j->tick = ticks_;
  jobs_[job] = std::move(j);
  stats_.jobs = jobs_.size();
  return Status::Ok();
}

Status LpScheduler::SetPartitionBytes(uint64_t job, uint64_t partition_bytes) {
  if (partition_bytes == 0) return Error(EINVAL, "partition size must be above 0");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return Gone(job);
  it->second->partition_bytes = partition_bytes;
  return Status::Ok();
}

void LpScheduler::RemoveJob(uint64_t job) {
  Replies replies;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job);
    if (it == jobs_.end()) return;
    if (it->second->waiting) replies.push_back({it->second->ticket, Gone(job)});
    jobs_.erase(it);  // its queue and holding: the LPs only it had leave the window
    stats_.jobs = jobs_.size();
    ++generation_;
    Prune();
    Account();
  }
  cv_.notify_all();
  idle_cv_.notify_all();
  Send(replies);
}

void LpScheduler::FinishIteration(Job& j) {
  if (!j.in_iteration) return;
  j.in_iteration = false;
  j.recent.push_back(j.cur);
  while (j.recent.size() > kRecentIterations) j.recent.pop_front();
  Add(j.total, j.cur);
}

Status LpScheduler::SetActive(uint64_t job, std::span<const ActiveChunk> active, double find_seconds,
                              std::shared_ptr<const std::vector<uint64_t>> words) {
  for (const ActiveChunk& a : active) {
    if (a.id >= chunks_.size())
      return Error(EINVAL, "active chunk " + std::to_string(a.id) + " past the last chunk (" +
                               std::to_string(chunks_.size()) + " chunks)");
  }
  Replies replies;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job);
    if (it == jobs_.end()) return Gone(job);
    Job& j = *it->second;
    if (j.waiting) {
      replies.push_back({j.ticket, Error(ECANCELED, "a new active set was written while waiting")});
      j.waiting = false;
    }
    j.holding = HeldLp{};
    j.queue.clear();
    FinishIteration(j);
    std::fill(j.need.begin(), j.need.end(), 0);
    std::fill(j.todo.begin(), j.todo.end(), 0);
    j.active = std::move(words);
    j.remaining_chunks = 0;
    j.remaining_bytes = 0;
    for (const ActiveChunk& a : active) {
      if (j.need[a.id] != 0) continue;  // listed twice
      j.need[a.id] = j.todo[a.id] = std::max<uint32_t>(1, a.active_sources);
      ++j.remaining_chunks;
      j.remaining_bytes += chunks_[a.id].length;
    }
    j.todo_chunks = j.remaining_chunks;
    // Only a dense iteration predicts the next one well (pagerank, spmv, the early iterations of
    // wcc and pagerank-delta); a sparse frontier moves on.
    if (j.remaining_bytes * 2 >= total_bytes_) j.guess = j.need;
    else j.guess.clear();
    j.in_iteration = true;
    j.tick = ++ticks_;
    j.cur = IterationCost{};
    j.cur.iteration = j.total.iteration + 1;
    j.cur.active_chunks = j.remaining_chunks;
    j.cur.active_bytes = j.remaining_bytes;
    j.cur.find_seconds = find_seconds;
    // Late assignment: what live LPs hold of what it now needs is its without a load — the LPs
    // slower jobs still read, a guess made for it, its own last ones (before they are pruned).
    const auto now = Clock::now();
    for (LiveLp& l : live_) {
      std::vector<ChunkSpan> spans = SpansOf(*l.lp);
      const uint64_t got = Assign(j, l.lp, spans, 0, 0, now, &replies);
      if (got == 0) continue;
      l.taken = true;
      ++stats_.lp_handouts;
      stats_.bytes_reused += got;
      j.cur.bytes_reused += got;
    }
    // What LPs loading now hold of it comes with them: not planned again.
    for (const LogicalPartition* lp : loading_) {
      std::vector<ViewPiece> scratch;
      for (const ChunkSpan& span : SpansOf(*lp)) {
        if (j.todo[span.chunk] == 0 || !PiecesOf(j, span.chunk, *lp, span.first, span.last, &scratch)) continue;
        j.todo[span.chunk] = 0;
        --j.todo_chunks;
      }
    }
    ++generation_;
    Prune();
    Account();
  }
  cv_.notify_all();
  Send(replies);
  return Status::Ok();
}

std::optional<Result<LpGrant>> LpScheduler::Next(uint64_t job, uint64_t ticket) {
  std::optional<Result<Grant>> answer;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job);
    if (it == jobs_.end()) {
      answer = Gone(job);
    } else if (Job& j = *it->second; j.waiting) {
      answer = Error(EBUSY, "job " + std::to_string(job) + " already waits for its next partition");
    } else if (ticket == 0) {
      answer = Error(EINVAL, "an ask needs a ticket (LpAnswers::NewTicket)");
    } else {
      j.holding = HeldLp{};  // asking again ends its use of the LP it held
      if (!j.queue.empty()) {
        j.holding = std::move(j.queue.front());
        j.queue.pop_front();
        answer = Grant{false, j.holding};
      } else if (!j.Wants()) {
        j.cur.finished = true;
        FinishIteration(j);
        answer = Grant{true, HeldLp{}};
      } else {
        j.waiting = true;
        j.ticket = ticket;
        j.wait_start = Clock::now();
      }
      Prune();
      Account();
    }
  }
  cv_.notify_all();
  return answer;
}

bool LpScheduler::Cancel(uint64_t job, uint64_t ticket) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job);
    if (it == jobs_.end() || !it->second->waiting || it->second->ticket != ticket) return false;
    it->second->waiting = false;
    it->second->cur.wait_seconds += Seconds(Clock::now() - it->second->wait_start);
    Account();
  }
  idle_cv_.notify_all();
  answers_->Push({ticket, Error(EINTR, "interrupted while waiting for the next partition")});
  return true;
}

void LpScheduler::Done(uint64_t job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job);
    if (it == jobs_.end()) return;
    it->second->holding = HeldLp{};
    Prune();
    Account();
  }
  cv_.notify_all();
}

// ---- the window ----

uint64_t LpScheduler::Window() const {
  if (options_.window_bytes > 0) return options_.window_bytes;
  uint64_t largest = 1;
  for (const auto& [id, j] : jobs_) largest = std::max(largest, j->partition_bytes);
  return 4 * largest;
}

uint64_t LpScheduler::LiveBytes() const {
  uint64_t bytes = 0;
  for (const LiveLp& l : live_) bytes += l.lp->footprint();
  return bytes;
}

bool LpScheduler::Referred(const LogicalPartition* lp) const {
  for (const auto& [id, j] : jobs_)
    if (j->Refers(lp)) return true;
  return false;
}

uint64_t LpScheduler::SpareBytesToDrop() const {
  uint64_t bytes = 0;
  for (const LiveLp& l : live_)
    if (l.spare && !Referred(l.lp.get())) bytes += l.lp->footprint();
  return bytes;
}

bool LpScheduler::Room(uint64_t bytes) const {
  const uint64_t used = LiveBytes() + in_flight_bytes_ - SpareBytesToDrop();
  return used == 0 || used + bytes <= Window();
}

uint64_t LpScheduler::Budget(bool guess) const {
  uint64_t budget = UINT64_MAX;
  for (const auto& [id, j] : jobs_) {
    if (guess ? (j->Wants() || j->guess.empty()) : !j->Plannable()) continue;
    budget = std::min(budget, j->partition_bytes);
  }
  if (options_.max_lp_bytes > 0) budget = std::min(budget, options_.max_lp_bytes);
  return budget == UINT64_MAX ? 0 : budget;
}

void LpScheduler::Prune() {
  auto stale = [&](const LiveLp& l) {
    if (!l.spare) return true;
    // A guess is of use until every job has started an iteration since it was planned.
    for (const auto& [id, j] : jobs_)
      if (j->tick <= l.tick) return false;
    return true;
  };
  std::erase_if(live_, [&](const LiveLp& l) {
    if (Referred(l.lp.get()) || !stale(l)) return false;
    if (!l.taken) stats_.bytes_discarded += l.lp->size;
    return true;
  });
}

bool LpScheduler::DropSpare() {
  for (auto it = live_.begin(); it != live_.end(); ++it) {
    if (!it->spare || Referred(it->lp.get())) continue;
    if (!it->taken) stats_.bytes_discarded += it->lp->size;
    live_.erase(it);
    return true;
  }
  return false;
}

void LpScheduler::Account() const {
  const auto now = Clock::now();
  const double dt = Seconds(now - account_mark_);
  switch (account_span_) {
    case Span::kLoading: stats_.busy_seconds += dt; break;
    case Span::kFullWhileWaiting: stats_.window_full_while_waiting_seconds += dt; [[fallthrough]];
    case Span::kIdleWhileWaiting: stats_.loader_idle_while_waiting_seconds += dt; break;
    case Span::kOther: break;
  }
  account_mark_ = now;
  bool starved = false;
  for (const auto& [id, j] : jobs_) starved = starved || (j->Starved() && j->Wants());
  if (in_flight_ > 0) account_span_ = Span::kLoading;
  else if (!starved) account_span_ = Span::kOther;
  else account_span_ = Room(Budget(false)) ? Span::kIdleWhileWaiting : Span::kFullWhileWaiting;
  stats_.live_bytes_peak = std::max(stats_.live_bytes_peak, LiveBytes() + in_flight_bytes_);
}

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

JobView LpScheduler::ViewOf(const Job& j, Clock::time_point now) {
  JobView v;
  v.id = j.id;
  v.partition_bytes = j.partition_bytes;
  if (j.waiting) v.state = "waiting";
  else if (j.holding) v.state = "holding";
  else if (!j.queue.empty()) v.state = "ready";
  else if (j.Wants()) v.state = "working";
  else v.state = "idle";
  v.iteration = j.total.iteration + (j.in_iteration ? 1 : 0);
  v.remaining_chunks = j.remaining_chunks;
  v.remaining_bytes = j.remaining_bytes;
  v.holding_seq = j.holding ? j.holding.lp->seq : (!j.queue.empty() ? j.queue.front().lp->seq : 0);
  v.queued = j.queue.size();
  for (const HeldLp& h : j.queue) v.queued_bytes += h.bytes();
  if (j.waiting) v.waiting_seconds = Seconds(now - j.wait_start);
  v.recent.assign(j.recent.begin(), j.recent.end());
  if (j.in_iteration) v.recent.push_back(j.cur);
  v.total = j.total;
  if (j.in_iteration) Add(v.total, j.cur);
  return v;
}

Result<JobView> LpScheduler::View(uint64_t job) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return Gone(job);
  return ViewOf(*it->second, Clock::now());
}

std::vector<JobView> LpScheduler::Views() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<JobView> out;
  const auto now = Clock::now();
  for (const auto& [id, j] : jobs_) out.push_back(ViewOf(*j, now));
  return out;
}

SchedulerStats LpScheduler::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Account();
  SchedulerStats s = stats_;
  s.window_bytes = Window();
  s.live_lps = live_.size();
  s.live_bytes = LiveBytes();
  for (const LiveLp& l : live_) s.live_unit_bytes += l.lp->memory.pinned_bytes();
  s.lps_in_flight = in_flight_;
  s.loading_bytes = in_flight_bytes_;
  return s;
}

HeldLp LpScheduler::Holding(uint64_t job, uint64_t seq) const {
  HeldLp copy;
  VisitHolding(job, seq, [&](const HeldLp& held) { copy = held; });
  return copy;
}

std::optional<uint64_t> LpScheduler::HoldingBytes(uint64_t job, uint64_t seq) const {
  std::optional<uint64_t> bytes;
  VisitHolding(job, seq, [&](const HeldLp& held) { bytes = held.bytes(); });
  return bytes;
}

bool LpScheduler::VisitHolding(uint64_t job, uint64_t seq, const std::function<void(const HeldLp&)>& visit) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end() || !it->second->holding || it->second->holding.lp->seq != seq) return false;
  visit(it->second->holding);
  return true;
}

void LpScheduler::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return stop_ || (in_flight_ == 0 && !PlanDue()); });
}

}  // namespace graphfs::chunkindex
