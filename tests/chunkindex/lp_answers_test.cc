// The queue of answers to parked asks: tickets are unique, answers come out in order, a closed
// queue still gives what it holds and then none, and a timed wait gives up.
#include "chunkindex/lp_answers.h"

#include <gtest/gtest.h>

#include <future>
#include <set>
#include <thread>

namespace graphfs::chunkindex {
namespace {

using namespace std::chrono_literals;

TEST(LpAnswers, TicketsAreUniqueAcrossThreadsAndAboveZero) {
  LpAnswers q;
  std::vector<std::vector<uint64_t>> got(4);
  std::vector<std::thread> threads;
  for (auto& g : got)
    threads.emplace_back([&q, &g] {
      for (int i = 0; i < 1000; ++i) g.push_back(q.NewTicket());
    });
  for (auto& t : threads) t.join();
  std::set<uint64_t> all;
  for (const auto& g : got) all.insert(g.begin(), g.end());
  EXPECT_EQ(all.size(), 4000u);
  EXPECT_GT(*all.begin(), 0u);
}

TEST(LpAnswers, AnswersComeOutInOrderAndAClosedQueueIsDrainedFirst) {
  LpAnswers q;
  q.Push({1, LpGrant{true, {}}});
  std::vector<LpAnswer> batch;
  batch.push_back({2, Error(EINTR, "interrupted")});
  batch.push_back({3, LpGrant{}});
  q.Push(batch);
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(q.pending(), 3u);
  q.Close();
  auto a = q.Wait();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->ticket, 1u);
  EXPECT_TRUE(a->result.ok() && a->result->end);
  a = q.Wait();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->ticket, 2u);
  EXPECT_EQ(a->result.error().code(), EINTR);
  EXPECT_EQ(q.Wait()->ticket, 3u);
  EXPECT_FALSE(q.Wait().has_value()) << "closed and empty: no more answers, no blocking";
}

TEST(LpAnswers, AWaiterWakesOnAPushOrOnCloseAndATimedWaitGivesUp) {
  LpAnswers q;
  EXPECT_FALSE(q.WaitFor(20ms).has_value());
  auto waiter = std::async(std::launch::async, [&] { return q.Wait(); });
  EXPECT_EQ(waiter.wait_for(50ms), std::future_status::timeout);
  q.Push({7, LpGrant{true, {}}});
  ASSERT_EQ(waiter.wait_for(2s), std::future_status::ready);
  EXPECT_EQ(waiter.get()->ticket, 7u);
  auto closed = std::async(std::launch::async, [&] { return q.Wait(); });
  q.Close();
  ASSERT_EQ(closed.wait_for(2s), std::future_status::ready);
  EXPECT_FALSE(closed.get().has_value());
}

}  // namespace
}  // namespace graphfs::chunkindex
