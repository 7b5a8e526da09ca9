// run-jobs --arrivals: parsing, the first job at 0, determinism per seed, the mean and
// shape of the gaps, and the drawn times pinned.
#include "engines/jobs/arrivals.h"

#include <gtest/gtest.h>

#include <cmath>

namespace graphfs::engine {
namespace {

TEST(Arrivals, ParsesPoissonMeansAndRefusesTheRest) {
  auto a = ParseArrivals("poisson:2");
  ASSERT_TRUE(a.ok()) << a.error().message();
  EXPECT_EQ(a->mean_seconds, 2.0);
  EXPECT_EQ(ParseArrivals("poisson:0.25")->mean_seconds, 0.25);
  EXPECT_EQ(ParseArrivals("poisson:1e-3")->mean_seconds, 0.001);
  for (const char* bad : {"poisson:-1", "poisson:x", "poisson:0", "poisson:", "poisson", "poisson:2s", "poisson: 2",
                          "poisson:inf", "poisson:nan", "poisson:1e999", "", ":3", "Poisson:3"}) {
    auto r = ParseArrivals(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message().find("poisson:MEAN_SECONDS"), std::string::npos) << r.error().message();
  }
  EXPECT_EQ(ParseArrivals("uniform:3").error().message(),
            "--arrivals: unknown arrival process 'uniform' in 'uniform:3' (the only one is poisson:MEAN_SECONDS)");
  EXPECT_EQ(ParseArrivals("poisson:-1").error().message(),
            "--arrivals: expected poisson:MEAN_SECONDS (a mean gap > 0 between job starts), got 'poisson:-1'");
}

TEST(Arrivals, FirstAtZeroNonDecreasingAndDeterministicPerSeed) {
  const PoissonArrivals p{3.0};
  EXPECT_TRUE(ArrivalTimes(p, 0, 1).empty());
  EXPECT_EQ(ArrivalTimes(p, 1, 1), std::vector<double>{0.0});
  const std::vector<double> t = ArrivalTimes(p, 16, 42);
  ASSERT_EQ(t.size(), 16u);
  EXPECT_EQ(t[0], 0.0) << "the first job starts with the run";
  for (size_t i = 1; i < t.size(); ++i) EXPECT_GE(t[i], t[i - 1]);
  EXPECT_GT(t[15], 0.0);
  EXPECT_EQ(ArrivalTimes(p, 16, 42), t);
  EXPECT_NE(ArrivalTimes(p, 16, 43), t);
  const std::vector<double> longer = ArrivalTimes(p, 20, 42);
  EXPECT_EQ(std::vector<double>(longer.begin(), longer.begin() + 16), t) << "n jobs: a prefix of n + 1 jobs";
  // The mean scales the same draws.
  const std::vector<double> half = ArrivalTimes(PoissonArrivals{1.5}, 16, 42);
  for (size_t i = 0; i < t.size(); ++i) EXPECT_NEAR(half[i], t[i] / 2, 1e-12);
}

TEST(Arrivals, GapsAreExponentialWithTheMean) {
  const double mean = 2.0;
  const size_t n = 100000;
  const std::vector<double> t = ArrivalTimes(PoissonArrivals{mean}, n + 1, 7);
  double sum = 0, sum_squares = 0;
  size_t below_mean = 0;
  for (size_t i = 1; i <= n; ++i) {
    const double gap = t[i] - t[i - 1];
    sum += gap;
    sum_squares += gap * gap;
    below_mean += gap < mean;
  }
  // Standard error of the mean: mean / sqrt(n) = 0.0063; 0.05 is 8 of them.
  EXPECT_NEAR(sum / n, mean, 0.05);
  // Exponential, not any law with that mean: variance mean^2, P(gap < mean) = 1 - 1/e.
  const double variance = sum_squares / n - (sum / n) * (sum / n);
  EXPECT_NEAR(variance, mean * mean, 0.2);
  EXPECT_NEAR(static_cast<double>(below_mean) / n, 1 - std::exp(-1.0), 0.01);
}

// mt19937_64 is fully specified and the transform is ours: these are the times on every
// standard library (to the last bit of log, hence the tolerance). They were checked
// against an independent Python implementation of mt19937_64 written from the standard.
TEST(Arrivals, PinnedTimes) {
  const std::vector<double> t = ArrivalTimes(PoissonArrivals{1.0}, 4, 1);
  const std::vector<double> want = {0.0, 0.14372793716025822, 0.2903816652493837, 0.8904300253397337};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t[i], want[i], 1e-12) << i;
}

}  // namespace
}  // namespace graphfs::engine
