// When each disk worked, and when it sat idle while a reader waited: the figure that says
// whether a read path keeps the disks busy (DESIGN.md, "Where the time must go": no disk idles
// while some reader waits).
//
// The I/O engine reports every run it queues and finishes (Queued / Finished); the layer that
// blocks readers on cache misses reports when a reader starts and stops waiting (ReaderWaits /
// ReaderDone). Time is split at every such event: a disk is *busy* while it has a run queued or
// in flight, and *idle while waiting* while it has none and at least one reader waits.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

namespace graphfs {

class DiskActivity {
 public:
  explicit DiskActivity(uint32_t disks);

  void Queued(uint32_t disk);
  void Finished(uint32_t disk);
  void ReaderWaits();
  void ReaderDone();

  struct Totals {
    std::vector<double> busy_seconds;                // per disk
    std::vector<double> idle_while_waiting_seconds;  // per disk
    double reader_wait_seconds = 0;                  // some reader waited (the union over readers)
    uint64_t waits = 0;                              // ReaderWaits calls
  };
  // Up to now (the current intervals included).
  Totals Read() const;

 private:
  void Advance(int64_t now) const;  // mu_ held: charges [last_ns_, now) to the current states

  mutable std::mutex mu_;
  std::vector<uint32_t> runs_;  // queued or in flight, per disk
  uint32_t waiting_ = 0;        // readers blocked on a miss now
  uint64_t waits_ = 0;
  mutable int64_t last_ns_;
  mutable std::vector<int64_t> busy_ns_, idle_waiting_ns_;
  mutable int64_t waiting_ns_ = 0;
};

}  // namespace graphfs
