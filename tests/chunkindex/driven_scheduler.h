// An LpScheduler run the way the daemon runs it, for tests: loader threads that take its plans
// and fill them with a test's loader (the volume's part), and a thread that takes the answers
// to parked asks out of its queue (the front end's part) and fulfils the asks' futures.
#pragma once

#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "chunkindex/lp_scheduler.h"
#include "common/clock.h"

namespace graphfs::chunkindex {

class DrivenScheduler : public LpScheduler {
 public:
  using Loader = std::function<Status(LogicalPartition& lp)>;
  using Answer = std::future<Result<Grant>>;

  DrivenScheduler(std::vector<ChunkInfo> chunks, Loader loader, Options options = {}, unsigned loaders = 2)
      : LpScheduler(std::move(chunks), std::move(options)), loader_(std::move(loader)) {
    for (unsigned i = 0; i < loaders; ++i) {
      loaders_.emplace_back([this] {
        while (std::optional<LoadPlan> plan = TakePlan()) {
          const int64_t cpu0 = ThreadCpuNs();
          Status status = loader_(plan->lp());
          Finish(std::move(*plan), std::move(status), static_cast<double>(ThreadCpuNs() - cpu0) * 1e-9);
        }
      });
    }
    pump_ = std::thread([this] {
      while (std::optional<LpAnswer> a = answers()->Wait()) {
        std::promise<Result<Grant>> p;
        {
          std::lock_guard<std::mutex> lock(mu_);
          auto it = parked_.find(a->ticket);
          if (it == parked_.end()) {
            ++stray_answers_;
            continue;
          }
          p = std::move(it->second);
          parked_.erase(it);
        }
        p.set_value(std::move(a->result));
      }
    });
  }

  ~DrivenScheduler() {
    Stop();
    for (std::thread& t : loaders_) t.join();
    answers()->Close();
    pump_.join();
  }

  // Asks for the job's next LP: the answer now, or when the scheduler pushes it.
  Answer Ask(uint64_t job, uint64_t* ticket_out = nullptr) {
    const uint64_t ticket = answers()->NewTicket();
    Answer f;
    {
      std::lock_guard<std::mutex> lock(mu_);
      f = parked_[ticket].get_future();
    }
    if (ticket_out != nullptr) *ticket_out = ticket;
    std::optional<Result<Grant>> now = Next(job, ticket);
    if (now) {
      std::promise<Result<Grant>> p;
      {
        std::lock_guard<std::mutex> lock(mu_);
        p = std::move(parked_.at(ticket));
        parked_.erase(ticket);
      }
      p.set_value(std::move(*now));
    }
    return f;
  }

  // Answers pushed for no parked ask (each ask must get exactly one answer).
  uint64_t stray_answers() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stray_answers_;
  }

 private:
  const Loader loader_;
  std::vector<std::thread> loaders_;
  std::thread pump_;
  mutable std::mutex mu_;
  std::map<uint64_t, std::promise<Result<Grant>>> parked_;
  uint64_t stray_answers_ = 0;
};

}  // namespace graphfs::chunkindex
