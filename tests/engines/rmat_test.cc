#include "engines/core/rmat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine_test_util.h"

namespace graphfs::engine {
namespace {

using testing::ReadFile;
using testing::TempDir;

std::string Generate(const TempDir& tmp, const std::string& name, int scale, uint64_t seed, bool weighted,
                     int threads, int edge_factor = 16) {
  RmatOptions options;
  options.scale = scale;
  options.edge_factor = edge_factor;
  options.seed = seed;
  options.weighted = weighted;
  options.threads = threads;
  options.output = tmp.File(name);
  auto stats = GenerateRmat(options);
  EXPECT_TRUE(stats.ok()) << stats.error().message();
  return ReadFile(options.output);
}

TEST(Rmat, DeterministicForASeedWhateverTheThreadCount) {
  TempDir tmp;
  // 2^17 * 16 = 2 M edges: two generation batches.
  const std::string one = Generate(tmp, "a", 17, 42, true, 1);
  const std::string three = Generate(tmp, "b", 17, 42, true, 3);
  ASSERT_EQ(one.size(), (size_t{1} << 17) * 16 * 12);
  EXPECT_TRUE(one == three);
  EXPECT_FALSE(one == Generate(tmp, "c", 17, 43, true, 2));
}

TEST(Rmat, IdsInRangeWeightsInRangeAndSkewedDegrees) {
  TempDir tmp;
  const int scale = 14;
  const std::string bytes = Generate(tmp, "g", scale, 7, true, 2);
  const size_t edges = bytes.size() / 12;
  ASSERT_EQ(edges, (size_t{1} << scale) * 16);
  std::vector<uint32_t> degree(size_t{1} << scale, 0);
  bool zero_weight_seen_or_small = false;
  for (size_t k = 0; k < edges; ++k) {
    int32_t s, t;
    float w;
    std::memcpy(&s, bytes.data() + k * 12, 4);
    std::memcpy(&t, bytes.data() + k * 12 + 4, 4);
    std::memcpy(&w, bytes.data() + k * 12 + 8, 4);
    ASSERT_GE(s, 0);
    ASSERT_LT(s, 1 << scale);
    ASSERT_GE(t, 0);
    ASSERT_LT(t, 1 << scale);
    ASSERT_GE(w, 0.0f);
    ASSERT_LT(w, 256.0f);
    zero_weight_seen_or_small |= w < 1.0f;
    ++degree[static_cast<size_t>(s)];
  }
  EXPECT_TRUE(zero_weight_seen_or_small);
  const auto hub = std::max_element(degree.begin(), degree.end());
  // R-MAT's power law: the top vertex has far more than the mean 16 edges...
  EXPECT_GT(*hub, 40u * 16);
  // ...and the permutation moved it away from id 0, where R-MAT puts it.
  EXPECT_NE(hub - degree.begin(), 0);
  // Many vertices get no out-edge at all.
  EXPECT_GT(std::count(degree.begin(), degree.end(), 0u), 1 << (scale - 3));
}

// --no-permute: the same edges before the id bijection, so R-MAT's hubs stay at the lowest
// ids (vertex 0 has the largest out-degree), and the permuted file is that one relabelled.
TEST(Rmat, WithoutPermutationHubsKeepTheLowestIds) {
  TempDir tmp;
  const int scale = 12;
  RmatOptions options;
  options.scale = scale;
  options.seed = 5;
  options.threads = 2;
  options.output = tmp.File("raw");
  options.permute = false;
  ASSERT_TRUE(GenerateRmat(options).ok());
  const std::string raw = ReadFile(options.output);
  const std::string spread = Generate(tmp, "spread", scale, 5, false, 2);
  ASSERT_EQ(raw.size(), spread.size());
  std::vector<uint64_t> degree(size_t{1} << scale, 0);
  const VertexPermutation permute(scale, 5);
  for (size_t at = 0; at < raw.size(); at += 8) {
    int32_t s, t, ps, pt;
    std::memcpy(&s, raw.data() + at, 4);
    std::memcpy(&t, raw.data() + at + 4, 4);
    std::memcpy(&ps, spread.data() + at, 4);
    std::memcpy(&pt, spread.data() + at + 4, 4);
    ASSERT_EQ(static_cast<uint64_t>(ps), permute(static_cast<uint64_t>(s))) << "edge " << at / 8;
    ASSERT_EQ(static_cast<uint64_t>(pt), permute(static_cast<uint64_t>(t))) << "edge " << at / 8;
    ++degree[static_cast<size_t>(s)];
  }
  EXPECT_EQ(std::max_element(degree.begin(), degree.end()) - degree.begin(), 0);
}

TEST(Rmat, UnweightedRecordsAreEightBytes) {
  TempDir tmp;
  EXPECT_EQ(Generate(tmp, "u", 5, 1, false, 2, 4).size(), 32u * 4 * 8);
}

TEST(Rmat, RejectsBadParameters) {
  TempDir tmp;
  RmatOptions options;
  options.output = tmp.File("x");
  options.scale = 0;
  EXPECT_FALSE(GenerateRmat(options).ok());
  options.scale = 32;
  EXPECT_FALSE(GenerateRmat(options).ok());
  options.scale = 4;
  options.edge_factor = 0;
  EXPECT_FALSE(GenerateRmat(options).ok());
  options.edge_factor = 1;
  options.output = tmp.File("no/such/dir/x");
  EXPECT_FALSE(GenerateRmat(options).ok());
}

TEST(VertexPermutation, IsABijection) {
  for (int bits = 1; bits <= 16; ++bits) {
    for (uint64_t seed : {1u, 99u}) {
      VertexPermutation permute(bits, seed);
      std::vector<bool> seen(size_t{1} << bits, false);
      for (uint64_t v = 0; v < (uint64_t{1} << bits); ++v) {
        uint64_t p = permute(v);
        ASSERT_LT(p, uint64_t{1} << bits);
        ASSERT_FALSE(seen[p]) << "bits " << bits << " collision at " << v;
        seen[p] = true;
      }
    }
  }
}

TEST(GenRmatBinary, WritesFileAndRejectsUsageErrors) {
  TempDir tmp;
  auto ok = testing::RunCommand(testing::Bin("gen-rmat") + " --scale 6 --seed 3 -o " + tmp.File("g"));
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("wrote 1024 edges over 64 vertices"), std::string::npos) << ok.output;
  EXPECT_EQ(testing::RunCommand(testing::Bin("gen-rmat") + " --scale 40 -o " + tmp.File("g") + " 2>/dev/null").exit_code, 1);
  EXPECT_EQ(testing::RunCommand(testing::Bin("gen-rmat") + " --scale 6 2>/dev/null").exit_code, 2);
}

}  // namespace
}  // namespace graphfs::engine
