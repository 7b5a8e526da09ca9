// A job's `next` (jobs_dir.h): a read at offset 0 asks the job's graph schedule for its next LP
// and is answered at once or parked under a ticket — holding no FUSE thread — until the thread
// that drains the mount's answer queue (volume::JobAnswers) replies; an interrupt cancels a
// parked ask (EINTR comes through the queue too). Reads past offset 0 see the last answer.
//
// Opened read-write, the answer is "lp-SEQ BYTES\n" and the BYTES of lp-SEQ.pieces after it, and a
// write of "done" ends the job's use of the LP (jobs_files.cc): an LP costs the job two requests
// instead of ~14 (lookup, getattr, open, reads, flush and release of lp-SEQ.pieces and of done):
// 6.7k requests instead of 40k in the demo's shape at f = 1/2 — though the daemon's CPU did not
// change with them (docs/memory-as-cache.md, sixth part).
//
// A job that wrote "turns" to `next` yields: its LPs' answers wait for a turn at the cores
// (volume::ComputeTurns, `compute_slots=`) when more such jobs than turns compute, and come as
// "lp-SEQ BYTES turn"; the job writes "yield" when it is done computing on that LP.
#include "fusefs/jobs_dir.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "common/thread_name.h"
#include "fusefs/graphfs.h"

namespace graphfs {

void JobsDir::ReadNext(fuse_req_t req, const std::shared_ptr<JobFileHandle>& h, size_t size, uint64_t off) {
  if (off == 0) return AskNext(req, h, size);
  std::lock_guard<std::mutex> lock(h->answer_mu);
  const uint64_t from = std::min<uint64_t>(off, h->answer.size());
  fuse_reply_buf(req, h->answer.data() + from, std::min<uint64_t>(size, h->answer.size() - from));
}

void JobsDir::AskNext(fuse_req_t req, const std::shared_ptr<JobFileHandle>& h, size_t size) {
  ControlJob& job = *h->job;
  volume::JobGraph schedule;
  {
    std::lock_guard<std::mutex> lock(job.mu);
    if (job.removed) return (void)fuse_reply_err(req, ENOENT);
    schedule = job.schedule;
  }
  if (!schedule) {
    job.Fail(Error(EINVAL, "next: write the graph directory to `graph` first"));
    return (void)fuse_reply_err(req, EINVAL);
  }
  // Registered under its ticket before the scheduler sees it: its answer may come through the
  // queue before Next returns.
  const uint64_t ticket = answers_->NewTicket();
  {
    std::lock_guard<std::mutex> lock(asks_mu_);
    asks_[ticket] = PendingAsk{req, h, size, schedule, job.id};
    ask_tickets_[req] = ticket;
  }
  // An interrupt that is already pending is noted here; the request is not touched again once
  // the scheduler may have answered it.
  fuse_req_interrupt_func(req, &JobsDir::OnInterrupt, this);
  std::optional<Result<volume::NextLp>> now = schedule.Next(job.id, ticket);
  std::optional<PendingAsk> answered;
  bool cancel = false;
  {
    std::lock_guard<std::mutex> lock(asks_mu_);
    auto it = asks_.find(ticket);
    if (it != asks_.end()) {
      if (now) {
        answered = std::move(it->second);
        ask_tickets_.erase(req);
        asks_.erase(it);
      } else {
        it->second.parked = true;
        cancel = it->second.interrupted;
      }
    }
  }
  if (answered) return Answer(*answered, std::move(*now));
  if (cancel) schedule.Cancel(job.id, ticket);
}

void JobsDir::Answer(const PendingAsk& ask, Result<volume::NextLp> g) {
  if (!g.ok()) {
    if (g.error().code() != EINTR) ask.h->job->Fail(g.error().Wrap("next"));
    return (void)fuse_reply_err(ask.req, g.error().code());
  }
  std::string line = g->end ? "end" : "lp-" + std::to_string(g->seq);
  std::string pieces;
  if (!g->end && ask.h->next_read_write) {
    const std::optional<std::string> text =
        ask.schedule.Describe(ask.job, g->seq, volume::JobGraph::HeldText::kPieces);
    if (text) pieces = *text;
    line += " " + std::to_string(pieces.size());
  }
  // An LP waits for a turn at the cores if its job yields (ComputeTurns knows which do, and
  // delivers the others' at once); the end of an iteration never does: nothing is computed on it.
  if (g->end || !turns_) return Reply(ask, line, pieces, /*turn=*/false);
  turns_->Offer(ask.job, [this, ask, line = std::move(line), pieces = std::move(pieces)](bool turn) {
    Reply(ask, line, pieces, turn);
  });
}

void JobsDir::Reply(const PendingAsk& ask, const std::string& line, const std::string& pieces, bool turn) {
  // An answer that waited for a turn while the job was removed: its LP is no longer the job's.
  {
    std::lock_guard<std::mutex> lock(ask.h->job->mu);
    if (ask.h->job->removed) return (void)fuse_reply_err(ask.req, ENOENT);
  }
  // "lp-SEQ BYTES turn": this LP is a turn at the cores, which the job ends with `yield`.
  std::string answer = line + (turn ? " turn\n" : "\n") + pieces;
  {
    std::lock_guard<std::mutex> lock(ask.h->answer_mu);
    ask.h->answer = answer;
  }
  fuse_reply_buf(ask.req, answer.data(), std::min(ask.size, answer.size()));
}

void JobsDir::Attach(volume::Volume& volume) {
  std::lock_guard<std::mutex> lock(asks_mu_);
  if (answers_) return;
  volume_ = &volume;
  answers_ = &volume.job_answers();
  answering_ = std::thread([this, answers = answers_] {
    NameThisThread("gfs-lp-answers");
    while (std::optional<volume::JobAnswer> a = answers->Wait()) {
      std::optional<PendingAsk> ask;
      {
        std::lock_guard<std::mutex> lock(asks_mu_);
        auto it = asks_.find(a->ticket);
        if (it == asks_.end()) continue;  // cannot happen: each ask gets one answer
        ask = std::move(it->second);
        ask_tickets_.erase(ask->req);
        asks_.erase(it);
      }
      Answer(*ask, std::move(a->result));
    }
  });
}

void JobsDir::OnInterrupt(fuse_req_t req, void* self) { static_cast<JobsDir*>(self)->Interrupted(req); }

void JobsDir::Interrupted(fuse_req_t req) {
  volume::JobGraph schedule;
  uint64_t job = 0, ticket = 0;
  {
    std::lock_guard<std::mutex> lock(asks_mu_);
    auto t = ask_tickets_.find(req);
    if (t == ask_tickets_.end()) return;  // answered already
    PendingAsk& ask = asks_.at(t->second);
    if (!ask.parked) {
      ask.interrupted = true;  // AskNext cancels once the scheduler has parked it
      return;
    }
    schedule = ask.schedule;
    job = ask.job;
    ticket = t->second;
  }
  // The EINTR answer comes through the queue, like any other.
  schedule.Cancel(job, ticket);
}

}  // namespace graphfs
