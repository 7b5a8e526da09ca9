// The logical-partition scheduler on synthetic chunk catalogs: every job gets each of
// its active chunks exactly once per iteration, LPs follow the priority, are loaded once
// and shared, load ahead within the window without holding a fast job for a slow one, and
// jobs that leave are not waited on.
#include "chunkindex/lp_scheduler.h"

#include "tests/chunkindex/driven_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <random>
#include <set>
#include <thread>

namespace graphfs::chunkindex {
namespace {

using namespace std::chrono_literals;

// Byte k of the file is a function of k, so LP contents can be checked.
char FileByte(uint64_t k) { return static_cast<char>((k * 131 + k / 251) & 0xff); }

struct Catalog {
  std::vector<ChunkInfo> chunks;
  std::atomic<uint64_t> loaded_bytes{0};
  std::atomic<uint64_t> loads{0};
  std::atomic<bool> fail{false};
  std::atomic<int> load_delay_ms{0};
  std::atomic<int> loading{0};       // loader calls running now
  std::atomic<int> most_loading{0};  //   at most

  // `count` chunks of `length` bytes, 4 per block, mean degree from `degree(id)`.
  Catalog(uint64_t count, uint64_t length, const std::function<double(uint64_t)>& degree = [](uint64_t) { return 1.0; }) {
    for (uint64_t i = 0; i < count; ++i) chunks.push_back({i * length, length, static_cast<uint32_t>(i / 4), degree(i)});
  }
  DrivenScheduler::Loader Loader() {
    return [this](LogicalPartition& lp) -> Status {
      char* out = lp.memory.Packed(lp.size);
      const int now = loading.fetch_add(1) + 1;
      for (int m = most_loading.load(); now > m && !most_loading.compare_exchange_weak(m, now);) {
      }
      if (int d = load_delay_ms.load(); d > 0) std::this_thread::sleep_for(std::chrono::milliseconds(d));
      loading.fetch_sub(1);
      if (fail.load()) return Error(EIO, "disk 2 failed");
      loads.fetch_add(1);
      for (const LpExtent& e : lp.extents) {
        for (uint64_t k = 0; k < e.length; ++k) out[e.lp_offset + k] = FileByte(e.file_offset + k);
        loaded_bytes.fetch_add(e.length);
      }
      return Status::Ok();
    };
  }
};

std::vector<ActiveChunk> Active(std::initializer_list<uint64_t> ids) {
  std::vector<ActiveChunk> out;
  for (uint64_t id : ids) out.push_back({id, 1, 1.0});
  return out;
}

// Asks for the next LP and returns the future answer.
DrivenScheduler::Answer Ask(DrivenScheduler& s, uint64_t job, uint64_t* ticket = nullptr) { return s.Ask(job, ticket); }

Result<LpScheduler::Grant> AskNow(DrivenScheduler& s, uint64_t job) {
  auto f = Ask(s, job);
  if (f.wait_for(10s) != std::future_status::ready) return Error(ETIMEDOUT, "no answer in 10 s");
  return f.get();
}

// Every chunk in the LP.
std::set<uint64_t> AllIds(const LogicalPartition& lp) {
  std::set<uint64_t> ids;
  for (const LpExtent& e : lp.extents) ids.insert(e.chunk);
  return ids;
}

// The chunks of the LP that are the job's to process.
std::set<uint64_t> Ids(const HeldLp& held) {
  std::set<uint64_t> ids;
  for (const ViewPiece& p : held.pieces) ids.insert(p.chunk);
  return ids;
}

void ExpectBytesMatchFile(const LogicalPartition& lp) {
  uint64_t at = 0;
  for (size_t i = 0; i < lp.extents.size(); ++i) {
    const LpExtent& c = lp.extents[i];
    if (i > 0) {
      EXPECT_LT(lp.extents[i - 1].file_offset, c.file_offset) << "extents must be sorted by offset";
    }
    EXPECT_EQ(c.lp_offset, at);
    for (uint64_t k = 0; k < c.length; k += 7) ASSERT_EQ(*lp.memory.At(c.lp_offset + k), FileByte(c.file_offset + k));
    at += c.length;
  }
  EXPECT_EQ(at, lp.size);
}

TEST(LpScheduler, OneJobGetsEachActiveChunkOnceThenEnd) {
  Catalog cat(10, 100);
  DrivenScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = false});
  ASSERT_TRUE(s.AddJob(1, 300).ok());
  ASSERT_TRUE(s.SetActive(1, Active({9, 1, 5, 3, 7}), 0.001).ok());
  std::multiset<uint64_t> seen;
  for (int round = 0; round < 10; ++round) {
    auto g = AskNow(s, 1);
    ASSERT_TRUE(g.ok()) << g.error().message();
    if (g->end) break;
    ASSERT_NE(g->held.lp, nullptr);
    EXPECT_LE(g->held.lp->size, 300u);
    ExpectBytesMatchFile(*g->held.lp);
    for (uint64_t id : Ids(g->held)) seen.insert(id);
    const std::string map = g->held.MapText();
    EXPECT_EQ(static_cast<size_t>(std::count(map.begin(), map.end(), '\n')), g->held.pieces.size());
    const ViewPiece& c = g->held.pieces[0];
    EXPECT_EQ(map.substr(0, map.find('\n')),
              std::to_string(c.chunk) + " " + std::to_string(c.file_offset) + " " + std::to_string(c.length) + " 0");
    EXPECT_EQ(g->held.bytes(), g->held.lp->size);  // one job: its view is the whole LP
  }
  EXPECT_EQ(seen, (std::multiset<uint64_t>{1, 3, 5, 7, 9}));
  EXPECT_EQ(cat.loaded_bytes.load(), 500u);
  auto again = AskNow(s, 1);  // after the end, still the end until a new active set
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->end);
  auto view = s.View(1);
  ASSERT_TRUE(view.ok());
  ASSERT_EQ(view->recent.size(), 1u);
  EXPECT_TRUE(view->recent[0].finished);
  EXPECT_EQ(view->recent[0].active_chunks, 5u);
  EXPECT_EQ(view->recent[0].lps, 2u);
}

TEST(LpScheduler, HighestPriorityChunksFirstThenSortedById) {
  // Mean degree grows with the id: the top chunks are the last ones.
  Catalog cat(8, 100, [](uint64_t id) { return 1.0 + static_cast<double>(id); });
  DrivenScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = false});
  ASSERT_TRUE(s.AddJob(1, 200).ok());
  std::vector<ActiveChunk> active;
  for (uint64_t id = 0; id < 8; ++id) active.push_back({id, 2, 0});
  ASSERT_TRUE(s.SetActive(1, active, 0).ok());
  auto g = AskNow(s, 1);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(Ids(g->held), (std::set<uint64_t>{6, 7}));
  s.Done(1);  // else the next iteration takes chunk 7 from this LP, without a load
  // N(A) counts too: many active sources beat a higher degree.
  ASSERT_TRUE(s.SetActive(1, std::vector<ActiveChunk>{{0, 100, 0}, {1, 1, 0}, {7, 1, 0}}, 0).ok());
  g = AskNow(s, 1);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(Ids(g->held), (std::set<uint64_t>{0, 7}));
}

// The LPs one job gets, in order, for an iteration that needs every chunk of `cat` (its chunks'
// columns set), LPs of at most `partition_bytes`: each LP's chunk ids.
std::vector<std::set<uint64_t>> LpsOfADenseIteration(Catalog& cat, uint64_t partition_bytes) {
  DrivenScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = false});
  EXPECT_TRUE(s.AddJob(1, partition_bytes).ok());
  std::vector<ActiveChunk> all;
  for (uint64_t id = 0; id < cat.chunks.size(); ++id) all.push_back({id, 2, 0});
  EXPECT_TRUE(s.SetActive(1, all, 0).ok());
  std::vector<std::set<uint64_t>> lps;
  for (size_t round = 0; round <= cat.chunks.size(); ++round) {
    auto g = AskNow(s, 1);
    EXPECT_TRUE(g.ok()) << g.error().message();
    if (!g.ok() || g->end) return lps;
    lps.push_back(Ids(g->held));
  }
  ADD_FAILURE() << "no end after an LP per chunk";
  return lps;
}

// An engine adds into a window of one target partition at a time (engines/core/target_sums.h):
// an LP's chunks are grouped by column, the first pick's column first, though the priorities
// alternate between columns.
TEST(LpScheduler, AnLpHoldsTheChunksOfItsFirstPicksColumnBeforeOthers) {
  // Priority grows with the id; chunk id's column is id % 4: by priority alone an LP of two
  // chunks holds two columns ({6, 7}).
  Catalog cat(8, 100, [](uint64_t id) { return 1.0 + static_cast<double>(id); });
  for (uint64_t i = 0; i < 8; ++i) cat.chunks[i].column = static_cast<uint32_t>(i % 4);
  // Columns in the order of their best chunk (7, 6, 5, 4), each whole in one LP.
  EXPECT_EQ(LpsOfADenseIteration(cat, 200), (std::vector<std::set<uint64_t>>{{3, 7}, {2, 6}, {1, 5}, {0, 4}}));
}

// A job reads an LP in chunk order: the next LP starts in the column the one before ended in,
// so that the engine's window stays where it is.
TEST(LpScheduler, TheNextLpStartsInTheColumnTheLastEndedIn) {
  // Column 0: chunks 0-2 (priorities 100, 99, 10); column 1: chunks 3-4 (50, 49); column 2:
  // chunk 5 (5). An LP holds two chunks.
  const double degree[] = {100, 99, 10, 50, 49, 5};
  Catalog cat(6, 100, [&](uint64_t id) { return degree[id]; });
  const uint32_t column[] = {0, 0, 0, 1, 1, 2};
  for (uint64_t i = 0; i < 6; ++i) cat.chunks[i].column = column[i];
  // {0, 1} ends in column 0, so the next starts with chunk 2 there (by priority alone column
  // 1's {3, 4} would come next) and fills up with column 1's best; it ends in column 1.
  EXPECT_EQ(LpsOfADenseIteration(cat, 200), (std::vector<std::set<uint64_t>>{{0, 1}, {2, 3}, {4, 5}}));
}

// Equal priorities (a dense job: every chunk's claim alike) and one block each: with
// diagonal_first, the chunks of diagonal blocks come first; without, the lowest ids.
TEST(LpScheduler, DiagonalBlocksFirstAmongEqualPriorities) {
  Catalog cat(8, 100);
  for (uint64_t i = 0; i < 8; ++i) {
    cat.chunks[i].block = static_cast<uint32_t>(i);
    cat.chunks[i].diagonal = i == 5 || i == 7;  // e.g. blocks (1,1) and (2,2) of some P
  }
  std::vector<ActiveChunk> all;
  for (uint64_t id = 0; id < 8; ++id) all.push_back({id, 3, 0});
  for (bool diagonal_first : {false, true}) {
    DrivenScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = false, .diagonal_first = diagonal_first});
    ASSERT_TRUE(s.AddJob(1, 300).ok());
    ASSERT_TRUE(s.SetActive(1, all, 0).ok());
    auto g = AskNow(s, 1);
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(Ids(g->held), diagonal_first ? (std::set<uint64_t>{0, 5, 7}) : (std::set<uint64_t>{0, 1, 2}));
  }
}

TEST(LpScheduler, AnLpIsLoadedOnceAndSharedByEveryJobNeedingIt) {
  Catalog cat(6, 100);
  DrivenScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = false});
  ASSERT_TRUE(s.AddJob(1, 1000).ok());
  ASSERT_TRUE(s.AddJob(2, 1000).ok());
  ASSERT_TRUE(s.SetActive(1, Active({0, 1, 2}), 0).ok());
  ASSERT_TRUE(s.SetActive(2, Active({2, 3}), 0).ok());
  auto a = Ask(s, 1);
  ASSERT_EQ(a.wait_for(10s), std::future_status::ready);
  auto ga = a.get();
  ASSERT_TRUE(ga.ok());
  // Job 2 did not ask yet, but the LP holds chunks it needs: it was built for both.
  EXPECT_EQ(AllIds(*ga->held.lp), (std::set<uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(Ids(ga->held), (std::set<uint64_t>{0, 1, 2}));
  auto gb = AskNow(s, 2);
  ASSERT_TRUE(gb.ok());
  EXPECT_EQ(gb->held.lp, ga->held.lp);
  EXPECT_EQ(Ids(gb->held), (std::set<uint64_t>{2, 3}));
  EXPECT_EQ(cat.loads.load(), 1u);
  EXPECT_EQ(cat.loaded_bytes.load(), 400u);
  EXPECT_TRUE(AskNow(s, 1)->end);
  EXPECT_TRUE(AskNow(s, 2)->end);
  EXPECT_EQ(s.Stats().bytes_delivered, 500u);
}

// A job that is done with LP k gets LP k+1 while a slower job still holds LP k: LPs load ahead
// until the window is full, and only a full window (memory) makes the fast job wait.
TEST(LpScheduler, AFastJobIsNotHeldByASlowOneAndTheWindowIsTheOnlyLockStep) {
  Catalog cat(6, 100);
  DrivenScheduler s(cat.chunks, cat.Loader(), {.window_bytes = 400});
  ASSERT_TRUE(s.AddJob(1, 100).ok());  // fast
  ASSERT_TRUE(s.AddJob(2, 100).ok());  // slow: every LP is queued for it too
  ASSERT_TRUE(s.SetActive(1, Active({0, 1, 2, 3, 4, 5}), 0).ok());
  ASSERT_TRUE(s.SetActive(2, Active({0, 1, 2, 3, 4, 5}), 0).ok());
  auto slow = AskNow(s, 2);
  ASSERT_TRUE(slow.ok());
  std::set<uint64_t> fast_seen;
  for (int k = 0; k < 4; ++k) {  // the slow job's LP and three more fit in the window
    auto g = AskNow(s, 1);
    ASSERT_TRUE(g.ok()) << g.error().message();
    ASSERT_FALSE(g->end);
    ExpectBytesMatchFile(*g->held.lp);
    for (uint64_t id : Ids(g->held)) fast_seen.insert(id);
  }
  EXPECT_EQ(fast_seen.size(), 4u);
  auto fifth = Ask(s, 1);  // 4 LPs live (1 held, 3 queued for the slow job): the window is full
  EXPECT_EQ(fifth.wait_for(300ms), std::future_status::timeout);
  SchedulerStats st = s.Stats();
  EXPECT_EQ(st.live_bytes, 400u);
  EXPECT_EQ(st.lps_in_flight, 0u);
  EXPECT_GE(st.window_full_while_waiting_seconds, 0.2);
  EXPECT_GE(st.loader_idle_while_waiting_seconds, st.window_full_while_waiting_seconds);
  auto v2 = s.View(2);
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(v2->queued, 3u);
  EXPECT_EQ(v2->state, "holding");
  ASSERT_TRUE(AskNow(s, 2).ok());  // the slow job moves on: LP 1 leaves the window
  ASSERT_EQ(fifth.wait_for(10s), std::future_status::ready);
  auto g5 = fifth.get();
  ASSERT_TRUE(g5.ok());
  for (uint64_t id : Ids(g5->held)) fast_seen.insert(id);
  EXPECT_EQ(fast_seen.size(), 5u);
  EXPECT_EQ(cat.loaded_bytes.load(), 500u) << "each LP loaded once for both jobs";
}

// With hold 2 a job asks for LP k+1 while it still reads LP k: an ask ends its use of the LP
// before the last one handed, the end of an iteration keeps the last, and a new active set or
// `done` ends both. With hold 1 (the default) an ask ends the use of the LP it holds.
TEST(LpScheduler, AJobHoldingTwoKeepsTheLpBeforeTheLastUntilItsNextAsk) {
  Catalog cat(6, 100);
  DrivenScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = false});
  ASSERT_TRUE(s.AddJob(1, 100).ok());
  ASSERT_TRUE(s.AddJob(2, 100).ok());
  EXPECT_EQ(s.SetHold(1, 3).error().code(), EINVAL);
  EXPECT_EQ(s.SetHold(1, 0).error().code(), EINVAL);
  EXPECT_FALSE(s.SetHold(7, 2).ok());  // no such job
  ASSERT_TRUE(s.SetHold(1, 2).ok());
  for (uint64_t job : {1, 2}) ASSERT_TRUE(s.SetActive(job, Active({0, 1, 2}), 0).ok());

  // Job 1 (hold 2).
  auto a = AskNow(s, 1);
  auto b = AskNow(s, 1);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_FALSE(a->end || b->end);
  const uint64_t sa = a->held.lp->seq, sb = b->held.lp->seq;
  EXPECT_TRUE(s.Holding(1, sa)) << "the LP before the last one is still the job's";
  EXPECT_TRUE(s.Holding(1, sb));
  auto v = s.View(1);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->previous_seq, sa);
  EXPECT_EQ(v->holding_seq, sb);
  EXPECT_EQ(v->hold, 2u);
  EXPECT_EQ(s.Stats().live_lps, 2u);
  auto c = AskNow(s, 1);
  ASSERT_TRUE(c.ok() && !c->end);
  EXPECT_FALSE(s.Holding(1, sa)) << "an ask ends the use of the LP before the last";
  EXPECT_TRUE(s.Holding(1, sb));
  auto end = AskNow(s, 1);
  ASSERT_TRUE(end.ok());
  EXPECT_TRUE(end->end);
  EXPECT_TRUE(s.Holding(1, c->held.lp->seq)) << "the end keeps the last LP handed";
  EXPECT_FALSE(s.Holding(1, sb));

  // Job 2 (hold 1): the same asks end the use of the LP it holds.
  auto a2 = AskNow(s, 2);
  auto b2 = AskNow(s, 2);
  ASSERT_TRUE(a2.ok() && b2.ok() && !a2->end && !b2->end);
  EXPECT_FALSE(s.Holding(2, a2->held.lp->seq));
  EXPECT_TRUE(s.Holding(2, b2->held.lp->seq));
  EXPECT_EQ(s.View(2)->previous_seq, 0u);

  // A new active set ends the use of both; `done` does too.
  ASSERT_TRUE(s.SetActive(1, Active({3, 4, 5}), 0).ok());
  EXPECT_FALSE(s.Holding(1, c->held.lp->seq));
  auto d = AskNow(s, 1);
  auto e = AskNow(s, 1);
  ASSERT_TRUE(d.ok() && e.ok() && !d->end && !e->end);
  s.Done(1);
  EXPECT_FALSE(s.Holding(1, d->held.lp->seq));
  EXPECT_FALSE(s.Holding(1, e->held.lp->seq));
  // Back to one: the LP before the last leaves at once.
  auto f = AskNow(s, 1);
  ASSERT_TRUE(f.ok() && !f->end);
  ASSERT_TRUE(AskNow(s, 1)->end);
  ASSERT_TRUE(s.Holding(1, f->held.lp->seq));
  ASSERT_TRUE(s.SetHold(1, 1).ok());
  EXPECT_FALSE(s.Holding(1, f->held.lp->seq));
}

// Holding two LPs in a window of two does not lock: the ask gives the LP before the last back
// before it waits for the next to be loaded.
TEST(LpScheduler, AJobHoldingTwoInAWindowOfTwoLpsStillMovesOn) {
  Catalog cat(5, 100);
  DrivenScheduler s(cat.chunks, cat.Loader(), {.window_bytes = 200});
  ASSERT_TRUE(s.AddJob(1, 100).ok());
  ASSERT_TRUE(s.SetHold(1, 2).ok());
  ASSERT_TRUE(s.SetActive(1, Active({0, 1, 2, 3, 4}), 0).ok());
  std::set<uint64_t> seen;
  for (int k = 0; k < 6; ++k) {
    auto g = AskNow(s, 1);
    ASSERT_TRUE(g.ok()) << g.error().message();
    if (g->end) break;
    ExpectBytesMatchFile(*g->held.lp);
    for (uint64_t id : Ids(g->held)) seen.insert(id);
    EXPECT_LE(s.Stats().live_bytes + s.Stats().loading_bytes, 200u);
  }
  EXPECT_EQ(seen, (std::set<uint64_t>{0, 1, 2, 3, 4}));
}

// Jobs holding two keep their last LP while they wait for the next. Three such jobs whose last
// LPs fill the window all wait: the next LP is let past the window (it waited forever: the
// demo's four-job mix hung with every job waiting, each holding one LP, the window full).
TEST(LpScheduler, JobsHoldingTwoThatFillTheWindowAndAllWaitStillGetTheirNextLp) {
  Catalog cat(6, 100);
  DrivenScheduler s(cat.chunks, cat.Loader(), {.window_bytes = 300});
  for (uint64_t job : {1, 2, 3}) {
    ASSERT_TRUE(s.AddJob(job, 100).ok());
    ASSERT_TRUE(s.SetHold(job, 2).ok());
  }
  ASSERT_TRUE(s.SetActive(1, Active({0, 1}), 0).ok());
  ASSERT_TRUE(s.SetActive(2, Active({2, 3}), 0).ok());
  ASSERT_TRUE(s.SetActive(3, Active({4, 5}), 0).ok());
  // Each asks for its next LP as soon as it has one (as the engines do: the ask for LP k+1
  // goes out when LP k arrives), so every job waits while holding its last LP.
  std::map<uint64_t, std::set<uint64_t>> seen;
  std::map<uint64_t, DrivenScheduler::Answer> pending;
  for (uint64_t job : {1, 2, 3}) pending[job] = Ask(s, job);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!pending.empty()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << pending.size() << " jobs never got their next LP";
    for (auto it = pending.begin(); it != pending.end();) {
      if (it->second.wait_for(1ms) != std::future_status::ready) {
        ++it;
        continue;
      }
      auto g = it->second.get();
      ASSERT_TRUE(g.ok()) << g.error().message();
      if (g->end) {  // its readers finish the last LP, then it is done with it (a new active set)
        s.Done(it->first);
        it = pending.erase(it);
        continue;
      }
      for (uint64_t id : Ids(g->held)) seen[it->first].insert(id);
      it->second = Ask(s, it->first);
      ++it;
    }
  }
  EXPECT_EQ(seen[1], (std::set<uint64_t>{0, 1}));
  EXPECT_EQ(seen[2], (std::set<uint64_t>{2, 3}));
  EXPECT_EQ(seen[3], (std::set<uint64_t>{4, 5}));
  // Past the window by at most one LP at a time.
  EXPECT_LE(s.Stats().live_bytes_peak, 300u + 100u);
}

TEST(LpScheduler, AJobThatLeavesIsNotWaitedOn) {
  Catalog cat(5, 100);  // less than half of it active: no guess of the next iteration
  DrivenScheduler s(cat.chunks, cat.Loader(), {.window_bytes = 100});  // one LP at a time
  ASSERT_TRUE(s.AddJob(1, 100).ok());
  ASSERT_TRUE(s.AddJob(2, 100).ok());
  ASSERT_TRUE(s.SetActive(1, Active({0, 1}), 0).ok());
  ASSERT_TRUE(s.SetActive(2, Active({0, 1}), 0).ok());
  ASSERT_TRUE(AskNow(s, 1).ok());  // LP 1 queued for job 2 too; job 2 never reads it
  auto next1 = Ask(s, 1);
  EXPECT_EQ(next1.wait_for(200ms), std::future_status::timeout);
  s.RemoveJob(2);
  ASSERT_EQ(next1.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(next1.get().ok());
  EXPECT_TRUE(AskNow(s, 1)->end);
  EXPECT_EQ(AskNow(s, 2).error().code(), ENOENT);
  EXPECT_EQ(s.Stats().live_lps, 0u) << "the LPs only job 2 had queued left the window with it";
}

TEST(LpScheduler, AJobWithNothingInTheLiveLpsGetsItsOwnWithoutWaitingForTheirHolders) {
  Catalog cat(4, 100);
  DrivenScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = false});
  ASSERT_TRUE(s.AddJob(1, 100).ok());
  ASSERT_TRUE(s.AddJob(2, 100).ok());
  ASSERT_TRUE(s.SetActive(1, Active({0}), 0).ok());
  auto g1 = AskNow(s, 1);  // job 1 holds LP {0} and keeps it
  ASSERT_TRUE(g1.ok());
  ASSERT_TRUE(s.SetActive(2, Active({3}), 0).ok());
  auto g2 = AskNow(s, 2);
  ASSERT_TRUE(g2.ok());
  EXPECT_EQ(Ids(g2->held), std::set<uint64_t>{3});
  EXPECT_NE(g2->held.lp, g1->held.lp);
  EXPECT_TRUE(AskNow(s, 1)->end);
}

// A sparse job's chunks have low priorities (few active sources): ordered by priority alone,
// each LP made for it held one of them and the dense job's best chunks, so it went through an
// LP per chunk. Made for it, the LP holds every chunk it needs first, then the dense job's.
TEST(LpScheduler, AnLpMadeForASparseJobHoldsAllItNeedsBeforeOthersChunks) {
  Catalog cat(8, 100);
  DrivenScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = false});
  ASSERT_TRUE(s.AddJob(1, 400).ok());  // dense
  ASSERT_TRUE(s.AddJob(2, 400).ok());  // sparse
  ASSERT_TRUE(s.SetActive(1, std::vector<ActiveChunk>{{0, 50, 0}, {2, 50, 0}, {3, 50, 0}, {4, 50, 0}, {7, 50, 0}}, 0).ok());
  ASSERT_TRUE(s.SetActive(2, std::vector<ActiveChunk>{{1, 1, 0}, {5, 1, 0}, {6, 1, 0}}, 0).ok());
  auto g2 = AskNow(s, 2);
  ASSERT_TRUE(g2.ok());
  EXPECT_EQ(Ids(g2->held), (std::set<uint64_t>{1, 5, 6})) << "its whole iteration in the one LP";
  EXPECT_EQ(AllIds(*g2->held.lp), (std::set<uint64_t>{0, 1, 5, 6})) << "the rest: the dense job's best";
  EXPECT_TRUE(AskNow(s, 2)->end);
  EXPECT_EQ(cat.loads.load(), 1u);
  // The dense job gets its first chunk from that LP, the other four in a second one.
  std::set<uint64_t> dense;
  for (int k = 0; k < 2; ++k) {
    auto g1 = AskNow(s, 1);
    ASSERT_TRUE(g1.ok());
    ASSERT_FALSE(g1->end);
    for (uint64_t id : Ids(g1->held)) dense.insert(id);
  }
  EXPECT_EQ(dense, (std::set<uint64_t>{0, 2, 3, 4, 7}));
  EXPECT_TRUE(AskNow(s, 1)->end);
  EXPECT_EQ(cat.loads.load(), 2u);
}

TEST(LpScheduler, CancelAnswersEintrAndASecondAskIsBusy) {
  Catalog cat(2, 100);
  DrivenScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = false});
  ASSERT_TRUE(s.AddJob(1, 100).ok());
  ASSERT_TRUE(s.AddJob(2, 100).ok());
  ASSERT_TRUE(s.SetActive(1, Active({0}), 0).ok());
  ASSERT_TRUE(s.SetActive(2, Active({0, 1}), 0).ok());
  ASSERT_TRUE(AskNow(s, 1).ok());  // LP {0} held by 1, queued for 2
  ASSERT_TRUE(AskNow(s, 2).ok());
  cat.load_delay_ms = 500;  // LP {1} loads slowly
  uint64_t ticket = 0;
  auto waiting = Ask(s, 2, &ticket);
  ASSERT_NE(ticket, 0u);
  EXPECT_EQ(AskNow(s, 2).error().code(), EBUSY);
  EXPECT_TRUE(s.Cancel(2, ticket));
  EXPECT_FALSE(s.Cancel(2, ticket));
  ASSERT_EQ(waiting.wait_for(1s), std::future_status::ready);
  EXPECT_EQ(waiting.get().error().code(), EINTR);
  cat.load_delay_ms = 0;
  auto retry = AskNow(s, 2);  // asking again after the interruption works: the LP loaded meanwhile
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(Ids(retry->held), std::set<uint64_t>{1});
  EXPECT_EQ(cat.loaded_bytes.load(), 200u);
}

TEST(LpScheduler, BadInputIsRejected) {
  Catalog cat(3, 100);
  DrivenScheduler s(cat.chunks, cat.Loader());
  EXPECT_EQ(s.AddJob(1, 0).error().code(), EINVAL);
  ASSERT_TRUE(s.AddJob(1, 100).ok());
  EXPECT_EQ(s.AddJob(1, 100).error().code(), EEXIST);
  EXPECT_EQ(s.SetActive(1, Active({3}), 0).error().code(), EINVAL);
  EXPECT_EQ(s.SetActive(7, Active({0}), 0).error().code(), ENOENT);
  EXPECT_TRUE(AskNow(s, 1)->end);  // no active set: nothing to hand out
}

TEST(LpScheduler, ALoadErrorReachesTheWaitingJobsAndAskingAgainRetries) {
  Catalog cat(2, 100);
  DrivenScheduler s(cat.chunks, cat.Loader());
  ASSERT_TRUE(s.AddJob(1, 100).ok());
  cat.fail = true;  // before the active set: the loads ahead start at once
  ASSERT_TRUE(s.SetActive(1, Active({0, 1}), 0).ok());
  auto g = AskNow(s, 1);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().code(), EIO);
  EXPECT_NE(g.error().message().find("disk 2 failed"), std::string::npos);
  EXPECT_GE(s.Stats().load_errors, 1u);  // a load ahead may have failed before the ask
  cat.fail = false;
  // A load of the other chunk may have been taken before `fail` was cleared (two loaders): its
  // error may answer one more ask (at most one per chunk); asking again then retries it.
  std::set<uint64_t> seen;
  int errors = 0;
  for (int asks = 0; asks < 10; ++asks) {
    auto r = AskNow(s, 1);
    if (!r.ok()) {
      EXPECT_EQ(r.error().code(), EIO);
      ++errors;
      continue;
    }
    if (r->end) break;
    for (uint64_t id : Ids(r->held)) seen.insert(id);
  }
  EXPECT_LE(errors, 1);
  EXPECT_EQ(seen, (std::set<uint64_t>{0, 1}));
}

TEST(LpScheduler, LpsLoadAheadWhileTheCurrentIsRead) {
  Catalog cat(6, 100);
  cat.load_delay_ms = 100;
  DrivenScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = true});
  ASSERT_TRUE(s.AddJob(1, 200).ok());
  ASSERT_TRUE(s.SetActive(1, Active({0, 1, 2, 3, 4, 5}), 0).ok());
  std::multiset<uint64_t> seen;
  for (auto r = AskNow(s, 1); r.ok() && !r->end; r = AskNow(s, 1)) {
    ExpectBytesMatchFile(*r->held.lp);
    for (uint64_t id : Ids(r->held)) seen.insert(id);
    std::this_thread::sleep_for(150ms);  // computing on it
  }
  s.WaitIdle();
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_EQ(std::set<uint64_t>(seen.begin(), seen.end()).size(), 6u);
  const SchedulerStats st = s.Stats();
  EXPECT_EQ(st.lps_built, 3u + 1);  // and the guess of the job's next iteration
  EXPECT_EQ(st.lps_guessed, 1u);
  EXPECT_GE(st.lps_preloaded, 1u) << "the 3rd LP loaded while the first two were read";
  EXPECT_EQ(cat.most_loading.load(), 2) << "two loaders: the next LP's reads start before the last one's end";
  EXPECT_EQ(cat.loaded_bytes.load(), 600u + 200u);
}

// Between iterations nobody needs anything; a dense job's next iteration is guessed to need
// the same chunks, and its first LP is loaded while the job computes (and taken at its next
// SetActive without a load). A sparse job's is not.
TEST(LpScheduler, ADenseJobsNextIterationIsPreloadedOnAGuess) {
  Catalog cat(6, 100);
  DrivenScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = true});
  ASSERT_TRUE(s.AddJob(1, 300).ok());
  for (int iteration = 0; iteration < 3; ++iteration) {
    ASSERT_TRUE(s.SetActive(1, Active({0, 1, 2, 3, 4, 5}), 0).ok());
    std::multiset<uint64_t> seen;
    for (auto r = AskNow(s, 1); r.ok() && !r->end; r = AskNow(s, 1)) {
      ExpectBytesMatchFile(*r->held.lp);
      for (uint64_t id : Ids(r->held)) seen.insert(id);
      s.WaitIdle();
    }
    EXPECT_EQ(seen, (std::multiset<uint64_t>{0, 1, 2, 3, 4, 5}));
    s.WaitIdle();  // between iterations: the guessed first LP of the next one loads
  }
  const SchedulerStats st = s.Stats();
  EXPECT_EQ(st.lps_guessed, 3u);
  EXPECT_EQ(st.lps_built, 2u + 3 + 2);  // two LPs an iteration, but the 2nd and 3rd's first was a guess
  EXPECT_EQ(st.bytes_reused, 2u * 300);
  EXPECT_EQ(cat.loaded_bytes.load(), 3u * 600 + 300) << "each chunk once per iteration, plus the guess after the last";
  EXPECT_EQ(st.bytes_discarded, 0u);  // the last guess is still live, not discarded

  // A sparse job (a third of the file): no guess.
  Catalog sparse(6, 100);
  DrivenScheduler t(sparse.chunks, sparse.Loader(), {.prefetch_next = true});
  ASSERT_TRUE(t.AddJob(1, 300).ok());
  ASSERT_TRUE(t.SetActive(1, Active({2, 4}), 0).ok());
  for (auto r = AskNow(t, 1); r.ok() && !r->end; r = AskNow(t, 1)) t.WaitIdle();
  t.WaitIdle();
  EXPECT_EQ(sparse.loaded_bytes.load(), 200u);
}

// Striped files: an LP loads in the time of its busiest disk, so each disk is filled up to its
// share of the budget before a chunk of a full disk is taken, whatever the priorities say.
TEST(LpScheduler, EachLpIsBalancedOverTheDisks) {
  // Chunks 0-7 on disk 0, 8-15 on disk 1; the priority falls with the id (disk 0's first).
  Catalog cat(16, 100, [](uint64_t id) { return 100.0 - static_cast<double>(id); });
  auto on_disks = [&cat] {
    LpScheduler::Options o{.prefetch_next = false};
    o.disks = 2;
    for (const ChunkInfo& c : cat.chunks) o.chunk_disks.push_back({{static_cast<uint32_t>(c.offset / 800), c.length}});
    return o;
  };
  std::vector<ActiveChunk> all;
  for (uint64_t id = 0; id < 16; ++id) all.push_back({id, 1, 0});

  {  // Unbalanced, the first LP would be chunks 0-3, all on disk 0.
    DrivenScheduler plain(cat.chunks, cat.Loader(), {.prefetch_next = false});
    ASSERT_TRUE(plain.AddJob(1, 400).ok());
    ASSERT_TRUE(plain.SetActive(1, all, 0).ok());
    auto g = AskNow(plain, 1);
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(AllIds(*g->held.lp), (std::set<uint64_t>{0, 1, 2, 3}));
    EXPECT_EQ(plain.Stats().chunks_deferred, 0u);
  }
  {  // Balanced: the best two of each disk; every chunk still comes exactly once.
    DrivenScheduler s(cat.chunks, cat.Loader(), on_disks());
    ASSERT_TRUE(s.AddJob(1, 400).ok());
    ASSERT_TRUE(s.SetActive(1, all, 0).ok());
    auto g = AskNow(s, 1);
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(AllIds(*g->held.lp), (std::set<uint64_t>{0, 1, 8, 9}));
    EXPECT_GT(s.Stats().chunks_deferred, 0u);
    EXPECT_EQ(s.Stats().planned_busiest_disk_bytes, 200u);
    const std::set<uint64_t> first = AllIds(*g->held.lp);
    std::multiset<uint64_t> seen(first.begin(), first.end());
    for (auto r = AskNow(s, 1); r.ok() && !r->end; r = AskNow(s, 1)) {
      const std::set<uint64_t> ids = AllIds(*r->held.lp);
      EXPECT_EQ(ids.size(), 4u);
      EXPECT_EQ(std::count_if(ids.begin(), ids.end(), [](uint64_t id) { return id < 8; }), 2) << "two per disk";
      seen.insert(ids.begin(), ids.end());
    }
    EXPECT_EQ(seen.size(), 16u);
    EXPECT_EQ(std::set<uint64_t>(seen.begin(), seen.end()).size(), 16u);
    EXPECT_EQ(s.Stats().planned_busiest_disk_bytes, 4u * 200);
  }
  {  // What only one disk holds still fills the budget.
    DrivenScheduler s(cat.chunks, cat.Loader(), on_disks());
    ASSERT_TRUE(s.AddJob(1, 400).ok());
    ASSERT_TRUE(s.SetActive(1, Active({0, 1, 2, 3, 4, 5}), 0).ok());
    auto g = AskNow(s, 1);
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(AllIds(*g->held.lp), (std::set<uint64_t>{0, 1, 2, 3}));
    EXPECT_EQ(s.Stats().planned_busiest_disk_bytes, 400u);
  }
}

// A job that starts an iteration takes what LPs other jobs still hold or have queued carry of
// its chunks, without a load (GraphM's sharing when the jobs are out of step).
TEST(LpScheduler, ALateJobTakesLiveLpsWithoutALoad) {
  Catalog cat(10, 100);  // job 1 needs less than half: no guess of its next iteration
  DrivenScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = true});
  ASSERT_TRUE(s.AddJob(1, 200).ok());
  ASSERT_TRUE(s.AddJob(2, 200).ok());
  ASSERT_TRUE(s.SetActive(1, Active({0, 1, 2, 3}), 0).ok());
  auto g1 = AskNow(s, 1);
  ASSERT_TRUE(g1.ok());
  s.WaitIdle();  // job 1's second LP is loaded ahead
  const uint64_t loaded = cat.loaded_bytes.load();
  EXPECT_EQ(loaded, 400u);
  ASSERT_TRUE(s.SetActive(2, Active({1, 2, 5}), 0).ok());
  std::set<uint64_t> got;
  std::set<const LogicalPartition*> lps;
  for (auto r = AskNow(s, 2); r.ok() && !r->end; r = AskNow(s, 2)) {
    ExpectBytesMatchFile(*r->held.lp);
    for (uint64_t id : Ids(r->held)) got.insert(id);
    lps.insert(r->held.lp.get());
  }
  EXPECT_EQ(got, (std::set<uint64_t>{1, 2, 5}));
  EXPECT_TRUE(lps.count(g1->held.lp.get())) << "chunk 1 from the LP job 1 holds";
  EXPECT_EQ(cat.loaded_bytes.load(), loaded + 100) << "only chunk 5 was loaded for it";
  EXPECT_EQ(s.Stats().bytes_reused, 200u);
}

// Two loaders keep the disks busy at an LP boundary; jobs that read more slowly than the loaders
// load rarely wait with nothing loading.
TEST(LpScheduler, LoadersOutpacingTheJobsLeaveThemWaitingOnlyWhileLoading) {
  Catalog cat(40, 100);
  cat.load_delay_ms = 2;
  DrivenScheduler s(cat.chunks, cat.Loader());
  std::vector<ActiveChunk> all;  // less than half of the file: no guess of the next iteration
  for (uint64_t id = 0; id < 19; ++id) all.push_back({id, 1, 0});
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> jobs;
  for (uint64_t job : {1, 2}) {
    ASSERT_TRUE(s.AddJob(job, 200).ok());
    ASSERT_TRUE(s.SetActive(job, all, 0).ok());
  }
  for (uint64_t job : {1, 2}) {
    jobs.emplace_back([&s, job] {
      for (auto r = AskNow(s, job); r.ok() && !r->end; r = AskNow(s, job)) std::this_thread::sleep_for(10ms);
    });
  }
  for (std::thread& t : jobs) t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const SchedulerStats st = s.Stats();
  EXPECT_EQ(cat.loaded_bytes.load(), 1900u) << "each chunk once, shared by both jobs";
  EXPECT_LT(st.loader_idle_while_waiting_seconds, 0.1 * wall);
  EXPECT_EQ(st.window_full_while_waiting_seconds, 0.0);
}

// Many jobs, random active sets, random pace, one job leaving: every job sees each of its
// chunks exactly once per iteration and nobody hangs.
TEST(LpScheduler, ManyJobsConcurrently) {
  Catalog cat(64, 64, [](uint64_t id) { return 1.0 + static_cast<double>(id % 5); });
  cat.load_delay_ms = 1;
  DrivenScheduler s(cat.chunks, cat.Loader());
  constexpr int kJobs = 8, kIterations = 6;
  std::mutex failures_mu;
  std::vector<std::string> failures;
  auto fail = [&](int job, const std::string& what) {
    std::lock_guard<std::mutex> lock(failures_mu);
    failures.push_back("job " + std::to_string(job) + ": " + what);
  };
  std::vector<std::thread> threads;
  for (int job = 0; job < kJobs; ++job) {
    threads.emplace_back([&, job] {
      std::mt19937 rng(static_cast<uint32_t>(job) * 7919u);
      if (!s.AddJob(static_cast<uint64_t>(job), 64u * (1 + job % 4)).ok()) return fail(job, "AddJob");
      for (int it = 0; it < kIterations; ++it) {
        if (job == kJobs - 1 && it == 2) {  // this one dies mid-iteration
          ASSERT_TRUE(AskNow(s, static_cast<uint64_t>(job)).ok());
          s.RemoveJob(static_cast<uint64_t>(job));
          return;
        }
        std::vector<ActiveChunk> active;
        std::set<uint64_t> want;
        for (uint64_t c = 0; c < 64; ++c) {
          if (rng() % 3 == 0) {
            active.push_back({c, static_cast<uint32_t>(1 + rng() % 9), 0});
            want.insert(c);
          }
        }
        if (!s.SetActive(static_cast<uint64_t>(job), active, 0).ok()) return fail(job, "SetActive");
        std::multiset<uint64_t> got;
        while (true) {
          auto r = AskNow(s, static_cast<uint64_t>(job));
          if (!r.ok()) return fail(job, "iteration " + std::to_string(it) + ": " + r.error().message());
          if (r->end) break;
          for (const ViewPiece& p : r->held.pieces) got.insert(p.chunk);
          if (rng() % 2) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
          if (rng() % 3 == 0) s.Done(static_cast<uint64_t>(job));
        }
        if (got != std::multiset<uint64_t>(want.begin(), want.end()))
          fail(job, "iteration " + std::to_string(it) + ": got " + std::to_string(got.size()) + " of " +
                        std::to_string(want.size()) + " chunks");
      }
      s.RemoveJob(static_cast<uint64_t>(job));
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& f : failures) ADD_FAILURE() << f;
  EXPECT_EQ(s.stray_answers(), 0u) << "every parked ask got exactly one answer";
}

// ---- the pull API: the scheduler decides, its caller loads and answers ----

// With no loader thread nothing loads: an ask is parked; the plan a caller takes holds what the
// job needs; its answer reaches the queue only when the caller finishes the plan.
TEST(LpSchedulerPull, NothingLoadsUntilACallerTakesAPlanAndTheAnswerComesThroughTheQueue) {
  Catalog cat(4, 100);
  LpScheduler s(cat.chunks, {.prefetch_next = false});
  ASSERT_TRUE(s.AddJob(1, 200).ok());
  ASSERT_TRUE(s.SetActive(1, Active({1, 3}), 0).ok());
  const uint64_t ticket = s.answers()->NewTicket();
  EXPECT_FALSE(s.Next(1, ticket).has_value()) << "nothing is loaded: the ask is parked";
  EXPECT_FALSE(s.answers()->WaitFor(50ms).has_value());
  EXPECT_EQ(s.View(1)->state, "waiting");

  std::optional<LpScheduler::LoadPlan> plan = s.TakePlan();
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(AllIds(plan->lp()), (std::set<uint64_t>{1, 3}));
  EXPECT_EQ(s.Stats().lps_in_flight, 1u);
  EXPECT_EQ(s.answers()->pending(), 0u) << "no answer before the LP is loaded";
  ASSERT_TRUE(cat.Loader()(plan->lp()).ok());
  s.Finish(std::move(*plan), Status::Ok(), 0.0);

  std::optional<LpAnswer> a = s.answers()->WaitFor(1s);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->ticket, ticket);
  ASSERT_TRUE(a->result.ok()) << a->result.error().message();
  EXPECT_EQ(Ids(a->result->held), (std::set<uint64_t>{1, 3}));
  ExpectBytesMatchFile(*a->result->held.lp);
  EXPECT_EQ(s.Stats().lps_in_flight, 0u);
  // The end is known at once: answered by Next, nothing pushed.
  std::optional<Result<LpGrant>> end = s.Next(1, s.answers()->NewTicket());
  ASSERT_TRUE(end.has_value());
  ASSERT_TRUE(end->ok());
  EXPECT_TRUE((*end)->end);
  EXPECT_EQ(s.answers()->pending(), 0u);
}

// A failed load reaches the waiting job through the queue, and its chunks are planned again.
TEST(LpSchedulerPull, AFailedLoadAnswersTheWaiterWithTheErrorAndPlansAgain) {
  Catalog cat(2, 100);
  LpScheduler s(cat.chunks, {.prefetch_next = false});
  ASSERT_TRUE(s.AddJob(1, 200).ok());
  ASSERT_TRUE(s.SetActive(1, Active({0}), 0).ok());
  const uint64_t ticket = s.answers()->NewTicket();
  ASSERT_FALSE(s.Next(1, ticket).has_value());
  std::optional<LpScheduler::LoadPlan> plan = s.TakePlan();
  ASSERT_TRUE(plan.has_value());
  s.Finish(std::move(*plan), Error(EIO, "disk 1 failed"), 0.0);
  std::optional<LpAnswer> a = s.answers()->WaitFor(1s);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->ticket, ticket);
  ASSERT_FALSE(a->result.ok());
  EXPECT_EQ(a->result.error().code(), EIO);
  EXPECT_NE(a->result.error().message().find("disk 1 failed"), std::string::npos);
  EXPECT_EQ(s.Stats().load_errors, 1u);
  // Asking again plans the same chunk again.
  ASSERT_FALSE(s.Next(1, s.answers()->NewTicket()).has_value());
  plan = s.TakePlan();
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(AllIds(plan->lp()), std::set<uint64_t>{0});
}

// A loader that fills too little of its LP is an error, not a published LP with holes.
TEST(LpSchedulerPull, AnLpLeftWithBytesWithoutAPlaceIsNotPublished) {
  Catalog cat(2, 100);
  LpScheduler s(cat.chunks, {.prefetch_next = false});
  ASSERT_TRUE(s.AddJob(1, 200).ok());
  ASSERT_TRUE(s.SetActive(1, Active({0, 1}), 0).ok());
  const uint64_t ticket = s.answers()->NewTicket();
  ASSERT_FALSE(s.Next(1, ticket).has_value());
  std::optional<LpScheduler::LoadPlan> plan = s.TakePlan();
  ASSERT_TRUE(plan.has_value());
  s.Finish(std::move(*plan), Status::Ok(), 0.0);  // nothing placed
  std::optional<LpAnswer> a = s.answers()->WaitFor(1s);
  ASSERT_TRUE(a.has_value());
  ASSERT_FALSE(a->result.ok());
  EXPECT_EQ(a->result.error().code(), EIO);
}

// Stop ends TakePlan for every caller, including one blocked in it; the destructor answers a
// parked ask with ECANCELED.
TEST(LpSchedulerPull, StopReleasesCallersBlockedInTakePlanAndTheEndAnswersParkedAsks) {
  Catalog cat(2, 100);
  std::shared_ptr<LpAnswers> answers = std::make_shared<LpAnswers>();
  uint64_t ticket = 0;
  {
    LpScheduler s(cat.chunks, {.window_bytes = 100, .answers = answers});
    ASSERT_TRUE(s.AddJob(1, 100).ok());
    ASSERT_TRUE(s.SetActive(1, Active({0, 1}), 0).ok());
    std::optional<LpScheduler::LoadPlan> first = s.TakePlan();  // fills the window
    ASSERT_TRUE(first.has_value());
    auto blocked = std::async(std::launch::async, [&] { return s.TakePlan().has_value(); });
    EXPECT_EQ(blocked.wait_for(100ms), std::future_status::timeout) << "the window is full";
    ticket = answers->NewTicket();
    ASSERT_FALSE(s.Next(1, ticket).has_value());
    s.Stop();
    ASSERT_EQ(blocked.wait_for(2s), std::future_status::ready);
    EXPECT_FALSE(blocked.get());
    EXPECT_FALSE(s.TakePlan().has_value());
  }  // `first` is dropped unfinished: nobody publishes it
  std::optional<LpAnswer> a = answers->WaitFor(1s);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->ticket, ticket);
  ASSERT_FALSE(a->result.ok());
  EXPECT_EQ(a->result.error().code(), ECANCELED);
}

// ---- vertex-granular LPs ----

// `count` chunks of 20 sources each (chunk c: sources 100c .. 100c+19), 5 edges of 8 bytes a
// source, so a chunk is 800 bytes and source 100c+k's edges are bytes [40k, 40k+40) of it.
// Chunks in `unsorted` have no runs.
struct SortedCatalog : Catalog {
  SourceRuns runs;
  explicit SortedCatalog(uint64_t count, std::set<uint64_t> unsorted = {}) : Catalog(count, 800), runs(Make(count, unsorted)) {
    for (ChunkInfo& c : chunks) c.num_sources = 20;
  }
  static SourceRuns Make(uint64_t count, const std::set<uint64_t>& unsorted) {
    std::vector<SourceRuns::ChunkSources> per;
    for (uint64_t c = 0; c < count; ++c) {
      SourceRuns::ChunkSources cs;
      cs.length = 800;
      if (!unsorted.count(c))
        for (uint32_t k = 0; k < 20; ++k) cs.sources.push_back({static_cast<uint32_t>(100 * c + k), 5});
      per.push_back(cs);
    }
    return SourceRuns::FromChunks(8, per);
  }
  LpScheduler::Options Options(bool prefetch = false) const {
    LpScheduler::Options o;
    o.prefetch_next = prefetch;
    o.granularity = LpScheduler::Options::Granularity::kVertex;
    o.runs = &runs;
    o.cost.bytes_per_second = 1e9;
    o.cost.seconds_per_request = 1e-9;  // no gap is worth reading through
    o.cost.align = 1;
    o.scan_edges_per_run = 0;  // the runs, however dense (the dense rules' tests set them)
    o.edge_dense_share = 0;
    return o;
  }
};

std::shared_ptr<const std::vector<uint64_t>> Bits(uint64_t vertices, std::initializer_list<uint64_t> ids) {
  auto words = std::make_shared<std::vector<uint64_t>>((vertices + 63) / 64, 0);
  for (uint64_t v : ids) (*words)[v / 64] |= uint64_t{1} << (v % 64);
  return words;
}

using Piece = std::tuple<uint64_t, uint64_t, uint64_t>;  // chunk, file offset, length

std::vector<Piece> Pieces(const HeldLp& held) {
  std::vector<Piece> out;
  uint64_t at = 0;
  for (const ViewPiece& p : held.pieces) {
    out.emplace_back(p.chunk, p.file_offset, p.length);
    // The view's bytes are the file's bytes.
    for (uint64_t k = 0; k < p.length; k += 3) EXPECT_EQ(*held.lp->memory.At(p.lp_offset + k), FileByte(p.file_offset + k));
    at += p.length;
  }
  EXPECT_EQ(at, held.bytes());
  return out;
}

// Compressed chunks: the plan takes the runs (a smaller LP) but counts each chunk's whole frame
// as its disk bytes, since the frame is read and decoded whatever part of it is wanted.
TEST(LpSchedulerVertexGranular, ACompressedChunkCostsItsFrame) {
  SortedCatalog cat(2);
  for (ChunkInfo& c : cat.chunks) c.stored_length = 300;
  DrivenScheduler s(cat.chunks, cat.Loader(), cat.Options());
  ASSERT_TRUE(s.AddJob(1, 1 << 20).ok());
  std::vector<uint64_t> active = {0, 1};
  for (uint64_t v = 100; v < 120; ++v) active.push_back(v);
  auto bits = std::make_shared<std::vector<uint64_t>>(4, 0);
  for (uint64_t v : active) (*bits)[v / 64] |= uint64_t{1} << (v % 64);
  ASSERT_TRUE(s.SetActive(1, std::vector<ActiveChunk>{{0, 2, 1}, {1, 20, 1}}, 0, bits).ok());
  auto g = AskNow(s, 1);
  ASSERT_TRUE(g.ok()) << g.error().message();
  EXPECT_EQ(Pieces(g->held), (std::vector<Piece>{{0, 0, 80}, {1, 800, 800}}));
  const SchedulerStats st = s.Stats();
  EXPECT_EQ(st.bytes_loaded, 880u);
  EXPECT_EQ(st.planned_disk_bytes, 600u);  // two frames
}

// The dense rule (Options::scan_edges_per_run): a job with enough active sources in a chunk
// reads it whole (its engine skips the inactive sources' edges), one piece instead of a run per
// source; a sparse one still gets its runs, also from an LP that holds the chunk whole.
TEST(LpSchedulerVertexGranular, ADenseJobReadsTheWholeChunkASparseOneItsRuns) {
  SortedCatalog cat(2);
  LpScheduler::Options options = cat.Options();
  options.scan_edges_per_run = 10;  // 100 edges a chunk: 10 active sources or more read it whole
  DrivenScheduler s(cat.chunks, cat.Loader(), options);
  ASSERT_TRUE(s.AddJob(1, 1 << 20).ok());
  ASSERT_TRUE(s.AddJob(2, 1 << 20).ok());
  std::vector<uint64_t> dense;  // chunk 0: sources 0, 2, ... 18 (10 of 20); chunk 1: 9 of 20
  for (uint64_t v = 0; v < 20; v += 2) dense.push_back(v);
  for (uint64_t v = 100; v < 118; v += 2) dense.push_back(v);
  auto dense_bits = std::make_shared<std::vector<uint64_t>>(4, 0);
  for (uint64_t v : dense) (*dense_bits)[v / 64] |= uint64_t{1} << (v % 64);
  ASSERT_TRUE(s.SetActive(1, std::vector<ActiveChunk>{{0, 10, 1}, {1, 9, 1}}, 0, dense_bits).ok());
  ASSERT_TRUE(s.SetActive(2, std::vector<ActiveChunk>{{0, 1, 1}}, 0, Bits(200, {3})).ok());
  auto a = AskNow(s, 1);
  ASSERT_TRUE(a.ok()) << a.error().message();
  std::vector<Piece> want = {{0, 0, 800}};                              // chunk 0 whole
  for (uint64_t k = 0; k < 18; k += 2) want.push_back({1, 800 + 40 * k, 40});  // chunk 1: its 9 runs
  EXPECT_EQ(Pieces(a->held), want);
  auto b = AskNow(s, 2);
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_EQ(Pieces(b->held), (std::vector<Piece>{{0, 120, 40}}));  // its run, from the whole chunk
  EXPECT_EQ(a->held.lp, b->held.lp);                                  // one LP for both
  EXPECT_EQ(s.Stats().bytes_loaded, 800u + 9 * 40);
}

// The dense rule for chunks in memory (SetResident, Options::resident_scan_edges_per_run): a
// chunk the volume says is cached decoded is read whole from far fewer active sources than one
// that costs a read; the others keep the ordinary rule, and a chunk no longer in memory is cut
// into runs again.
TEST(LpSchedulerVertexGranular, AChunkInMemoryIsReadWholeFromFewerActiveSources) {
  SortedCatalog cat(3);
  LpScheduler::Options options = cat.Options();
  options.scan_edges_per_run = 10;           // 100 edges a chunk: 10 active sources read it whole
  options.resident_scan_edges_per_run = 50;  // in memory: 2 do
  DrivenScheduler s(cat.chunks, cat.Loader(), options);
  ASSERT_TRUE(s.AddJob(1, 1 << 20).ok());
  s.SetResident({true, false});  // chunk 0 in memory; chunk 1 not; chunk 2 beyond the list: not
  EXPECT_EQ(s.Stats().resident_chunks, 1u);
  // Two active sources in each chunk: 0 and 5, 100 and 105, 200 and 205.
  ASSERT_TRUE(
      s.SetActive(1, std::vector<ActiveChunk>{{0, 2, 1}, {1, 2, 1}, {2, 2, 1}}, 0, Bits(300, {0, 5, 100, 105, 200, 205}))
          .ok());
  auto a = AskNow(s, 1);
  ASSERT_TRUE(a.ok()) << a.error().message();
  EXPECT_EQ(Pieces(a->held), (std::vector<Piece>{{0, 0, 800},
                                                 {1, 800, 40}, {1, 800 + 5 * 40, 40},
                                                 {2, 1600, 40}, {2, 1600 + 5 * 40, 40}}));
  EXPECT_EQ(s.Stats().bytes_loaded, 800u + 4 * 40);
  EXPECT_GT(s.Stats().resident_whole, 0u);
  s.Done(1);
  // One active source in chunk 0 is below even the resident rule; and with chunk 0 gone from
  // memory, two are cut into runs again.
  ASSERT_TRUE(s.SetActive(1, std::vector<ActiveChunk>{{0, 1, 1}}, 0, Bits(300, {7})).ok());
  auto b = AskNow(s, 1);
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_EQ(Pieces(b->held), (std::vector<Piece>{{0, 7 * 40, 40}}));
  s.Done(1);
  s.SetResident({});
  EXPECT_EQ(s.Stats().resident_chunks, 0u);
  ASSERT_TRUE(s.SetActive(1, std::vector<ActiveChunk>{{0, 2, 1}}, 0, Bits(300, {1, 3})).ok());
  auto c = AskNow(s, 1);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(Pieces(c->held), (std::vector<Piece>{{0, 40, 40}, {0, 3 * 40, 40}}));
}

// The edge-dense rule (Options::edge_dense_share): a job whose active sources' edges are at
// least that share of a chunk reads it whole, whatever its count of active sources. The share
// is measured by cutting the runs once per active set: the next set is cut again.
TEST(LpSchedulerVertexGranular, AJobWhoseActiveSourcesHoldMostOfAChunksEdgesReadsItWhole) {
  SortedCatalog cat(2);
  LpScheduler::Options options = cat.Options();
  options.edge_dense_share = 0.875;  // of 20 sources of 5 edges each: 18 active or more
  DrivenScheduler s(cat.chunks, cat.Loader(), options);
  ASSERT_TRUE(s.AddJob(1, 1 << 20).ok());
  std::vector<uint64_t> active;  // chunk 0: sources 0-17 (18 of 20: 0.9); chunk 1: 100-116 (17: 0.85)
  for (uint64_t v = 0; v < 18; ++v) active.push_back(v);
  for (uint64_t v = 100; v < 117; ++v) active.push_back(v);
  auto bits = std::make_shared<std::vector<uint64_t>>(4, 0);
  for (uint64_t v : active) (*bits)[v / 64] |= uint64_t{1} << (v % 64);
  ASSERT_TRUE(s.SetActive(1, std::vector<ActiveChunk>{{0, 18, 1}, {1, 17, 1}}, 0, bits).ok());
  auto a = AskNow(s, 1);
  ASSERT_TRUE(a.ok()) << a.error().message();
  // Chunk 0 whole (one piece, the LP holds it whole), chunk 1 its run of sources 100-116.
  EXPECT_EQ(Pieces(a->held), (std::vector<Piece>{{0, 0, 800}, {1, 800, 17 * 40}}));
  EXPECT_EQ(s.Stats().bytes_loaded, 800u + 17 * 40);
  s.Done(1);
  // The next active set: 3 sources of chunk 0. Its runs are cut again, not the whole chunk.
  ASSERT_TRUE(s.SetActive(1, std::vector<ActiveChunk>{{0, 3, 1}}, 0, Bits(200, {1, 2, 3})).ok());
  auto b = AskNow(s, 1);
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_EQ(Pieces(b->held), (std::vector<Piece>{{0, 40, 120}}));
}

TEST(LpSchedulerVertexGranular, EachViewHoldsOnlyItsJobsActiveSources) {
  SortedCatalog cat(6, /*unsorted=*/{5});
  DrivenScheduler s(cat.chunks, cat.Loader(), cat.Options());
  ASSERT_TRUE(s.AddJob(1, 1 << 20).ok());
  ASSERT_TRUE(s.AddJob(2, 1 << 20).ok());
  ASSERT_TRUE(s.AddJob(3, 1 << 20).ok());
  std::initializer_list<uint64_t> all_of_2 = {200, 201, 202, 203, 204, 205, 206, 207, 208, 209,
                                              210, 211, 212, 213, 214, 215, 216, 217, 218, 219};
  std::vector<uint64_t> job1 = {0, 1, 7, 105, 501};
  job1.insert(job1.end(), all_of_2.begin(), all_of_2.end());
  auto bits1 = std::make_shared<std::vector<uint64_t>>(10, 0);
  for (uint64_t v : job1) (*bits1)[v / 64] |= uint64_t{1} << (v % 64);
  ASSERT_TRUE(s.SetActive(1, std::vector<ActiveChunk>{{0, 3, 1}, {1, 1, 1}, {2, 20, 1}, {5, 1, 1}}, 0, bits1).ok());
  ASSERT_TRUE(s.SetActive(2, std::vector<ActiveChunk>{{0, 2, 1}, {3, 1, 1}}, 0, Bits(600, {1, 2, 300})).ok());
  ASSERT_TRUE(s.SetActive(3, std::vector<ActiveChunk>{{4, 1, 1}}, 0, nullptr).ok());  // no bitmap: whole chunks

  auto g1 = AskNow(s, 1);
  ASSERT_TRUE(g1.ok()) << g1.error().message();
  ASSERT_FALSE(g1->end);
  ExpectBytesMatchFile(*g1->held.lp);
  // The LP: chunk 0 as the union of both jobs' runs (sources 0-2 and 7), chunk 1's source 5,
  // chunk 2 whole (every source active), chunk 3's source 0, chunk 4 whole (job 3 has no
  // bitmap), chunk 5 whole (not in source order).
  std::vector<Piece> extents;
  for (const LpExtent& e : g1->held.lp->extents) extents.emplace_back(e.chunk, e.file_offset, e.length);
  EXPECT_EQ(extents, (std::vector<Piece>{{0, 0, 120}, {0, 280, 40}, {1, 1000, 40}, {2, 1600, 800}, {3, 2400, 40},
                                         {4, 3200, 800}, {5, 4000, 800}}));
  EXPECT_EQ(Pieces(g1->held),
            (std::vector<Piece>{{0, 0, 80}, {0, 280, 40}, {1, 1000, 40}, {2, 1600, 800}, {5, 4000, 800}}));
  auto g2 = AskNow(s, 2);
  ASSERT_TRUE(g2.ok());
  EXPECT_EQ(g2->held.lp, g1->held.lp);  // one LP, shared
  EXPECT_EQ(Pieces(g2->held), (std::vector<Piece>{{0, 40, 80}, {3, 2400, 40}}));
  auto g3 = AskNow(s, 3);
  ASSERT_TRUE(g3.ok());
  EXPECT_EQ(Pieces(g3->held), (std::vector<Piece>{{4, 3200, 800}}));
  // The map lists the pieces, packed in the view.
  EXPECT_EQ(g2->held.MapText(), "0 40 80 0\n3 2400 40 80\n");

  const SchedulerStats st = s.Stats();
  EXPECT_EQ(st.chunks_partial, 3u);
  EXPECT_EQ(st.chunks_whole, 2u);
  EXPECT_EQ(st.chunks_unsorted, 1u);
  EXPECT_EQ(st.bytes_loaded, 120u + 40 + 40 + 800 + 40 + 800 + 800);
  EXPECT_EQ(st.bytes_skipped, 6u * 800 - st.bytes_loaded);
  EXPECT_EQ(cat.loaded_bytes.load(), st.bytes_loaded);
  // The offline reference: the union of what the takers took per chunk is what was loaded
  // (every planned byte was taken); without sharing chunk 0's sources 1 and 2 count twice.
  EXPECT_EQ(st.planned_disk_bytes, st.bytes_loaded);
  EXPECT_EQ(st.offline_disk_bytes, st.bytes_loaded);
  EXPECT_EQ(st.offline_unshared_disk_bytes, st.bytes_loaded + 40);
  for (uint64_t j : {1, 2, 3}) {
    auto end = AskNow(s, j);
    ASSERT_TRUE(end.ok());
    EXPECT_TRUE(end->end);
  }
  auto v1 = s.View(1);
  ASSERT_TRUE(v1.ok());
  EXPECT_EQ(v1->recent.back().partial_chunks, 2u);
  EXPECT_EQ(v1->recent.back().whole_chunks, 2u);
}


// A SortedCatalog's every chunk active with one source each (chunk c's source 100 c + `source`).
std::shared_ptr<std::vector<uint64_t>> OneSourcePerChunk(uint64_t chunks, uint64_t source) {
  auto bits = std::make_shared<std::vector<uint64_t>>((100 * chunks + 63) / 64, 0);
  for (uint64_t c = 0; c < chunks; ++c) (*bits)[(100 * c + source) / 64] |= uint64_t{1} << ((100 * c + source) % 64);
  return bits;
}
std::vector<ActiveChunk> EveryChunk(uint64_t chunks) {
  std::vector<ActiveChunk> active;
  for (uint64_t c = 0; c < chunks; ++c) active.push_back({c, 1, 1});
  return active;
}

TEST(LpSchedulerVertexGranular, ThePartitionBudgetCountsWhatTheLpHolds) {
  // 40 chunks with one active source each (40 bytes): a 400-byte partition holds ten of them.
  SortedCatalog cat(40);
  DrivenScheduler s(cat.chunks, cat.Loader(), cat.Options());
  ASSERT_TRUE(s.AddJob(1, 400).ok());
  ASSERT_TRUE(s.SetActive(1, EveryChunk(40), 0, OneSourcePerChunk(40, 3)).ok());
  uint64_t lps = 0, pieces = 0;
  for (;;) {
    auto g = AskNow(s, 1);
    ASSERT_TRUE(g.ok());
    if (g->end) break;
    ++lps;
    EXPECT_LE(g->held.lp->size, 400u);
    for (const Piece& p : Pieces(g->held)) {
      EXPECT_EQ(std::get<1>(p), std::get<0>(p) * 800 + 3 * 40);
      EXPECT_EQ(std::get<2>(p), 40u);
      ++pieces;
    }
  }
  EXPECT_EQ(pieces, 40u);
  EXPECT_EQ(lps, 4u);
}

// Options::max_lp_disk_bytes: a sparse pass over compressed chunks holds a run of each (40 bytes
// of 800) but reads each frame (300 bytes); the partition budget alone puts the whole pass in one
// LP, the cap cuts it into LPs of at most that much reading. A chunk in memory as the jobs read
// it (SetResident) costs no reading.
TEST(LpSchedulerVertexGranular, AnLpReadsAtMostItsDiskCapOfFrames) {
  for (const uint64_t cap : {uint64_t{0}, uint64_t{600}, uint64_t{700}}) {
    SortedCatalog cat(8);
    for (ChunkInfo& c : cat.chunks) c.stored_length = 300;
    LpScheduler::Options options = cat.Options();
    options.max_lp_disk_bytes = cap;
    DrivenScheduler s(cat.chunks, cat.Loader(), options);
    s.SetResident({false, false, false, false, false, false, true, true});  // chunks 6 and 7 in memory
    ASSERT_TRUE(s.AddJob(1, 1 << 20).ok());
    ASSERT_TRUE(s.SetActive(1, EveryChunk(8), 0, OneSourcePerChunk(8, 3)).ok());
    std::vector<std::set<uint64_t>> lps;
    uint64_t pieces = 0;
    for (;;) {
      auto g = AskNow(s, 1);
      ASSERT_TRUE(g.ok()) << g.error().message();
      if (g->end) break;
      lps.push_back(AllIds(*g->held.lp));
      for (const Piece& p : Pieces(g->held)) {
        EXPECT_EQ(std::get<1>(p), std::get<0>(p) * 800 + 3 * 40);
        ++pieces;
      }
    }
    EXPECT_EQ(pieces, 8u) << "cap " << cap;
    EXPECT_EQ(s.Stats().planned_disk_bytes, 8u * 300) << "cap " << cap;
    if (cap == 0) {
      EXPECT_EQ(lps.size(), 1u);  // the whole pass in one LP
      continue;
    }
    // Two frames a LP (600 or 700 bytes), the two chunks in memory beside any of them: 3 LPs.
    EXPECT_EQ(lps.size(), 3u) << "cap " << cap;
    for (const std::set<uint64_t>& ids : lps) {
      uint64_t read = 0;
      for (uint64_t c : ids) read += c < 6 ? 300 : 0;
      EXPECT_LE(read, cap);
    }
  }
}

// With the cap, a job that starts its sparse pass while another's is under way joins it at its
// next LP: the chunks both still need are read once for both, and only what the first had
// already read is read again for the second. Without it, the first job's one LP is the whole
// pass and the second job's is another.
TEST(LpSchedulerVertexGranular, AJobStartingItsPassLateJoinsTheNextLpUnderTheDiskCap) {
  for (const uint64_t cap : {uint64_t{0}, uint64_t{600}}) {
    SortedCatalog cat(8);
    for (ChunkInfo& c : cat.chunks) c.stored_length = 300;
    LpScheduler::Options options = cat.Options();
    options.max_lp_disk_bytes = cap;
    DrivenScheduler s(cat.chunks, cat.Loader(), options);
    ASSERT_TRUE(s.AddJob(1, 1 << 20).ok());
    ASSERT_TRUE(s.AddJob(2, 1 << 20).ok());
    ASSERT_TRUE(s.SetActive(1, EveryChunk(8), 0, OneSourcePerChunk(8, 3)).ok());
    auto first = AskNow(s, 1);
    ASSERT_TRUE(first.ok()) << first.error().message();
    ASSERT_FALSE(first->end);
    // Job 2 starts its pass while job 1 reads its first LP.
    ASSERT_TRUE(s.SetActive(2, EveryChunk(8), 0, OneSourcePerChunk(8, 5)).ok());
    uint64_t pieces[3] = {0, Pieces(first->held).size(), 0};
    bool ended[3] = {false, false, false};
    for (int round = 0; round < 40 && !(ended[1] && ended[2]); ++round) {
      for (uint64_t job : {uint64_t{2}, uint64_t{1}}) {
        if (ended[job]) continue;
        auto g = AskNow(s, job);
        ASSERT_TRUE(g.ok()) << g.error().message();
        if (g->end) {
          ended[job] = true;
          continue;
        }
        for (const Piece& p : Pieces(g->held)) {
          EXPECT_EQ(std::get<1>(p), std::get<0>(p) * 800 + (job == 1 ? 3 : 5) * 40);
          ++pieces[job];
        }
      }
    }
    ASSERT_TRUE(ended[1] && ended[2]);
    EXPECT_EQ(pieces[1], 8u);
    EXPECT_EQ(pieces[2], 8u);
    // Without the cap: 8 frames for job 1's LP and 8 for job 2's. With it: job 1's first LP (2
    // frames), the 6 both need once, and job 2's 2 that job 1's first LP held.
    EXPECT_EQ(s.Stats().planned_disk_bytes, (cap == 0 ? 16u : 10u) * 300) << "cap " << cap;
  }
}

// A selection plans every candidate until the LP is full, and most of them do not fit when LPs
// are small beside the chunks; the next selection takes those plans from the memo instead of
// cutting the same runs again — but only for the same active sets: a new one plans anew.
// With its cuts kept (the default) or not (kept_runs_per_job 0): the same pieces; kept, each
// chunk is cut once per active set.
class PlansLeft : public ::testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(CutsKept, PlansLeft, ::testing::Bool());

TEST_P(PlansLeft, PlansLeftByOneLpServeTheNextUntilTheActiveSetChanges) {
  const bool kept = GetParam();
  SortedCatalog cat(8);
  LpScheduler::Options options = cat.Options();
  if (!kept) options.kept_runs_per_job = 0;
  DrivenScheduler s(cat.chunks, cat.Loader(), options);
  ASSERT_TRUE(s.AddJob(1, 200).ok());  // one chunk's runs (120 bytes) per LP
  auto first_three = std::make_shared<std::vector<uint64_t>>((800 + 63) / 64, 0);
  std::vector<ActiveChunk> active;
  for (uint64_t c = 0; c < 8; ++c) {
    active.push_back({c, 3, 1});
    for (uint64_t k = 0; k < 3; ++k) (*first_three)[(100 * c + k) / 64] |= uint64_t{1} << ((100 * c + k) % 64);
  }
  ASSERT_TRUE(s.SetActive(1, active, 0, first_three).ok());
  for (uint64_t c = 0; c < 3; ++c) {
    auto g = AskNow(s, 1);
    ASSERT_TRUE(g.ok()) << g.error().message();
    EXPECT_EQ(Pieces(g->held), (std::vector<Piece>{{c, 800 * c, 120}}));
  }
  // The first selection planned all eight chunks and took one; the next two took theirs and
  // the other chunks' plans from the memo.
  SchedulerStats st = s.Stats();
  EXPECT_EQ(st.plans_made, 8u);
  EXPECT_EQ(st.plans_reused, 7u + 6u);
  // Kept, each chunk's runs were cut once, in its plan, and the three views published took their
  // cut; not kept, each view cut them again.
  EXPECT_EQ(st.runs_cut, kept ? 8u : 8u + 3u);
  EXPECT_EQ(st.runs_reused, kept ? 3u : 0u);

  // A new active set (source 5 of every chunk): the memo's plans of sources 0-2 are stale.
  auto fifth = std::make_shared<std::vector<uint64_t>>((800 + 63) / 64, 0);
  for (uint64_t c = 0; c < 8; ++c) {
    active[c].active_sources = 1;
    (*fifth)[(100 * c + 5) / 64] |= uint64_t{1} << ((100 * c + 5) % 64);
  }
  ASSERT_TRUE(s.SetActive(1, active, 0, fifth).ok());
  std::vector<Piece> got;
  for (;;) {
    auto g = AskNow(s, 1);
    ASSERT_TRUE(g.ok()) << g.error().message();
    if (g->end) break;
    for (const Piece& p : Pieces(g->held)) got.push_back(p);
  }
  std::sort(got.begin(), got.end());
  std::vector<Piece> want;
  for (uint64_t c = 0; c < 8; ++c) want.push_back({c, 800 * c + 5 * 40, 40});
  EXPECT_EQ(got, want);
  st = s.Stats();
  EXPECT_GE(st.plans_made, 8u + 8u);  // every chunk planned again for the new set
  if (kept) {
    EXPECT_EQ(st.runs_cut, 8u + 8u);     // and cut once for it
    EXPECT_GE(st.runs_reused, 3u + 8u);  // each view published took its plan's cut (a plan made again too)
  } else {
    EXPECT_GE(st.runs_cut, 8u + 3u + 8u + 8u);
    EXPECT_EQ(st.runs_reused, 0u);
  }
}

// Many jobs with random bitmaps, a preloading scheduler: every job gets, per iteration, exactly
// the runs of its own active sources in each chunk, once.
TEST(LpSchedulerVertexGranular, ManyJobsGetExactlyTheirRuns) {
  SortedCatalog cat(48, {7, 30});
  cat.load_delay_ms = 1;
  DrivenScheduler s(cat.chunks, cat.Loader(), cat.Options(/*prefetch=*/true));
  constexpr int kJobs = 6, kIterations = 5;
  std::mutex failures_mu;
  std::vector<std::string> failures;
  auto fail = [&](int job, const std::string& what) {
    std::lock_guard<std::mutex> lock(failures_mu);
    failures.push_back("job " + std::to_string(job) + ": " + what);
  };
  std::vector<std::thread> threads;
  for (int job = 0; job < kJobs; ++job) {
    threads.emplace_back([&, job] {
      std::mt19937 rng(static_cast<uint32_t>(job) * 104729u + 1);
      if (!s.AddJob(static_cast<uint64_t>(job), 800u * (1 + job % 3)).ok()) return fail(job, "AddJob");
      for (int it = 0; it < kIterations; ++it) {
        auto bits = std::make_shared<std::vector<uint64_t>>((4800 + 63) / 64, 0);
        std::vector<ActiveChunk> active;
        std::set<Piece> want;
        for (uint64_t c = 0; c < 48; ++c) {
          uint32_t n = 0;
          const uint32_t density = rng() % 4;  // none, sparse, half, all
          for (uint64_t k = 0; k < 20; ++k) {
            if (density == 0 || (density == 1 && rng() % 8 != 0) || (density == 2 && rng() % 2 != 0)) continue;
            (*bits)[(100 * c + k) / 64] |= uint64_t{1} << ((100 * c + k) % 64);
            ++n;
          }
          if (n == 0) continue;
          active.push_back({c, n, 1});
          std::vector<ByteRun> runs;
          const uint64_t* b = bits->data();
          cat.runs.ActiveRuns(c, std::span<const uint64_t* const>(&b, 1), &runs);
          for (const ByteRun& r : runs) want.insert({c, c * 800 + r.offset, r.length});
        }
        if (!s.SetActive(static_cast<uint64_t>(job), active, 0, bits).ok()) return fail(job, "SetActive");
        std::multiset<Piece> got;
        while (true) {
          auto r = AskNow(s, static_cast<uint64_t>(job));
          if (!r.ok()) return fail(job, "iteration " + std::to_string(it) + ": " + r.error().message());
          if (r->end) break;
          for (const ViewPiece& p : r->held.pieces) {
            got.insert({p.chunk, p.file_offset, p.length});
            if (*r->held.lp->memory.At(p.lp_offset) != FileByte(p.file_offset)) fail(job, "wrong bytes");
          }
          if (rng() % 2) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
          if (rng() % 3 == 0) s.Done(static_cast<uint64_t>(job));
        }
        if (got != std::multiset<Piece>(want.begin(), want.end()))
          fail(job, "iteration " + std::to_string(it) + ": got " + std::to_string(got.size()) + " pieces, want " +
                        std::to_string(want.size()));
      }
      s.RemoveJob(static_cast<uint64_t>(job));
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& f : failures) ADD_FAILURE() << f;
  const SchedulerStats st = s.Stats();
  EXPECT_GT(st.chunks_partial, 0u);
  EXPECT_GT(st.chunks_unsorted, 0u);
  EXPECT_LT(st.bytes_loaded, st.chunks_loaded * 800);  // runs, not whole chunks
}

}  // namespace
}  // namespace graphfs::chunkindex
