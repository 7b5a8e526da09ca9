// graphfs-calibrate's measurement and its file on the disk; StripedFile::ReadMany.
#include "striping/calibrate.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/testutil/temp_dir.h"

namespace graphfs {
namespace {

using testing::TempDir;

TEST(Calibrate, MeasuresADiskAndStoresTheResultOnIt) {
  TempDir tmp;
  const std::string disk = tmp.Sub("disk");
  CalibrateOptions o;
  o.probe_bytes = 8 << 20;
  o.sequential_request = 1 << 20;
  o.random_reads = 50;
  auto c = CalibrateDisk(disk, o);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_GT(c->bytes_per_second, 0);
  EXPECT_GT(c->random_read_seconds, 0);
  EXPECT_GE(c->seconds_per_request, 0);
  EXPECT_LE(c->seconds_per_request, c->random_read_seconds);
  EXPECT_EQ(c->probe_bytes, 8u << 20);
  EXPECT_GT(c->measured_unix, 0);
  // The probe file is gone.
  for (const auto& e : std::filesystem::directory_iterator(disk)) ADD_FAILURE() << "left behind: " << e.path();

  ASSERT_TRUE(SaveCalibration(*c).ok());
  auto back = LoadCalibration(disk);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_DOUBLE_EQ(back->bytes_per_second, c->bytes_per_second);
  EXPECT_DOUBLE_EQ(back->seconds_per_request, c->seconds_per_request);
  EXPECT_EQ(back->direct, c->direct);
  EXPECT_EQ(back->path, disk);
}

TEST(Calibrate, AbsentIsEnoentAndDamageIsNamed) {
  TempDir tmp;
  const std::string disk = tmp.Sub("disk");
  auto none = LoadCalibration(disk);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code(), ENOENT);
  for (const char* text : {"{", "[]", R"({"version":2})",
                           R"({"version":1,"bytes_per_second":0,"seconds_per_request":0,"random_read_seconds":0,"probe_bytes":1,"direct":true,"measured_unix":1})",
                           R"({"version":1,"bytes_per_second":1e8,"seconds_per_request":-1,"random_read_seconds":0,"probe_bytes":1,"direct":true,"measured_unix":1})",
                           R"({"version":1,"bytes_per_second":1e8,"seconds_per_request":0.001,"random_read_seconds":0.001,"probe_bytes":1,"direct":"yes","measured_unix":1})"}) {
    std::ofstream(CalibrationPath(disk), std::ios::trunc) << text;
    auto c = LoadCalibration(disk);
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_NE(c.error().message().find("graphfs-calibrate"), std::string::npos) << c.error().message();
  }
  std::ofstream(CalibrationPath(disk), std::ios::trunc)
      << R"({"version":1,"bytes_per_second":1e8,"seconds_per_request":0.001,"random_read_seconds":0.00104,"probe_bytes":4194304,"direct":true,"measured_unix":1700000000})";
  auto ok = LoadCalibration(disk);
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_DOUBLE_EQ(ok->bytes_per_second, 1e8);
}

TEST(Calibrate, RefusesSizesItCannotUse) {
  TempDir tmp;
  CalibrateOptions o;
  o.probe_bytes = 1 << 20;
  o.sequential_request = 4 << 20;  // larger than the probe
  EXPECT_FALSE(CalibrateDisk(tmp.path(), o).ok());
  o.sequential_request = 1000;  // not 4 KiB aligned
  EXPECT_FALSE(CalibrateDisk(tmp.path(), o).ok());
  EXPECT_FALSE(CalibrateDisk(tmp.path() + "/missing", CalibrateOptions{}).ok());
}

}  // namespace
}  // namespace graphfs
