#include "chunkindex/lp_scheduler.h"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "chunkindex/lp_scheduler_job.h"

namespace graphfs::chunkindex {

namespace {

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

void LpScheduler::SetResident(std::vector<bool> resident) {
  const uint64_t count = static_cast<uint64_t>(std::count(resident.begin(), resident.end(), true));
  std::lock_guard<std::mutex> lock(mu_);
  resident_ = std::move(resident);
  stats_.resident_chunks = count;
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
  j->coverage.assign(chunks_.size(), Job::Coverage{});
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

Status LpScheduler::SetHold(uint64_t job, uint32_t lps) {
  if (lps < 1 || lps > 2) return Error(EINVAL, "a job holds 1 or 2 LPs at once, not " + std::to_string(lps));
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job);
    if (it == jobs_.end()) return Gone(job);
    Job& j = *it->second;
    j.hold = lps;
    if (lps == 1 && j.previous) {
      j.previous = HeldLp{};
      Prune();
      Account();
    }
  }
  cv_.notify_all();
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
    j.ReleaseAll();
    j.queue.clear();
    FinishIteration(j);
    std::fill(j.need.begin(), j.need.end(), 0);
    std::fill(j.todo.begin(), j.todo.end(), 0);
    j.active = std::move(words);
    j.ForgetRuns();  // cut for the last set (RunsOf would drop them at the first cut for this one)
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
      j.ReleaseOnAsk();  // asking again ends its use of the LP it held (with hold 2: the one before)
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
    it->second->ReleaseAll();
    Prune();
    Account();
  }
  cv_.notify_all();
}

JobView LpScheduler::ViewOf(const Job& j, Clock::time_point now) {
  JobView v;
  v.id = j.id;
  v.partition_bytes = j.partition_bytes;
  if (j.waiting) v.state = "waiting";
  else if (j.holding || j.previous) v.state = "holding";
  else if (!j.queue.empty()) v.state = "ready";
  else if (j.Wants()) v.state = "working";
  else v.state = "idle";
  v.iteration = j.total.iteration + (j.in_iteration ? 1 : 0);
  v.remaining_chunks = j.remaining_chunks;
  v.remaining_bytes = j.remaining_bytes;
  v.holding_seq = j.holding ? j.holding.lp->seq : (!j.queue.empty() ? j.queue.front().lp->seq : 0);
  v.previous_seq = j.previous ? j.previous.lp->seq : 0;
  v.hold = j.hold;
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

std::vector<uint64_t> LpScheduler::HeldSeqs(uint64_t job) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<uint64_t> seqs;
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return seqs;
  for (const HeldLp* held : {&it->second->previous, &it->second->holding})
    if (*held) seqs.push_back(held->lp->seq);
  return seqs;
}

bool LpScheduler::VisitHolding(uint64_t job, uint64_t seq, const std::function<void(const HeldLp&)>& visit) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return false;
  for (const HeldLp* held : {&it->second->holding, &it->second->previous}) {
    if (*held && held->lp->seq == seq) {
      visit(*held);
      return true;
    }
  }
  return false;
}

void LpScheduler::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return stop_ || (in_flight_ == 0 && !PlanDue()); });
}

}  // namespace graphfs::chunkindex
