#include "engines/core/target_sums.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "engine_test_util.h"
#include "engines/core/edge_stream.h"

namespace graphfs::engine {
namespace {

using grid::PartitionRange;
using grid::VertexId;

// Each of `workers` threads adds integer values (exact in a double, whatever the order) to
// targets drawn by `next_target`; the sums must equal the serial ones.
template <typename NextTarget>
void ExpectSumsOfThreads(uint64_t vertices, uint64_t partitions, int workers, int adds_per_worker,
                         NextTarget next_target) {
  std::vector<double> sums(vertices, 0.0);
  std::vector<std::vector<std::pair<uint32_t, int>>> plan(static_cast<size_t>(workers));
  std::vector<double> expect(vertices, 0.0);
  for (int w = 0; w < workers; ++w) {
    std::mt19937_64 rng(static_cast<uint64_t>(w) * 7919 + 1);
    for (int k = 0; k < adds_per_worker; ++k) {
      const uint32_t t = next_target(rng);
      const int value = static_cast<int>(rng() % 7) - 3;  // zeros and cancellations too
      plan[static_cast<size_t>(w)].emplace_back(t, value);
      expect[t] += value;
    }
  }
  {
    TargetSums target_sums(sums.data(), PartitionRange(vertices, partitions), workers);
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        for (auto [t, value] : plan[static_cast<size_t>(w)]) target_sums.Add(w, t, value);
      });
    }
    for (std::thread& th : threads) th.join();
    target_sums.FlushAll();
    EXPECT_EQ(target_sums.Pending(), 0u);
  }
  uint64_t differing = 0;
  for (uint64_t v = 0; v < vertices; ++v) differing += sums[v] != expect[v];
  EXPECT_EQ(differing, 0u);
}

TEST(TargetSums, ManyAddsPerPartitionFromFourWorkersSumExactly) {
  // Dense: 20,000 adds in one partition of 12,500 targets, then the next: the touched lists
  // overflow and the flushes scan whole windows.
  uint64_t count = 0;
  ExpectSumsOfThreads(100'000, 8, 4, 400'000, [&count](std::mt19937_64& rng) {
    const uint64_t partition = (count++ / 20'000) % 8;
    return static_cast<uint32_t>(partition * 12'500 + rng() % 12'500);
  });
}

TEST(TargetSums, FewAddsInTargetOrderLikeAColumnStreamSumExactly) {
  // Sparse and moving through the partitions in order, as a column stream does: the flushes
  // move the touched lists.
  uint32_t next = 0;
  ExpectSumsOfThreads(1'000'000, 16, 2, 5'000, [&next](std::mt19937_64& rng) {
    next = static_cast<uint32_t>((next + rng() % 400) % 1'000'000);
    return next;
  });
}

TEST(TargetSums, APartitionTooLargeForAWindowIsAddedToDirectly) {
  const uint64_t vertices = TargetSums::kMaxWindowVertices + 1000;
  ExpectSumsOfThreads(vertices, 1, 2, 20'000,
                      [vertices](std::mt19937_64& rng) { return static_cast<uint32_t>(rng() % vertices); });
}

TEST(TargetSums, SumsWaitInTheWindowsUntilFlushed) {
  std::vector<double> sums(1000, 0.0);
  TargetSums target_sums(sums.data(), PartitionRange(1000, 4), 2);
  target_sums.Add(0, 10, 1.5);
  target_sums.Add(1, 20, 2.0);  // the same partition, [0, 250)
  target_sums.Add(1, 30, 4.0);
  EXPECT_EQ(target_sums.Pending(), 3u);
  EXPECT_EQ(sums[10] + sums[20] + sums[30], 0.0);
  target_sums.Flush(1);  // worker 1's only
  EXPECT_EQ(sums[20], 2.0);
  EXPECT_EQ(sums[30], 4.0);
  EXPECT_EQ(sums[10], 0.0);
  EXPECT_EQ(target_sums.Pending(), 1u);
  target_sums.Add(0, 600, 1.0);  // another partition: worker 0's window moves, flushing 10
  EXPECT_EQ(sums[10], 1.5);
  EXPECT_EQ(sums[600], 0.0);
  target_sums.FlushAll();
  EXPECT_EQ(sums[600], 1.0);
  EXPECT_EQ(target_sums.Pending(), 0u);
}

// A stream's fn that takes the worker gets each reader thread's own index, and in-degrees
// summed through TargetSums match the edges, for a buffered pass and for source windows read
// with O_DIRECT.
TEST(TargetSums, InDegreesSummedFromAColumnStreamsWorkersMatchTheEdges) {
  testing::TempDir tmp;
  testing::TestGraph g = testing::RandomGraph(5000, 4800, 60'000, true, 3);
  auto layout = grid::GridLayout::Open(testing::BuildGrid(tmp, g, 4));
  ASSERT_TRUE(layout.ok());
  std::vector<double> expect(g.vertices, 0.0);
  // Whole weights: their sums are exact in any order.
  for (const auto& e : g.edges) expect[static_cast<size_t>(e.target)] += std::floor(e.weight);
  for (uint64_t memory : {uint64_t{8} << 30, uint64_t{1024}}) {
    EdgeStream stream(*layout, memory, 2);
    std::vector<double> sums(g.vertices, 0.0);
    TargetSums target_sums(sums.data(), layout->ranges(), stream.threads());
    std::atomic<int> bad_worker{0};
    StreamOptions options;
    options.vertex_state_bytes = g.vertices * 8;
    auto streamed = stream.Stream<uint64_t>(options, [&](int worker, VertexId, VertexId t, float w) -> uint64_t {
      if (worker < 0 || worker >= stream.threads()) bad_worker.fetch_add(1);
      target_sums.Add(worker, t, std::floor(w));
      return 1;
    });
    ASSERT_TRUE(streamed.ok()) << streamed.error().message();
    EXPECT_EQ(*streamed, g.edges.size());
    target_sums.FlushAll();
    EXPECT_EQ(bad_worker.load(), 0);
    uint64_t differing = 0;
    for (uint32_t v = 0; v < g.vertices; ++v) differing += sums[v] != expect[v];
    EXPECT_EQ(differing, 0u) << "memory " << memory;
  }
}

}  // namespace
}  // namespace graphfs::engine
