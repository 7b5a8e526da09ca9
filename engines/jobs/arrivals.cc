#include "engines/jobs/arrivals.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <random>

namespace graphfs::engine {

Result<PoissonArrivals> ParseArrivals(const std::string& text) {
  const std::string usage = "--arrivals: expected poisson:MEAN_SECONDS (a mean gap > 0 between job starts), got '" +
                            text + "'";
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  if (kind != "poisson") {
    return Error(EINVAL, kind.empty() ? usage : "--arrivals: unknown arrival process '" + kind + "' in '" + text +
                                                    "' (the only one is poisson:MEAN_SECONDS)");
  }
  if (colon == std::string::npos) return Error(EINVAL, usage);
  const std::string mean = text.substr(colon + 1);
  char* end = nullptr;
  errno = 0;
  const double value = mean.empty() || std::isspace(static_cast<unsigned char>(mean[0]))
                           ? std::nan("")
                           : std::strtod(mean.c_str(), &end);
  if (std::isnan(value) || errno != 0 || end == nullptr || *end != '\0' || !std::isfinite(value) || value <= 0) {
    return Error(EINVAL, usage);
  }
  return PoissonArrivals{value};
}

std::vector<double> ArrivalTimes(const PoissonArrivals& arrivals, size_t jobs, uint64_t seed) {
  std::vector<double> times;
  times.reserve(jobs);
  std::mt19937_64 rng(seed);
  double t = 0;
  for (size_t i = 0; i < jobs; ++i) {
    if (i > 0) {
      const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1): 1 - u is never 0
      t += -arrivals.mean_seconds * std::log(1.0 - u);
    }
    times.push_back(t);
  }
  return times;
}

}  // namespace graphfs::engine
