#include "striping/disk_activity.h"
#include "striping/io_engine.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace graphfs {
namespace {

void Sleep(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Time is charged to what was true in between: disk 0 busy for ~60 ms while a reader waited,
// disk 1 idle all the while the reader waited (~120 ms), neither idle-while-waiting after it.
TEST(DiskActivity, ChargesBusyAndIdleWhileWaitingTime) {
  DiskActivity a(2);
  a.ReaderWaits();
  Sleep(60);
  a.Queued(0);
  Sleep(60);
  a.Finished(0);
  a.ReaderDone();
  Sleep(60);  // nobody waits: idle, but not idle while waiting
  const DiskActivity::Totals t = a.Read();
  ASSERT_EQ(t.busy_seconds.size(), 2u);
  EXPECT_GE(t.busy_seconds[0], 0.055);
  EXPECT_LT(t.busy_seconds[0], 2.0);  // generous: a loaded machine oversleeps
  EXPECT_EQ(t.busy_seconds[1], 0.0);
  EXPECT_GE(t.idle_while_waiting_seconds[0], 0.055);
  EXPECT_LT(t.idle_while_waiting_seconds[0], 2.0);
  EXPECT_GE(t.idle_while_waiting_seconds[1], 0.115);
  EXPECT_LT(t.idle_while_waiting_seconds[1], 2.5);
  // Disk 1 was idle the whole wait, disk 0 only until its run came: the difference is the run.
  EXPECT_GE(t.idle_while_waiting_seconds[1] - t.idle_while_waiting_seconds[0], 0.055);
  EXPECT_NEAR(t.idle_while_waiting_seconds[1] - t.idle_while_waiting_seconds[0], t.busy_seconds[0], 0.01);
  EXPECT_GE(t.reader_wait_seconds, 0.115);
  EXPECT_EQ(t.waits, 1u);
  // Two readers waiting at once count once; a disk with two runs is busy once.
  a.ReaderWaits();
  a.ReaderWaits();
  a.Queued(1);
  a.Queued(1);
  Sleep(40);
  a.Finished(1);
  a.Finished(1);
  a.ReaderDone();
  a.ReaderDone();
  const DiskActivity::Totals u = a.Read();
  EXPECT_GE(u.busy_seconds[1], 0.035);
  EXPECT_LT(u.busy_seconds[1], 2.0);
  EXPECT_LT(u.reader_wait_seconds - t.reader_wait_seconds, 2.0);
  EXPECT_EQ(u.waits, 3u);
}

TEST(RequestSizeBucket, CountsEachSizeInTheFirstBoundItFits) {
  EXPECT_EQ(RequestSizeBucket(4096), 0u);
  EXPECT_EQ(RequestSizeBucket(64 << 10), 0u);
  EXPECT_EQ(RequestSizeBucket((64 << 10) + 1), 1u);
  EXPECT_EQ(RequestSizeBucket(16 << 20), 4u);
  EXPECT_EQ(RequestSizeBucket(1ull << 30), kRequestSizeBuckets - 1);
}

}  // namespace
}  // namespace graphfs
