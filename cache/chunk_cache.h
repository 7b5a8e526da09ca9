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
// Memory has two parts. *Admitted* units live within `capacity`, less what units out of the
// cache that pins still keep (held) and the freed buffers kept for reuse take of it; when it is
// full, a unit gets in only by evicting units of lower priority (policy kPriority) or the least
// recently used ones (kLru). *Staged* units are being loaded or wait for their reader (read-ahead),
// within `staging_limit` for prefetches; once their reader is done with them they are offered
// for admission and dropped if refused. So read-ahead never thrashes the cache and the cache
// never evicts what a reader is about to take.
//
// Which admitted unit leaves when the cache is full is a policy's choice
// (eviction_policy.h): `priority` (the default: units predicted to be read furthest in the
// future first, then the static rank of visits in the window × unit weight) or `lru`.
// Where to read ahead, and how much, is the caller's (volume/read_ahead.h): the cache only
// stages what it is asked to prefetch, within `staging_limit`.
#pragma once

#include <atomic>
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

#include "cache/eviction_policy.h"
#include "cache/reader_set.h"
#include "cache/shadow_lru.h"
#include "common/aligned_buffer.h"
#include "common/buffer_pool.h"
#include "common/result.h"
#include "common/shared_arena.h"

namespace graphfs::cache {

// Where a unit's bytes come from: one per open striped file.
class UnitSource {
 public:
  virtual ~UnitSource() = default;
  // Reads file bytes [offset, offset + length) into `buf` (4 KiB aligned; with AlignedLoads(),
  // offset and the buffer's room are multiples of 4 KiB too). Returns the bytes read (fewer only
  // at end of file).
  virtual Result<uint64_t> Load(uint64_t offset, uint64_t length, char* buf) = 0;
  // Adds to per_disk[d] the bytes of [offset, offset + length) stored on disk d.
  virtual void DiskShare(uint64_t offset, uint64_t length, std::vector<uint64_t>& per_disk) const = 0;
  // Changes whenever the file's bytes or size change (before and after each write, before
  // its units are invalidated). A request made under another generation describes an
  // older file: its unit may be shorter than the unit is now, or hold bytes a write has
  // replaced, so the cache never keeps what such a request loads.
  virtual uint64_t Generation() const { return 0; }
  // Whether Load is given whole 4 KiB pages around a unit (true: reads that go O_DIRECT), or
  // exactly the unit's bytes (false: a source that decodes units, where a neighbour's few
  // bytes would cost decoding the neighbour).
  virtual bool AlignedLoads() const { return true; }
};

struct UnitRequest {
  UnitKey key;
  uint64_t offset = 0;  // file bytes [offset, offset + length) of the unit
  uint64_t length = 0;
  double weight = 1.0;
  uint64_t file_units = 0;  // units in the file (0: unknown, the largest index seen is used)
  std::shared_ptr<UnitSource> source;
  uint64_t generation = 0;  // source->Generation() read before the file's size was
  // Where the unit's bytes are to live when it is loaded (null: the cache's own buffers): the
  // shared memory of its graph, which the graph's jobs map, so that a logical partition can be
  // made of cached units instead of copies of them (UnitRef::memory_offset).
  std::shared_ptr<SharedArena> arena;
};

// The most freed unit buffers a cache keeps for the next loads, unless its owner says less
// (CacheOptions::recycle_bytes; the volume scales it to the cache, volume/internal/volume_core.cc).
inline constexpr uint64_t kDefaultRecycleBytes = 64ull << 20;

struct CacheOptions {
  uint64_t capacity = 0;                  // bytes of admitted units
  // A name of EvictionPolicyNames(); the registry lists its default first.
  std::string policy = EvictionPolicyNames().front();
  // The next two have no default of their own: their owner's are its options' (the mount's
  // readahead_mem= and cache_window=, volume/volume_options.h), which it always sets.
  // Bytes of prefetched units not yet taken by their reader; 0: nothing is prefetched.
  uint64_t staging_limit = 0;
  // How long a read counts towards a unit's rank (its visits); must be > 0.
  int64_t reader_window_ns = 0;
  int64_t same_pass_ns = 2'000'000'000;   // reads of a unit by one process this close are one visit
  uint32_t prefetch_threads = 4;
  uint32_t disks = 1;                     // for per-process per-disk counters
  std::string trace_path;                 // if set: every unit lookup appended as a text line
                                          // "ns pid file index length" (offline policy studies)
  int64_t stream_idle_ns = 10'000'000'000;  // priority policy: a stream that read nothing this long is gone
  // Priority policy: whether the readers' pids name the jobs that read, so that their streams
  // predict the next reads. Not for a cache one process reads for every job (the volume's frame
  // tier, read by the daemon's decoders: interleaved jobs and prefetches made one stream that
  // predicted nothing, and its frames churned — docs/memory-as-cache.md, eleventh part). Without
  // it the static rank alone decides, and a newcomer's rank leaves out the visit that brought it
  // in: a resident's rank was taken at its last read, before this pass reached it, so counting
  // the newcomer's visit of this pass made every newcomer beat the residents the pass was
  // about to read.
  bool predict_streams = true;
  // Priority policy: whether a reading process still exists (a stream of an exited job
  // predicts nothing). Null: every process counts as alive.
  std::function<bool(uint32_t pid)> process_alive;
  // Bytes of freed unit buffers kept for the next loads (common/buffer_pool.h): the cache loads
  // one unit for each one it evicts, and a fresh mapping costs a zeroed page per 4 KiB.
  uint64_t recycle_bytes = kDefaultRecycleBytes;
  // Of the capacity, what admitted units leave to idle buffers even when the cache is full
  // (at most recycle_bytes counts). Idle buffers are resident, so they count against the
  // capacity (admitted units get what they and held units leave), and a capacity that shrinks
  // gives them up first: with 0, a full cache whose owner resizes it often keeps none and
  // every load maps fresh pages. The volume's frame tier keeps its whole recycle_bytes so: a
  // frame is read from the disks into a fresh mapping otherwise, and at scale-24 R-MAT W5 the
  // I/O threads' page faults (zeroing the pages O_DIRECT reads into) were a fifth of the daemon's
  // CPU (docs/memory-as-cache.md, twenty-seventh part).
  uint64_t idle_reserve_bytes = 0;
  // Told, with the cache's lock held (they must not call into this cache), when a unit is kept
  // — admitted, or read again while admitted — with its bytes and how long it has been admitted,
  // and when a kept unit leaves (evicted, dropped, invalidated). The volume drops the frame of a
  // decoded unit the cache keeps across passes, and gives the frames' room back when the unit
  // goes: volume/internal/frame_tier.h. `on_kept` returns true when the unit is now the only
  // copy of its bytes in memory (its frame went for it): the cache then no longer evicts it to
  // admit another unit — a newcomer that finds no other room is refused, and keeps its frame —,
  // only when its capacity shrinks (SetCapacity) or the unit is dropped or invalidated.
  std::function<bool(const UnitKey&, uint64_t bytes, int64_t admitted_for_ns)> on_kept;
  std::function<void(const UnitKey&)> on_left;
  // Told, without the cache's lock (it may call SetStagingMark and SetCapacity), when the staged
  // bytes — loads in flight and units waiting for their readers, prefetched or not — rose above
  // the mark (SetStagingMark), with what they are now: right after the unit's buffer was taken,
  // before its bytes are read into it. The mount's budget charges staging what it holds rather
  // than its ceiling, and makes room for more at once (volume/internal/memory_budget.h).
  std::function<void(uint64_t staged_bytes)> on_staged;
  // Resident bytes that units freed and someone else keeps for the next loads — the graphs'
  // shared memory keeps the slices of evicted units (common/shared_arena.h) — counted with the
  // held units and idle buffers, inside the capacity. Called with the cache's lock held; null:
  // none. (Charged elsewhere, to the LPs' reservation, every unit evicted into that memory shrank
  // the cache by its size, which evicted more: the decoded tier's capacity swung between 19 and
  // 39 MiB every ~50 ms at the demo's f = 1/2, and the shared memory populated and punched 1 GB.)
  std::function<uint64_t()> outside_idle_bytes;
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

// The bytes a cache keeps resident, each as CacheStats counts it. Apart so that the daemon's
// memory sampler (several times a second) reads them under one lock without copying the rest of
// the stats (every process's counters); CacheStats is made of it, so the names are written once.
struct CacheMemory {
  uint64_t used = 0;                // admitted units
  uint64_t staged = 0;              // units loading or waiting for their readers
  uint64_t buffers_idle_bytes = 0;  // freed unit buffers kept for the next loads
  // Units their holders took out of staging (UnitRef::LeaveStaging) that the policy refused:
  // memory the pins alone keep (the holder counts it), freed at the last unpin.
  uint64_t held = 0;
};

struct CacheStats : CacheMemory {
  std::string policy;
  uint64_t capacity = 0;
  uint64_t units = 0, staged_units = 0;
  uint64_t hits = 0, misses = 0, bypassed = 0;
  uint64_t admissions = 0, rejections = 0, evictions = 0;
  // Of the evictions, those a shrinking capacity made (SetCapacity), not a newcomer, and their
  // bytes: where the budget moves memory between the cache and its other users, a unit it
  // evicts is read again at its next pass whatever its priority.
  uint64_t capacity_evictions = 0, capacity_evicted_bytes = 0;
  uint64_t prefetches = 0, prefetches_skipped = 0, load_errors = 0;
  // Readers' misses that waited for staging room (ChunkCache::Get: kMaxReaderLoadsOver), and
  // of them those that loaded anyway when kReaderRoomWaitNs ran out.
  uint64_t reader_room_waits = 0, reader_room_timeouts = 0;
  uint64_t offers = 0, offers_admitted = 0;  // Offer calls with a unit not in memory; admitted ones
  uint64_t bytes_served = 0, bytes_from_cache = 0, bytes_loaded = 0, bytes_bypassed = 0;
  // Of bytes_loaded, units loaded before (within the reader window): read again because they
  // were not kept, or were loaded twice at once.
  uint64_t bytes_reloaded = 0;
  // Lookups (Get, Peek, a reader's Reserve) in bytes, those in memory when asked for, and those
  // an LRU of the same capacity would have had (cache/shadow_lru.h).
  uint64_t lookup_bytes = 0, lookup_hit_bytes = 0, lru_hit_bytes = 0;
  uint64_t prefetched_unused_bytes = 0;  // loaded ahead, dropped without a reader
  uint64_t buffers_reused = 0, buffers_created = 0;  // unit buffers: recycled, newly mapped
  uint64_t held_units = 0;                           // the units of CacheMemory::held
  uint64_t dropped = 0;  // units their holders dropped (UnitRef::Drop)
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
  // Where data() lies in the shared memory the unit was loaded into (UnitRequest::arena), and
  // which memory that is; SharedBytes::kNotShared and null for a unit in the cache's own buffers.
  uint64_t memory_offset() const;
  const SharedArena* arena() const;
  // The holder keeps the unit pinned for long and needs no more of it than it took (a logical
  // partition made of it): it leaves staging now instead of at the last unpin — admitted if the
  // policy wants it (cached, and shared with the holder while pinned), else kept by the pin
  // alone (CacheStats::held) and freed with it. Either way it no longer fills the staging area.
  void LeaveStaging();
  bool hit() const { return hit_; }  // in memory (or being loaded by another reader) when asked for
  // Whether the cache keeps the unit now (admitted: inside its capacity, in its eviction order).
  // A holder that pins an admitted unit costs no memory beyond the cache's while the cache
  // keeps it (an LP may borrow it whole for a few runs instead of copying them).
  bool admitted() const;
  // Reports bytes handed to the reader: a unit is offered for admission once fully served.
  void NoteServed(uint64_t bytes);
  // The reader is done with the unit though it took only part of it: the unit is offered for
  // admission (or dropped from staging) at its last unpin.
  void NoteConsumed();
  // The holder keeps a better copy of these bytes elsewhere (a compressed unit's frame whose
  // decoded unit the cache beside keeps): the unit leaves the cache now, admitted or staged,
  // counted in CacheStats::dropped; its pins keep its bytes until they go.
  void Drop();
  // Whether a holder marked the unit's bytes as verified since they were loaded (MarkChecked):
  // a frame's checksum is checked at its first decode, not at every one from memory.
  bool checked() const;
  void MarkChecked();

 private:
  friend class ChunkCache;
  friend class UnitLoad;
  struct Entry;
  UnitRef(ChunkCache* cache, std::shared_ptr<Entry> e, uint32_t pid, bool hit)
      : cache_(cache), entry_(std::move(e)), pid_(pid), hit_(hit) {}
  void Release();
  ChunkCache* cache_ = nullptr;
  std::shared_ptr<Entry> entry_;
  uint32_t pid_ = 0;
  bool hit_ = false;
};

// A unit whose bytes the caller reads from the disks itself (ChunkCache::Reserve): readers that
// ask for it meanwhile wait for Complete. Its buffer starts `skew()` bytes before the unit, at a
// 4 KiB boundary of the file when the source takes aligned loads, and holds `charge()` bytes.
class UnitLoad {
 public:
  UnitLoad() = default;  // copies name the same load (the reader awaits it, the extent fills it)
  explicit operator bool() const { return entry_ != nullptr; }
  char* buffer() const;
  uint64_t skew() const;
  uint64_t charge() const;
  uint64_t offset() const;  // the unit's file bytes [offset, offset + length)
  uint64_t length() const;
  const UnitKey& key() const;

 private:
  friend class ChunkCache;
  explicit UnitLoad(std::shared_ptr<UnitRef::Entry> e) : entry_(std::move(e)) {}
  std::shared_ptr<UnitRef::Entry> entry_;
};

class ChunkCache {
 public:
  // `options.policy` must be one of EvictionPolicyNames() (mount options check it first).
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
  // Offers a whole unit's bytes that `pid` read from the disks around the cache (the
  // logical-partition loader's direct reads, after a Peek missed): the cache keeps a copy if
  // the policy admits it, as it would a unit it had loaded itself. Nothing happens if the
  // unit is in memory by now or the request is of an older file generation. Counts the bytes
  // as loaded by `pid`. Returns whether the unit was admitted.
  bool Offer(const UnitRequest& request, const char* data, uint32_t pid);
  // Loads the unit in the background unless it is in memory, being loaded, or staging is full.
  // (For sources the caller does not read itself: Reserve is the way for those it does.)
  void Prefetch(const UnitRequest& request, uint32_t pid);

  // Units the caller loads itself, so that it can read several neighbours in one disk request
  // (volume/internal/extent_reads.h): Reserve makes the unit "being loaded" — readers asking for it wait —
  // and the caller fills UnitLoad::buffer() and calls Complete exactly once.
  enum class Presence { kAbsent, kLoading, kReady };
  Presence Find(const UnitKey& key) const;
  enum class ReserveFor {
    kReader,    // a reader missed it: counted as its miss, pinned for Await
    kPrefetch,  // read ahead: staged within staging_limit (unless `over_limit`), for whoever comes
  };
  // An empty handle if the unit is in memory or being loaded, the request is of an older file
  // generation, or (kPrefetch) staging is full and `over_limit` is false.
  UnitLoad Reserve(const UnitRequest& request, uint32_t pid, ReserveFor why, bool over_limit = false);
  // `got`: bytes read into the buffer (at least skew + length), or the error.
  void Complete(const UnitLoad& load, Result<uint64_t> got);
  // The unit of a kReader reservation, pinned, once it is loaded (its miss was counted).
  Result<UnitRef> Await(UnitLoad load, uint32_t pid);
  // Whether staging has room for `bytes` more (after giving up what is done with).
  bool StagingRoom(uint64_t bytes);
  // Forgets every unit of `file` (after it was written or truncated). Readers holding a
  // unit keep their bytes; loads in flight finish for their waiters only.
  void Invalidate(uint64_t file);
  // Drops the unit if the cache keeps it (admitted), as UnitRef::Drop does: a holder has a
  // better copy of it now. Pins keep its bytes until they go. Returns whether it was dropped.
  bool DropAdmitted(const UnitKey& key);
  // Whether the unit is in memory (admitted or staged); does not count as a read.
  bool Contains(const UnitKey& key) const;
  // Offers finished staged units for admission now (tests; the cache also does it as it goes).
  void Settle();

  // Changes the bytes admitted units may hold (CacheOptions::capacity at first): the mount's one
  // memory budget gives the cache what the LP windows and indexes of the graphs in use leave.
  // Evicts down to it at once, the lowest priority first; and, as admission does, makes room
  // for what is resident beside the admitted units (held units, idle buffers): idle buffers are
  // released, and unpinned units leave only when admitted and held ones alone are over.
  void SetCapacity(uint64_t capacity);
  uint64_t capacity() const;
  uint64_t used() const;  // bytes of admitted units (CacheStats::used, without the rest of Stats)
  uint64_t held() const;  // bytes of units out of the cache that pins keep (CacheStats::held)
  uint64_t used(uint64_t file) const;  // of them, the units of `file` (UnitKey::file)

  // Staged bytes above `bytes` are told to CacheOptions::on_staged (UINT64_MAX at first: never).
  void SetStagingMark(uint64_t bytes);
  uint64_t staged() const;  // CacheStats::staged

  CacheStats Stats() const;
  // The resident bytes of Stats() alone, as one snapshot (CacheMemory).
  CacheMemory Memory() const;
  const CacheOptions& options() const { return options_; }  // capacity: as constructed

 private:
  using Entry = UnitRef::Entry;
  friend class UnitRef;
  friend class UnitLoad;
  struct Record;
  struct Task;
  using OrderKey = std::tuple<double, uint64_t, UnitKey>;  // (priority, tick, key): lowest first

  Record& NoteRead(const UnitRequest& r, uint32_t pid, int64_t now);  // mu_ held
  // A load of r's unit for `pid` begins: the bytes counted (once more if it was loaded before).
  void CountLoad(const UnitRequest& r, ProcessStats& ps);  // mu_ held
  // Pins the record's entry (in memory or being loaded), waiting for its load.
  Result<UnitRef> PinInMemory(std::unique_lock<std::mutex>& lock, Record& rec, uint32_t pid, int64_t now);
  // The bytes a load of r's unit takes (what staging and the capacity count): whole pages
  // around it for a source read O_DIRECT, the unit itself for one that decodes.
  static uint64_t ChargeOf(const UnitRequest& r);
  std::shared_ptr<Entry> NewEntry(const UnitRequest& r);            // mu_ held
  // Tells on_staged what NewEntry found above the mark, if anything (mu_ not held).
  void TellStaged();
  void StartLoad(Entry& e, const UnitRequest& r);                   // mu_ not held
  void FinishLoad(const std::shared_ptr<Entry>& e, Result<uint64_t> got);  // mu_ held
  void Unpin(Entry& e);
  void Served(Entry& e, uint32_t pid, bool hit, uint64_t bytes);
  void Consumed(Entry& e);
  void LeaveStaging(Entry& e);
  bool Admitted(const Entry& e) const;
  void Drop(Entry& e);
  void DropLocked(std::shared_ptr<Entry> e);  // mu_ held; e is the record's entry, ready
  // A unit out of the cache that pins still keep: counted as held (CacheStats::held) until the
  // last unpin (mu_ held; nothing if it has no pins or is held already).
  void HoldByPins(Entry& e);
  // Offers staged units their readers are done with for admission (mu_ held). `pressed`: staging
  // is full, so prefetched units nobody came for give way sooner (kUnreadPressedNs).
  void SweepStaged(int64_t now, bool pressed = false);
  UnitLoad ReserveLocked(const UnitRequest& r, uint32_t pid, ReserveFor why, bool over_limit);  // mu_ held
  // A reader's miss when staging is full: waits while kMaxReaderLoadsOver readers' loads are
  // in flight, at most kReaderRoomWaitNs. Returns whether it waited (the lock was let go).
  bool WaitForReaderRoom(std::unique_lock<std::mutex>& lock, uint64_t charge);
  void Decide(const std::shared_ptr<Entry>& e, int64_t now);       // mu_ held
  double Priority(const Record& rec, const Entry& e, int64_t now) const;
  double PriorityBeforeThisVisit(const Record& rec, const Entry& e, int64_t now) const;
  void Rescore(int64_t now);                                       // mu_ held
  void Evict(const std::shared_ptr<Entry>& e);                     // mu_ held
  void CountCapacityEviction(const Entry& e);                      // mu_ held; after Evict
  // mu_ held: resident bytes within the capacity that are not admitted units — units let go
  // that pins keep (CacheStats::held), the idle recycled buffers and the idle memory kept for the
  // cache outside it (KeptOutside). Admitted units get the rest.
  uint64_t OutsideLocked() const;
  uint64_t KeptOutside() const;  // CacheOptions::outside_idle_bytes, 0 without it
  CacheMemory MemoryLocked(const BufferPool::Stats& buffers) const;  // mu_ held; the pool's stats now
  // Admitted bytes change by `delta` (a unit of `file` admitted or gone): used_ and its
  // by-file split together.
  void AddUsed(uint64_t file, int64_t delta);                      // mu_ held
  ProcessStats& Process(uint32_t pid);                             // mu_ held
  void Trace(const UnitRequest& r, uint32_t pid, int64_t now);     // mu_ held
  void PrefetchWorker();

  const CacheOptions options_;
  const std::unique_ptr<EvictionPolicy> policy_;  // called under mu_
  const std::shared_ptr<BufferPool> buffers_;     // entries give their buffers back as they go
  mutable std::mutex mu_;
  std::condition_variable loaded_;
  std::unordered_map<UnitKey, Record, UnitKeyHash> units_;
  std::set<OrderKey> order_;                       // admitted units, eviction order
  std::vector<std::shared_ptr<Entry>> staged_;     // loading or waiting for their readers
  uint64_t used_ = 0, staged_bytes_ = 0, prefetch_bytes_ = 0;
  uint64_t reader_loads_ = 0;  // Get's own loads in flight
  uint64_t staging_mark_ = UINT64_MAX;       // SetStagingMark
  std::atomic<uint64_t> staged_to_tell_{0};  // NewEntry → TellStaged: staged bytes above the mark
  std::unordered_map<uint64_t, uint64_t> used_by_file_;  // used_, by UnitKey::file
  uint64_t held_bytes_ = 0, held_units_ = 0;  // CacheStats::held
  uint64_t tick_ = 0;
  int64_t last_rescore_ns_ = 0, last_sweep_ns_ = 0;
  CacheStats counters_;                            // totals (processes kept apart)
  std::unordered_map<uint32_t, ProcessStats> processes_;
  ShadowLru shadow_;  // what an LRU of the same capacity would hold

  std::FILE* trace_ = nullptr;
  std::deque<std::unique_ptr<Task>> tasks_;
  std::condition_variable task_ready_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace graphfs::cache
