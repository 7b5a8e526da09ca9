#include "volume/read_ahead.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace graphfs::volume {
namespace {

constexpr uint64_t kUnit = 64 << 10;

TEST(ReadStreams, DetectsSequentialAndInterleavedStreams) {
  ReadStreams s;
  EXPECT_EQ(s.Continues(0, 1 << 20), 1u << 20);  // start of file
  EXPECT_EQ(s.Continues(1 << 20, 1 << 20), 2u << 20);  // the run so far, for read-ahead to grow with
  EXPECT_FALSE(s.Continues(500ull << 20, 1 << 20));  // a second stream starts elsewhere
  EXPECT_TRUE(s.Continues(501ull << 20, 1 << 20));
  EXPECT_TRUE(s.Continues(2 << 20, 1 << 20));  // first stream goes on
  EXPECT_FALSE(s.Continues(9000ull << 20, 4096));
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

TEST(ReadAhead, StreamWindowGrowsWithTheStreamUpToUnitsAndShare) {
  ReadAheadOptions o;
  o.staging_limit = 100 * kUnit;
  ReadAhead r(o);
  EXPECT_EQ(r.StreamWindow(0, kUnit, 4), 0u);              // not a stream: nothing ahead
  EXPECT_EQ(r.StreamWindow(3 * kUnit, kUnit, 4), 3 * kUnit);  // never more than it has read
  EXPECT_EQ(r.StreamWindow(50 * kUnit, kUnit, 4), 8 * kUnit); // two units per disk by default
  o.units = 3;
  EXPECT_EQ(ReadAhead(o).StreamWindow(50 * kUnit, kUnit, 4), 3 * kUnit);
  o.staging_limit = 2 * kUnit;
  EXPECT_EQ(ReadAhead(o).StreamWindow(50 * kUnit, kUnit, 4), 2 * kUnit);  // within the share
  o.off = true;
  EXPECT_EQ(ReadAhead(o).StreamWindow(50 * kUnit, kUnit, 4), 0u);
  // The loader keeps two units per disk loading, read-ahead option or not, within its share.
  EXPECT_EQ(ReadAhead(o).LoaderWindow(kUnit, 4), 2 * kUnit);
  o.staging_limit = 100 * kUnit;
  EXPECT_EQ(ReadAhead(o).LoaderWindow(kUnit, 4), 8 * kUnit);
}

}  // namespace
}  // namespace graphfs::volume
