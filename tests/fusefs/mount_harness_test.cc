// The mount harness itself (tests/testutil/mount_harness.h): Unmount ends with nothing mounted at
// the mountpoint on every path — here the one where the daemon does not exit after the unmount
// and the harness kills it, which left a dead mount behind the test before (seen once under load).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/testutil/mount_harness.h"

namespace graphfs::testing {
namespace {

// A daemon stand-in that ignores the unmount: its wrapper runs the real daemon and, once that one
// is unmounted and exits, execs it again on the same mountpoint half a second later (past the
// harness's unmount; the same pid, which the harness waits for) — it mounts anew and serves until
// killed. The harness's wait runs out, it kills the
// daemon, and the second mount is left dead. A watcher the wrapper starts first marks (MOUNT.remounted)
// that the second mount did come up, so that a machine too slow to mount it within the harness's
// wait fails the test as proving nothing rather than passing it.
TEST(MountHarness, ADaemonKilledAfterTheUnmountLeavesNoMountBehind) {
  TempDir tmp;
  const std::string src = tmp.Sub("src"), mnt = tmp.Sub("mnt"), marker = mnt + ".remounted";
  // sh -c SCRIPT MOUNTPOINT DAEMON ARGS...: $0 is the mountpoint, "$@" the daemon's command.
  const std::string script =
      "\"$@\"; sleep 0.5; "
      "(i=0; while [ $i -lt 1500 ]; do "
      "grep -q \" $0 \" /proc/self/mountinfo && { : > \"$0.remounted\"; exit 0; }; sleep 0.01; i=$((i+1)); done) & "
      "exec \"$@\"";
  GraphfsMount mount;
  mount.SetWrapper({"sh", "-c", script, mnt});
  ASSERT_TRUE(mount.Mount(src, mnt)) << mount.error();

  // The harness's own failure for the daemon that would not exit is the point of the stand-in:
  // captured here, and checked below.
  ::testing::TestPartResultArray reported;
  {
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &reported);
    mount.Unmount();
  }
  const bool left_mounted = IsMountPoint(mnt);
  if (left_mounted) RunCommand({"fusermount3", "-u", "-z", mnt});  // not past this test, whatever it shows
  ASSERT_TRUE(std::filesystem::exists(marker))
      << "the stand-in's second mount did not come up before the harness killed it: nothing was tested";
  EXPECT_FALSE(left_mounted) << "Unmount left the killed daemon's mount at " << mnt;
  std::string messages;
  bool said_no_exit = false;
  for (int k = 0; k < reported.size(); ++k) {
    const std::string m = reported.GetTestPartResult(k).message();
    messages += m + "\n";
    said_no_exit |= m.find("did not exit within 5 s of the unmount") != std::string::npos;
    EXPECT_EQ(m.find("stale mount"), std::string::npos) << "the harness could not detach it: " << m;
  }
  EXPECT_TRUE(said_no_exit) << "the stand-in was not killed by the harness; it reported:\n" << messages;
}

}  // namespace
}  // namespace graphfs::testing
