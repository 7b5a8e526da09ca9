// The jobs service's handles over a graph's schedule: each call is the scheduler's, with the
// scheduler's types turned into the volume's (views, answers, JSON).
#include "volume/graph_jobs.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "chunkindex/lp_answers.h"
#include "chunkindex/lp_scheduler.h"
#include "volume/internal/graph_schedule.h"
#include "volume/internal/volume_core.h"

namespace graphfs::volume {

namespace {

Result<NextLp> FromGrant(Result<chunkindex::LpGrant> g) {
  if (!g.ok()) return g.error();
  return NextLp{g->end, g->end ? 0 : g->held.lp->seq};
}

// lp-SEQ.pieces: where the job's view lies in the graph's shared memory (`memory`), so that
// a job that maps it reads its edges there, with no copy and no request to the daemon.
// Little-endian u64s: "GFSPIEC1", the piece count, the memory's id (0: the LP is not in
// shared memory; read lp-SEQ instead), the view's bytes; then per piece, in view order, its
// offset in `memory`, its length and its offset in `column`. A piece of the view whose
// bytes lie in two blocks of the LP's memory is two entries.
std::string PiecesText(const chunkindex::HeldLp& held) {
  const chunkindex::LpMemory& memory = held.lp->memory;
  const bool shared = memory.shared() && memory.arena() != nullptr;
  std::vector<uint64_t> words = {0, 0, shared ? memory.arena()->id() : 0, held.view_bytes};
  std::memcpy(words.data(), "GFSPIEC1", 8);
  words.reserve(4 + 3 * held.pieces.size());
  uint64_t count = 0;
  for (const chunkindex::ViewPiece& p : held.pieces) {
    uint64_t column_offset = p.file_offset;
    memory.ForEach(p.lp_offset, p.length, [&](const char*, uint64_t memory_offset, uint64_t n) {
      words.push_back(shared ? memory_offset : 0);
      words.push_back(n);
      words.push_back(column_offset);
      column_offset += n;
      ++count;
    });
  }
  words[1] = count;
  return std::string(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(uint64_t));
}

nlohmann::json CostJson(const chunkindex::IterationCost& c) {
  return {{"iteration", c.iteration},         {"active_chunks", c.active_chunks},
          {"active_bytes", c.active_bytes},   {"find_seconds", c.find_seconds},
          {"select_seconds", c.select_seconds}, {"load_seconds", c.load_seconds},
          {"wait_seconds", c.wait_seconds},   {"lps", c.lps},
          {"bytes_delivered", c.bytes_delivered}, {"bytes_reused", c.bytes_reused},
          {"lp_bytes", c.lp_bytes},           {"whole_chunks", c.whole_chunks},
          {"partial_chunks", c.partial_chunks}, {"finished", c.finished}};
}

}  // namespace

// ---- JobAnswers ----

JobAnswers::JobAnswers() : queue_(std::make_shared<AnswerQueue>()) {}
JobAnswers::~JobAnswers() = default;

uint64_t JobAnswers::NewTicket() { return queue_->NewTicket(); }

std::optional<JobAnswer> JobAnswers::Wait() {
  std::optional<chunkindex::LpAnswer> a = queue_->Wait();
  if (!a) return std::nullopt;
  return JobAnswer(a->ticket, FromGrant(std::move(a->result)));
}

std::optional<JobAnswer> JobAnswers::WaitFor(std::chrono::steady_clock::duration timeout) {
  std::optional<chunkindex::LpAnswer> a = queue_->WaitFor(timeout);
  if (!a) return std::nullopt;
  return JobAnswer(a->ticket, FromGrant(std::move(a->result)));
}

void JobAnswers::Close() { queue_->Close(); }

// ---- LpView ----

struct LpView::Held {
  chunkindex::HeldLp view;
  std::vector<uint64_t> starts;  // where each piece starts in the view, and the end
};

uint64_t LpView::seq() const { return held_ ? held_->view.lp->seq : 0; }
uint64_t LpView::bytes() const { return held_ ? held_->starts.back() : 0; }

void LpView::Gather(uint64_t offset, uint64_t length, std::vector<iovec>* out) const {
  if (!held_) return;
  const std::vector<uint64_t>& starts = held_->starts;
  const chunkindex::LogicalPartition& lp = *held_->view.lp;
  const uint64_t end = std::min<uint64_t>(offset + length, starts.back());
  size_t k = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), offset) - starts.begin());
  for (uint64_t at = offset; at < end && k < starts.size(); ++k) {
    const chunkindex::ViewPiece& p = held_->view.pieces[k - 1];
    const uint64_t n = std::min(end, starts[k]) - at;
    lp.memory.ForEach(p.lp_offset + (at - starts[k - 1]), n, [&](const char* data, uint64_t, uint64_t len) {
      out->push_back({const_cast<char*>(data), len});
    });
    at += n;
  }
}

// ---- JobGraph ----

JobGraph::JobGraph(std::shared_ptr<GraphSchedule> schedule) : schedule_(std::move(schedule)) {}

const std::string& JobGraph::dir() const { return schedule_->dir(); }
uint64_t JobGraph::vertices() const { return schedule_->vertices(); }
const std::shared_ptr<SharedArena>& JobGraph::memory() const { return schedule_->memory(); }

Status JobGraph::AddJob(uint64_t job, uint64_t partition_bytes) {
  return schedule_->scheduler().AddJob(job, partition_bytes);
}

Status JobGraph::SetPartitionBytes(uint64_t job, uint64_t partition_bytes) {
  return schedule_->scheduler().SetPartitionBytes(job, partition_bytes);
}

Status JobGraph::SetHold(uint64_t job, uint32_t lps) { return schedule_->scheduler().SetHold(job, lps); }

Result<JobGraph::ActiveCounts> JobGraph::SetActive(uint64_t job, std::vector<uint64_t> words, bool whole_chunks) {
  return schedule_->SetActive(job, std::move(words), whole_chunks);
}

std::optional<Result<NextLp>> JobGraph::Next(uint64_t job, uint64_t ticket) {
  std::optional<Result<chunkindex::LpGrant>> now = schedule_->scheduler().Next(job, ticket);
  if (!now) return std::nullopt;
  return FromGrant(std::move(*now));
}

bool JobGraph::Cancel(uint64_t job, uint64_t ticket) { return schedule_->scheduler().Cancel(job, ticket); }
void JobGraph::Done(uint64_t job) { schedule_->scheduler().Done(job); }

std::vector<uint64_t> JobGraph::HeldSeqs(uint64_t job) const { return schedule_->scheduler().HeldSeqs(job); }

std::optional<uint64_t> JobGraph::HeldBytes(uint64_t job, uint64_t seq) const {
  return schedule_->scheduler().HoldingBytes(job, seq);
}

LpView JobGraph::Held(uint64_t job, uint64_t seq) const {
  chunkindex::HeldLp held = schedule_->scheduler().Holding(job, seq);
  LpView v;
  if (!held) return v;
  auto h = std::make_shared<LpView::Held>();
  h->starts.reserve(held.pieces.size() + 1);
  h->starts.push_back(0);
  for (const chunkindex::ViewPiece& p : held.pieces) h->starts.push_back(h->starts.back() + p.length);
  h->view = std::move(held);
  v.held_ = std::move(h);
  return v;
}

std::optional<std::string> JobGraph::Describe(uint64_t job, uint64_t seq, HeldText kind) const {
  // Made from the view in place, under the scheduler's lock: a sparse view's pieces are many.
  std::optional<std::string> text;
  schedule_->scheduler().VisitHolding(job, seq, [&](const chunkindex::HeldLp& view) {
    text = kind == HeldText::kMap ? view.MapText() : PiecesText(view);
  });
  return text;
}

void JobGraph::AddJobStatus(uint64_t job, nlohmann::json& j) const {
  auto view = schedule_->scheduler().View(job);
  if (!view.ok()) return;
  j["state"] = view->state;
  j["iteration"] = view->iteration;
  j["remaining_chunks"] = view->remaining_chunks;
  j["remaining_bytes"] = view->remaining_bytes;
  j["lp"] = view->holding_seq;
  j["previous_lp"] = view->previous_seq;
  j["queued_lps"] = view->queued;
  j["queued_bytes"] = view->queued_bytes;
  j["waiting_seconds"] = view->waiting_seconds;
  nlohmann::json recent = nlohmann::json::array();
  for (const auto& c : view->recent) recent.push_back(CostJson(c));
  j["iterations"] = recent;
  j["total"] = CostJson(view->total);
}

// ---- Volume: the jobs' graphs ----

Result<JobGraph> Volume::JobGraphFor(const std::string& dir) {
  auto schedule = schedules_->Get(*core_, dir);
  if (!schedule.ok()) return schedule.error();
  return JobGraph(std::move(*schedule));
}

JobAnswers& Volume::job_answers() { return schedules_->answers(); }

void Volume::LeaveGraph(JobGraph graph, uint64_t job) {
  if (!graph) return;
  graph.schedule_->scheduler().RemoveJob(job);
  const std::string dir = graph.dir();
  graph = JobGraph();  // the schedule is dropped below if no other job holds it
  // The version the job ran on may be waiting for its last job to be reclaimed.
  reclaimer_.Nudge(dir);
  if (core_->budget().enabled()) schedules_->Prune();
}

nlohmann::json Volume::SchedulesJson() {
  nlohmann::json graphs = nlohmann::json::array();
  for (const auto& g : schedules_->List()) graphs.push_back(g->StatsJson());
  return graphs;
}

}  // namespace graphfs::volume
