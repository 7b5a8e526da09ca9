#include "cache/chunk_cache.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "cache/cache_entry.h"

namespace graphfs::cache {

namespace {

std::unique_ptr<EvictionPolicy> MakePolicy(const CacheOptions& o) {
  EvictionPolicyOptions po;
  po.stream_idle_ns = o.stream_idle_ns;
  po.process_alive = o.process_alive;
  po.predict_streams = o.predict_streams;
  std::unique_ptr<EvictionPolicy> p = NewEvictionPolicy(o.policy, po);
  if (p == nullptr) {
    // The mount options refuse unknown names with a message; reaching this is a bug.
    std::fprintf(stderr, "graphfs: unknown cache policy '%s'\n", o.policy.c_str());
    std::abort();
  }
  return p;
}

// The reader window has no default of its own (CacheOptions): an owner that forgot it would
// rank every unit by nothing and rescore at every lookup. Like an unknown policy, a bug.
const CacheOptions& WithReaderWindow(const CacheOptions& o) {
  if (o.reader_window_ns <= 0) {
    std::fprintf(stderr, "graphfs: cache reader window unset (CacheOptions::reader_window_ns)\n");
    std::abort();
  }
  return o;
}

}  // namespace

// ---- UnitRef ----

UnitRef::UnitRef(UnitRef&& o) noexcept : cache_(o.cache_), entry_(std::move(o.entry_)), pid_(o.pid_), hit_(o.hit_) {
  o.cache_ = nullptr;
}

UnitRef& UnitRef::operator=(UnitRef&& o) noexcept {
  if (this != &o) {
    Release();
    cache_ = o.cache_;
    entry_ = std::move(o.entry_);
    pid_ = o.pid_;
    hit_ = o.hit_;
    o.cache_ = nullptr;
  }
  return *this;
}

UnitRef::~UnitRef() { Release(); }

void UnitRef::Release() {
  if (entry_ != nullptr && cache_ != nullptr) cache_->Unpin(*entry_);
  entry_.reset();
  cache_ = nullptr;
}

const char* UnitRef::data() const { return entry_->data() + entry_->skew; }
uint64_t UnitRef::memory_offset() const {
  const uint64_t at = entry_->shared.offset();
  return at == SharedBytes::kNotShared ? at : at + entry_->skew;
}
const SharedArena* UnitRef::arena() const {
  return entry_->shared.offset() == SharedBytes::kNotShared ? nullptr : entry_->shared.arena().get();
}
void UnitRef::LeaveStaging() {
  if (entry_ != nullptr) cache_->LeaveStaging(*entry_);
}
uint64_t UnitRef::offset() const { return entry_->offset; }
uint64_t UnitRef::length() const { return entry_->length; }

void UnitRef::NoteServed(uint64_t bytes) {
  if (entry_ != nullptr) cache_->Served(*entry_, pid_, hit_, bytes);
}

void UnitRef::NoteConsumed() {
  if (entry_ != nullptr) cache_->Consumed(*entry_);
}

bool UnitRef::admitted() const { return entry_ != nullptr && cache_->Admitted(*entry_); }

bool UnitRef::checked() const { return entry_->checked.load(std::memory_order_acquire); }

void UnitRef::MarkChecked() { entry_->checked.store(true, std::memory_order_release); }

void UnitRef::Drop() {
  if (entry_ != nullptr) cache_->Drop(*entry_);
}

// ---- ChunkCache ----

ChunkCache::ChunkCache(const CacheOptions& options)
    : options_(WithReaderWindow(options)),
      policy_(MakePolicy(options)),
      buffers_(std::make_shared<BufferPool>(options.recycle_bytes)) {
  if (!options.trace_path.empty()) trace_ = std::fopen(options.trace_path.c_str(), "a");
  counters_.policy = policy_->name();
  counters_.capacity = options.capacity;
  for (uint32_t i = 0; i < std::max<uint32_t>(1, options.prefetch_threads); ++i)
    workers_.emplace_back([this] { PrefetchWorker(); });
}

ChunkCache::~ChunkCache() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  task_ready_.notify_all();
  for (std::thread& t : workers_) t.join();
  if (trace_ != nullptr) std::fclose(trace_);
}

ProcessStats& ChunkCache::Process(uint32_t pid) {
  auto it = processes_.find(pid);
  if (it != processes_.end()) return it->second;
  if (processes_.size() >= kMaxProcesses) {
    // Forget the process that did least (exited jobs usually did most: keep them).
    auto least = std::min_element(processes_.begin(), processes_.end(), [](const auto& a, const auto& b) {
      return a.second.hits + a.second.misses + a.second.bypassed < b.second.hits + b.second.misses + b.second.bypassed;
    });
    processes_.erase(least);
  }
  ProcessStats& p = processes_[pid];
  p.pid = pid;
  p.disk_bytes.assign(options_.disks, 0);
  return p;
}

uint64_t ChunkCache::ChargeOf(const UnitRequest& r) {
  // Disk reads go O_DIRECT: whole pages around the unit. A source that decodes its units loads
  // exactly the unit (its neighbours' bytes would cost decoding them whole).
  if (!r.source->AlignedLoads()) return r.length;
  return (r.offset % kAlign + r.length + kAlign - 1) / kAlign * kAlign;
}

std::shared_ptr<ChunkCache::Entry> ChunkCache::NewEntry(const UnitRequest& r) {
  auto e = std::make_shared<Entry>();
  e->key_ = r.key;
  e->same_pass_ns = options_.same_pass_ns;
  e->offset = r.offset;
  e->length = r.length;
  e->weight = r.weight;
  e->skew = r.source->AlignedLoads() ? r.offset % kAlign : 0;
  e->charge = ChargeOf(r);
  const uint64_t room = (e->charge + kAlign - 1) / kAlign * kAlign;
  // In the graph's shared memory: a slice an evicted unit of it left, else a new one (the heap
  // when the arena is full).
  if (r.arena != nullptr) {
    e->shared = buffers_->TakeShared(r.arena, room);
    if (e->shared.get() == nullptr) e->shared = SharedBytes::Allocate(r.arena, room);
  }
  if (e->shared.get() == nullptr) {
    e->buffer = buffers_->Take(room);
    if (!e->buffer.ok()) return nullptr;
  }
  e->pool = buffers_;
  staged_.push_back(e);
  staged_bytes_ += e->charge;
  if (staged_bytes_ > staging_mark_) staged_to_tell_.store(staged_bytes_, std::memory_order_relaxed);
  units_[r.key].entry = e;
  return e;
}

void ChunkCache::FinishLoad(const std::shared_ptr<Entry>& e, Result<uint64_t> got) {
  if (got.ok() && *got < e->skew + e->length) {
    got = Error(EIO, "short read: " + std::to_string(*got) + " of " + std::to_string(e->skew + e->length) +
                         " bytes at offset " + std::to_string(e->offset - e->skew));
  }
  if (got.ok()) {
    e->state = Entry::State::kReady;
    e->ready_ns = NowNs();
  } else {
    e->state = Entry::State::kFailed;
    e->error_code = got.error().code();
    e->error_message = got.error().message();
    ++counters_.load_errors;
    auto it = units_.find(e->key_);
    if (it != units_.end() && it->second.entry == e) it->second.entry.reset();
    e->orphan = true;
    auto s = std::find(staged_.begin(), staged_.end(), e);
    if (s != staged_.end()) {
      staged_.erase(s);
      staged_bytes_ -= e->charge;
    }
  }
  loaded_.notify_all();
}

void ChunkCache::CountLoad(const UnitRequest& r, ProcessStats& ps) {
  ps.bytes_loaded += r.length;
  counters_.bytes_loaded += r.length;
  r.source->DiskShare(r.offset, r.length, ps.disk_bytes);
  Record& rec = units_[r.key];
  if (rec.loaded) counters_.bytes_reloaded += r.length;
  rec.loaded = true;
}

ChunkCache::Record& ChunkCache::NoteRead(const UnitRequest& r, uint32_t pid, int64_t now) {
  Record& rec = units_[r.key];
  counters_.lookup_bytes += r.length;
  if (rec.entry != nullptr) counters_.lookup_hit_bytes += r.length;
  if (shadow_.Lookup(r.key, r.length, counters_.capacity)) counters_.lru_hit_bytes += r.length;
  rec.readers.Touch(pid, now, options_.same_pass_ns);
  if (trace_ != nullptr) Trace(r, pid, now);
  policy_->NoteLookup(r.key, r.file_units, pid, now);
  return rec;
}

Result<UnitRef> ChunkCache::PinInMemory(std::unique_lock<std::mutex>& lock, Record& rec, uint32_t pid, int64_t now) {
  std::shared_ptr<Entry> e = rec.entry;
  ++e->pins;
  e->touched_ns = now;
  ++counters_.hits;
  ++Process(pid).hits;
  if (e->admitted) {
    order_.erase(e->order);
    e->order = {Priority(rec, *e, now), ++tick_, e->key_};
    order_.insert(e->order);
    if (options_.on_kept && options_.on_kept(e->key_, e->charge, now - e->admitted_ns)) e->sole_copy = true;
  }
  loaded_.wait(lock, [&] { return e->state != Entry::State::kLoading; });
  if (e->state == Entry::State::kFailed) {
    --e->pins;
    return Error(e->error_code, e->error_message);
  }
  return UnitRef(this, e, pid, true);
}

bool ChunkCache::WaitForReaderRoom(std::unique_lock<std::mutex>& lock, uint64_t charge) {
  if (staged_bytes_ + charge <= options_.staging_limit || reader_loads_ < kMaxReaderLoadsOver) return false;
  ++counters_.reader_room_waits;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(kReaderRoomWaitNs);
  while (staged_bytes_ + charge > options_.staging_limit && reader_loads_ >= kMaxReaderLoadsOver && !stopping_) {
    if (loaded_.wait_until(lock, deadline) == std::cv_status::timeout) {
      ++counters_.reader_room_timeouts;
      break;
    }
    SweepStaged(NowNs(), /*pressed=*/true);
  }
  return true;
}

Result<UnitRef> ChunkCache::Get(const UnitRequest& r, uint32_t pid) {
  std::unique_lock<std::mutex> lock(mu_);
  int64_t now = NowNs();
  Record& rec = NoteRead(r, pid, now);
  if (rec.entry != nullptr) return PinInMemory(lock, rec, pid, now);
  if (WaitForReaderRoom(lock, ChargeOf(r))) {
    // Another reader may have loaded it meanwhile (looked up again: the record may be gone).
    now = NowNs();
    Record& again = units_[r.key];
    if (again.entry != nullptr) return PinInMemory(lock, again, pid, now);
  }
  ProcessStats& ps = Process(pid);
  ++counters_.misses;
  ++ps.misses;
  SweepStaged(now);
  std::shared_ptr<Entry> e = NewEntry(r);
  if (e == nullptr) return Error(ENOMEM, "no memory for a cache unit of " + std::to_string(r.length) + " bytes");
  if (r.source->Generation() != r.generation) {
    // A request of an older file (see UnitSource::Generation): loaded for this reader
    // only, never kept.
    units_[r.key].entry.reset();
    e->orphan = true;
  }
  e->pins = 1;
  e->touched_ns = now;
  CountLoad(r, ps);
  ++reader_loads_;
  lock.unlock();
  TellStaged();
  Result<uint64_t> got = r.source->Load(r.offset - e->skew, e->charge, e->data());
  lock.lock();
  --reader_loads_;
  FinishLoad(e, std::move(got));
  if (e->state == Entry::State::kFailed) {
    --e->pins;
    return Error(e->error_code, e->error_message);
  }
  return UnitRef(this, e, pid, false);
}

UnitRef ChunkCache::Peek(const UnitRequest& r, uint32_t pid) {
  std::unique_lock<std::mutex> lock(mu_);
  const int64_t now = NowNs();
  Record& rec = NoteRead(r, pid, now);  // a read around the cache still says who wants the unit
  if (rec.entry == nullptr) return UnitRef();
  Result<UnitRef> pinned = PinInMemory(lock, rec, pid, now);
  return pinned.ok() ? std::move(*pinned) : UnitRef();
}

bool ChunkCache::Offer(const UnitRequest& r, const char* data, uint32_t pid) {
  std::unique_lock<std::mutex> lock(mu_);
  const int64_t now = NowNs();
  auto it = units_.find(r.key);
  if (it != units_.end() && it->second.entry != nullptr) return false;
  if (r.source->Generation() != r.generation) return false;
  ++counters_.offers;
  CountLoad(r, Process(pid));
  SweepStaged(now);
  // Staged and "loading" while the bytes are copied outside the lock: a reader that asks
  // meanwhile waits for the copy instead of loading the unit again.
  std::shared_ptr<Entry> e = NewEntry(r);
  if (e == nullptr) return false;
  e->pins = 1;
  e->touched_ns = now;
  lock.unlock();
  TellStaged();
  std::memcpy(e->data() + e->skew, data, r.length);
  lock.lock();
  FinishLoad(e, e->skew + e->length);
  e->served = e->length;
  --e->pins;
  Decide(e, NowNs());
  if (e->admitted) ++counters_.offers_admitted;
  return e->admitted;
}

void ChunkCache::Trace(const UnitRequest& r, uint32_t pid, int64_t now) {
  std::fprintf(trace_, "%lld %u %llu %llu %llu\n", static_cast<long long>(now), pid,
               static_cast<unsigned long long>(r.key.file), static_cast<unsigned long long>(r.key.index),
               static_cast<unsigned long long>(r.length));
}

void ChunkCache::NoteBypass(uint32_t pid, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  ++counters_.bypassed;
  counters_.bytes_bypassed += bytes;
  ProcessStats& ps = Process(pid);
  ++ps.bypassed;
  ps.bytes_bypassed += bytes;
}

void ChunkCache::Served(Entry& e, uint32_t pid, bool hit, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now = NowNs();
  e.served += bytes;
  e.touched_ns = now;
  // Only takers of the current visit matter (PartWay, TakenInVisit): forget the others, so
  // a unit that stays resident under many short jobs does not collect one record per process.
  std::erase_if(e.takers, [&](const Entry::Taker& x) {
    return x.pid != pid && now - x.last_ns > std::max(options_.same_pass_ns, kPartWayIdleNs);
  });
  auto t = std::find_if(e.takers.begin(), e.takers.end(), [&](const Entry::Taker& x) { return x.pid == pid; });
  if (t == e.takers.end()) {
    e.takers.push_back({pid, bytes, now});
  } else {
    t->bytes = now - t->last_ns > options_.same_pass_ns ? bytes : t->bytes + bytes;  // a new visit starts over
    t->last_ns = now;
  }
  counters_.bytes_served += bytes;
  Process(pid).bytes_served += bytes;
  if (hit) {
    counters_.bytes_from_cache += bytes;
    Process(pid).bytes_from_cache += bytes;
  }
}

void ChunkCache::Consumed(Entry& e) {
  std::lock_guard<std::mutex> lock(mu_);
  e.consumed = true;
}

bool ChunkCache::Admitted(const Entry& e) const {
  std::lock_guard<std::mutex> lock(mu_);
  return e.admitted;
}

void ChunkCache::LeaveStaging(Entry& e) {
  std::lock_guard<std::mutex> lock(mu_);
  e.consumed = true;
  if (e.admitted || e.state != Entry::State::kReady) return;
  auto it = std::find_if(staged_.begin(), staged_.end(), [&](const auto& p) { return p.get() == &e; });
  if (it == staged_.end()) return;
  std::shared_ptr<Entry> keep = *it;
  Decide(keep, NowNs());
  if (!e.admitted) HoldByPins(e);
}

void ChunkCache::Drop(Entry& e) {
  std::lock_guard<std::mutex> lock(mu_);
  e.consumed = true;
  auto it = units_.find(e.key_);
  if (it == units_.end() || it->second.entry.get() != &e || e.state != Entry::State::kReady) return;
  DropLocked(it->second.entry);
}

bool ChunkCache::DropAdmitted(const UnitKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = units_.find(key);
  if (it == units_.end() || it->second.entry == nullptr || !it->second.entry->admitted) return false;
  DropLocked(it->second.entry);
  return true;
}

void ChunkCache::DropLocked(std::shared_ptr<Entry> keep) {
  Entry& e = *keep;
  auto it = units_.find(e.key_);
  if (e.admitted) {
    Evict(keep);
  } else {
    auto s = std::find(staged_.begin(), staged_.end(), keep);
    if (s != staged_.end()) {
      staged_.erase(s);
      staged_bytes_ -= e.charge;
    }
    it->second.entry.reset();
    e.orphan = true;
  }
  ++counters_.dropped;
  HoldByPins(e);
}

void ChunkCache::HoldByPins(Entry& e) {
  if (e.pins == 0 || e.held) return;
  e.held = true;
  held_bytes_ += e.charge;
  ++held_units_;
}

void ChunkCache::Unpin(Entry& e) {
  std::lock_guard<std::mutex> lock(mu_);
  --e.pins;
  if (e.pins == 0 && e.held) {
    e.held = false;
    held_bytes_ -= e.charge;
    --held_units_;
  }
  // The last reader just finished the unit: decide about it now rather than at the next sweep.
  if (e.pins == 0 && !e.admitted && e.state == Entry::State::kReady && (e.served >= e.length || e.consumed)) {
    auto it = std::find_if(staged_.begin(), staged_.end(), [&](const auto& p) { return p.get() == &e; });
    if (it != staged_.end()) {
      std::shared_ptr<Entry> keep = *it;  // Decide erases it from staged_
      Decide(keep, NowNs());
    }
  }
}

double ChunkCache::Priority(const Record& rec, const Entry& e, int64_t now) const {
  return policy_->Rank(rec.readers.Count(now, options_.reader_window_ns), e.weight);
}

double ChunkCache::PriorityBeforeThisVisit(const Record& rec, const Entry& e, int64_t now) const {
  return policy_->Rank(std::max(0, rec.readers.Count(now, options_.reader_window_ns) - 1), e.weight);
}

void ChunkCache::Rescore(int64_t now) {
  if (now - last_rescore_ns_ < options_.reader_window_ns / 8) return;
  last_rescore_ns_ = now;
  // Readers age out of the window: recompute every admitted unit's priority (keeping its
  // recency), and forget the history of units nobody read for a whole window.
  std::set<OrderKey> fresh;
  for (auto it = units_.begin(); it != units_.end();) {
    Record& rec = it->second;
    if (rec.entry != nullptr && rec.entry->admitted) {
      Entry& e = *rec.entry;
      e.order = {Priority(rec, e, now), std::get<1>(e.order), e.key_};
      fresh.insert(e.order);
    }
    if (rec.entry == nullptr && now - rec.readers.last_ns() > options_.reader_window_ns) {
      it = units_.erase(it);
    } else {
      ++it;
    }
  }
  order_.swap(fresh);
  policy_->Age(now);
}

void ChunkCache::Evict(const std::shared_ptr<Entry>& v) {
  order_.erase(v->order);
  AddUsed(v->key_.file, -static_cast<int64_t>(v->charge));
  v->admitted = false;
  v->orphan = true;
  if (options_.on_left) options_.on_left(v->key_);
  auto it = units_.find(v->key_);
  if (it != units_.end() && it->second.entry == v) it->second.entry.reset();
  ++counters_.evictions;
}

void ChunkCache::CountCapacityEviction(const Entry& v) {
  ++counters_.capacity_evictions;
  counters_.capacity_evicted_bytes += v.charge;
}

void ChunkCache::Decide(const std::shared_ptr<Entry>& e, int64_t now) {
  auto s = std::find(staged_.begin(), staged_.end(), e);
  if (s == staged_.end()) return;
  staged_.erase(s);
  staged_bytes_ -= e->charge;
  if (e->prefetched && e->served == 0) counters_.prefetched_unused_bytes += e->length;
  if (e->orphan) return;
  auto it = units_.find(e->key_);
  if (it == units_.end() || it->second.entry != e) return;
  Record& rec = it->second;
  Rescore(now);
  const double prio = Priority(rec, *e, now);  // its place in the order once admitted
  // What it is weighed with against the residents. Without streams the newcomer's visit of this
  // pass is left out (CacheOptions::predict_streams): a resident's rank was taken at its last
  // read, which for a unit this pass has not reached was in the pass before.
  const double weighed = options_.predict_streams ? prio : PriorityBeforeThisVisit(rec, *e, now);
  auto refuse = [&] {
    rec.entry.reset();
    e->orphan = true;
    ++counters_.rejections;
  };
  // Units out of the cache that pins keep (held) and the freed buffers kept for the next loads
  // are resident too: admitted units get what they leave of the capacity, so that the memory the
  // cache answers for stays within it (the daemon's RSS overshot its budget by the LP-held units
  // and idle buffers otherwise: docs/memory-as-cache.md).
  // With CacheOptions::idle_reserve_bytes, that much is left to idle buffers even when fewer
  // are idle now: the next loads reuse them instead of mapping fresh pages.
  const uint64_t outside =
      std::max(OutsideLocked(), held_bytes_ + std::min(options_.idle_reserve_bytes, options_.recycle_bytes));
  const uint64_t room = counters_.capacity > outside ? counters_.capacity - outside : 0;
  if (e->charge > room) return refuse();
  std::vector<std::shared_ptr<Entry>> victims;
  uint64_t freed = 0;
  if (used_ + e->charge > room) {
    // The policy picks among the unpinned residents, given in eviction order.
    std::vector<EvictionCandidate> residents;
    std::vector<std::shared_ptr<Entry>> entries;
    for (const OrderKey& k : order_) {
      const Record& resident = units_.at(std::get<2>(k));
      const std::shared_ptr<Entry>& v = resident.entry;
      if (v->pins > 0 || v->sole_copy) continue;  // sole copies leave only for capacity (on_kept)
      residents.push_back({v.get(), std::get<0>(k), v->charge, resident.readers.last_ns()});
      entries.push_back(v);
    }
    std::vector<size_t> chosen;
    // Its previous visit breaks ties only when its weight leaves this visit out: with streams, a
    // tie means the resident was read more often before.
    const int64_t previous_visit = options_.predict_streams ? 0 : rec.readers.previous_ns();
    policy_->ChooseVictims({e.get(), weighed, e->charge, previous_visit}, residents, used_ + e->charge - room, now,
                           &chosen);
    for (size_t i : chosen) {
      victims.push_back(entries[i]);
      freed += entries[i]->charge;
    }
  }
  if (used_ + e->charge - freed > room) return refuse();
  for (const auto& v : victims) Evict(v);
  e->admitted = true;
  AddUsed(e->key_.file, static_cast<int64_t>(e->charge));
  e->order = {prio, ++tick_, e->key_};
  order_.insert(e->order);
  e->admitted_ns = now;
  ++counters_.admissions;
  if (options_.on_kept && options_.on_kept(e->key_, e->charge, 0)) e->sole_copy = true;
}

void ChunkCache::SetCapacity(uint64_t capacity) {
  std::lock_guard<std::mutex> lock(mu_);
  counters_.capacity = capacity;
  // Down to the new capacity at once, the lowest priority first. A pinned unit leaves the
  // cache too, so the bound holds now: its pins alone keep it (held, like a refused unit an
  // LP is made of) until the last unpin.
  while (used_ > counters_.capacity && !order_.empty()) {
    const std::shared_ptr<Entry> v = units_.at(std::get<2>(*order_.begin())).entry;
    Evict(v);
    CountCapacityEviction(*v);
    HoldByPins(*v);
  }
  // What pins hold and the idle buffers are resident too (Decide gives admitted units only what
  // they leave): without this a capacity that shrank under them left the cache's memory above it
  // until the next admission (the daemon's RSS overshot its budget early in a run, when the
  // frames came in and the LPs held units: docs/memory-as-cache.md). Idle buffers go first (they
  // cost a fresh mapping later, not a decode); units, the lowest priority first, only when the
  // admitted and held ones alone are over — with the idle memory kept for them outside
  // (CacheOptions::outside_idle_bytes), which the cache cannot give back itself: the slices of
  // the units it evicts for it go there, and what that memory keeps beyond its own bound is
  // punched.
  // Pinned ones stay: evicting them would only move their bytes to `held`. (An evicted unit's
  // buffer becomes idle, so the idle buffers are trimmed after the units.)
  if (used_ + OutsideLocked() <= counters_.capacity) return;
  const uint64_t kept_outside = KeptOutside();
  for (auto it = order_.begin(); it != order_.end() && used_ + held_bytes_ + kept_outside > counters_.capacity;) {
    const std::shared_ptr<Entry> v = units_.at(std::get<2>(*it)).entry;
    ++it;  // Evict erases v's key from order_
    if (v->pins == 0) {
      Evict(v);
      CountCapacityEviction(*v);
    }
  }
  const uint64_t resident = used_ + held_bytes_ + kept_outside;
  buffers_->TrimTo(counters_.capacity > resident ? counters_.capacity - resident : 0);
}

void ChunkCache::SetStagingMark(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  staging_mark_ = bytes;
  if (staged_bytes_ <= bytes) staged_to_tell_.store(0, std::memory_order_relaxed);
}

uint64_t ChunkCache::staged() const {
  std::lock_guard<std::mutex> lock(mu_);
  return staged_bytes_;
}

void ChunkCache::TellStaged() {
  const uint64_t staged = staged_to_tell_.exchange(0, std::memory_order_relaxed);
  if (staged != 0 && options_.on_staged) options_.on_staged(staged);
}

uint64_t ChunkCache::held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_bytes_;
}

uint64_t ChunkCache::OutsideLocked() const { return held_bytes_ + buffers_->stats().idle_bytes + KeptOutside(); }

uint64_t ChunkCache::KeptOutside() const { return options_.outside_idle_bytes ? options_.outside_idle_bytes() : 0; }

uint64_t ChunkCache::capacity() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_.capacity;
}

uint64_t ChunkCache::used() const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_;
}

uint64_t ChunkCache::used(uint64_t file) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = used_by_file_.find(file);
  return it == used_by_file_.end() ? 0 : it->second;
}

void ChunkCache::AddUsed(uint64_t file, int64_t delta) {
  used_ = static_cast<uint64_t>(static_cast<int64_t>(used_) + delta);
  uint64_t& bytes = used_by_file_[file];
  bytes = static_cast<uint64_t>(static_cast<int64_t>(bytes) + delta);
  if (bytes == 0) used_by_file_.erase(file);
}

void ChunkCache::Invalidate(uint64_t file) {
  std::lock_guard<std::mutex> lock(mu_);
  shadow_.Forget(file);
  for (auto it = units_.begin(); it != units_.end();) {
    if (it->first.file != file) {
      ++it;
      continue;
    }
    if (std::shared_ptr<Entry> e = it->second.entry) {
      if (e->admitted) {
        order_.erase(e->order);
        AddUsed(e->key_.file, -static_cast<int64_t>(e->charge));
        e->admitted = false;
        if (options_.on_left) options_.on_left(e->key_);
      }
      e->orphan = true;  // a staged one is dropped at the next sweep
    }
    it = units_.erase(it);
  }
}

bool ChunkCache::Contains(const UnitKey& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = units_.find(key);
  return it != units_.end() && it->second.entry != nullptr;
}

CacheMemory ChunkCache::MemoryLocked(const BufferPool::Stats& buffers) const {
  CacheMemory m;
  m.used = used_;
  m.staged = staged_bytes_;
  m.buffers_idle_bytes = buffers.idle_bytes;
  m.held = held_bytes_;
  return m;
}

CacheMemory ChunkCache::Memory() const {
  std::lock_guard<std::mutex> lock(mu_);
  return MemoryLocked(buffers_->stats());
}

CacheStats ChunkCache::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  CacheStats s = counters_;
  const BufferPool::Stats b = buffers_->stats();
  static_cast<CacheMemory&>(s) = MemoryLocked(b);
  s.units = order_.size();
  s.staged_units = staged_.size();
  s.buffers_reused = b.reused;
  s.buffers_created = b.created;
  s.held_units = held_units_;
  for (const auto& [pid, p] : processes_) s.processes.push_back(p);
  std::sort(s.processes.begin(), s.processes.end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
  return s;
}

}  // namespace graphfs::cache
