// A disk's state as `.graphfs/stats` reports it (disk_health.h): missing from the set, else
// avoided while the engine reads around it, else failing once it erred or served a bad block,
// else healthy.
#include <gtest/gtest.h>

#include <filesystem>

#include "striping/disk_health.h"
#include "tests/testutil/temp_dir.h"

namespace graphfs {
namespace {

TEST(DiskHealth, EachStateFromTheSetAndTheEngineCounters) {
  testing::TempDir tmp;
  std::vector<std::string> paths = {tmp.Sub("d0"), tmp.Sub("d1"), tmp.Sub("d2")};
  auto claimed = DiskSet::Claim(paths);
  ASSERT_TRUE(claimed.ok()) << claimed.error().message();
  DiskRegistry registry = claimed->registry();
  registry.parity = 1;
  std::filesystem::remove_all(paths[2]);
  auto set = DiskSet::Open(registry);
  ASSERT_TRUE(set.ok()) << set.error().message();
  IoEngineOptions o;
  o.disks = 3;
  auto io = IoEngine::Start(o);
  ASSERT_TRUE(io.ok()) << io.error().message();
  IoEngine& engine = **io;

  EXPECT_EQ(CurrentDiskState(*set, engine, 0), DiskState::kHealthy);
  EXPECT_EQ(CurrentDiskState(*set, engine, 1), DiskState::kHealthy);
  EXPECT_EQ(CurrentDiskState(*set, engine, 2), DiskState::kMissing);
  EXPECT_STREQ(DiskStateName(CurrentDiskState(*set, engine, 2)), "missing");

  engine.counters(0).checksum_errors.fetch_add(1);
  EXPECT_EQ(CurrentDiskState(*set, engine, 0), DiskState::kFailing);
  engine.counters(1).errors.fetch_add(1);
  EXPECT_EQ(CurrentDiskState(*set, engine, 1), DiskState::kFailing);
  engine.NoteReadError(1);
  EXPECT_EQ(CurrentDiskState(*set, engine, 1), DiskState::kAvoided);
  EXPECT_STREQ(DiskStateName(DiskState::kAvoided), "avoided");
  // A probe that read well: read again, still counted as failing since the mount.
  engine.NoteReadOk(1);
  EXPECT_EQ(CurrentDiskState(*set, engine, 1), DiskState::kFailing);
  // Missing wins over whatever the engine counted.
  engine.NoteReadError(2);
  EXPECT_EQ(CurrentDiskState(*set, engine, 2), DiskState::kMissing);
  EXPECT_STREQ(DiskStateName(DiskState::kHealthy), "healthy");
}

}  // namespace
}  // namespace graphfs
