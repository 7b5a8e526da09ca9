// The control directory's parsers without a mount (fusefs/control_parse.h). The same
// inputs through a real mount are in jobs_mount_test.cc (BadInputGetsEinvalAndAMessage);
// tests/fuzz/control_parse_fuzz.cc feeds them everything else.
#include "fusefs/control_parse.h"

#include <gtest/gtest.h>

#include <bit>

namespace graphfs {
namespace {

uint64_t Count(const std::vector<uint64_t>& words) {
  uint64_t n = 0;
  for (uint64_t w : words) n += static_cast<uint64_t>(std::popcount(w));
  return n;
}

TEST(ControlParse, ActiveBitmapIsExactlyCeilVOver8BytesWithNothingPastV) {
  auto words = ParseActiveBitmap(std::string("\x81\x0f", 2), 12);
  ASSERT_TRUE(words.ok()) << words.error().message();
  EXPECT_EQ(*words, std::vector<uint64_t>{0x0f81});
  auto past = ParseActiveBitmap(std::string("\x00\x10", 2), 12);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().code(), EINVAL);
  EXPECT_NE(past.error().message().find("bits set past the last vertex (11)"), std::string::npos);
  auto small = ParseActiveBitmap(std::string(10, '\xff'), 4096);
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.error().message().find("expected a bitmap of 512 bytes"), std::string::npos);
  EXPECT_TRUE(ParseActiveBitmap(std::string(8, '\xff'), 64).ok()) << "a whole last word";
  // No vertices, no bytes: once a memcpy into the empty vector's null data() (UBSan).
  auto none = ParseActiveBitmap("", 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(ControlParse, ActiveListTakesIdsBelowVOrAll) {
  auto ids = ParseActiveList("7 8\t4095\n8\n", 4096);
  ASSERT_TRUE(ids.ok()) << ids.error().message();
  EXPECT_EQ(Count(*ids), 3u);
  EXPECT_EQ((*ids)[4095 / 64] >> (4095 % 64), 1u);
  auto all = ParseActiveList("all\n", 100);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(Count(*all), 100u);
  EXPECT_EQ(all->back() >> (100 % 64), 0u) << "nothing past V";
  EXPECT_EQ(Count(*ParseActiveList(" \n", 100)), 0u) << "an empty list activates nothing";
  for (const char* bad : {"1 2 4096", "1 -2", "+3", "0x10", "all1", "00000000000000000001"}) {
    auto r = ParseActiveList(bad, 4096);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code(), EINVAL);
    EXPECT_EQ(r.error().message().rfind("active.list: '", 0), 0u) << r.error().message();
  }
  EXPECT_FALSE(ParseActiveList("99999999999999999999", 4096).ok()) << "20 digits: refused, not stoull's throw";
}

TEST(ControlParse, PartitionSize) {
  EXPECT_EQ(*ParsePartitionSize(" 256M\n"), 256u << 20);
  EXPECT_EQ(*ParsePartitionSize("64G"), kMaxPartitionBytes);
  for (const char* bad : {"0", "65G", "lots", "", "-1"}) {
    auto r = ParsePartitionSize(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message().rfind("partition_size: ", 0), 0u) << r.error().message();
  }
}

TEST(ControlParse, FaultLineIsDiskAndErrnoBelowTheDiskCount) {
  auto f = ParseFaultLine("1 5\n", 4);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->disk, 1u);
  EXPECT_EQ(f->error, 5);
  EXPECT_EQ(ParseFaultLine("3 0", 4)->error, 0) << "0 heals";
  EXPECT_TRUE(ParseFaultLine("1 5 and more", 4).ok()) << "read as `stream >> disk >> err`, as always";
  for (const char* bad : {"4 5", "-1 5", "1 -5", "1 4096", "1", "x 5", "99999999999999999999 5"})
    EXPECT_FALSE(ParseFaultLine(bad, 4).ok()) << bad;
  EXPECT_FALSE(ParseFaultLine("0 5", 0).ok()) << "no disks (no striped graph mounted)";
}

TEST(ControlParse, GraphPathRelativeToTheMountRoot) {
  const std::string mnt = "/mnt/graphs", src = "/srv/graphs";
  EXPECT_EQ(*MountRelative("twitter", mnt, src), "twitter");
  EXPECT_EQ(*MountRelative("./a//b/", mnt, src), "a/b");
  EXPECT_EQ(*MountRelative("/mnt/graphs/a/b", mnt, src), "a/b");
  EXPECT_EQ(*MountRelative("/srv/graphs/a", mnt, src), "a");
  EXPECT_EQ(*MountRelative("/mnt/graphs", mnt, src), "") << "the root itself; the caller refuses it";
  EXPECT_FALSE(MountRelative("/etc", mnt, src).ok());
  EXPECT_FALSE(MountRelative("/mnt/graphsX/a", mnt, src).ok());
  EXPECT_FALSE(MountRelative("graph/../../x", mnt, src).ok());
  EXPECT_FALSE(MountRelative(".graphfs/jobs", mnt, src).ok());
  EXPECT_EQ(*MountRelative("a/.graphfs", mnt, src), "a/.graphfs") << "only the root's is the control directory";
  EXPECT_EQ(TrimBlanks(" \t/mnt/graphs/a\r\n"), "/mnt/graphs/a");
}

TEST(ControlParse, LpFileNames) {
  LpFile map = LpFile::kMap;
  EXPECT_EQ(ParseLpFileName("lp-12", &map), 12u);
  EXPECT_EQ(map, LpFile::kView);
  EXPECT_EQ(ParseLpFileName("lp-12.map", &map), 12u);
  EXPECT_EQ(map, LpFile::kMap);
  EXPECT_EQ(ParseLpFileName("lp-7.pieces", &map), 7u);
  EXPECT_EQ(map, LpFile::kPieces);
  for (const char* bad : {"lp-", "lp-0", "lp-012", "lp-.map", "lp-.pieces", "lp-1.map.pieces", "lp-1.pieces.map", "lp-1x", "lq-1",
                          "lp-99999999999999999999"})
    EXPECT_EQ(ParseLpFileName(bad, &map), 0u) << bad;
  EXPECT_EQ(ParseLpFileName("lp-9999999999999999999", &map), 9999999999999999999u) << "19 digits fit";
}

TEST(ControlParse, DisksLines) {
  auto r = ParseDisksLine(" rebuild 2 /disks/new 100M\n", 4);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->kind, DisksCommand::Kind::kRebuild);
  EXPECT_EQ(r->disk, 2u);
  EXPECT_EQ(r->dir, "/disks/new");
  EXPECT_EQ(r->rate, 100u << 20);
  r = ParseDisksLine("rebuild 0 /d", 4);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rate, 0u);
  r = ParseDisksLine("scrub 50M/s\n", 4);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->kind, DisksCommand::Kind::kScrub);
  EXPECT_EQ(r->rate, 50u << 20);
  EXPECT_TRUE(ParseDisksLine("scrub", 4).ok());
  for (const char* bad : {"", "\n", "rebuild", "rebuild 1", "rebuild 4 /d", "rebuild -1 /d", "rebuild x /d",
                          "rebuild 1 d", "rebuild 1 /a/../b", "rebuild 1 /d fast", "rebuild 1 /d 1M extra",
                          "scrub 1 2", "scrub fast", "frobnicate", "rebuild 99999999999 /d"}) {
    auto e = ParseDisksLine(bad, 4);
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_EQ(e.error().code(), EINVAL) << bad;
    EXPECT_EQ(e.error().message().rfind("disks: ", 0), 0u) << e.error().message();
  }
  EXPECT_NE(ParseDisksLine("rebuild 4 /d", 4).error().message().find("0..3"), std::string::npos);
  EXPECT_NE(ParseDisksLine("rebuild 1 d", 4).error().message().find("not an absolute path"), std::string::npos);
}

}  // namespace
}  // namespace graphfs
