// A mounted graphfs over an empty source directory, plus a plain directory on the same
// filesystem to run the same operations on for comparison.
#pragma once

#include <errno.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <functional>
#include <string>

#include "tests/testutil/mount_harness.h"

namespace graphfs::testing {

// What a system call returned, and errno if it failed.
struct Outcome {
  long ret;
  int err;
  bool operator==(const Outcome& o) const { return ret == o.ret && err == o.err; }
};

inline Outcome Sys(long ret) { return {ret < 0 ? -1 : ret, ret < 0 ? errno : 0}; }

inline std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << "{ret=" << o.ret << ", errno=" << o.err << " (" << strerror(o.err) << ")}";
}

class MountedFs : public ::testing::Test {
 protected:
  void SetUp() override {
    src = tmp.Sub("src");
    plain = tmp.Sub("plain");
    mnt = tmp.Sub("mnt");
    ASSERT_TRUE(mount.Mount(src, mnt, MountOptions())) << mount.error();
  }
  void TearDown() override { mount.Unmount(); }
  virtual std::vector<std::string> MountOptions() { return {"allow_other"}; }

  // Runs `op` under the mount and under the plain directory; both must agree.
  void Same(const std::function<Outcome(const std::string& root)>& op, const char* what) {
    Outcome a = op(mnt), b = op(plain);
    EXPECT_EQ(a, b) << what << ": mount vs plain directory";
  }
  // Compares what stat shows of the same relative path on both sides.
  void SameStat(const std::string& rel) {
    struct stat a, b;
    Outcome oa = Sys(::lstat((mnt + "/" + rel).c_str(), &a));
    Outcome ob = Sys(::lstat((plain + "/" + rel).c_str(), &b));
    ASSERT_EQ(oa, ob) << "lstat " << rel;
    if (oa.ret != 0) return;
    EXPECT_EQ(a.st_mode, b.st_mode) << rel;
    EXPECT_EQ(a.st_nlink, b.st_nlink) << rel;
    EXPECT_EQ(a.st_uid, b.st_uid) << rel;
    EXPECT_EQ(a.st_gid, b.st_gid) << rel;
    if (!S_ISDIR(a.st_mode)) {
      EXPECT_EQ(a.st_size, b.st_size) << rel;
    }
  }

  TempDir tmp;
  std::string src, plain, mnt;
  GraphfsMount mount;
};

}  // namespace graphfs::testing
