#include "cache/chunk_cache.h"
#include "cache/cache_entry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <random>
#include <thread>

namespace graphfs::cache {
namespace {

constexpr uint64_t kUnit = 64 << 10;

// A file in memory whose byte at offset o is a function of o and a version; counts loads,
// can hold loads at a gate and fail them.
class FakeSource : public UnitSource {
 public:
  explicit FakeSource(uint64_t size, uint32_t disks = 2) : size_(size), disks_(disks) {}
  static char ByteAt(uint64_t o, int version) { return static_cast<char>((o * 131 + o / 4099 + version * 7) & 0xff); }

  Result<uint64_t> Load(uint64_t offset, uint64_t length, char* buf) override {
    if (aligned_) {
      EXPECT_EQ(offset % 4096, 0u);
    }
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buf) % 4096, 0u);
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++loads_;
      last_load_ = {offset, length};
      ++waiting_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_; });
      --waiting_;
      if (fail_ != 0) return Error(fail_, "injected failure");
    }
    const uint64_t n = offset >= size_ ? 0 : std::min(length, size_ - offset);
    for (uint64_t i = 0; i < n; ++i) buf[i] = ByteAt(offset + i, version_.load());
    return n;
  }
  void DiskShare(uint64_t offset, uint64_t length, std::vector<uint64_t>& per_disk) const override {
    per_disk[(offset / kUnit) % disks_] += length;  // tests use unit-aligned requests
  }

  int loads() {
    std::lock_guard<std::mutex> lock(mu_);
    return loads_;
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = false;
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void WaitForWaiters(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return waiting_ >= n; });
  }
  void Fail(int err) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_ = err;
  }
  void SetVersion(int v) { version_ = v; }
  uint64_t size() const { return size_; }
  uint64_t Generation() const override { return generation_.load(); }
  void BumpGeneration() { ++generation_; }
  bool AlignedLoads() const override { return aligned_; }
  void SetAligned(bool aligned) { aligned_ = aligned; }
  std::pair<uint64_t, uint64_t> last_load() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_load_;
  }

 private:
  bool aligned_ = true;
  std::pair<uint64_t, uint64_t> last_load_{0, 0};
  const uint64_t size_;
  const uint32_t disks_;
  std::mutex mu_;
  std::condition_variable cv_;
  int loads_ = 0, waiting_ = 0, fail_ = 0;
  bool open_ = true;
  std::atomic<int> version_{0};
  std::atomic<uint64_t> generation_{0};
};

UnitRequest Unit(const std::shared_ptr<FakeSource>& src, uint64_t index, double weight = 1.0, uint64_t file = 1) {
  UnitRequest r;
  r.key = {file, index};
  r.offset = index * kUnit;
  r.length = std::min(kUnit, src->size() - r.offset);
  r.weight = weight;
  r.source = src;
  return r;
}

CacheOptions Options(uint64_t units, const std::string& policy) {
  CacheOptions o;
  o.capacity = units * kUnit;
  o.policy = policy;
  o.staging_limit = 1ull << 30;        // read-ahead bounded by nothing here unless a test says
  o.reader_window_ns = 600'000'000'000;  // no visit leaves the window within a test
  o.prefetch_threads = 2;
  o.disks = 2;
  return o;
}

// A unit of a file whose unit count the cache is told (the mount tells it from the layout),
// so that streams over the file wrap around at its end.
UnitRequest CountedUnit(const std::shared_ptr<FakeSource>& src, uint64_t index) {
  UnitRequest r = Unit(src, index);
  r.file_units = src->size() / kUnit;
  return r;
}

// Priority options under which only the processes `live` still exist.
CacheOptions LiveOptions(uint64_t units, std::vector<uint32_t> live) {
  CacheOptions o = Options(units, "priority");
  o.process_alive = [live](uint32_t pid) { return std::find(live.begin(), live.end(), pid) != live.end(); };
  return o;
}

// Readers that have exited: no live stream predicts a next read, so the static rank
// (visits x weight) alone orders the units.
CacheOptions StaticRankOptions(uint64_t units) { return LiveOptions(units, {}); }

bool Matches(const UnitRef& u, int version = 0) {
  for (uint64_t i = 0; i < u.length(); ++i)
    if (u.data()[i] != FakeSource::ByteAt(u.offset() + i, version)) return false;
  return true;
}

// Reads a unit the way a sequential reader does: takes it whole and lets go.
bool ReadWhole(ChunkCache& c, const UnitRequest& r, uint32_t pid, bool* hit = nullptr) {
  auto u = c.Get(r, pid);
  EXPECT_TRUE(u.ok()) << (u.ok() ? "" : u.error().message());
  if (!u.ok()) return false;
  if (hit != nullptr) *hit = u->hit();
  u->NoteServed(u->length());
  return Matches(*u);
}

bool Resident(ChunkCache& c, const UnitRequest& r) { return c.Contains(r.key); }

TEST(ChunkCache, MissThenHitWithTheRightBytes) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  ChunkCache c(Options(4, "priority"));
  bool hit = true;
  EXPECT_TRUE(ReadWhole(c, Unit(src, 3), 7, &hit));
  EXPECT_FALSE(hit);
  EXPECT_TRUE(ReadWhole(c, Unit(src, 3), 8, &hit));
  EXPECT_TRUE(hit);
  EXPECT_EQ(src->loads(), 1);
  CacheStats s = c.Stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.units, 1u);
  EXPECT_EQ(s.used, kUnit);
}

// A holder that keeps a better copy drops the unit: gone from the cache at once (admitted or
// staged), its bytes valid while pinned, loaded again by the next reader; the lookups count
// against a shadow LRU, and a unit loaded twice is counted as reloaded.
TEST(ChunkCache, ADroppedUnitLeavesAtOnceAndIsLoadedAgainWhenAskedFor) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  ChunkCache c(Options(4, "priority"));
  EXPECT_TRUE(ReadWhole(c, Unit(src, 1), 7));  // admitted
  ASSERT_TRUE(Resident(c, Unit(src, 1)));
  {
    auto u = c.Get(Unit(src, 1), 7);
    ASSERT_TRUE(u.ok());
    u->Drop();
    EXPECT_FALSE(Resident(c, Unit(src, 1)));
    EXPECT_TRUE(Matches(*u)) << "a pinned unit keeps its bytes";
    EXPECT_EQ(c.Stats().held, kUnit) << "kept by its pin alone";
  }
  EXPECT_EQ(c.Stats().held, 0u);
  {
    auto u = c.Get(Unit(src, 2), 7);  // staged, then dropped before it is decided on
    ASSERT_TRUE(u.ok());
    u->Drop();
    EXPECT_EQ(c.Stats().staged, 0u);
  }
  EXPECT_FALSE(Resident(c, Unit(src, 2)));
  EXPECT_EQ(c.Stats().used, 0u);
  bool hit = true;
  EXPECT_TRUE(ReadWhole(c, Unit(src, 1), 7, &hit));
  EXPECT_FALSE(hit);
  const CacheStats s = c.Stats();
  EXPECT_EQ(s.dropped, 2u);
  EXPECT_EQ(src->loads(), 3);
  EXPECT_EQ(s.bytes_reloaded, kUnit) << "unit 1, loaded twice";
  EXPECT_EQ(s.lookup_bytes, 4 * kUnit);
  EXPECT_EQ(s.lookup_hit_bytes, kUnit) << "the second lookup of unit 1";
  EXPECT_EQ(s.lru_hit_bytes, 2 * kUnit) << "an LRU of 4 units would have had unit 1 twice more";
}

TEST(ChunkCache, UnalignedUnitsAreLoadedFromAnAlignedOffset) {
  auto src = std::make_shared<FakeSource>(1 << 20);
  ChunkCache c(Options(4, "priority"));
  UnitRequest r;
  r.key = {1, 0};
  r.offset = 12 * 1001;  // edge-aligned chunk, not page-aligned
  r.length = 12 * 3000;
  r.source = src;
  auto u = c.Get(r, 1);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->offset(), r.offset);
  EXPECT_EQ(u->length(), r.length);
  EXPECT_TRUE(Matches(*u));
}

// A source that decodes its units (a compressed file) is asked for exactly the unit's bytes,
// not the pages around it (which would cost decoding its neighbours).
TEST(ChunkCache, UnalignedLoadsAskForExactlyTheUnit) {
  auto src = std::make_shared<FakeSource>(1 << 20);
  src->SetAligned(false);
  ChunkCache c(Options(4, "priority"));
  UnitRequest r;
  r.key = {1, 0};
  r.offset = 12 * 1001;
  r.length = 12 * 3000;
  r.source = src;
  auto u = c.Get(r, 1);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(src->last_load(), std::make_pair(r.offset, r.length));
  EXPECT_EQ(u->offset(), r.offset);
  EXPECT_EQ(u->length(), r.length);
  EXPECT_TRUE(Matches(*u));
}

// A request planned before the file changed (its generation is older than the source's)
// describes the old file: a prefetch of it is skipped, and a read of it is served but not
// kept, so that no invalidation can miss a unit of the old size or bytes.
TEST(ChunkCache, RequestsOfAnOlderGenerationAreNeverKept) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  ChunkCache c(Options(4, "priority"));
  const UnitRequest before = Unit(src, 2);  // generation 0
  src->BumpGeneration();
  c.Prefetch(before, 7);
  c.Settle();
  EXPECT_FALSE(Resident(c, before));
  EXPECT_EQ(c.Stats().prefetches_skipped, 1u);
  EXPECT_TRUE(ReadWhole(c, before, 7));
  c.Settle();
  EXPECT_FALSE(Resident(c, before)) << "a unit loaded for an old request was kept";
  UnitRequest now = Unit(src, 2);
  now.generation = src->Generation();
  bool hit = true;
  EXPECT_TRUE(ReadWhole(c, now, 7, &hit));
  EXPECT_FALSE(hit);
  EXPECT_TRUE(Resident(c, now));
  EXPECT_TRUE(ReadWhole(c, before, 8, &hit)) << "an old request may use the current unit";
  EXPECT_TRUE(hit);
}

// The LP loader reads whole units around the cache and offers them: the cache keeps a copy
// as if it had loaded the unit itself (a later read is a hit, no load), refuses what is in
// memory already or describes an older file, and its policy still decides admission.
TEST(ChunkCache, OfferedUnitsAreKeptLikeLoadedOnes) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  ChunkCache c(Options(2, "lru"));
  auto bytes_of = [&](const UnitRequest& r) {
    std::string b(r.length, '\0');
    for (uint64_t i = 0; i < r.length; ++i) b[i] = FakeSource::ByteAt(r.offset + i, 0);
    return b;
  };
  const UnitRequest three = Unit(src, 3);
  EXPECT_TRUE(c.Offer(three, bytes_of(three).data(), 9));
  bool hit = false;
  EXPECT_TRUE(ReadWhole(c, three, 7, &hit));
  EXPECT_TRUE(hit);
  EXPECT_EQ(src->loads(), 0) << "an offered unit is not loaded again";
  EXPECT_FALSE(c.Offer(three, bytes_of(three).data(), 9)) << "in memory already";

  const UnitRequest four = Unit(src, 4);
  src->BumpGeneration();  // `four` now describes an older file
  EXPECT_FALSE(c.Offer(four, bytes_of(four).data(), 9));
  EXPECT_FALSE(Resident(c, four));

  // Offers fill the cache like loads: the least recently used unit makes room under lru.
  UnitRequest five = Unit(src, 5), six = Unit(src, 6);
  five.generation = six.generation = src->Generation();
  EXPECT_TRUE(c.Offer(five, bytes_of(five).data(), 9));
  EXPECT_TRUE(c.Offer(six, bytes_of(six).data(), 9));
  EXPECT_FALSE(Resident(c, three));
  EXPECT_TRUE(Resident(c, five) && Resident(c, six));
  const CacheStats st = c.Stats();
  EXPECT_EQ(st.offers, 3u);
  EXPECT_EQ(st.offers_admitted, 3u);
  EXPECT_EQ(st.bytes_loaded, 3 * kUnit);
  EXPECT_EQ(st.used, 2 * kUnit);
}

TEST(ChunkCache, ConcurrentMissesShareOneLoad) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  ChunkCache c(Options(4, "priority"));
  src->Close();
  std::vector<std::thread> readers;
  std::atomic<int> good{0};
  for (uint32_t pid = 1; pid <= 8; ++pid)
    readers.emplace_back([&, pid] { good += ReadWhole(c, Unit(src, 5), pid) ? 1 : 0; });
  src->WaitForWaiters(1);
  // Give the other readers time to arrive and queue behind the one load.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  src->Open();
  for (auto& t : readers) t.join();
  EXPECT_EQ(good.load(), 8);
  EXPECT_EQ(src->loads(), 1);
  CacheStats s = c.Stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, 7u);
  EXPECT_EQ(s.processes.size(), 8u);
}

// Whoever the cache tells of the units it keeps (CacheOptions::on_kept, on_left) hears of each
// admission (kept for 0 ns), of each read of an admitted unit (kept for longer), and of each
// admitted unit that leaves — evicted, dropped by key, invalidated; DropAdmitted drops only
// what the cache keeps.
TEST(ChunkCache, ItTellsOfTheUnitsItKeepsAndOfThoseThatLeave) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  struct Kept {
    uint64_t index, bytes;
    int64_t for_ns;
  };
  std::vector<Kept> kept;
  std::vector<uint64_t> left;
  CacheOptions o = Options(2, "lru");
  o.on_kept = [&](const UnitKey& k, uint64_t bytes, int64_t for_ns) {
    kept.push_back({k.index, bytes, for_ns});
    return false;
  };
  o.on_left = [&](const UnitKey& k) { left.push_back(k.index); };
  ChunkCache c(o);
  ASSERT_TRUE(ReadWhole(c, Unit(src, 0), 1));
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].index, 0u);
  EXPECT_EQ(kept[0].bytes, kUnit);
  EXPECT_EQ(kept[0].for_ns, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 0), 1));  // a hit of the admitted unit
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_GE(kept[1].for_ns, 5'000'000);
  ASSERT_TRUE(ReadWhole(c, Unit(src, 1), 1));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 2), 1));  // evicts 0, the least recent
  EXPECT_EQ(left, (std::vector<uint64_t>{0}));
  EXPECT_FALSE(c.DropAdmitted(Unit(src, 0).key)) << "not in the cache";
  EXPECT_TRUE(c.DropAdmitted(Unit(src, 1).key));
  EXPECT_FALSE(Resident(c, Unit(src, 1)));
  EXPECT_EQ(c.Stats().dropped, 1u);
  c.Invalidate(Unit(src, 2).key.file);
  EXPECT_EQ(left, (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(c.used(), 0u);
}

// A unit its owner calls the only copy of its bytes (on_kept returned true) is never evicted to
// admit another: the newcomer is refused instead (and keeps its own copy, outside). Only a
// smaller capacity makes it leave.
TEST(ChunkCache, ASoleCopyLeavesForCapacityOnlyNeverForANewcomer) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  CacheOptions o = Options(2, "lru");
  o.on_kept = [](const UnitKey& k, uint64_t, int64_t) { return k.index == 0; };
  std::vector<uint64_t> left;
  o.on_left = [&](const UnitKey& k) { left.push_back(k.index); };
  ChunkCache c(o);
  ASSERT_TRUE(ReadWhole(c, Unit(src, 0), 1));  // the sole copy, and the least recent from here on
  ASSERT_TRUE(ReadWhole(c, Unit(src, 1), 1));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 2), 1));  // LRU would evict 0: 1 goes instead
  EXPECT_TRUE(Resident(c, Unit(src, 0)));
  EXPECT_FALSE(Resident(c, Unit(src, 1)));
  EXPECT_TRUE(Resident(c, Unit(src, 2)));
  EXPECT_EQ(left, (std::vector<uint64_t>{1}));
  c.SetCapacity(kUnit);  // the capacity shrinks: the order decides, sole copy or not
  EXPECT_FALSE(Resident(c, Unit(src, 0)));
  EXPECT_TRUE(Resident(c, Unit(src, 2)));
  EXPECT_EQ(left, (std::vector<uint64_t>{1, 0}));
  // With only sole copies resident and no room, a newcomer is refused and served all the same.
  ChunkCache d(o);
  d.SetCapacity(kUnit);
  ASSERT_TRUE(ReadWhole(d, Unit(src, 0), 1));
  ASSERT_TRUE(ReadWhole(d, Unit(src, 3), 1));
  EXPECT_TRUE(Resident(d, Unit(src, 0)));
  EXPECT_FALSE(Resident(d, Unit(src, 3)));
  EXPECT_EQ(d.Stats().rejections, 1u);
}

TEST(ChunkCache, LruEvictsTheLeastRecentlyUsed) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  ChunkCache c(Options(3, "lru"));
  for (uint64_t i : {0, 1, 2}) ASSERT_TRUE(ReadWhole(c, Unit(src, i), 1));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 0), 1));  // 0 is now the most recent
  ASSERT_TRUE(ReadWhole(c, Unit(src, 3), 1));  // evicts 1
  EXPECT_TRUE(Resident(c, Unit(src, 0)));
  EXPECT_FALSE(Resident(c, Unit(src, 1)));
  EXPECT_TRUE(Resident(c, Unit(src, 2)));
  EXPECT_TRUE(Resident(c, Unit(src, 3)));
  EXPECT_EQ(c.Stats().evictions, 1u);
}

// Evicted units' buffers serve the next loads (no fresh mapping per unit), and a recycled
// buffer holds the new unit's bytes, not its last unit's.
TEST(ChunkCache, EvictedUnitsBuffersAreReusedWithTheirNewBytes) {
  auto src = std::make_shared<FakeSource>(40 * kUnit);
  ChunkCache c(Options(3, "lru"));
  for (int pass = 0; pass < 2; ++pass)
    for (uint64_t i = 0; i < 40; ++i) ASSERT_TRUE(ReadWhole(c, Unit(src, i), 1)) << "unit " << i;
  const CacheStats s = c.Stats();
  EXPECT_EQ(s.misses, 80u);
  EXPECT_LE(s.buffers_created, 6u);  // the 3 admitted units and a few in flight
  EXPECT_EQ(s.buffers_created + s.buffers_reused, 80u);
}

// Without room to keep freed buffers every load maps a new one.
TEST(ChunkCache, NoRecyclingWithoutRoomForIdleBuffers) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  CacheOptions o = Options(2, "lru");
  o.recycle_bytes = 0;
  ChunkCache c(o);
  for (uint64_t i = 0; i < 10; ++i) ASSERT_TRUE(ReadWhole(c, Unit(src, i), 1));
  EXPECT_EQ(c.Stats().buffers_reused, 0u);
  EXPECT_EQ(c.Stats().buffers_created, 10u);
}

TEST(ChunkCache, PriorityKeepsWhatMoreProcessesReadAndRefusesAScan) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  CacheOptions o = Options(2, "priority");
  o.process_alive = [](uint32_t pid) { return pid == 3; };  // 1 and 2 read, then exited
  ChunkCache c(o);
  for (uint32_t pid : {1, 2}) {
    ASSERT_TRUE(ReadWhole(c, Unit(src, 0), pid));
    ASSERT_TRUE(ReadWhole(c, Unit(src, 1), pid));
  }
  // A third process scans units 2..5 once: each is read by one process, so none displaces
  // the two units two processes share.
  for (uint64_t i = 2; i < 6; ++i) ASSERT_TRUE(ReadWhole(c, Unit(src, i), 3));
  EXPECT_TRUE(Resident(c, Unit(src, 0)));
  EXPECT_TRUE(Resident(c, Unit(src, 1)));
  EXPECT_FALSE(Resident(c, Unit(src, 4)));
  CacheStats s = c.Stats();
  EXPECT_EQ(s.evictions, 0u);
  EXPECT_EQ(s.rejections, 4u);

  // The same trace under LRU flushes the shared units.
  ChunkCache lru(Options(2, "lru"));
  for (uint32_t pid : {1, 2}) {
    ASSERT_TRUE(ReadWhole(lru, Unit(src, 0), pid));
    ASSERT_TRUE(ReadWhole(lru, Unit(src, 1), pid));
  }
  for (uint64_t i = 2; i < 6; ++i) ASSERT_TRUE(ReadWhole(lru, Unit(src, i), 3));
  EXPECT_FALSE(Resident(lru, Unit(src, 0)));
  EXPECT_FALSE(Resident(lru, Unit(src, 1)));
  EXPECT_TRUE(Resident(lru, Unit(src, 5)));
}

TEST(ChunkCache, AUnitMoreProcessesWantEvictsOneFewerWant) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  ChunkCache c(Options(1, "priority"));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 0), 1));
  EXPECT_TRUE(Resident(c, Unit(src, 0)));
  // Unit 1: the read by process 2 is refused (1 reader does not beat 1), process 3's gets in.
  ASSERT_TRUE(ReadWhole(c, Unit(src, 1), 2));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 1), 3));
  EXPECT_TRUE(Resident(c, Unit(src, 1)));
  EXPECT_FALSE(Resident(c, Unit(src, 0)));
}

TEST(ChunkCache, AUnitReadAtEveryPassOutranksOneReadOnce) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  CacheOptions o = StaticRankOptions(1);
  o.same_pass_ns = 100'000'000;  // 100 ms between reads makes a new visit
  ChunkCache c(o);
  ASSERT_TRUE(ReadWhole(c, Unit(src, 0), 1));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 0), 1));  // same pass: still one visit
  ASSERT_TRUE(ReadWhole(c, Unit(src, 1), 1));
  EXPECT_TRUE(Resident(c, Unit(src, 0)));       // 1 visit does not beat 1
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 1), 1));   // next pass of the same process: 2 visits
  EXPECT_TRUE(Resident(c, Unit(src, 1)));
  EXPECT_FALSE(Resident(c, Unit(src, 0)));
  CacheStats s = c.Stats();
  EXPECT_EQ(s.processes.size(), 1u);
  EXPECT_EQ(s.bytes_served, 4 * kUnit);
}

// A cache one process reads for every job (the volume's frame tier, read by the daemon) predicts
// no streams: the static rank decides, and a newcomer's rank leaves out the visit that brought it
// in. A cyclic scan larger than the cache then keeps the part it holds, wherever in the pass that
// part lies. Counting the newcomer's visit, a newcomer of pass p (p visits) beat the residents
// pass p had not reached yet (p - 1 visits, taken at their last read): the pass evicted what it
// was about to read.
TEST(ChunkCache, WithoutStreamsACyclicScanKeepsThePartItHolds) {
  constexpr uint64_t kUnits = 16, kCached = 4;
  auto src = std::make_shared<FakeSource>(kUnits * kUnit);
  CacheOptions o = Options(kCached, "priority");
  o.predict_streams = false;
  o.same_pass_ns = 1'000'000;  // 1 ms apart: a new visit
  o.capacity = 0;
  ChunkCache c(o);
  bool hit = false;
  // The first pass finds room only at its end (the budget gave the cache more): the last units
  // are the part kept.
  for (uint64_t i = 0; i < kUnits; ++i) {
    if (i == kUnits - kCached) c.SetCapacity(kCached * kUnit);
    ASSERT_TRUE(ReadWhole(c, CountedUnit(src, i), 1, &hit));
  }
  for (uint64_t i = kUnits - kCached; i < kUnits; ++i) ASSERT_TRUE(Resident(c, CountedUnit(src, i))) << i;
  int hits = 0;
  for (int pass = 1; pass < 6; ++pass) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    for (uint64_t i = 0; i < kUnits; ++i) {
      ASSERT_TRUE(ReadWhole(c, CountedUnit(src, i), 1, &hit));
      hits += hit ? 1 : 0;
    }
  }
  EXPECT_EQ(hits, static_cast<int>(5 * kCached)) << "every later pass finds the part kept";
  const CacheStats s = c.Stats();
  EXPECT_EQ(s.admissions, kCached);
  EXPECT_EQ(s.evictions, 0u) << "no newcomer evicts a unit its pass is about to read";
}

// The frame tier's case (docs/memory-as-cache.md, 21st part): a job reads its row once (the
// degree pass), then its column at every iteration, in a tier with room for one of them. The
// column takes the room at its second pass — its units were read again after the row's were
// last read —, not when the row's visits leave the window (ten minutes).
TEST(ChunkCache, WithoutStreamsAFileReadOnceGivesWayAtTheSecondPassOfOneReadAgain) {
  constexpr uint64_t kUnits = 4;
  auto row = std::make_shared<FakeSource>(kUnits * kUnit);
  auto column = std::make_shared<FakeSource>(kUnits * kUnit);
  CacheOptions o = Options(kUnits, "priority");
  o.predict_streams = false;
  o.same_pass_ns = 1'000'000;  // 1 ms apart: a new visit
  ChunkCache c(o);
  for (uint64_t i = 0; i < kUnits; ++i) ASSERT_TRUE(ReadWhole(c, Unit(row, i, 1.0, 1), 1));
  auto pass = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    int hits = 0;
    bool hit = false;
    for (uint64_t i = 0; i < kUnits; ++i) {
      EXPECT_TRUE(ReadWhole(c, Unit(column, i, 1.0, 2), 1, &hit));
      hits += hit ? 1 : 0;
    }
    return hits;
  };
  EXPECT_EQ(pass(), 0);
  for (uint64_t i = 0; i < kUnits; ++i) EXPECT_TRUE(Resident(c, Unit(row, i, 1.0, 1))) << "a first pass is a scan";
  EXPECT_EQ(pass(), 0);
  for (uint64_t i = 0; i < kUnits; ++i) EXPECT_TRUE(Resident(c, Unit(column, i, 1.0, 2))) << i;
  EXPECT_EQ(pass(), static_cast<int>(kUnits));
  EXPECT_EQ(c.Stats().evictions, kUnits);
}

TEST(ChunkCache, AUnitTheTrailingStreamIsAboutToReadEvictsOneReadLater) {
  auto src = std::make_shared<FakeSource>(16 * kUnit);
  ChunkCache c(LiveOptions(1, {1, 2}));
  auto unit = [&](uint64_t i) { return CountedUnit(src, i); };
  // Unit 12, read by two processes that are gone since: by visits it outranks any unit read once.
  ASSERT_TRUE(ReadWhole(c, unit(12), 10));
  ASSERT_TRUE(ReadWhole(c, unit(12), 11));
  ASSERT_TRUE(Resident(c, unit(12)));
  // Process 1 scans the file; process 2 follows one unit behind at the same pace. What 1 has
  // just read, 2 reads next: that unit is worth more than unit 12, which 1 reaches only 9 units
  // later (the margin keeps the test independent of scheduling noise in the measured paces).
  bool hit = false;
  for (uint64_t i = 0; i <= 4; ++i) {
    ASSERT_TRUE(ReadWhole(c, unit(i), 1));
    if (i >= 1) {
      ASSERT_TRUE(ReadWhole(c, unit(i - 1), 2, &hit));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(hit) << "process 2 missed unit 3, which process 1 had just loaded";
  EXPECT_FALSE(Resident(c, unit(12)));

  // Static priority alone (no live streams) would have kept unit 12.
  ChunkCache d(StaticRankOptions(1));
  ASSERT_TRUE(ReadWhole(d, unit(12), 10));
  ASSERT_TRUE(ReadWhole(d, unit(12), 11));
  for (uint64_t i = 0; i <= 4; ++i) {
    ASSERT_TRUE(ReadWhole(d, unit(i), 1));
    if (i >= 1) {
      ASSERT_TRUE(ReadWhole(d, unit(i - 1), 2, &hit));
    }
  }
  EXPECT_FALSE(hit);
  EXPECT_TRUE(Resident(d, unit(12)));
}

TEST(ChunkCache, AUnitAProcessIsPartWayThroughIsInUseNow) {
  auto src = std::make_shared<FakeSource>(16 * kUnit);
  ChunkCache c(LiveOptions(1, {1, 2, 3}));  // 4 has exited
  auto unit = [&](uint64_t i) { return CountedUnit(src, i); };
  ASSERT_TRUE(ReadWhole(c, unit(2), 4));  // admitted (room); its reader has exited
  // Process 3 streams 0, 1: unit 2 is what it reads next, so it keeps unit 2 against both.
  ASSERT_TRUE(ReadWhole(c, unit(0), 3));
  ASSERT_TRUE(ReadWhole(c, unit(1), 3));
  ASSERT_TRUE(Resident(c, unit(2)));
  const int loads = src->loads();
  // Process 2 takes the first half of unit 10 and lets go between two requests; process 1
  // reads all of it. Process 3 reaches unit 10 only 9 units later, after unit 2, but process 2
  // needs the rest of unit 10 now: the unit must stay, not be refused and loaded again.
  {
    auto half = c.Get(unit(10), 2);
    ASSERT_TRUE(half.ok());
    half->NoteServed(kUnit / 2);
  }
  ASSERT_TRUE(ReadWhole(c, unit(10), 1));
  EXPECT_TRUE(Resident(c, unit(10)));
  bool hit = false;
  auto rest = c.Get(unit(10), 2);
  ASSERT_TRUE(rest.ok());
  hit = rest->hit();
  rest->NoteServed(kUnit / 2);
  EXPECT_TRUE(hit) << "process 2 had to wait for a second load of the unit it was reading";
  EXPECT_EQ(src->loads(), loads + 1);
}

TEST(ChunkCache, UnitsBetweenAProcesssRearAndLeadingReadersAreReadNext) {
  auto src = std::make_shared<FakeSource>(16 * kUnit);
  ChunkCache c(LiveOptions(1, {1, 2}));
  auto unit = [&](uint64_t i) { return CountedUnit(src, i); };
  auto step = [] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); };
  ASSERT_TRUE(ReadWhole(c, unit(3), 9));  // resident; its reader has exited
  // Process 1 reads with two threads, one segment each: 0, 4, 1, 5, 2, 6. Its leading reader
  // is past unit 3, its rear reader reads unit 3 next.
  for (uint64_t i : {0, 4, 1, 5, 2, 6}) {
    ASSERT_TRUE(ReadWhole(c, unit(i), 1));
    step();
  }
  // Process 2 streams 10, 11: unit 12 is one step ahead of it. Unit 3 is nearer still.
  ASSERT_TRUE(ReadWhole(c, unit(10), 2));
  step();
  ASSERT_TRUE(ReadWhole(c, unit(11), 2));
  ASSERT_TRUE(Resident(c, unit(3)));
  ASSERT_TRUE(ReadWhole(c, unit(12), 9));
  EXPECT_TRUE(Resident(c, unit(3))) << "unit 3 was predicted a pass away, behind process 1's leading reader";
  EXPECT_FALSE(Resident(c, unit(12)));
}

TEST(ChunkCache, HubHeavyChunksWinAtEqualReaders) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  ChunkCache c(StaticRankOptions(1));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 0, /*weight=*/2.0), 1));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 1, /*weight=*/50.0), 1));  // mean source degree 50 beats 2
  EXPECT_TRUE(Resident(c, Unit(src, 1, 50.0)));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 2, /*weight=*/10.0), 1));  // 10 does not beat 50
  EXPECT_TRUE(Resident(c, Unit(src, 1, 50.0)));
  EXPECT_FALSE(Resident(c, Unit(src, 2, 10.0)));
}

TEST(ChunkCache, ReadersAgeOutOfTheWindow) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  CacheOptions o = StaticRankOptions(1);
  o.reader_window_ns = 300'000'000;  // wide enough for slow (sanitizer) runs on a loaded machine
  ChunkCache c(o);
  for (uint32_t pid : {1, 2, 3}) ASSERT_TRUE(ReadWhole(c, Unit(src, 0), pid));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 1), 4));
  EXPECT_TRUE(Resident(c, Unit(src, 0)));  // 3 readers beat 1 ...
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 2), 4));  // ... until they are all older than the window
  EXPECT_TRUE(Resident(c, Unit(src, 2)));
  EXPECT_EQ(c.Stats().evictions, 1u);
}

TEST(ChunkCache, PinnedUnitsAreNeverEvicted) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  ChunkCache c(Options(1, "lru"));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 0), 1));
  auto held = c.Get(Unit(src, 0), 1);  // pinned by a reader
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(ReadWhole(c, Unit(src, 1), 2));  // LRU would evict 0, but it is pinned: 1 is refused
  EXPECT_TRUE(Matches(*held));
  EXPECT_EQ(c.Stats().evictions, 0u);
  EXPECT_EQ(c.Stats().rejections, 1u);
  held = Result<UnitRef>(UnitRef());
  ASSERT_TRUE(ReadWhole(c, Unit(src, 1), 2));  // unpinned now: LRU evicts 0
  EXPECT_EQ(c.Stats().evictions, 1u);
}

// The mount's memory budget moves the capacity: down evicts at once, the lowest priority
// first, and a pinned unit that has to go is kept by its pin alone (held) until it is let go.
TEST(ChunkCache, SetCapacityEvictsDownToItAtOnceAndPinnedUnitsAreHeld) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  ChunkCache c(Options(4, "lru"));
  for (uint64_t i : {0, 1, 2, 3}) ASSERT_TRUE(ReadWhole(c, Unit(src, i), 1));
  auto pinned = c.Get(Unit(src, 0), 1);  // 0 is the most recent now, and pinned
  ASSERT_TRUE(pinned.ok());
  c.SetCapacity(2 * kUnit);
  EXPECT_EQ(c.capacity(), 2 * kUnit);
  EXPECT_EQ(c.Stats().capacity, 2 * kUnit);
  EXPECT_EQ(c.Stats().used, 2 * kUnit);
  EXPECT_FALSE(Resident(c, Unit(src, 1)));
  EXPECT_FALSE(Resident(c, Unit(src, 2)));
  EXPECT_TRUE(Resident(c, Unit(src, 3)));
  EXPECT_TRUE(Resident(c, Unit(src, 0)));
  EXPECT_EQ(c.Stats().held, 0u);
  c.SetCapacity(0);
  EXPECT_EQ(c.Stats().used, 0u);
  EXPECT_EQ(c.Stats().units, 0u);
  EXPECT_EQ(c.Stats().held, kUnit) << "the pinned unit left the cache; its pin keeps it";
  EXPECT_TRUE(Matches(*pinned));
  pinned = Result<UnitRef>(UnitRef());
  EXPECT_EQ(c.Stats().held, 0u);
  EXPECT_EQ(c.Stats().held_units, 0u);
  // Growing back admits again.
  c.SetCapacity(4 * kUnit);
  ASSERT_TRUE(ReadWhole(c, Unit(src, 5), 1));
  EXPECT_TRUE(Resident(c, Unit(src, 5)));
  EXPECT_EQ(c.Stats().used, kUnit);
}

TEST(ChunkCache, PartlyServedUnitsStayForTheirReader) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  ChunkCache c(Options(0, "priority"));  // admits nothing: only staging holds units
  for (int part = 0; part < 4; ++part) {
    auto u = c.Get(Unit(src, 0), 1);
    ASSERT_TRUE(u.ok());
    EXPECT_EQ(u->hit(), part > 0);
    u->NoteServed(kUnit / 4);
  }
  EXPECT_EQ(src->loads(), 1);  // one load served four requests
  EXPECT_EQ(c.Stats().rejections, 1u);  // fully served, then refused (capacity 0)
  EXPECT_FALSE(Resident(c, Unit(src, 0)));
}

TEST(ChunkCache, PrefetchedUnitsAreHits) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  ChunkCache c(Options(4, "priority"));
  c.Prefetch(Unit(src, 2), 1);
  c.Prefetch(Unit(src, 2), 1);  // already on its way: no second load
  bool hit = false;
  ASSERT_TRUE(ReadWhole(c, Unit(src, 2), 1, &hit));
  EXPECT_TRUE(hit);
  EXPECT_EQ(src->loads(), 1);
  EXPECT_EQ(c.Stats().prefetches, 1u);
}

TEST(ChunkCache, PrefetchStopsAtTheStagingLimit) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  CacheOptions o = Options(4, "priority");
  o.staging_limit = 2 * kUnit;
  ChunkCache c(o);
  src->Close();
  for (uint64_t i = 0; i < 5; ++i) c.Prefetch(Unit(src, i), 1);
  CacheStats s = c.Stats();
  EXPECT_EQ(s.prefetches, 2u);
  EXPECT_EQ(s.prefetches_skipped, 3u);
  EXPECT_LE(s.staged, 2 * kUnit);
  src->Open();
}

// Readers load their own misses past the staging ceiling, but only kMaxReaderLoadsOver at once
// when staging is full: the rest wait for one of those loads (a burst of FUSE READs from the
// kernel's read-ahead raised the daemon's RSS 30-44 MiB for a few milliseconds), and load anyway
// after kReaderRoomWaitNs, so a disk that hangs holds nobody for long.
TEST(ChunkCache, ReadersPastAFullStagingAreLetThroughFourAtATime) {
  auto src = std::make_shared<FakeSource>(16 * kUnit);
  CacheOptions o = Options(16, "priority");
  o.staging_limit = kUnit;
  ChunkCache c(o);
  src->Close();
  constexpr int kReaders = 8;
  std::vector<std::thread> readers;
  std::atomic<int> right{0};
  for (int i = 0; i < kReaders; ++i) {
    readers.emplace_back([&, i] {
      auto u = c.Get(Unit(src, static_cast<uint64_t>(i)), 1);
      if (u.ok() && Matches(*u, 0)) right.fetch_add(1);
    });
  }
  src->WaitForWaiters(static_cast<int>(kMaxReaderLoadsOver));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(src->loads(), static_cast<int>(kMaxReaderLoadsOver));  // the others wait for room
  EXPECT_EQ(c.Stats().staged, kMaxReaderLoadsOver * kUnit);
  src->WaitForWaiters(kReaders);  // the gate stays shut: after kReaderRoomWaitNs they load anyway
  CacheStats s = c.Stats();
  EXPECT_EQ(s.reader_room_waits, kReaders - kMaxReaderLoadsOver);
  EXPECT_EQ(s.reader_room_timeouts, kReaders - kMaxReaderLoadsOver);
  src->Open();
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(right.load(), kReaders);
}

// A reader that takes only part of a unit and says it is done with it (the LP loader copying
// runs) frees the unit from staging at its last unpin — admitted or dropped — instead of keeping
// it staged for kServedIdleNs; a partial read without that stays staged.
TEST(ChunkCache, AUnitConsumedInPartLeavesStagingAtItsLastUnpin) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  ChunkCache c(Options(4, "priority"));
  {
    auto u = c.Get(Unit(src, 1), 1);
    ASSERT_TRUE(u.ok());
    u->NoteServed(kUnit / 4);
  }
  EXPECT_EQ(c.Stats().staged, kUnit) << "a quarter served: still staged";
  {
    auto u = c.Get(Unit(src, 2), 1);
    ASSERT_TRUE(u.ok());
    u->NoteServed(kUnit / 4);
    u->NoteConsumed();
    EXPECT_EQ(c.Stats().staged, 2 * kUnit) << "pinned: decided only at the last unpin";
  }
  const CacheStats s = c.Stats();
  EXPECT_EQ(s.staged, kUnit) << "unit 2 left staging";
  EXPECT_EQ(s.staged_units, 1u);
}

// A unit asked for with an arena is loaded into it (where jobs map it); without one, into the
// cache's own buffers.
TEST(ChunkCache, AUnitAskedForWithAnArenaLiesInIt) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  SharedArena::Options ao;
  ao.virtual_bytes = 64 * kUnit;
  ao.idle_limit = 4 * kUnit;
  auto arena = SharedArena::Create("cache-test", ao);
  ASSERT_TRUE(arena.ok()) << arena.error().message();
  ChunkCache c(Options(4, "priority"));
  UnitRequest r = Unit(src, 3);
  r.arena = *arena;
  auto u = c.Get(r, 1);
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(Matches(*u));
  EXPECT_EQ(u->arena(), arena->get());
  ASSERT_NE(u->memory_offset(), SharedBytes::kNotShared);
  EXPECT_EQ(u->data(), (*arena)->base() + u->memory_offset()) << "the bytes are the arena's, at that offset";
  EXPECT_GE((*arena)->stats().used_bytes, kUnit);
  auto plain = c.Get(Unit(src, 4), 1);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->arena(), nullptr);
  EXPECT_EQ(plain->memory_offset(), SharedBytes::kNotShared);
}

// A full cache that its owner resizes at every load (the frame tier, whose budget follows
// staging's charge) gives its idle buffers up at each resize; with idle_reserve_bytes its
// admitted units leave that much to them, so the next loads reuse the freed buffers — and the
// admitted units, held ones and idle buffers together still stay within the capacity.
TEST(ChunkCache, AnIdleReserveKeepsBuffersForTheNextLoadsThroughResizes) {
  for (uint64_t reserve : {uint64_t{0}, 2 * kUnit}) {
    SCOPED_TRACE("reserve " + std::to_string(reserve));
    auto src = std::make_shared<FakeSource>(40 * kUnit);
    CacheOptions o = Options(6, "lru");
    o.recycle_bytes = 2 * kUnit;
    o.idle_reserve_bytes = reserve;
    ChunkCache c(o);
    for (int pass = 0; pass < 2; ++pass) {
      for (uint64_t i = 0; i < 40; ++i) {
        ASSERT_TRUE(ReadWhole(c, Unit(src, i), 1)) << "unit " << i;
        c.SetCapacity(6 * kUnit);  // the owner's resize, the capacity unchanged
        const CacheStats s = c.Stats();
        EXPECT_LE(s.used + s.held + s.buffers_idle_bytes, 6 * kUnit) << "unit " << i;
      }
    }
    const CacheStats s = c.Stats();
    EXPECT_EQ(s.misses, 80u);
    if (reserve == 0) {
      EXPECT_EQ(s.used, 6 * kUnit) << "the units take the whole capacity";
      EXPECT_GE(s.buffers_created, 70u) << "every resize let the idle buffers go";
    } else {
      EXPECT_EQ(s.used, 4 * kUnit) << "two units' room left to idle buffers";
      EXPECT_LE(s.buffers_created, 8u) << "the freed buffers served the next loads";
      EXPECT_GE(s.buffers_reused, 72u);
    }
  }
}

// At a cache's churn (a unit evicted for each one loaded) units of a graph's shared memory take
// the slices the evicted ones leave: no fresh page is populated and none punched, though the
// arena itself keeps nothing idle.
TEST(ChunkCache, ArenaUnitsReuseTheSlicesEvictedUnitsLeave) {
  auto src = std::make_shared<FakeSource>(32 * kUnit);
  SharedArena::Options ao;
  ao.virtual_bytes = 64 * kUnit;  // idle_limit 0
  auto arena = SharedArena::Create("cache-test", ao);
  ASSERT_TRUE(arena.ok()) << arena.error().message();
  CacheOptions o = Options(4, "lru");
  o.recycle_bytes = 2 * kUnit;
  ChunkCache c(o);
  auto read = [&](uint64_t i) {
    UnitRequest r = Unit(src, i);
    r.arena = *arena;
    EXPECT_TRUE(ReadWhole(c, r, 1));
    EXPECT_TRUE(Resident(c, r));
  };
  for (uint64_t i = 0; i < 5; ++i) read(i);  // the fifth evicts the first: one slice idle
  const uint64_t resident = (*arena)->stats().resident_bytes;
  const uint64_t populated = SharedArena::ProcessChurn().populated_bytes;
  for (uint64_t i = 5; i < 32; ++i) read(i);
  EXPECT_GE(c.Stats().evictions, 28u);
  EXPECT_EQ((*arena)->stats().punched_bytes, 0u);
  EXPECT_EQ(SharedArena::ProcessChurn().populated_bytes, populated) << "no fresh page for 27 loads";
  EXPECT_LE((*arena)->stats().resident_bytes, resident + kUnit) << "at most the one slice in flight";
  EXPECT_LE(c.Stats().used + c.Stats().buffers_idle_bytes, 5 * kUnit);
}

// Units the cache let go that pins still keep (held: the LPs made of them) are resident memory
// like admitted ones: admitted units get what they leave of the capacity, so that the two
// together stay within it.
TEST(ChunkCache, HeldUnitsTakeTheirRoomFromAdmittedOnes) {
  auto src = std::make_shared<FakeSource>(16 * kUnit);
  CacheOptions o = Options(4, "lru");
  o.recycle_bytes = 0;  // no idle buffers: held units alone
  ChunkCache c(o);
  ASSERT_TRUE(ReadWhole(c, Unit(src, 0), 1));
  auto pinned = c.Get(Unit(src, 0), 1);
  ASSERT_TRUE(pinned.ok());
  c.SetCapacity(0);  // 0 leaves the cache; its pin keeps it
  c.SetCapacity(4 * kUnit);
  ASSERT_EQ(c.Stats().held, kUnit);
  for (uint64_t i : {5, 6, 7, 8}) ASSERT_TRUE(ReadWhole(c, Unit(src, i), 1));
  EXPECT_EQ(c.Stats().used, 3 * kUnit) << "one unit of the four is held outside the cache";
  EXPECT_EQ(c.Stats().used + c.Stats().held, 4 * kUnit);
  EXPECT_FALSE(Resident(c, Unit(src, 5))) << "the least recent went to make room";
  EXPECT_TRUE(Matches(*pinned));
  pinned = Result<UnitRef>(UnitRef());  // let go: its room comes back
  EXPECT_EQ(c.Stats().held, 0u);
  ASSERT_TRUE(ReadWhole(c, Unit(src, 9), 1));
  EXPECT_EQ(c.Stats().used, 4 * kUnit);
  EXPECT_TRUE(Resident(c, Unit(src, 6))) << "admitted beside the others, nothing evicted";
}

// Memory someone else keeps idle for the cache's next loads (the graphs' shared memory keeps
// the slices of evicted units) is inside the capacity, like the cache's own idle buffers:
// admitted units get what it leaves, and a change of it moves no capacity elsewhere.
TEST(ChunkCache, IdleMemoryKeptOutsideTakesItsRoomFromAdmittedUnits) {
  auto src = std::make_shared<FakeSource>(16 * kUnit);
  std::atomic<uint64_t> outside{2 * kUnit};
  CacheOptions o = Options(4, "lru");
  o.recycle_bytes = 0;  // no idle buffers of its own
  o.outside_idle_bytes = [&outside] { return outside.load(); };
  ChunkCache c(o);
  for (uint64_t i : {0, 1, 2, 3}) ASSERT_TRUE(ReadWhole(c, Unit(src, i), 1));
  EXPECT_EQ(c.Stats().used, 2 * kUnit) << "two units' room is idle outside";
  EXPECT_TRUE(Resident(c, Unit(src, 3)));
  EXPECT_FALSE(Resident(c, Unit(src, 1)));
  outside = 0;  // reused by the next loads
  for (uint64_t i : {4, 5}) ASSERT_TRUE(ReadWhole(c, Unit(src, i), 1));
  EXPECT_EQ(c.Stats().used, 4 * kUnit);
  EXPECT_TRUE(Resident(c, Unit(src, 2)) && Resident(c, Unit(src, 3))) << "admitted beside them, nothing evicted";
  outside = 3 * kUnit;
  c.SetCapacity(4 * kUnit);  // the owner's resize: admitted units make room for it at once
  EXPECT_EQ(c.Stats().used, kUnit);
  EXPECT_TRUE(Resident(c, Unit(src, 5))) << "the most recent stays";
}

// A capacity that shrinks makes room for what is resident beside the admitted units at once, not
// at the next admission: idle buffers are released first, unpinned units leave only when the
// admitted and held ones alone are over, and pinned admitted units stay.
TEST(ChunkCache, SetCapacityMakesRoomForHeldUnitsAndIdleBuffers) {
  auto src = std::make_shared<FakeSource>(16 * kUnit);
  CacheOptions o = Options(4, "lru");
  o.recycle_bytes = 4 * kUnit;
  ChunkCache c(o);
  for (uint64_t i : {0, 1, 2, 3}) ASSERT_TRUE(ReadWhole(c, Unit(src, i), 1));
  auto pinned = c.Get(Unit(src, 0), 1);
  ASSERT_TRUE(pinned.ok());
  c.SetCapacity(0);  // all leave; 0 is held by its pin
  ASSERT_EQ(c.Stats().held, kUnit);
  EXPECT_EQ(c.Stats().buffers_idle_bytes, 0u) << "a capacity of 0 keeps no idle buffer either";
  c.SetCapacity(4 * kUnit);
  for (uint64_t i : {5, 6, 7, 8}) ASSERT_TRUE(ReadWhole(c, Unit(src, i), 1));  // 8 evicts 5
  ASSERT_EQ(c.Stats().used, 3 * kUnit);
  ASSERT_EQ(c.Stats().buffers_idle_bytes, kUnit) << "5's buffer, kept for the next load: one over";
  const uint64_t evictions = c.Stats().evictions;
  c.SetCapacity(4 * kUnit);  // 3 admitted + 1 held + 1 idle: the idle buffer goes, no unit
  EXPECT_EQ(c.Stats().buffers_idle_bytes, 0u);
  EXPECT_EQ(c.Stats().used, 3 * kUnit);
  EXPECT_EQ(c.Stats().evictions, evictions) << "no unit had to leave";
  c.SetCapacity(3 * kUnit);  // 3 admitted + 1 held: the least recent unit leaves
  EXPECT_EQ(c.Stats().used, 2 * kUnit);
  EXPECT_FALSE(Resident(c, Unit(src, 6)));
  EXPECT_TRUE(Resident(c, Unit(src, 7)));
  EXPECT_EQ(c.Stats().buffers_idle_bytes, 0u) << "its buffer is not kept idle over the capacity";
  auto eight = c.Get(Unit(src, 8), 1);
  ASSERT_TRUE(eight.ok());
  c.SetCapacity(2 * kUnit);  // 2 admitted + 1 held: 7 leaves, the pinned 8 stays
  EXPECT_FALSE(Resident(c, Unit(src, 7)));
  EXPECT_TRUE(Resident(c, Unit(src, 8)));
  c.SetCapacity(kUnit + kUnit / 2);  // still over, but only by pinned units: leaving would only hold 8
  EXPECT_TRUE(Resident(c, Unit(src, 8)));
  EXPECT_EQ(c.Stats().used, kUnit);
  EXPECT_EQ(c.Stats().held, kUnit);
  EXPECT_TRUE(Matches(*pinned));
  EXPECT_TRUE(Matches(*eight));
}

// A holder that keeps a unit pinned for long (an LP made of it) takes it out of staging at once:
// admitted when the policy has room, else kept by the pin alone ("held") until it lets go.
TEST(ChunkCache, AUnitThatLeavesStagingIsAdmittedOrHeldByItsPin) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  {
    ChunkCache c(Options(4, "priority"));
    auto u = c.Get(Unit(src, 1), 1);
    ASSERT_TRUE(u.ok());
    EXPECT_EQ(c.Stats().staged, kUnit);
    u->LeaveStaging();
    const CacheStats s = c.Stats();
    EXPECT_EQ(s.staged, 0u) << "out of staging while still pinned";
    EXPECT_EQ(s.used, kUnit) << "admitted: there was room";
    EXPECT_EQ(s.held, 0u);
    EXPECT_TRUE(Matches(*u));
  }
  {
    ChunkCache c(Options(0, "priority"));  // no room: refused
    {
      auto u = c.Get(Unit(src, 2), 1);
      ASSERT_TRUE(u.ok());
      u->LeaveStaging();
      CacheStats s = c.Stats();
      EXPECT_EQ(s.staged, 0u);
      EXPECT_EQ(s.used, 0u);
      EXPECT_EQ(s.held, kUnit) << "kept by the pin alone";
      EXPECT_EQ(s.held_units, 1u);
      EXPECT_TRUE(Matches(*u)) << "the holder's bytes stay valid";
      EXPECT_FALSE(Resident(c, Unit(src, 2))) << "no longer the cache's";
    }
    EXPECT_EQ(c.Stats().held, 0u) << "freed with the last pin";
    EXPECT_EQ(c.Stats().held_units, 0u);
  }
}

// Units the caller loads itself (the volume's coarse extent reads): a reader's reservation counts
// its miss and is awaited; others asking meanwhile wait for Complete and get the bytes written
// into the buffer; a prefetch reservation stays within staging unless the caller says the disk
// would idle; an error reaches every waiter.
TEST(ChunkCache, ReservedUnitsAreFilledByTheCallerAndAwaited) {
  auto src = std::make_shared<FakeSource>(8 * kUnit);
  CacheOptions o = Options(8, "lru");
  o.staging_limit = 2 * kUnit;  // unit 0 (read, not yet served whole) and one more
  ChunkCache cache(o);
  UnitLoad mine = cache.Reserve(Unit(src, 0), 1, ChunkCache::ReserveFor::kReader);
  ASSERT_TRUE(mine);
  EXPECT_EQ(cache.Find({1, 0}), ChunkCache::Presence::kLoading);
  EXPECT_FALSE(cache.Reserve(Unit(src, 0), 2, ChunkCache::ReserveFor::kReader));  // already being loaded
  std::atomic<bool> got{false};
  std::thread other([&] {
    auto ref = cache.Get(Unit(src, 0), 2);  // waits for the caller's load, does not load itself
    ASSERT_TRUE(ref.ok());
    EXPECT_EQ(ref->data()[5], FakeSource::ByteAt(5, 0));
    got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(got.load());
  for (uint64_t i = 0; i < mine.charge(); ++i) mine.buffer()[i] = FakeSource::ByteAt(i, 0);
  cache.Complete(mine, mine.charge());
  auto ref = cache.Await(mine, 1);
  ASSERT_TRUE(ref.ok());
  EXPECT_FALSE(ref->hit());
  other.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(src->loads(), 0);  // nobody loaded through the source
  EXPECT_EQ(cache.Find({1, 0}), ChunkCache::Presence::kReady);
  EXPECT_EQ(cache.Stats().misses, 1u);

  UnitLoad a = cache.Reserve(Unit(src, 1), 1, ChunkCache::ReserveFor::kPrefetch);
  ASSERT_TRUE(a);  // fills staging
  EXPECT_FALSE(cache.Reserve(Unit(src, 2), 1, ChunkCache::ReserveFor::kPrefetch));  // no room
  UnitLoad b = cache.Reserve(Unit(src, 2), 1, ChunkCache::ReserveFor::kPrefetch, /*over_limit=*/true);
  ASSERT_TRUE(b);  // its disk would idle: loaded anyway
  cache.Complete(b, Error(EIO, "disk 1: injected"));
  EXPECT_EQ(cache.Find({1, 2}), ChunkCache::Presence::kAbsent);  // failed: asked again later
  auto failed_reader = cache.Reserve(Unit(src, 3), 1, ChunkCache::ReserveFor::kReader);
  cache.Complete(failed_reader, Error(EIO, "disk 1: injected"));
  auto r3 = cache.Await(failed_reader, 1);
  ASSERT_FALSE(r3.ok());
  EXPECT_NE(r3.error().message().find("injected"), std::string::npos);
  cache.Complete(a, a.charge());
}

TEST(ChunkCache, InvalidateDropsUnitsOfOneFile) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  ChunkCache c(Options(4, "priority"));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 0, 1.0, /*file=*/1), 1));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 0, 1.0, /*file=*/2), 1));
  src->SetVersion(1);
  c.Invalidate(1);
  auto u = c.Get(Unit(src, 0, 1.0, 1), 1);
  ASSERT_TRUE(u.ok());
  EXPECT_FALSE(u->hit());
  EXPECT_TRUE(Matches(*u, 1));
  EXPECT_TRUE(Resident(c, Unit(src, 0, 1.0, 2)));  // the other file kept its unit
}

TEST(ChunkCache, FailedLoadsReachEveryWaiterAndAreRetried) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  ChunkCache c(Options(4, "priority"));
  src->Fail(EIO);
  src->Close();
  std::vector<std::thread> readers;
  std::atomic<int> eio{0};
  for (uint32_t pid = 1; pid <= 4; ++pid)
    readers.emplace_back([&, pid] {
      auto u = c.Get(Unit(src, 1), pid);
      if (!u.ok() && u.error().code() == EIO) ++eio;
    });
  src->WaitForWaiters(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  src->Open();
  for (auto& t : readers) t.join();
  EXPECT_EQ(eio.load(), 4);
  EXPECT_EQ(src->loads(), 1);
  src->Fail(0);
  EXPECT_TRUE(ReadWhole(c, Unit(src, 1), 1));
  EXPECT_EQ(c.Stats().load_errors, 1u);
}

TEST(ChunkCache, PerProcessCounters) {
  auto src = std::make_shared<FakeSource>(10 * kUnit);
  ChunkCache c(Options(4, "priority"));
  ASSERT_TRUE(ReadWhole(c, Unit(src, 0), 10));  // disk 0
  ASSERT_TRUE(ReadWhole(c, Unit(src, 1), 10));  // disk 1
  ASSERT_TRUE(ReadWhole(c, Unit(src, 0), 20));
  c.NoteBypass(20, 4096);
  CacheStats s = c.Stats();
  ASSERT_EQ(s.processes.size(), 2u);
  const ProcessStats& a = s.processes[0];
  const ProcessStats& b = s.processes[1];
  EXPECT_EQ(a.pid, 10u);
  EXPECT_EQ(a.misses, 2u);
  EXPECT_EQ(a.bytes_loaded, 2 * kUnit);
  EXPECT_EQ(a.disk_bytes, (std::vector<uint64_t>{kUnit, kUnit}));
  EXPECT_EQ(a.bytes_from_cache, 0u);
  EXPECT_EQ(b.pid, 20u);
  EXPECT_EQ(b.hits, 1u);
  EXPECT_EQ(b.bytes_from_cache, kUnit);
  EXPECT_EQ(b.bytes_bypassed, 4096u);
  EXPECT_EQ(s.bytes_from_cache, kUnit);
}

TEST(ChunkCache, ConcurrentReadersSeeTheRightBytesAndTheBudgetHolds) {
  auto src = std::make_shared<FakeSource>(64 * kUnit);
  for (std::string policy : {"priority", "lru"}) {
    ChunkCache c(Options(8, policy));
    std::atomic<int> bad{0};
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < 6; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937 rng(t);
        for (int i = 0; i < 400; ++i) {
          const uint64_t idx = rng() % 64;
          switch (rng() % 8) {
            case 0:
              c.Prefetch(Unit(src, (idx + 1) % 64), t + 1);
              break;
            case 1: {
              UnitRef u = c.Peek(Unit(src, idx), t + 1);
              if (u && !Matches(u)) ++bad;
              break;
            }
            default: {
              auto u = c.Get(Unit(src, idx), t + 1);
              if (!u.ok() || !Matches(*u)) ++bad;
              if (u.ok()) u->NoteServed(rng() % 2 ? u->length() : u->length() / 2);
            }
          }
          if (c.Stats().used > 8 * kUnit) ++bad;
        }
      });
    }
    for (auto& th : threads) th.join();
    c.Settle();
    CacheStats s = c.Stats();
    EXPECT_EQ(bad.load(), 0) << policy;
    EXPECT_LE(s.used, 8 * kUnit);
    EXPECT_GT(s.hits, 0u);
    EXPECT_GT(s.admissions, 0u);
  }
}

// The reader window has no default of its own (the owner's: the mount's cache_window=), so a
// cache built without one is its owner's bug, refused at once rather than ranking by nothing.
TEST(ChunkCacheDeathTest, ACacheWithoutAReaderWindowIsRefused) {
  CacheOptions o = Options(2, "lru");
  o.reader_window_ns = 0;
  EXPECT_DEATH({ ChunkCache c(o); }, "reader window unset");
}

}  // namespace
}  // namespace graphfs::cache
