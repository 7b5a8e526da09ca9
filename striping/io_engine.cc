#include "striping/io_engine.h"

#include <liburing.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "common/thread_name.h"
#include "common/unique_fd.h"

namespace graphfs {

uint64_t IoRun::Length() const {
  uint64_t n = 0;
  for (const iovec& v : iov) n += v.iov_len;
  return n;
}

size_t RequestSizeBucket(uint64_t bytes) {
  size_t k = 0;
  while (k < kRequestSizeBounds.size() && bytes > kRequestSizeBounds[k]) ++k;
  return k;
}

void IoBatch::Finish(int error, uint32_t disk) {
  if (error != 0) {
    uint64_t expected = 0;
    failure_.compare_exchange_strong(expected, static_cast<uint64_t>(error) << 32 | disk, std::memory_order_acq_rel);
  }
  // Whether a callback finishes the batch, read before the count drops: once it is 0 a waiter
  // may return and destroy a waited-for batch. A batch with a callback has no waiter.
  const bool callback = static_cast<bool>(done_);
  if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    if (callback) {
      // The callback may free this batch: nothing of it is touched after the call.
      std::function<void()> done = std::move(done_);
      done();
      return;
    }
    pending_.notify_all();
  }
}

void IoBatch::Wait() {
  int p = pending_.load(std::memory_order_acquire);
  while (p != 0) {
    pending_.wait(p, std::memory_order_acquire);
    p = pending_.load(std::memory_order_acquire);
  }
}

// A queue of runs and the workers that serve it. Each worker owns an io_uring ring and
// keeps up to queue_depth runs in flight; an eventfd read armed in every ring wakes idle
// workers when runs arrive (EFD_SEMAPHORE: one wake-up per queued run).
class IoQueue {
 public:
  IoQueue(IoEngine* engine, std::string name) : engine_(engine), name_(std::move(name)) {}
  ~IoQueue() { Stop(); }

  Status Start(uint32_t workers, uint32_t depth) {
    wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE));
    if (!wake_.valid()) return Error::FromErrno("eventfd for " + name_);
    depth_ = depth;
    for (uint32_t i = 0; i < workers; ++i) {
      auto ring = std::make_unique<io_uring>();
      int rc = io_uring_queue_init(depth + 2, ring.get(), 0);
      if (rc < 0) return Error::FromErrno(-rc, "io_uring_queue_init for " + name_);
      threads_.emplace_back([this, r = ring.release()] { Work(r); });
    }
    return Status::Ok();
  }

  void Push(IoRun* run) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      (run->urgent ? urgent_ : runs_).push_back(run);
    }
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_.get(), &one, sizeof one);
  }

  void Stop() {
    if (threads_.empty()) return;
    stopping_.store(true);
    // A count no worker can use up: with EFD_SEMAPHORE every armed read takes one, and a
    // busy worker may re-arm and take more than its share, so one per worker is not enough.
    uint64_t forever = uint64_t{1} << 62;
    [[maybe_unused]] ssize_t n = ::write(wake_.get(), &forever, sizeof forever);
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  static constexpr uint64_t kWakeTag = 1;  // user_data of the eventfd read (runs are pointers, never 1)

  IoRun* TryPop() {
    std::lock_guard<std::mutex> lock(mu_);
    std::deque<IoRun*>& q = urgent_.empty() ? runs_ : urgent_;
    if (q.empty()) return nullptr;
    IoRun* r = q.front();
    q.pop_front();
    return r;
  }

  bool Idle() {
    std::lock_guard<std::mutex> lock(mu_);
    return runs_.empty() && urgent_.empty();
  }

  void Prep(io_uring* ring, IoRun* run) {
    io_uring_sqe* sqe = io_uring_get_sqe(ring);
    // Ring has depth+2 entries and we keep at most depth runs + 1 wake read in flight.
    switch (run->kind) {
      case IoKind::kRead:
        io_uring_prep_readv(sqe, run->fd, run->iov.data(), static_cast<unsigned>(run->iov.size()), run->offset);
        break;
      case IoKind::kWrite:
        io_uring_prep_writev(sqe, run->fd, run->iov.data(), static_cast<unsigned>(run->iov.size()), run->offset);
        break;
      case IoKind::kSync:
        io_uring_prep_fsync(sqe, run->fd, IORING_FSYNC_DATASYNC);
        break;
    }
    io_uring_sqe_set_data(sqe, run);
  }

  void ArmWake(io_uring* ring, uint64_t* buf) {
    io_uring_sqe* sqe = io_uring_get_sqe(ring);
    io_uring_prep_read(sqe, wake_.get(), buf, sizeof *buf, 0);
    io_uring_sqe_set_data64(sqe, kWakeTag);
  }

  // Drops `n` transferred bytes from the front of the run's iovecs.
  static void Advance(IoRun* run, uint64_t n) {
    run->offset += n;
    size_t i = 0;
    while (i < run->iov.size() && n >= run->iov[i].iov_len) {
      n -= run->iov[i].iov_len;
      ++i;
    }
    run->iov.erase(run->iov.begin(), run->iov.begin() + static_cast<long>(i));
    if (n > 0 && !run->iov.empty()) {
      run->iov[0].iov_base = static_cast<char*>(run->iov[0].iov_base) + n;
      run->iov[0].iov_len -= n;
    }
  }

  static void ZeroFill(IoRun* run) {
    for (const iovec& v : run->iov) std::memset(v.iov_base, 0, v.iov_len);
    run->iov.clear();
  }

  void Complete(IoRun* run, int error) {
    const uint32_t disk = run->disk;
    DiskCounters& c = engine_->counters(disk);
    if (error != 0) c.errors.fetch_add(1, std::memory_order_relaxed);
    c.queued.fetch_sub(1, std::memory_order_relaxed);
    engine_->activity_.Finished(disk);
    run->error = error;
    run->batch->Finish(error, disk);  // may free the run
  }

  // Handles one completion; returns true if the run must be submitted again.
  bool OnCompletion(IoRun* run, int res) {
    DiskCounters& c = engine_->counters(run->disk);
    if (res < 0) {
      if (res == -EINTR || res == -EAGAIN) return true;
      Complete(run, -res);
      return false;
    }
    if (run->kind == IoKind::kSync) {
      Complete(run, 0);
      return false;
    }
    const uint64_t n = static_cast<uint64_t>(res);
    if (run->kind == IoKind::kRead) {
      c.bytes_read.fetch_add(n, std::memory_order_relaxed);
      c.reads.fetch_add(1, std::memory_order_relaxed);
    } else {
      c.bytes_written.fetch_add(n, std::memory_order_relaxed);
      c.writes.fetch_add(1, std::memory_order_relaxed);
    }
    const uint64_t want = run->Length();
    if (n >= want) {
      Complete(run, 0);
      return false;
    }
    if (n == 0) {
      if (run->kind == IoKind::kRead) {  // end of the part: the rest is a hole
        ZeroFill(run);
        Complete(run, 0);
      } else {
        Complete(run, EIO);
      }
      return false;
    }
    Advance(run, n);
    return true;
  }

  void Work(io_uring* ring) {
    NameThisThread("gfs-io " + name_);
    uint64_t wake_buf = 0;
    ArmWake(ring, &wake_buf);
    io_uring_submit(ring);
    uint32_t inflight = 0;
    while (true) {
      while (inflight < depth_) {
        IoRun* run = TryPop();
        if (run == nullptr) break;
        if (int fault = engine_->fault(run->disk); fault != 0) {
          Complete(run, fault);
          continue;
        }
        Prep(ring, run);
        ++inflight;
      }
      if (stopping_.load() && inflight == 0 && Idle()) break;
      io_uring_cqe* cqe = nullptr;
      int rc = io_uring_submit_and_wait(ring, 1);
      if (rc < 0 && rc != -EINTR) {
        // The ring itself failed: fail what is queued rather than hang the callers.
        while (IoRun* run = TryPop()) Complete(run, -rc);
        if (inflight == 0 && stopping_.load()) break;
      }
      unsigned head;
      unsigned seen = 0;
      std::vector<IoRun*> again;
      io_uring_for_each_cqe(ring, head, cqe) {
        ++seen;
        if (io_uring_cqe_get_data64(cqe) == kWakeTag) {
          ArmWake(ring, &wake_buf);
          continue;
        }
        IoRun* run = static_cast<IoRun*>(io_uring_cqe_get_data(cqe));
        if (OnCompletion(run, cqe->res)) {
          again.push_back(run);
        } else {
          --inflight;
        }
      }
      io_uring_cq_advance(ring, seen);
      for (IoRun* run : again) Prep(ring, run);
    }
    io_uring_queue_exit(ring);
    delete ring;
  }

  IoEngine* engine_;
  std::string name_;
  UniqueFd wake_;
  uint32_t depth_ = 1;
  std::mutex mu_;
  std::deque<IoRun*> urgent_;  // served first
  std::deque<IoRun*> runs_;
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
};

Result<std::unique_ptr<IoEngine>> IoEngine::Start(const IoEngineOptions& options) {
  if (options.disks == 0) return Error(EINVAL, "I/O engine needs at least one disk");
  if (options.queue_depth == 0 || options.queue_depth > kMaxQueueDepth)
    return Error(EINVAL, "queue depth must be 1.." + std::to_string(kMaxQueueDepth));
  std::unique_ptr<IoEngine> engine(new IoEngine(options));
  for (uint32_t d = 0; d < options.disks; ++d) {
    engine->counters_.push_back(std::make_unique<DiskCounters>());
    engine->faults_.push_back(std::make_unique<std::atomic<int>>(0));
  }
  if (options.mode == IoEngineOptions::Mode::kPerDisk) {
    if (options.workers_per_disk == 0) return Error(EINVAL, "workers per disk must be positive");
    for (uint32_t d = 0; d < options.disks; ++d) {
      auto q = std::make_unique<IoQueue>(engine.get(), "disk " + std::to_string(d));
      GRAPHFS_RETURN_IF_ERROR(q->Start(options.workers_per_disk, options.queue_depth));
      engine->queues_.push_back(std::move(q));
    }
  } else {
    if (engine->options_.shared_workers == 0) engine->options_.shared_workers = DefaultSharedWorkers(options.disks);
    auto q = std::make_unique<IoQueue>(engine.get(), "shared queue");
    GRAPHFS_RETURN_IF_ERROR(q->Start(engine->options_.shared_workers, options.queue_depth));
    engine->queues_.push_back(std::move(q));
  }
  return engine;
}

IoEngine::IoEngine(const IoEngineOptions& options) : options_(options), activity_(options.disks) {}

IoEngine::~IoEngine() {
  for (auto& q : queues_) q->Stop();
}

void IoEngine::Submit(IoRun* const* runs, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    IoRun* run = runs[i];
    DiskCounters& c = *counters_[run->disk];
    c.queued.fetch_add(1, std::memory_order_relaxed);
    if (run->kind == IoKind::kRead) c.read_sizes[RequestSizeBucket(run->Length())].fetch_add(1, std::memory_order_relaxed);
    activity_.Queued(run->disk);
    IoQueue& q = options_.mode == IoEngineOptions::Mode::kPerDisk ? *queues_[run->disk] : *queues_[0];
    q.Push(run);
  }
}

Status IoEngine::SubmitAndWait(std::vector<IoRun>& runs, IoBatch& batch) {
  if (runs.empty()) return Status::Ok();
  batch.Add(static_cast<int>(runs.size()));
  std::vector<IoRun*> ptrs;
  ptrs.reserve(runs.size());
  for (IoRun& r : runs) {
    r.batch = &batch;
    ptrs.push_back(&r);
  }
  Submit(ptrs.data(), ptrs.size());
  batch.Wait();
  if (batch.error() != 0) return Error::FromErrno(batch.error(), "disk " + std::to_string(batch.failed_disk()));
  return Status::Ok();
}

namespace {
int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

void IoEngine::NoteReadError(uint32_t disk) {
  const int64_t now = SteadyNs();
  int64_t none = 0;
  // The next probe comes an interval after the error, not at once.
  if (counters_[disk]->failing_since.compare_exchange_strong(none, now, std::memory_order_relaxed))
    counters_[disk]->last_probe.store(now, std::memory_order_relaxed);
}

bool IoEngine::AvoidReads(uint32_t disk) {
  DiskCounters& c = *counters_[disk];
  if (c.failing_since.load(std::memory_order_relaxed) == 0) return false;
  // One caller per interval wins the probe.
  const int64_t now = SteadyNs();
  int64_t last = c.last_probe.load(std::memory_order_relaxed);
  if (now - last < kProbeIntervalNs) return true;
  return !c.last_probe.compare_exchange_strong(last, now, std::memory_order_relaxed);
}

void IoEngine::InjectFault(uint32_t disk, int error) {
  if (disk < faults_.size()) faults_[disk]->store(error, std::memory_order_relaxed);
}

}  // namespace graphfs
