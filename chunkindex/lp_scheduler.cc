#include "chunkindex/lp_scheduler.h"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <unordered_map>

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

std::string HeldLp::MapText() const {
  std::string out;
  out.reserve(pieces.size() * 40);
  uint64_t at = 0;
  for (const ViewPiece& p : pieces) {
    out += std::to_string(p.chunk) + " " + std::to_string(p.file_offset) + " " + std::to_string(p.length) + " " +
           std::to_string(at) + "\n";
    at += p.length;
  }
  return out;
}

LpScheduler::LpScheduler(std::vector<ChunkInfo> chunks, LpLoader loader, Options options)
    : chunks_(std::move(chunks)),
      edge_size_(options.runs != nullptr ? options.runs->edge_size() : 1),
      loader_(std::move(loader)),
      options_(options) {
  for (const ChunkInfo& c : chunks_) total_bytes_ += c.length;
  if (options_.disks > 1 && options_.disk_share) {
    std::vector<uint64_t> per(options_.disks);
    chunk_disks_.resize(chunks_.size());
    for (size_t c = 0; c < chunks_.size(); ++c) {
      std::fill(per.begin(), per.end(), 0);
      options_.disk_share(chunks_[c].offset, chunks_[c].length, per);
      for (uint32_t d = 0; d < options_.disks; ++d)
        if (per[d] > 0) chunk_disks_[c].push_back({d, per[d]});
    }
  }
  builder_ = std::thread([this] { BuilderLoop(); });
}

LpScheduler::~LpScheduler() {
  std::vector<std::pair<Reply, Result<Grant>>> replies;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    for (auto& [id, j] : jobs_) {
      if (j->waiter) replies.emplace_back(std::move(j->waiter), Error(ECANCELED, "the scheduler is shutting down"));
      j->waiter = nullptr;
    }
  }
  cv_.notify_all();
  Send(replies);
  builder_.join();
}

void LpScheduler::Send(std::vector<std::pair<Reply, Result<Grant>>>& replies) {
  for (auto& [reply, result] : replies) reply(std::move(result));
  replies.clear();
}

Status LpScheduler::AddJob(uint64_t job, uint64_t partition_bytes) {
  if (partition_bytes == 0) return Error(EINVAL, "partition size must be above 0");
  std::lock_guard<std::mutex> lock(mu_);
  if (jobs_.count(job)) return Error(EEXIST, "job " + std::to_string(job) + " is already registered");
  auto j = std::make_unique<Job>();
  j->id = job;
  j->partition_bytes = partition_bytes;
  j->need.assign(chunks_.size(), 0);
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
  std::vector<std::pair<Reply, Result<Grant>>> replies;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job);
    if (it == jobs_.end()) return;
    if (it->second->waiter) replies.emplace_back(std::move(it->second->waiter), Gone(job));
    jobs_.erase(it);
    stats_.jobs = jobs_.size();
    ++generation_;
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
  std::vector<std::pair<Reply, Result<Grant>>> replies;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job);
    if (it == jobs_.end()) return Gone(job);
    Job& j = *it->second;
    if (j.waiter) {
      replies.emplace_back(std::move(j.waiter), Error(ECANCELED, "a new active set was written while waiting"));
      j.waiter = nullptr;
    }
    j.holding = HeldLp{};
    j.assigned = HeldLp{};
    FinishIteration(j);
    std::fill(j.need.begin(), j.need.end(), 0);
    j.active = std::move(words);
    j.remaining_chunks = 0;
    j.remaining_bytes = 0;
    for (const ActiveChunk& a : active) {
      if (j.need[a.id] != 0) continue;  // listed twice
      j.need[a.id] = std::max<uint32_t>(1, a.active_sources);
      ++j.remaining_chunks;
      j.remaining_bytes += chunks_[a.id].length;
    }
    // Only a dense iteration predicts the next one well (pagerank, spmv, the early iterations of
    // wcc and pagerank-delta); a sparse frontier moves on.
    if (j.remaining_bytes * 2 >= total_bytes_) j.guess = j.need;
    else j.guess.clear();
    j.in_iteration = true;
    j.cur = IterationCost{};
    j.cur.iteration = j.total.iteration + 1;
    j.cur.active_chunks = j.remaining_chunks;
    j.cur.active_bytes = j.remaining_bytes;
    j.cur.find_seconds = find_seconds;
    ++generation_;
  }
  cv_.notify_all();
  Send(replies);
  return Status::Ok();
}

uint64_t LpScheduler::Next(uint64_t job, Reply reply) {
  Result<Grant> answer = Error(EIO, "");
  uint64_t ticket = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job);
    if (it == jobs_.end()) {
      answer = Gone(job);
    } else if (Job& j = *it->second; j.waiter) {
      answer = Error(EBUSY, "job " + std::to_string(job) + " already waits for its next partition");
    } else {
      j.holding = HeldLp{};  // asking again ends its use of the LP it held
      if (j.assigned) {
        j.holding = std::move(j.assigned);
        j.assigned = HeldLp{};
        answer = Grant{false, j.holding};
      } else if (!j.Wants()) {
        j.cur.finished = true;
        FinishIteration(j);
        answer = Grant{true, HeldLp{}};
      } else {
        j.waiter = std::move(reply);
        j.ticket = ticket = next_ticket_++;
        j.wait_start = Clock::now();
      }
    }
  }
  cv_.notify_all();
  if (ticket == 0) reply(std::move(answer));
  return ticket;
}

bool LpScheduler::Cancel(uint64_t job, uint64_t ticket) {
  Reply reply;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job);
    if (it == jobs_.end() || !it->second->waiter || it->second->ticket != ticket) return false;
    reply = std::move(it->second->waiter);
    it->second->waiter = nullptr;
    it->second->cur.wait_seconds += Seconds(Clock::now() - it->second->wait_start);
  }
  idle_cv_.notify_all();
  reply(Error(EINTR, "interrupted while waiting for the next partition"));
  return true;
}

void LpScheduler::Done(uint64_t job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job);
    if (it == jobs_.end()) return;
    it->second->holding = HeldLp{};
  }
  cv_.notify_all();
}

bool LpScheduler::CurrentDone() const {
  if (!current_) return true;
  for (const auto& [id, j] : jobs_) {
    if (j->holding.lp == current_ || j->assigned.lp == current_) return false;
  }
  return true;
}

bool LpScheduler::CanBuild() const {
  if (building_ || !CurrentDone()) return false;
  for (const auto& [id, j] : jobs_) {
    if (j->waiter && j->Wants()) return true;
  }
  return false;
}

bool LpScheduler::CanPreload() const {
  if (!options_.prefetch_next || building_ || preloaded_) return false;
  bool wants = false, guesses = false;
  for (const auto& [id, j] : jobs_) {
    wants |= j->Wants();
    guesses |= !j->Wants() && !j->guess.empty();
  }
  if (wants) return !CurrentDone();  // the next LP of this iteration, while the current one is read
  return guesses;                    // nobody needs anything now: the next iteration's first LP
}

bool LpScheduler::Speculating() const {
  for (const auto& [id, j] : jobs_) {
    if (j->Wants()) return false;
  }
  return true;
}

void LpScheduler::Publish(std::shared_ptr<LogicalPartition> lp, double select_seconds, double load_seconds,
                          uint64_t reused, std::vector<std::pair<Reply, Result<Grant>>>* replies) {
  lp->seq = next_seq_++;
  std::shared_ptr<const LogicalPartition> shared = lp;
  uint64_t holders = 0;
  const auto now = Clock::now();
  // A chunk's extents are consecutive (ascending file offsets): [first, last) per chunk.
  struct ChunkSpan {
    uint64_t chunk;
    size_t first, last;
    bool whole;
    bool taken_whole = false;        // some job took all of the chunk
    std::vector<ByteRun> taken;      // the runs the jobs took (chunk-relative), for the reference
  };
  std::vector<ChunkSpan> spans;
  for (size_t i = 0; i < shared->extents.size(); ++i) {
    const LpExtent& e = shared->extents[i];
    if (spans.empty() || spans.back().chunk != e.chunk) spans.push_back({e.chunk, i, i, e.whole, false, {}});
    spans.back().last = i + 1;
  }
  for (auto& [id, jp] : jobs_) {
    Job& j = *jp;
    if (!j.Wants()) continue;
    HeldLp held{shared, {}, 0};
    bool handed = false;
    for (ChunkSpan& span : spans) {
      if (j.need[span.chunk] == 0) continue;
      // A job whose active set changed since the LP was planned may miss some of its runs:
      // it keeps needing the chunk.
      const size_t before = held.pieces.size();
      if (!PiecesOf(j, span.chunk, *shared, span.first, span.last, &held.pieces)) continue;
      NoteTaken(span.chunk, std::span<const ViewPiece>(held.pieces).subspan(before), &span.taken, &span.taken_whole);
      handed = true;
      j.need[span.chunk] = 0;
      --j.remaining_chunks;
      j.remaining_bytes -= chunks_[span.chunk].length;
      ++(span.whole ? j.cur.whole_chunks : j.cur.partial_chunks);
    }
    if (!handed) continue;
    for (const ViewPiece& p : held.pieces) held.view_bytes += p.length;
    j.cur.lp_bytes += shared->size;
    ++holders;
    const uint64_t mine = held.bytes();
    j.cur.lps += 1;
    j.cur.bytes_delivered += mine;
    j.cur.bytes_reused += reused;
    j.cur.select_seconds += select_seconds;
    j.cur.load_seconds += load_seconds;
    stats_.bytes_delivered += mine;
    if (j.waiter) {
      j.cur.wait_seconds += Seconds(now - j.wait_start);
      j.holding = held;
      replies->emplace_back(std::move(j.waiter), Grant{false, std::move(held)});
      j.waiter = nullptr;
    } else {
      j.assigned = std::move(held);
    }
  }
  for (ChunkSpan& span : spans) {
    if (span.taken.empty() && !span.taken_whole) continue;  // nobody took it: the reference reads nothing
    stats_.offline_disk_bytes += ReferencePlan(span.chunk, span.taken, span.taken_whole).disk_bytes;
  }
  ++stats_.lps_built;
  stats_.lp_handouts += holders;
  stats_.select_seconds += select_seconds;
  current_ = holders > 0 ? shared : nullptr;
  stats_.current_seq = holders > 0 ? shared->seq : 0;
  stats_.current_holders = holders;
}

bool LpScheduler::PreloadDue() const {
  const uint64_t seq = current_ ? current_->seq : 0;
  return CanPreload() && !(preload_tried_seq_ == seq && preload_tried_generation_ == generation_);
}

void LpScheduler::BuilderLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || CanBuild() || PreloadDue(); });
    if (stop_) break;
    const bool build = CanBuild();
    building_ = true;
    const auto t0 = Clock::now();
    Selection sel = Select(/*only_waiting=*/build, /*speculative=*/!build && Speculating());
    const double select_seconds = Seconds(Clock::now() - t0);
    if (!build) {
      preload_tried_seq_ = current_ ? current_->seq : 0;
      preload_tried_generation_ = generation_;
    }
    if (sel.ids.empty()) {
      building_ = false;
      idle_cv_.notify_all();
      continue;
    }
    std::shared_ptr<LogicalPartition> pre = build ? std::move(preloaded_) : nullptr;
    preloaded_.reset();
    lock.unlock();

    std::shared_ptr<LogicalPartition> lp;
    uint64_t reused = 0, discarded = 0, loaded = 0, loaded_chunks = 0, loaded_extents = 0;
    Status status;
    const auto t1 = Clock::now();
    lp = MakeLp(sel);
    if (pre && pre->extents.size() == lp->extents.size() &&
        std::equal(lp->extents.begin(), lp->extents.end(), pre->extents.begin(), [](const LpExtent& a, const LpExtent& b) {
          return a.file_offset == b.file_offset && a.length == b.length;
        })) {
      lp = std::move(pre);  // exactly what was preloaded
      reused = lp->size;
    } else {
      // The parts of each extent that a preloaded extent of the same chunk holds are copied; the
      // rest is read. (With vertex-granular LPs a chunk's extents change whenever another job
      // needs it too — the union of more jobs' runs — so reuse by containment alone would
      // re-read runs the preload already holds.)
      std::vector<LpExtent> missing;
      std::unordered_map<uint64_t, std::vector<const LpExtent*>> have;  // ascending file offsets
      if (pre) {
        for (const LpExtent& e : pre->extents) have[e.chunk].push_back(&e);
      }
      for (const LpExtent& e : lp->extents) {
        const uint64_t end = e.file_offset + e.length;
        uint64_t at = e.file_offset;
        auto read = [&](uint64_t from, uint64_t to) {
          if (to <= from) return;
          LpExtent m = e;
          m.file_offset = from;
          m.length = to - from;
          m.lp_offset = e.lp_offset + (from - e.file_offset);
          m.whole = e.whole && m.length == e.length;
          missing.push_back(m);
        };
        if (auto it = have.find(e.chunk); it != have.end()) {
          for (const LpExtent* p : it->second) {
            const uint64_t from = std::max(p->file_offset, at), to = std::min(p->file_offset + p->length, end);
            if (to <= from) continue;
            read(at, from);
            std::memcpy(lp->bytes.get() + e.lp_offset + (from - e.file_offset),
                        pre->bytes.get() + p->lp_offset + (from - p->file_offset), to - from);
            reused += to - from;
            at = to;
          }
        }
        read(at, end);
      }
      if (pre) discarded = pre->size > reused ? pre->size - reused : 0;
      if (!missing.empty()) {
        // The loader fills lp_offset positions of `out`: hand it the LP with only the missing extents.
        LogicalPartition part;
        part.extents = std::move(missing);
        part.size = lp->size;
        uint64_t last_chunk = UINT64_MAX;
        for (const LpExtent& e : part.extents) {
          loaded += e.length;
          if (e.chunk != last_chunk) ++loaded_chunks;
          last_chunk = e.chunk;
        }
        loaded_extents = part.extents.size();
        status = loader_(part, lp->bytes.get());
      }
    }
    const double load_seconds = Seconds(Clock::now() - t1);

    std::vector<std::pair<Reply, Result<Grant>>> replies;
    lock.lock();
    stats_.load_seconds += load_seconds;
    stats_.bytes_reused += reused;
    stats_.bytes_discarded += discarded;
    if (status.ok()) {
      stats_.bytes_loaded += loaded;
      stats_.chunks_loaded += loaded_chunks;
      stats_.extents_loaded += loaded_extents;
    }
    if (!status.ok()) {
      ++stats_.load_errors;
      stats_.last_error = status.error().message();
      if (build) {
        // Every job that asked gets the error; what they need stays, so asking again retries.
        for (auto& [id, j] : jobs_) {
          if (!j->waiter) continue;
          replies.emplace_back(std::move(j->waiter), status.error().Wrap("loading a logical partition"));
          j->waiter = nullptr;
        }
      }
    } else if (build) {
      if (reused == lp->size && loaded == 0) ++stats_.lps_preloaded;
      for (size_t i = 0; i < sel.ids.size(); ++i) {
        const ChunkReadPlan& plan = sel.plans[i];
        if (!plan.whole) ++stats_.chunks_partial;
        else if (options_.runs != nullptr && !options_.runs->sorted(sel.ids[i])) ++stats_.chunks_unsorted;
        else ++stats_.chunks_whole;
        stats_.bytes_skipped += chunks_[sel.ids[i]].length - plan.bytes;
        stats_.planned_disk_bytes += plan.disk_bytes;
        stats_.model_seconds += plan.seconds;
        stats_.model_whole_seconds += plan.whole_seconds;
      }
      stats_.chunks_deferred += sel.deferred;
      stats_.planned_busiest_disk_bytes += sel.busiest_disk_bytes;
      current_.reset();
      Publish(std::move(lp), select_seconds, load_seconds, reused, &replies);
    } else {
      preloaded_ = std::move(lp);
    }
    building_ = false;
    lock.unlock();
    Send(replies);
    idle_cv_.notify_all();
    lock.lock();
  }
}

JobView LpScheduler::ViewOf(const Job& j) {
  JobView v;
  v.id = j.id;
  v.partition_bytes = j.partition_bytes;
  if (j.waiter) v.state = "waiting";
  else if (j.holding) v.state = "holding";
  else if (j.assigned) v.state = "ready";
  else if (j.Wants()) v.state = "working";
  else v.state = "idle";
  v.iteration = j.total.iteration + (j.in_iteration ? 1 : 0);
  v.remaining_chunks = j.remaining_chunks;
  v.remaining_bytes = j.remaining_bytes;
  v.holding_seq = j.holding ? j.holding.lp->seq : (j.assigned ? j.assigned.lp->seq : 0);
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
  return ViewOf(*it->second);
}

std::vector<JobView> LpScheduler::Views() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<JobView> out;
  for (const auto& [id, j] : jobs_) out.push_back(ViewOf(*j));
  return out;
}

SchedulerStats LpScheduler::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

HeldLp LpScheduler::Holding(uint64_t job, uint64_t seq) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end() || !it->second->holding || it->second->holding.lp->seq != seq) return HeldLp{};
  return it->second->holding;
}

void LpScheduler::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return stop_ || (!building_ && !CanBuild() && !PreloadDue()); });
}

}  // namespace graphfs::chunkindex
