// graphfs-rebuild's check of what reached the new disk (docs/parity.md, "graphfs-rebuild"): each
// rebuilt row of a part is read back from the new disk — with O_DIRECT, so the bytes come from
// the device and not from the page cache the rebuild wrote them through — and checked against
// the sums written with it, on a thread of its own while the rebuild goes on with the next rows.
// Read back at the end instead, the new disk's reads would take as long again as its writes.
//
// An O_DIRECT read first waits for the range's writeback (the rebuild started it as each unit
// was written), so a row queued as soon as it is written is checked as soon as it is on the
// disk. Where the filesystem has no O_DIRECT (tmpfs), the range is written back, dropped from
// the page cache and read buffered.
//
// Whether this overlaps for free depends on the new disk: reading and writing it at once is
// what costs nothing extra when its reads and writes have bandwidths of their own (the
// benchmarks' loop disks, throttled separately), and what a single spindle or SSD pays for in
// its shared bandwidth — the read back then still costs the new disk its bytes once more.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/aligned_buffer.h"
#include "common/result.h"
#include "striping/disk_backend.h"
#include "striping/set_files.h"
#include "striping/stripe_map.h"
#include "striping/unit_sums.h"

namespace graphfs {

class RebuildReadBack {
 public:
  // How the parts are read back: with O_DIRECT where the filesystem has it (else as kBuffered),
  // or as where it has none — written back, dropped from the page cache, read buffered. The
  // second is the tools' only on such filesystems; tests ask for it on the others.
  enum class Io { kDirect, kBuffered };
  // Reads parts from `target`, the new disk, which is disk `disk` of the set.
  RebuildReadBack(DiskBackend& target, uint32_t disk, Io io = Io::kDirect);
  // Stops after the read under way (what is still queued is dropped) and joins the thread.
  ~RebuildReadBack();
  RebuildReadBack(const RebuildReadBack&) = delete;
  RebuildReadBack& operator=(const RebuildReadBack&) = delete;

  // Queues rows [first_row, end_row) of file `f`'s part: their units and sums must have been
  // written (not necessarily synced).
  void Rows(const StripedFileRef& f, uint64_t first_row, uint64_t end_row);
  // Queues the check of the part's length against its sums header's and the file's, once the
  // part was cut to its length and the header says it.
  void Length(const StripedFileRef& f);
  // The first failure so far (Ok while none), for a rebuild that stops at it.
  Status error() const;
  // Waits until everything queued was read back: Ok, or the first failure, naming the file.
  Status Wait();
  // Held by the rebuild while it rewrites a sums header the worker may be opening (the part's
  // length, set at the end of a file while the worker still reads its rows): a read of the
  // header beside its write can see half of each, which the header's checksum refuses.
  std::unique_lock<std::mutex> HoldSumsHeaders() { return std::unique_lock<std::mutex>(headers_mu_); }

 private:
  struct Task {
    StripedFileRef file;
    uint64_t first_row = 0, end_row = 0;
    bool length = false;  // the length check instead of rows
  };
  // The part being read and its sums, kept while tasks of one file follow each other.
  struct Open {
    std::string file_id;
    StripeMap map;
    std::unique_ptr<DiskFile> part;
    std::optional<UnitSums> sums;
  };
  void Run();
  Status Do(const Task& t);
  Status OpenFile(const StripeManifest& m);
  Status CheckRow(const StripeManifest& m, uint64_t row);
  Status CheckLength(const StripeManifest& m);
  void Push(Task t);

  DiskBackend& target_;
  const uint32_t disk_;
  const Io io_;
  std::optional<Open> open_;  // the worker's alone
  AlignedBuffer buf_;         // the worker's alone: one unit, rounded up to the O_DIRECT alignment
  std::mutex headers_mu_;  // see HoldSumsHeaders
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> queue_;
  bool busy_ = false;  // the worker is doing a task it took off the queue
  bool stop_ = false;
  Status error_;
  std::thread worker_;  // last: started once the members above exist
};

}  // namespace graphfs
