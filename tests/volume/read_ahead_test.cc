#include "volume/read_ahead.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace graphfs::volume {
namespace {

constexpr uint64_t kUnit = 64 << 10;

TEST(ReadStreams, DetectsSequentialAndInterleavedStreams) {
  ReadStreams s;
  EXPECT_EQ(s.Continues(0, 1 << 20).run, 1u << 20);  // start of file
  EXPECT_EQ(s.Continues(1 << 20, 1 << 20).run, 2u << 20);  // the run so far, for read-ahead to grow with
  EXPECT_FALSE(s.Continues(500ull << 20, 1 << 20).run);  // a second stream starts elsewhere
  EXPECT_TRUE(s.Continues(501ull << 20, 1 << 20).run);
  EXPECT_TRUE(s.Continues(2 << 20, 1 << 20).run);  // first stream goes on
  EXPECT_FALSE(s.Continues(9000ull << 20, 4096).run);
}

TEST(ReadStreams, RemembersHowFarEachStreamsReadAheadReaches) {
  ReadStreams s;
  const ReadStreams::Position a = s.Continues(0, 1 << 20);
  EXPECT_EQ(a.ahead, 1u << 20);  // nothing ahead yet: from the read's end
  s.NoteAhead(a.slot, 40 << 20);
  const ReadStreams::Position b = s.Continues(100ull << 20, 1 << 20);  // another stream
  EXPECT_NE(b.slot, a.slot);
  EXPECT_EQ(b.ahead, 101u << 20);
  const ReadStreams::Position a2 = s.Continues(1 << 20, 1 << 20);
  EXPECT_EQ(a2.slot, a.slot);
  EXPECT_EQ(a2.ahead, 40u << 20);  // the next read-ahead starts where the last one stopped
  s.NoteAhead(a.slot, 10 << 20);   // never moves back
  EXPECT_EQ(s.Continues(2 << 20, 1 << 20).ahead, 40u << 20);
}

TEST(ReadAhead, LiveReadersShareTheStaging) {
  ReadAheadOptions o;
  o.staging_limit = 8 * kUnit;
  ReadAhead r(o);
  EXPECT_EQ(r.Share(), 8 * kUnit);  // nobody reads: one stream may take it all
  r.NoteReader(7, 1);
  EXPECT_EQ(r.Share(), 8 * kUnit);
  r.NoteReader(7, 2);
  r.NoteReader(7, 3);
  r.NoteReader(7, 1);  // the same reader again: still three
  EXPECT_EQ(r.Share(), 8 * kUnit / 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  r.NoteReader(7, 1);  // the others went quiet: their shares return
  EXPECT_EQ(r.Share(), 8 * kUnit);
}

TEST(ReadAhead, StreamWindowReachesEveryDiskAtOnceThenGrowsToEachDisksDepth) {
  ReadAheadOptions o;
  o.staging_limit = 100 * kUnit;
  o.disk_bytes_per_second = 1e6;  // slow disks: two units per disk are more than 0.1 s of reading
  ReadAhead r(o);
  EXPECT_EQ(r.StreamWindow(0, kUnit, 4), 0u);                 // not a stream: nothing ahead
  EXPECT_EQ(r.StreamWindow(kUnit / 2, kUnit, 4), 4 * kUnit);  // a new stream: one unit on every disk
  EXPECT_EQ(r.StreamWindow(3 * kUnit, kUnit, 4), 6 * kUnit);  // twice what it has read
  EXPECT_EQ(r.StreamWindow(50 * kUnit, kUnit, 4), 8 * kUnit); // at most two units per disk
  // Fast disks: each disk keeps 0.1 s of its reading queued, more than two small units.
  o.disk_bytes_per_second = 100 * 64e3 / 0.1 / 10;  // 0.1 s = 10 units of 64 KiB... per disk
  const uint64_t depth = static_cast<uint64_t>(o.disk_bytes_per_second * kReactionSeconds);
  EXPECT_GT(depth, 2 * kUnit);
  EXPECT_EQ(ReadAhead(o).DiskDepth(kUnit), depth);
  EXPECT_EQ(ReadAhead(o).StreamWindow(500 * kUnit, kUnit, 4), 4 * depth);
  // The staging area does not cap the window (the read path loads beyond a stream's share only
  // for idle disks): a small area still reaches every disk.
  o.staging_limit = kUnit;
  EXPECT_EQ(ReadAhead(o).StreamWindow(kUnit, kUnit, 4), 4 * kUnit);
  o.units = 3;
  EXPECT_EQ(ReadAhead(o).StreamWindow(50 * kUnit, kUnit, 4), 3 * kUnit);
  o.off = true;
  EXPECT_EQ(ReadAhead(o).StreamWindow(50 * kUnit, kUnit, 4), 0u);
  // The loader keeps two units per disk loading, read-ahead option or not, within its share.
  o.staging_limit = 2 * kUnit;
  EXPECT_EQ(ReadAhead(o).LoaderWindow(kUnit, 4), 2 * kUnit);
  o.staging_limit = 100 * kUnit;
  EXPECT_EQ(ReadAhead(o).LoaderWindow(kUnit, 4), 8 * kUnit);
}

}  // namespace
}  // namespace graphfs::volume
