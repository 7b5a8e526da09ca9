// Comparing the per-vertex result files of the apps (tests that run engines on a mount).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tests/testutil/mount_harness.h"

namespace graphfs::testing {

template <typename T>
std::vector<T> ReadArray(const std::string& path) {
  const std::string bytes = ReadFile(path);
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

// Largest relative difference between two arrays of doubles (infinity if their sizes differ
// or they are empty).
inline double WorstRelativeDifference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.empty()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]) / std::max(std::fabs(a[i]), 1e-12));
  return worst;
}

}  // namespace graphfs::testing
