// volume::ComputeTurns: at most `slots` jobs hold a turn; answers wait oldest first; a job's own
// next answer waits for its yield; overdue turns are taken back; leaving and shutting down
// deliver what waits.
#include "volume/compute_turns.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace graphfs::volume {
namespace {

using namespace std::chrono_literals;

// What each Offer's callback saw: -1 not yet delivered, 0 unmarked, 1 a turn.
struct Seen {
  std::atomic<int> value{-1};
  ComputeTurns::Deliver Callback() {
    return [this](bool turn) { value = turn ? 1 : 0; };
  }
};

TEST(ComputeTurnsTest, OffDeliversAtOnceUnmarked) {
  ComputeTurns turns(0);
  for (uint64_t job = 1; job <= 5; ++job) turns.Join(job);
  Seen seen[5];
  for (int i = 0; i < 5; ++i) turns.Offer(static_cast<uint64_t>(i + 1), seen[i].Callback());
  for (Seen& s : seen) EXPECT_EQ(s.value, 0);
  EXPECT_EQ(turns.stats().turns, 0u);
  EXPECT_EQ(turns.stats().free, 5u);
}

TEST(ComputeTurnsTest, NoMoreJobsThanSlotsNobodyWaits) {
  ComputeTurns turns(2);
  turns.Join(1);
  turns.Join(2);
  Seen a, b, c;
  turns.Offer(1, a.Callback());
  turns.Offer(2, b.Callback());
  turns.Offer(1, c.Callback());  // asks ahead: still nobody to wait for
  EXPECT_EQ(a.value, 0);
  EXPECT_EQ(b.value, 0);
  EXPECT_EQ(c.value, 0);
  EXPECT_EQ(turns.stats().computing, 0u);
}

// compute_slots=auto: 2 turns, handed out only while more than 4 jobs take them.
TEST(ComputeTurnsTest, NoTurnsUntilMoreJobsThanTheThreshold) {
  ComputeTurns turns(2, ComputeTurns::kLongestTurn, 4);
  for (uint64_t job = 1; job <= 4; ++job) turns.Join(job);
  Seen few[4];
  for (int i = 0; i < 4; ++i) turns.Offer(static_cast<uint64_t>(i + 1), few[i].Callback());
  for (Seen& s : few) EXPECT_EQ(s.value, 0);
  EXPECT_EQ(turns.stats().engage_above, 4u);
  turns.Join(5);  // five jobs: now two compute at a time
  Seen many[3];
  for (int i = 0; i < 3; ++i) turns.Offer(static_cast<uint64_t>(i + 1), many[i].Callback());
  EXPECT_EQ(many[0].value, 1);
  EXPECT_EQ(many[1].value, 1);
  EXPECT_EQ(many[2].value, -1);
  EXPECT_EQ(turns.stats().computing, 2u);
}

// Jobs leaving below the threshold release what waits, unmarked; a job holding a turn still
// yields it before its own next answer goes.
TEST(ComputeTurnsTest, JobsLeavingBelowTheThresholdReleaseWhatWaits) {
  ComputeTurns turns(1, ComputeTurns::kLongestTurn, 2);
  for (uint64_t job = 1; job <= 3; ++job) turns.Join(job);
  Seen one, one_ahead, two;
  turns.Offer(1, one.Callback());
  turns.Offer(1, one_ahead.Callback());
  turns.Offer(2, two.Callback());
  EXPECT_EQ(one.value, 1);
  EXPECT_EQ(two.value, -1);
  turns.Leave(3);  // two jobs left: no turns any more
  EXPECT_EQ(two.value, 0);
  EXPECT_EQ(one_ahead.value, -1) << "job 1 still computes on its turn";
  turns.Yield(1);
  EXPECT_EQ(one_ahead.value, 0);
  EXPECT_EQ(turns.stats().computing, 0u);
  EXPECT_EQ(turns.stats().waiting, 0u);
}

TEST(ComputeTurnsTest, JobsThatDoNotYieldAreNeverHeld) {
  ComputeTurns turns(1);
  turns.Join(1);
  turns.Join(2);
  Seen a, b, c;
  turns.Offer(1, a.Callback());
  turns.Offer(2, b.Callback());
  turns.Offer(3, c.Callback());  // never joined: an older client
  EXPECT_EQ(a.value, 1);
  EXPECT_EQ(b.value, -1);
  EXPECT_EQ(c.value, 0);
}

TEST(ComputeTurnsTest, MoreJobsThanSlotsWaitOldestFirst) {
  ComputeTurns turns(2);
  for (uint64_t job = 1; job <= 4; ++job) turns.Join(job);
  Seen s1, s2, s3, s4;
  turns.Offer(1, s1.Callback());
  turns.Offer(2, s2.Callback());
  turns.Offer(3, s3.Callback());
  turns.Offer(4, s4.Callback());
  EXPECT_EQ(s1.value, 1);
  EXPECT_EQ(s2.value, 1);
  EXPECT_EQ(s3.value, -1);
  EXPECT_EQ(s4.value, -1);
  EXPECT_EQ(turns.stats().computing, 2u);
  EXPECT_EQ(turns.stats().waiting, 2u);
  turns.Yield(2);  // the oldest waiting answer gets the turn, on this thread
  EXPECT_EQ(s3.value, 1);
  EXPECT_EQ(s4.value, -1);
  turns.Yield(1);
  EXPECT_EQ(s4.value, 1);
  const ComputeTurns::Stats st = turns.stats();
  EXPECT_EQ(st.turns, 4u);
  EXPECT_EQ(st.waited, 2u);
  EXPECT_EQ(st.computing, 2u);
  EXPECT_EQ(st.waiting, 0u);
}

TEST(ComputeTurnsTest, AJobsNextAnswerWaitsForItsOwnYield) {
  ComputeTurns turns(2);
  for (uint64_t job = 1; job <= 3; ++job) turns.Join(job);
  Seen first, ahead;
  turns.Offer(1, first.Callback());
  EXPECT_EQ(first.value, 1);
  turns.Offer(1, ahead.Callback());  // asked while it computes: a turn is free, but not for it
  EXPECT_EQ(ahead.value, -1);
  turns.Yield(1);
  EXPECT_EQ(ahead.value, 1);
  EXPECT_EQ(turns.stats().computing, 1u);
}

TEST(ComputeTurnsTest, AJobsOwnWaitingAnswerDoesNotBlockOthers) {
  ComputeTurns turns(2);
  for (uint64_t job = 1; job <= 3; ++job) turns.Join(job);
  Seen one, one_ahead, two;
  turns.Offer(1, one.Callback());
  turns.Offer(1, one_ahead.Callback());  // waits for job 1's yield
  turns.Offer(2, two.Callback());        // the second turn is free: job 2 takes it
  EXPECT_EQ(two.value, 1);
  EXPECT_EQ(one_ahead.value, -1);
}

TEST(ComputeTurnsTest, LeavingGivesBackItsTurnAndDeliversItsWaitingAnswer) {
  ComputeTurns turns(1);
  for (uint64_t job = 1; job <= 3; ++job) turns.Join(job);
  Seen s1, s1_ahead, s2;
  turns.Offer(1, s1.Callback());
  turns.Offer(1, s1_ahead.Callback());
  turns.Offer(2, s2.Callback());
  EXPECT_EQ(s1.value, 1);
  EXPECT_EQ(s2.value, -1);
  turns.Leave(1);
  EXPECT_EQ(s1_ahead.value, 0);  // the job is gone: unmarked
  EXPECT_EQ(s2.value, 1);
  EXPECT_EQ(turns.stats().jobs, 2u);
}

TEST(ComputeTurnsTest, AnOverdueTurnIsTakenBack) {
  ComputeTurns turns(1, 50ms);
  turns.Join(1);
  turns.Join(2);
  Seen s1, s2;
  turns.Offer(1, s1.Callback());
  turns.Offer(2, s2.Callback());
  EXPECT_EQ(s2.value, -1);
  for (int i = 0; i < 200 && s2.value == -1; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(s2.value, 1);
  EXPECT_EQ(turns.stats().overdue, 1u);
  turns.Yield(1);  // too late: it no longer holds a turn
  EXPECT_EQ(turns.stats().stray_yields, 1u);
  EXPECT_EQ(turns.stats().computing, 1u);
}

TEST(ComputeTurnsTest, ShutdownDeliversWhatWaits) {
  Seen s1, s2, s3;
  {
    ComputeTurns turns(1);
    for (uint64_t job = 1; job <= 3; ++job) turns.Join(job);
    turns.Offer(1, s1.Callback());
    turns.Offer(2, s2.Callback());
    turns.Offer(3, s3.Callback());
    EXPECT_EQ(s2.value, -1);
    turns.Shutdown();
    EXPECT_EQ(s2.value, 0);
    EXPECT_EQ(s3.value, 0);
    Seen later;
    turns.Offer(2, later.Callback());
    EXPECT_EQ(later.value, 0);
  }
  EXPECT_EQ(s1.value, 1);
}

// Jobs on threads of their own ask, compute and yield; never more than `slots` compute at once,
// and every job gets all its turns.
TEST(ComputeTurnsTest, ManyJobsNeverMoreComputingThanSlots) {
  constexpr unsigned kSlots = 2;
  constexpr int kJobs = 8, kRounds = 200;
  ComputeTurns turns(kSlots, 10s);
  for (uint64_t job = 1; job <= kJobs; ++job) turns.Join(job);
  std::atomic<int> computing{0}, most{0};
  std::atomic<int> done_rounds{0};
  std::vector<std::thread> threads;
  for (int j = 1; j <= kJobs; ++j) {
    threads.emplace_back([&, job = static_cast<uint64_t>(j)] {
      for (int r = 0; r < kRounds; ++r) {
        std::atomic<int> got{-1};
        turns.Offer(job, [&got](bool turn) { got = turn ? 1 : 0; });
        while (got == -1) std::this_thread::yield();
        ASSERT_EQ(got, 1);
        const int now = ++computing;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(20us);
        --computing;
        turns.Yield(job);
        ++done_rounds;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(done_rounds, kJobs * kRounds);
  EXPECT_LE(most.load(), static_cast<int>(kSlots));
  EXPECT_EQ(most.load(), static_cast<int>(kSlots));  // 8 jobs on 2 turns: both were used
  EXPECT_EQ(turns.stats().turns, static_cast<uint64_t>(kJobs * kRounds));
  EXPECT_EQ(turns.stats().overdue, 0u);
}

}  // namespace
}  // namespace graphfs::volume
