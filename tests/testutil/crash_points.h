// What the tests that stop a tool at each of its named crash points (common/crash_point.h)
// share: a case per point of the tool's table, named after the point and printed with what it
// means (tests/admin/update_crash_test.cc, tests/striping/rebuild_crash_test.cc,
// tests/striping/restripe_crash_test.cc). Header-only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <string_view>

#include "common/crash_point.h"

namespace graphfs {

// gtest names a failed case's point by this (ADL: CrashPointInfo is graphfs's), not its bytes.
inline void PrintTo(const CrashPointInfo& p, std::ostream* os) { *os << p.name << " (" << p.when << ")"; }

namespace testing {

// A point's name as a test case's ('-' is not allowed there).
inline std::string CrashCaseName(std::string_view point) {
  std::string name(point);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// For INSTANTIATE_TEST_SUITE_P over a table of points.
inline std::string CrashPointCaseName(const ::testing::TestParamInfo<CrashPointInfo>& info) {
  return CrashCaseName(info.param.name);
}

}  // namespace testing
}  // namespace graphfs
