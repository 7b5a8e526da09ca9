// The logical-partition scheduler on synthetic chunk catalogs: every job gets each of
// its active chunks exactly once per iteration, LPs follow the priority, are loaded once
// and shared, the next LP waits for every holder, and jobs that leave are not waited on.
#include "chunkindex/lp_scheduler.h"

#include <gtest/gtest.h>

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

  // `count` chunks of `length` bytes, 4 per block, mean degree from `degree(id)`.
  Catalog(uint64_t count, uint64_t length, const std::function<double(uint64_t)>& degree = [](uint64_t) { return 1.0; }) {
    for (uint64_t i = 0; i < count; ++i) chunks.push_back({i * length, length, static_cast<uint32_t>(i / 4), degree(i)});
  }
  LpLoader Loader() {
    return [this](const LogicalPartition& lp, char* out) -> Status {
      if (int d = load_delay_ms.load(); d > 0) std::this_thread::sleep_for(std::chrono::milliseconds(d));
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
std::future<Result<LpScheduler::Grant>> Ask(LpScheduler& s, uint64_t job, uint64_t* ticket = nullptr) {
  auto promise = std::make_shared<std::promise<Result<LpScheduler::Grant>>>();
  auto future = promise->get_future();
  uint64_t t = s.Next(job, [promise](Result<LpScheduler::Grant> g) { promise->set_value(std::move(g)); });
  if (ticket != nullptr) *ticket = t;
  return future;
}

Result<LpScheduler::Grant> AskNow(LpScheduler& s, uint64_t job) {
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
    for (uint64_t k = 0; k < c.length; k += 7) ASSERT_EQ(lp.bytes[c.lp_offset + k], FileByte(c.file_offset + k));
    at += c.length;
  }
  EXPECT_EQ(at, lp.size);
}

TEST(LpScheduler, OneJobGetsEachActiveChunkOnceThenEnd) {
  Catalog cat(10, 100);
  LpScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = false});
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
  LpScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = false});
  ASSERT_TRUE(s.AddJob(1, 200).ok());
  std::vector<ActiveChunk> active;
  for (uint64_t id = 0; id < 8; ++id) active.push_back({id, 2, 0});
  ASSERT_TRUE(s.SetActive(1, active, 0).ok());
  auto g = AskNow(s, 1);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(Ids(g->held), (std::set<uint64_t>{6, 7}));
  // N(A) counts too: many active sources beat a higher degree.
  ASSERT_TRUE(s.SetActive(1, std::vector<ActiveChunk>{{0, 100, 0}, {1, 1, 0}, {7, 1, 0}}, 0).ok());
  g = AskNow(s, 1);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(Ids(g->held), (std::set<uint64_t>{0, 7}));
}

TEST(LpScheduler, AnLpIsLoadedOnceAndSharedByEveryJobNeedingIt) {
  Catalog cat(6, 100);
  LpScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = false});
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

TEST(LpScheduler, NextLpWaitsUntilEveryHolderIsDone) {
  Catalog cat(4, 100);
  LpScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = false});
  ASSERT_TRUE(s.AddJob(1, 100).ok());
  ASSERT_TRUE(s.AddJob(2, 100).ok());
  ASSERT_TRUE(s.SetActive(1, Active({0, 1}), 0).ok());
  ASSERT_TRUE(s.SetActive(2, Active({0}), 0).ok());
  auto g1 = AskNow(s, 1);
  auto g2 = AskNow(s, 2);
  ASSERT_TRUE(g1.ok() && g2.ok());
  EXPECT_EQ(g1->held.lp, g2->held.lp);
  auto next1 = Ask(s, 1);  // job 2 still holds LP 1
  EXPECT_EQ(next1.wait_for(200ms), std::future_status::timeout);
  s.Done(2);
  ASSERT_EQ(next1.wait_for(10s), std::future_status::ready);
  auto n1 = next1.get();
  ASSERT_TRUE(n1.ok());
  EXPECT_EQ(Ids(n1->held), std::set<uint64_t>{1});
}

TEST(LpScheduler, AJobThatLeavesIsNotWaitedOn) {
  Catalog cat(4, 100);
  LpScheduler s(cat.chunks, cat.Loader());
  ASSERT_TRUE(s.AddJob(1, 100).ok());
  ASSERT_TRUE(s.AddJob(2, 100).ok());
  ASSERT_TRUE(s.SetActive(1, Active({0, 1}), 0).ok());
  ASSERT_TRUE(s.SetActive(2, Active({0, 1}), 0).ok());
  ASSERT_TRUE(AskNow(s, 1).ok());  // LP 1 assigned to both; job 2 never reads it
  auto next1 = Ask(s, 1);
  EXPECT_EQ(next1.wait_for(200ms), std::future_status::timeout);
  s.RemoveJob(2);
  ASSERT_EQ(next1.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(next1.get().ok());
  EXPECT_TRUE(AskNow(s, 1)->end);
  EXPECT_EQ(AskNow(s, 2).error().code(), ENOENT);
}

TEST(LpScheduler, AJobWithNothingInTheCurrentLpWaitsForTheNext) {
  Catalog cat(4, 100);
  LpScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = false});
  ASSERT_TRUE(s.AddJob(1, 100).ok());
  ASSERT_TRUE(s.AddJob(2, 100).ok());
  ASSERT_TRUE(s.SetActive(1, Active({0}), 0).ok());
  auto g1 = AskNow(s, 1);
  ASSERT_TRUE(g1.ok());
  ASSERT_TRUE(s.SetActive(2, Active({3}), 0).ok());
  auto next2 = Ask(s, 2);
  EXPECT_EQ(next2.wait_for(200ms), std::future_status::timeout);
  EXPECT_TRUE(AskNow(s, 1)->end);  // done with LP 1
  ASSERT_EQ(next2.wait_for(10s), std::future_status::ready);
  auto g2 = next2.get();
  ASSERT_TRUE(g2.ok());
  EXPECT_EQ(Ids(g2->held), std::set<uint64_t>{3});
}

TEST(LpScheduler, CancelAnswersEintrAndASecondAskIsBusy) {
  Catalog cat(2, 100);
  LpScheduler s(cat.chunks, cat.Loader());
  ASSERT_TRUE(s.AddJob(1, 100).ok());
  ASSERT_TRUE(s.AddJob(2, 100).ok());
  ASSERT_TRUE(s.SetActive(1, Active({0}), 0).ok());
  ASSERT_TRUE(s.SetActive(2, Active({0, 1}), 0).ok());
  ASSERT_TRUE(AskNow(s, 1).ok());  // LP {0} held by 1, assigned to 2
  ASSERT_TRUE(AskNow(s, 2).ok());
  uint64_t ticket = 0;
  auto waiting = Ask(s, 2, &ticket);  // job 1 still holds the LP
  ASSERT_NE(ticket, 0u);
  EXPECT_EQ(AskNow(s, 2).error().code(), EBUSY);
  EXPECT_TRUE(s.Cancel(2, ticket));
  EXPECT_FALSE(s.Cancel(2, ticket));
  ASSERT_EQ(waiting.wait_for(1s), std::future_status::ready);
  EXPECT_EQ(waiting.get().error().code(), EINTR);
  s.Done(1);
  auto retry = AskNow(s, 2);  // asking again after the interruption works
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(Ids(retry->held), std::set<uint64_t>{1});
}

TEST(LpScheduler, BadInputIsRejected) {
  Catalog cat(3, 100);
  LpScheduler s(cat.chunks, cat.Loader());
  EXPECT_EQ(s.AddJob(1, 0).error().code(), EINVAL);
  ASSERT_TRUE(s.AddJob(1, 100).ok());
  EXPECT_EQ(s.AddJob(1, 100).error().code(), EEXIST);
  EXPECT_EQ(s.SetActive(1, Active({3}), 0).error().code(), EINVAL);
  EXPECT_EQ(s.SetActive(7, Active({0}), 0).error().code(), ENOENT);
  EXPECT_TRUE(AskNow(s, 1)->end);  // no active set: nothing to hand out
}

TEST(LpScheduler, ALoadErrorReachesTheWaitingJobsAndAskingAgainRetries) {
  Catalog cat(2, 100);
  LpScheduler s(cat.chunks, cat.Loader());
  ASSERT_TRUE(s.AddJob(1, 100).ok());
  ASSERT_TRUE(s.SetActive(1, Active({0, 1}), 0).ok());
  cat.fail = true;
  auto g = AskNow(s, 1);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().code(), EIO);
  EXPECT_NE(g.error().message().find("disk 2 failed"), std::string::npos);
  EXPECT_EQ(s.Stats().load_errors, 1u);
  cat.fail = false;
  std::set<uint64_t> seen;
  for (auto r = AskNow(s, 1); r.ok() && !r->end; r = AskNow(s, 1)) {
    for (uint64_t id : Ids(r->held)) seen.insert(id);
  }
  EXPECT_EQ(seen, (std::set<uint64_t>{0, 1}));
}

TEST(LpScheduler, TheNextLpIsPreloadedWhileTheCurrentIsRead) {
  Catalog cat(6, 100);
  LpScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = true});
  ASSERT_TRUE(s.AddJob(1, 200).ok());
  ASSERT_TRUE(s.SetActive(1, Active({0, 1, 2, 3, 4, 5}), 0).ok());
  std::multiset<uint64_t> seen;
  for (auto r = AskNow(s, 1); r.ok() && !r->end; r = AskNow(s, 1)) {
    ExpectBytesMatchFile(*r->held.lp);
    for (uint64_t id : Ids(r->held)) seen.insert(id);
    s.WaitIdle();  // lets the preload finish before asking again
  }
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_EQ(std::set<uint64_t>(seen.begin(), seen.end()).size(), 6u);
  const SchedulerStats st = s.Stats();
  EXPECT_EQ(st.lps_built, 3u);
  EXPECT_EQ(st.lps_preloaded, 2u);
  EXPECT_EQ(cat.loaded_bytes.load(), 600u) << "nothing is read twice";
  EXPECT_EQ(st.bytes_reused, 400u);
}

TEST(LpScheduler, APreloadThatNoLongerFitsIsReusedWhereItOverlaps) {
  Catalog cat(6, 100);
  LpScheduler s(cat.chunks, cat.Loader(), {.prefetch_next = true});
  ASSERT_TRUE(s.AddJob(1, 200).ok());
  ASSERT_TRUE(s.SetActive(1, Active({0, 1, 2, 3}), 0).ok());
  auto g = AskNow(s, 1);
  ASSERT_TRUE(g.ok());
  s.WaitIdle();  // the remaining {2, 3} (or what priority picked) are preloaded
  // A second job joins and needs chunk 5 with far more active sources: the next LP changes.
  ASSERT_TRUE(s.AddJob(2, 200).ok());
  ASSERT_TRUE(s.SetActive(2, std::vector<ActiveChunk>{{5, 1000, 0}}, 0).ok());
  auto n2 = Ask(s, 2);
  auto g1 = AskNow(s, 1);
  ASSERT_TRUE(g1.ok());
  ExpectBytesMatchFile(*g1->held.lp);
  // Chunk 5 (priority 1000) comes first, then one of job 1's: chunk 2, taken from the preload.
  EXPECT_EQ(AllIds(*g1->held.lp), (std::set<uint64_t>{2, 5}));
  EXPECT_EQ(Ids(g1->held), std::set<uint64_t>{2});
  ASSERT_EQ(n2.wait_for(10s), std::future_status::ready);
  auto g2 = n2.get();
  ASSERT_TRUE(g2.ok());
  EXPECT_EQ(g2->held.lp, g1->held.lp);
  EXPECT_EQ(Ids(g2->held), std::set<uint64_t>{5});
  s.WaitIdle();
  const SchedulerStats st = s.Stats();
  EXPECT_EQ(st.bytes_reused, 100u);
  EXPECT_EQ(st.bytes_discarded, 100u);
  s.WaitIdle();
  // {0,1}; the preload {2,3}; then only 5; then the preload of the last LP, {3}, again.
  EXPECT_EQ(cat.loaded_bytes.load(), 600u);
}

// Many jobs, random active sets, random pace, one job leaving: every job sees each of its
// chunks exactly once per iteration and nobody hangs.
TEST(LpScheduler, ManyJobsConcurrently) {
  Catalog cat(64, 64, [](uint64_t id) { return 1.0 + static_cast<double>(id % 5); });
  cat.load_delay_ms = 1;
  LpScheduler s(cat.chunks, cat.Loader());
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
}

}  // namespace
}  // namespace graphfs::chunkindex
