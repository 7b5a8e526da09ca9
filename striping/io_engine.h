// One request queue and io_uring worker(s) per disk, so each disk streams on its own and
// all disks work at once (CSMqGraph). For comparison the engine can instead run one shared
// queue served by a pool of workers, the classic thread-pool model.
//
// Callers describe I/O as IoRuns: one contiguous range of one part file, scattered over
// caller memory. Runs of one user request share an IoBatch; the caller waits on it.
// Reads that reach the end of a part file come back zero-filled: a part shorter than its
// share of the logical file holds a hole.
#pragma once

#include <sys/uio.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "striping/disk_activity.h"

namespace graphfs {

enum class IoKind { kRead, kWrite, kSync };

// Completion of a group of runs. Thread-safe; Wait() returns once every run finished.
class IoBatch {
 public:
  void Add(int runs) { pending_.fetch_add(runs, std::memory_order_relaxed); }
  // Instead of being waited for: `done` runs on the I/O worker that finishes the last run
  // (set before the runs are submitted). It may destroy the batch and its runs.
  void OnDone(std::function<void()> done) { done_ = std::move(done); }
  void Finish(int error, uint32_t disk);  // error 0 = success; the first error wins
  void Wait();
  bool done() const { return pending_.load(std::memory_order_acquire) == 0; }
  // errno of the first failed run, 0 if all succeeded. Valid after Wait().
  int error() const { return static_cast<int>(failure_.load(std::memory_order_acquire) >> 32); }
  // The disk of that run, so that errors name the failing disk.
  uint32_t failed_disk() const { return static_cast<uint32_t>(failure_.load(std::memory_order_acquire)); }

 private:
  std::atomic<int> pending_{0};
  std::atomic<uint64_t> failure_{0};  // errno << 32 | disk, set once
  std::function<void()> done_;
};

struct IoRun {
  IoKind kind = IoKind::kRead;
  uint32_t disk = 0;
  int fd = -1;
  uint64_t offset = 0;
  std::vector<iovec> iov;  // consumed as the run progresses (short transfers resubmit the rest)
  IoBatch* batch = nullptr;
  // Goes ahead of the disk's queued runs that are not urgent (a reader waits for it).
  bool urgent = false;
  // Set when the run finishes, before its batch hears of it: 0, or its errno. Lets a reader of
  // a file with parity tell which runs to rebuild (the batch keeps only the first error).
  int error = 0;
  uint64_t Length() const;
};

// Read requests by size, per disk: bucket k counts sizes <= kRequestSizeBounds[k] (and above
// the bound before it); the last bucket counts the larger ones.
inline constexpr std::array<uint64_t, 6> kRequestSizeBounds = {64ull << 10, 256ull << 10, 1ull << 20,
                                                              4ull << 20,  16ull << 20,  64ull << 20};
inline constexpr size_t kRequestSizeBuckets = kRequestSizeBounds.size() + 1;
size_t RequestSizeBucket(uint64_t bytes);

struct DiskCounters {
  std::atomic<uint64_t> bytes_read{0};
  std::atomic<uint64_t> bytes_written{0};
  std::atomic<uint64_t> reads{0};
  std::atomic<uint64_t> writes{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<uint64_t> queued{0};  // runs waiting or in flight now
  std::array<std::atomic<uint64_t>, kRequestSizeBuckets> read_sizes{};  // read runs by size
  // Reads of files with block sums and parity (docs/parity.md, "Reads"), counted on the disk
  // that held the bad or lost bytes:
  std::atomic<uint64_t> checksum_errors{0};  // blocks whose bytes did not match their sum
  std::atomic<uint64_t> rebuilt_bytes{0};    // bytes rebuilt from the rest of their row
  std::atomic<uint64_t> healed_blocks{0};    // rebuilt blocks written back in place
  std::atomic<uint64_t> sum_repairs{0};      // blocks whose stored sum was the damaged part
  // Steady-clock nanoseconds of the last read error (EIO) since the disk last read well; 0
  // while it reads well. A failing disk gets no reads of files with parity but a probe now and
  // then (IoEngine::AvoidReads), whose success makes it ok again.
  std::atomic<int64_t> failing_since{0};
  std::atomic<int64_t> last_probe{0};
};

// The engine's defaults and limit, written once here: IoEngineOptions starts from them, and the
// volume hands them up to the mount options (volume/volume_options.h: DefaultQueueDepth() and the
// like, since the volume's public headers may not include this one), whose table shows them in
// --help, graphfs(1) and README.md.
inline constexpr uint32_t kDefaultQueueDepth = 4;      // queue_depth=
inline constexpr uint32_t kMaxQueueDepth = 1024;       // each worker's ring holds depth + 2 entries
inline constexpr uint32_t kDefaultWorkersPerDisk = 1;  // io_workers= with io=perdisk
// io=shared's pool by default: as many workers as the per-disk queues would have in all, so that
// the two models compare at equal workers (io_workers= with io=shared overrides it).
inline constexpr uint32_t DefaultSharedWorkers(uint32_t disks) { return kDefaultWorkersPerDisk * disks; }

struct IoEngineOptions {
  enum class Mode { kPerDisk, kShared };
  uint32_t disks = 1;
  Mode mode = Mode::kPerDisk;
  uint32_t workers_per_disk = kDefaultWorkersPerDisk;  // kPerDisk
  uint32_t shared_workers = 0;  // kShared; 0: DefaultSharedWorkers(disks), which options() then reports
  uint32_t queue_depth = kDefaultQueueDepth;            // runs in flight per worker, 1..kMaxQueueDepth
};

class IoQueue;

class IoEngine {
 public:
  static Result<std::unique_ptr<IoEngine>> Start(const IoEngineOptions& options);
  ~IoEngine();  // drains every queue, then stops the workers
  IoEngine(const IoEngine&) = delete;
  IoEngine& operator=(const IoEngine&) = delete;

  // Queues the runs (their batch must already count them: batch->Add). The runs and
  // their buffers must stay alive until the batch is done.
  void Submit(IoRun* const* runs, size_t count);
  // Convenience: adds all runs to `batch`, submits them and waits. Returns the first error.
  Status SubmitAndWait(std::vector<IoRun>& runs, IoBatch& batch);

  const IoEngineOptions& options() const { return options_; }
  uint32_t disks() const { return options_.disks; }
  const DiskCounters& counters(uint32_t disk) const { return *counters_[disk]; }
  DiskCounters& counters(uint32_t disk) { return *counters_[disk]; }

  // The health of a disk as reads of files with parity found it (DiskCounters::failing_since):
  // a read error makes it failing, a good read makes it ok again.
  void NoteReadError(uint32_t disk);
  void NoteReadOk(uint32_t disk) {
    if (counters_[disk]->failing_since.load(std::memory_order_relaxed) != 0)
      counters_[disk]->failing_since.store(0, std::memory_order_relaxed);
  }
  bool failing(uint32_t disk) const { return counters_[disk]->failing_since.load(std::memory_order_relaxed) != 0; }
  // Whether a reader that can rebuild the bytes elsewhere should leave `disk` alone: true while
  // it is failing, except once per kProbeInterval, when the caller's read is the probe.
  bool AvoidReads(uint32_t disk);
  static constexpr int64_t kProbeIntervalNs = 1'000'000'000;

  // Fault injection for tests: every I/O to `disk` fails with `error` (0 clears it).
  void InjectFault(uint32_t disk, int error);
  int fault(uint32_t disk) const { return faults_[disk]->load(std::memory_order_relaxed); }

  // When each disk was busy, and idle while readers waited (the reads' layer reports waits).
  DiskActivity& activity() { return activity_; }
  const DiskActivity& activity() const { return activity_; }

 private:
  explicit IoEngine(const IoEngineOptions& options);
  IoEngineOptions options_;
  std::vector<std::unique_ptr<IoQueue>> queues_;
  std::vector<std::unique_ptr<DiskCounters>> counters_;
  std::vector<std::unique_ptr<std::atomic<int>>> faults_;
  DiskActivity activity_;
  friend class IoQueue;
};

}  // namespace graphfs
