// The mount's one shared cache of file units (chunks of indexed graph files, stripe-aligned
// blocks of other striped files), so that concurrent jobs reading the same bytes cause one
// disk read and the bytes most jobs still need stay in memory.
//
//   ChunkCache cache(options);
//   auto unit = cache.Get(request, pid);        // loads on a miss; concurrent misses share one load
//   memcpy(out, unit->data() + skip, n);        // pinned: never evicted while `unit` lives
//   unit->NoteServed(n);
//   cache.Prefetch(next_request, pid);          // read-ahead for sequential readers
//
// Memory has two parts. *Admitted* units live within `capacity`; when it is full, a unit
// gets in only by evicting units of lower priority (policy kPriority) or the least recently
// used ones (kLru). *Staged* units are being loaded or wait for their reader (read-ahead),
// within `staging_limit` for prefetches; once their reader is done with them they are offered
// for admission and dropped if refused. So read-ahead never thrashes the cache and the cache
// never evicts what a reader is about to take.
//
// Priority (kPriority) looks forward first: graph jobs stream a file in passes, each at its
// own pace, so the cache follows every reading process's position and speed in each file
// and predicts when a unit will next be read (the nearest live stream behind it, wrapping
// around at the end of the file; a process whose reader threads each take a segment is
// behind every unit it has not yet taken between its rear and its leading reader, and a
// unit a process is part-way through is needed now). The unit read furthest in the future
// goes first, and a newcomer that will be read later than every resident is not admitted —
// an online approximation of Belady's MIN. Replaying traces of the 4-job mix at scale 24
// (scripts/bench/cache_sim.py, BENCHMARKS.md) it loads 20% fewer bytes than LRU at a budget of
// 25% of the file, where MIN itself loads 30% fewer: LRU flushes what a slower job is about
// to reread. Between units with no prediction (no live stream will reach them) or equal
// ones, the static rank decides: (visits within `reader_window` — one pass of one process
// over the unit — so several processes count once each and a unit read at every iteration
// counts more than one read once) × the unit's weight (mean source degree of an indexed
// chunk: GraphSO's hub-heavy chunks first; 1 for a block) × a factor set from outside
// (SetBoost: jobs' active sets, issue 5), then recency. A newcomer must outrank a resident to
// evict it, so a scan larger than the cache keeps the cache's content instead of flushing it.
#pragma once

#include <condition_variable>
#include <cstdio>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "cache/reader_set.h"
#include "common/result.h"
#include "striping/striped_file.h"  // AlignedBuffer

namespace graphfs::cache {

enum class Policy { kPriority, kLru };
const char* PolicyName(Policy p);

struct UnitKey {
  uint64_t file = 0;   // cache-wide file id (stable across opens: a hash of the striped file's id)
  uint64_t index = 0;  // unit number inside the file
  auto operator<=>(const UnitKey&) const = default;
};

// Where a unit's bytes come from: one per open striped file.
class UnitSource {
 public:
  virtual ~UnitSource() = default;
  // Reads file bytes [offset, offset + length) into `buf` (4 KiB aligned; offset and the
  // buffer's room are multiples of 4 KiB). Returns the bytes read (fewer only at end of file).
  virtual Result<uint64_t> Load(uint64_t offset, uint64_t length, char* buf) = 0;
  // Adds to per_disk[d] the bytes of [offset, offset + length) stored on disk d.
  virtual void DiskShare(uint64_t offset, uint64_t length, std::vector<uint64_t>& per_disk) const = 0;
};

struct UnitRequest {
  UnitKey key;
  uint64_t offset = 0;  // file bytes [offset, offset + length) of the unit
  uint64_t length = 0;
  double weight = 1.0;
  uint64_t file_units = 0;  // units in the file (0: unknown, the largest index seen is used)
  std::shared_ptr<UnitSource> source;
};

struct CacheOptions {
  uint64_t capacity = 0;                  // bytes of admitted units
  Policy policy = Policy::kPriority;
  uint64_t staging_limit = 1ull << 30;    // bytes of prefetched units not yet taken by their reader
  int64_t reader_window_ns = 600'000'000'000;
  int64_t same_pass_ns = 2'000'000'000;   // reads of a unit by one process this close are one visit
  uint32_t prefetch_threads = 4;
  uint32_t disks = 1;                     // for per-process per-disk counters
  std::string trace_path;                 // if set: every unit lookup appended as a text line
                                          // "ns pid file index length" (offline policy studies)
  int64_t stream_idle_ns = 10'000'000'000;  // a stream that read nothing this long is gone
  // Whether a reading process still exists (a stream of an exited job predicts nothing).
  // Null: every process counts as alive.
  std::function<bool(uint32_t pid)> process_alive;
};

struct ProcessStats {
  uint32_t pid = 0;
  uint64_t hits = 0, misses = 0, bypassed = 0;  // unit lookups
  uint64_t bytes_served = 0;                    // handed to the process from cache units
  uint64_t bytes_from_cache = 0;                // served from units already in memory when asked for
                                                // (admitted, or staged by anyone's read-ahead)
  uint64_t bytes_loaded = 0;                    // disk bytes of units this process caused to load
  std::vector<uint64_t> disk_bytes;             // the same, per disk
  uint64_t bytes_bypassed = 0;                  // read from disk around the cache (small random reads)
};

struct CacheStats {
  Policy policy = Policy::kPriority;
  uint64_t capacity = 0, used = 0, staged = 0;
  uint64_t units = 0, staged_units = 0;
  uint64_t hits = 0, misses = 0, bypassed = 0;
  uint64_t admissions = 0, rejections = 0, evictions = 0;
  uint64_t prefetches = 0, prefetches_skipped = 0, load_errors = 0;
  uint64_t bytes_served = 0, bytes_from_cache = 0, bytes_loaded = 0, bytes_bypassed = 0;
  uint64_t prefetched_unused_bytes = 0;  // loaded ahead, dropped without a reader
  std::vector<ProcessStats> processes;
};

class ChunkCache;

// A pinned unit: its bytes stay valid and it cannot be evicted while the handle lives.
class UnitRef {
 public:
  UnitRef() = default;
  UnitRef(UnitRef&& o) noexcept;
  UnitRef& operator=(UnitRef&& o) noexcept;
  ~UnitRef();
  explicit operator bool() const { return entry_ != nullptr; }
  const char* data() const;    // the unit's first byte (file offset `offset()`)
  uint64_t offset() const;
  uint64_t length() const;
  bool hit() const { return hit_; }  // in memory (or being loaded by another reader) when asked for
  // Reports bytes handed to the reader: a unit is offered for admission once fully served.
  void NoteServed(uint64_t bytes);

 private:
  friend class ChunkCache;
  struct Entry;
  UnitRef(ChunkCache* cache, std::shared_ptr<Entry> e, uint32_t pid, bool hit)
      : cache_(cache), entry_(std::move(e)), pid_(pid), hit_(hit) {}
  void Release();
  ChunkCache* cache_ = nullptr;
  std::shared_ptr<Entry> entry_;
  uint32_t pid_ = 0;
  bool hit_ = false;
};

class ChunkCache {
 public:
  explicit ChunkCache(const CacheOptions& options);
  ~ChunkCache();  // waits for prefetches in flight
  ChunkCache(const ChunkCache&) = delete;
  ChunkCache& operator=(const ChunkCache&) = delete;

  // The unit, pinned; loaded by this call on a miss (concurrent callers wait for one load).
  Result<UnitRef> Get(const UnitRequest& request, uint32_t pid);
  // The unit if it is in memory (or being loaded); an empty handle otherwise. Counts a hit
  // or nothing: the caller reads around the cache and reports it with NoteBypass.
  UnitRef Peek(const UnitRequest& request, uint32_t pid);
  void NoteBypass(uint32_t pid, uint64_t bytes);
  // Loads the unit in the background unless it is in memory, being loaded, or staging is full.
  void Prefetch(const UnitRequest& request, uint32_t pid);
  // Bytes one stream may keep loading ahead of itself: an equal share of staging for every
  // stream that read in the last second. Readers then get their nearest units first, instead
  // of one deep window filling staging while another reader waits on a miss.
  uint64_t ReadAheadShare() const;
  // Forgets every unit of `file` (after it was written or truncated). Readers holding a
  // unit keep their bytes; loads in flight finish for their waiters only.
  void Invalidate(uint64_t file);
  // Extra priority factor for a unit (default 1): issue 5's N(J)·N(A) from jobs' active sets.
  void SetBoost(const UnitKey& key, double boost);
  // Whether the unit is in memory (admitted or staged); does not count as a read.
  bool Contains(const UnitKey& key) const;
  // Offers finished staged units for admission now (tests; the cache also does it as it goes).
  void Settle();

  CacheStats Stats() const;
  const CacheOptions& options() const { return options_; }

 private:
  using Entry = UnitRef::Entry;
  friend class UnitRef;
  struct Record;
  struct Task;
  using OrderKey = std::tuple<double, uint64_t, UnitKey>;  // (priority, tick, key): lowest first
  struct KeyHash {
    size_t operator()(const UnitKey& k) const noexcept { return k.file * 0x9E3779B97F4A7C15ull ^ k.index; }
  };

  Record& NoteRead(const UnitRequest& r, uint32_t pid, int64_t now);  // mu_ held
  void NoteStream(const UnitRequest& r, uint32_t pid, int64_t now);   // mu_ held
  // Nanoseconds until the unit is read next: 0 while a process is part-way through it, else
  // when the nearest live stream behind it reaches it; +inf if none will.
  double NextUse(const Entry& e, int64_t now);                        // mu_ held
  bool PartWay(const Entry& e, int64_t now) const;                    // mu_ held
  bool TookInThisVisit(const Entry& e, uint32_t pid, int64_t now) const;  // mu_ held
  // Pins the record's entry (in memory or being loaded), waiting for its load.
  Result<UnitRef> PinInMemory(std::unique_lock<std::mutex>& lock, Record& rec, uint32_t pid, int64_t now);
  std::shared_ptr<Entry> NewEntry(const UnitRequest& r);            // mu_ held
  void StartLoad(Entry& e, const UnitRequest& r);                   // mu_ not held
  void FinishLoad(const std::shared_ptr<Entry>& e, Result<uint64_t> got);  // mu_ held
  void Unpin(Entry& e);
  void Served(Entry& e, uint32_t pid, bool hit, uint64_t bytes);
  void SweepStaged(int64_t now);                                   // mu_ held
  void Decide(const std::shared_ptr<Entry>& e, int64_t now);       // mu_ held
  double Priority(const Record& rec, const Entry& e, int64_t now) const;
  void Rescore(int64_t now);                                       // mu_ held
  void Evict(const std::shared_ptr<Entry>& e);                     // mu_ held
  ProcessStats& Process(uint32_t pid);                             // mu_ held
  void Trace(const UnitRequest& r, uint32_t pid, int64_t now);     // mu_ held
  void PrefetchWorker();

  const CacheOptions options_;
  mutable std::mutex mu_;
  std::condition_variable loaded_;
  std::unordered_map<UnitKey, Record, KeyHash> units_;
  std::set<OrderKey> order_;                       // admitted units, eviction order
  std::vector<std::shared_ptr<Entry>> staged_;     // loading or waiting for their readers
  uint64_t used_ = 0, staged_bytes_ = 0, prefetch_bytes_ = 0;
  uint64_t tick_ = 0;
  int64_t last_rescore_ns_ = 0, last_sweep_ns_ = 0;
  CacheStats counters_;                            // totals (processes kept apart)
  std::unordered_map<uint32_t, ProcessStats> processes_;

  // Where each process reads each file: its unit, when it got there, its pace. Engines read
  // one pass with several threads, each on its own segment: `index` follows the leading one
  // (the pace is measured on it), `trail` the rearmost, whose reads step back.
  struct Stream {
    uint64_t index = 0;
    int64_t entered_ns = 0, last_ns = 0;
    double units_per_ns = 0;
    bool alive = true;
    int64_t alive_checked_ns = 0;
    uint64_t trail = 0;
    int64_t trail_ns = 0;  // 0: no rear reader seen
  };
  std::map<std::pair<uint64_t, uint32_t>, Stream> streams_;  // (file, pid)
  std::unordered_map<uint64_t, uint64_t> file_units_;

  std::FILE* trace_ = nullptr;
  std::deque<std::unique_ptr<Task>> tasks_;
  std::condition_variable task_ready_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace graphfs::cache
