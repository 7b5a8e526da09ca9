// gen-grid's lattice: shape, both directions, lengths as weights, drop fraction, long
// edges, determinism, the high diameter that makes it road-like, and bad input.
#include "engines/core/lattice.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <vector>

#include "engine_test_util.h"

namespace graphfs::engine {
namespace {

using testing::ReadFile;
using testing::TempDir;

struct Edge {
  int32_t src, dst;
  float weight;
};

std::vector<Edge> Generate(const TempDir& tmp, LatticeOptions o, const std::string& name = "g") {
  o.output = tmp.File(name);
  auto stats = GenerateLattice(o);
  EXPECT_TRUE(stats.ok()) << stats.error().message();
  const std::string bytes = ReadFile(o.output);
  const size_t size = o.weighted ? 12 : 8;
  EXPECT_EQ(bytes.size() % size, 0u);
  std::vector<Edge> edges(bytes.size() / size);
  for (size_t i = 0; i < edges.size(); ++i) {
    std::memcpy(&edges[i].src, bytes.data() + i * size, 4);
    std::memcpy(&edges[i].dst, bytes.data() + i * size + 4, 4);
    edges[i].weight = 1.0f;
    if (o.weighted) std::memcpy(&edges[i].weight, bytes.data() + i * size + 8, 4);
  }
  if (stats.ok()) {
    EXPECT_EQ(stats->edges, edges.size());
  }
  return edges;
}

LatticeOptions Lattice(uint64_t w, uint64_t h) {
  LatticeOptions o;
  o.width = w;
  o.height = h;
  o.weighted = true;
  o.seed = 3;
  return o;
}

TEST(Lattice, FullLatticeHasBothDirectionsOfEveryNeighbourPairWithLengthsAsWeights) {
  TempDir tmp;
  const uint64_t w = 30, h = 20;
  const auto edges = Generate(tmp, Lattice(w, h));
  ASSERT_EQ(edges.size(), 2 * (h * (w - 1) + w * (h - 1)));
  for (size_t i = 0; i < edges.size(); i += 2) {
    const Edge& e = edges[i];
    const Edge& back = edges[i + 1];
    EXPECT_EQ(back.src, e.dst);
    EXPECT_EQ(back.dst, e.src);
    EXPECT_EQ(back.weight, e.weight);
    const int64_t d = std::abs(static_cast<int64_t>(e.dst) - e.src);
    EXPECT_TRUE(d == 1 || d == static_cast<int64_t>(w)) << e.src << " -> " << e.dst;
    if (d == 1) {
      EXPECT_EQ(e.src / static_cast<int32_t>(w), e.dst / static_cast<int32_t>(w)) << "wrapped a row";
    }
    // Ends moved by at most a quarter in x and y: a length in [0.5, sqrt(1.5^2 + 0.5^2)].
    EXPECT_GE(e.weight, 0.5f);
    EXPECT_LE(e.weight, 1.5812f);
  }
}

TEST(Lattice, BreadthFirstDepthFromACornerIsWidthPlusHeight) {
  TempDir tmp;
  const uint64_t w = 40, h = 25;
  const auto edges = Generate(tmp, Lattice(w, h));
  std::vector<std::vector<int32_t>> out(w * h);
  for (const Edge& e : edges) out[e.src].push_back(e.dst);
  std::vector<int> level(w * h, -1);
  std::deque<int32_t> queue = {0};
  level[0] = 0;
  int deepest = 0;
  while (!queue.empty()) {
    const int32_t v = queue.front();
    queue.pop_front();
    for (int32_t n : out[v])
      if (level[n] < 0) {
        level[n] = level[v] + 1;
        deepest = std::max(deepest, level[n]);
        queue.push_back(n);
      }
  }
  EXPECT_EQ(deepest, static_cast<int>(w + h - 2));
  for (int l : level) EXPECT_GE(l, 0) << "a full lattice is connected";
}

TEST(Lattice, DropLongEdgesAndSeeds) {
  TempDir tmp;
  LatticeOptions o = Lattice(100, 100);
  o.drop = 0.3;
  const auto dropped = Generate(tmp, o, "a");
  const double full = 2.0 * (100 * 99 + 100 * 99);
  EXPECT_NEAR(static_cast<double>(dropped.size()) / full, 0.7, 0.03);
  EXPECT_EQ(Generate(tmp, o, "b").size(), dropped.size());
  EXPECT_TRUE(ReadFile(tmp.File("a")) == ReadFile(tmp.File("b"))) << "same seed, same file";
  o.seed = 4;
  Generate(tmp, o, "c");
  EXPECT_FALSE(ReadFile(tmp.File("a")) == ReadFile(tmp.File("c")));
  o.seed = 3;
  o.long_edges = 50;
  const auto with_long = Generate(tmp, o, "d");
  ASSERT_EQ(with_long.size(), dropped.size() + 100);
  for (size_t i = dropped.size(); i < with_long.size(); ++i) {
    EXPECT_NE(with_long[i].src, with_long[i].dst) << "a loop";
    EXPECT_LT(with_long[i].src, 100 * 100);
    EXPECT_LT(with_long[i].dst, 100 * 100);
  }
  o.weighted = false;
  EXPECT_EQ(Generate(tmp, o, "e").size(), with_long.size());
  EXPECT_EQ(ReadFile(tmp.File("e")).size(), with_long.size() * 8);
}

TEST(Lattice, RefusesBadShapes) {
  TempDir tmp;
  LatticeOptions o = Lattice(0, 10);
  o.output = tmp.File("x");
  EXPECT_FALSE(GenerateLattice(o).ok());
  o = Lattice(70000, 70000);  // 4.9e9 vertices: more than 32-bit ids
  o.output = tmp.File("x");
  auto big = GenerateLattice(o);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message().find("32-bit"), std::string::npos);
  o = Lattice(10, 10);
  o.output = tmp.File("x");
  o.drop = 1.0;
  EXPECT_FALSE(GenerateLattice(o).ok());
  o.drop = -0.1;
  EXPECT_FALSE(GenerateLattice(o).ok());
  o.drop = 0;
  o.output = tmp.File("no/such/dir/x");
  EXPECT_FALSE(GenerateLattice(o).ok());
}

}  // namespace
}  // namespace graphfs::engine
