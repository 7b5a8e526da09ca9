// Job start times of run-jobs --arrivals (GraphM's evaluation: jobs arriving as a Poisson
// process). "poisson:MEAN_SECONDS" gives gaps between consecutive starts that are
// exponentially distributed with that mean: gap = -MEAN * log(1 - u), u uniform in [0, 1)
// taken from the top 53 bits of std::mt19937_64(seed). The engine is fully specified by
// the standard and the transform is ours (no std:: distribution), so a seed gives the same
// times with every standard library (up to the last bit of the libm's log).
//
// The first job starts at 0 (when the run starts) and job i at the sum of i gaps: the run
// does not open with an idle wait, like --stagger, and n jobs' times are the first n of
// n + 1 jobs' times for the same seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace graphfs::engine {

struct PoissonArrivals {
  double mean_seconds = 0;  // > 0 and finite
};

// "poisson:MEAN_SECONDS"; anything else is an error saying what is accepted.
Result<PoissonArrivals> ParseArrivals(const std::string& text);

// Planned start offsets (seconds since the run began) of `jobs` jobs: 0, then
// non-decreasing.
std::vector<double> ArrivalTimes(const PoissonArrivals& arrivals, size_t jobs, uint64_t seed);

}  // namespace graphfs::engine
