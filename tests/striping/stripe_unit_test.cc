// The stripe unit graphfs-stripe chooses without --unit (striping/stripe_unit.h), and the tool
// recording that choice (and a resumed run keeping its first choice).
#include "striping/stripe_unit.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <bit>
#include <cstring>
#include <random>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "striping/calibrate.h"
#include "striping/disk_set.h"
#include "striping/manifest.h"
#include "tests/engines/run_binary.h"
#include "tests/testutil/temp_dir.h"

namespace graphfs {
namespace {

using testing::TempDir;

constexpr uint64_t MiB = 1ull << 20;
constexpr uint64_t GiB = 1ull << 30;

StripeUnitChoice Choose(uint64_t size, uint32_t disks, double bps = 0, double cost = 0,
                        uint64_t request = kDefaultEngineRequest) {
  return ChooseStripeUnit({size, disks, request, bps, cost});
}

// An HDD-like disk: 150 MB/s, 8 ms per request (seek and rotation). (c) wants
// 20 x 150e6 x 0.008 = 24e6 bytes, i.e. 32 MiB.
constexpr double kHddRate = 150e6, kHddCost = 8e-3;

TEST(StripeUnit, SmallFilesStillSpreadOverEveryDisk) {
  // 64 MiB over 4 disks: 16 MiB a disk, 4 units each -> 4 MiB (not the old fixed 16 MiB, which
  // gave each disk one unit).
  EXPECT_EQ(Choose(64 * MiB, 4).unit, 4 * MiB);
  // The demo's column (192 MiB, 4 disks): 12 MiB rounds down to 8 MiB, 6 units per disk.
  const auto demo = Choose(192 * MiB, 4);
  EXPECT_EQ(demo.unit, 8 * MiB);
  EXPECT_NE(demo.reason.find("192 MiB"), std::string::npos) << demo.reason;
  EXPECT_NE(demo.reason.find("6.0 units per disk"), std::string::npos) << demo.reason;
  // 100 MiB over 4 disks: 6.25 MiB rounds down to 4 MiB.
  EXPECT_EQ(Choose(100 * MiB, 4).unit, 4 * MiB);
  // Below 4 MiB per disk: the smallest unit; below 1 MiB per disk too.
  EXPECT_EQ(Choose(6 * MiB, 4).unit, MiB);
  const auto tiny = Choose(3 * MiB, 4);
  EXPECT_EQ(tiny.unit, MiB);
  EXPECT_NE(tiny.reason.find("less than 1 MiB per disk"), std::string::npos) << tiny.reason;
  EXPECT_EQ(Choose(0, 4).unit, MiB);
}

TEST(StripeUnit, LargeFilesGetTheLargestUnit) {
  const auto big = Choose(2 * GiB, 4);
  EXPECT_EQ(big.unit, 16 * MiB);
  EXPECT_NE(big.reason.find("the largest unit"), std::string::npos) << big.reason;
  EXPECT_EQ(Choose(256 * MiB, 4).unit, 16 * MiB);  // exactly 4 units per disk
  EXPECT_EQ(Choose(255 * MiB, 4).unit, 8 * MiB);   // just short of it
  EXPECT_EQ(Choose(1ull << 50, 64).unit, 16 * MiB);
}

TEST(StripeUnit, TheEnginesRequestCapsTheUnit) {
  const auto capped = Choose(2 * GiB, 4, 0, 0, 12 * MiB);  // 12 MiB rounds down to 8 MiB
  EXPECT_EQ(capped.unit, 8 * MiB);
  EXPECT_NE(capped.reason.find("engines' request of 12 MiB"), std::string::npos) << capped.reason;
  EXPECT_EQ(Choose(2 * GiB, 4, 0, 0, 2 * MiB).unit, 2 * MiB);
  EXPECT_EQ(Choose(2 * GiB, 4, 0, 0, 512 << 10).unit, MiB);  // never below 1 MiB
  EXPECT_EQ(Choose(2 * GiB, 4, 0, 0, 64 * MiB).unit, 16 * MiB);  // never above 16 MiB
  // The cap holds against the request cost too.
  EXPECT_EQ(Choose(2 * GiB, 4, kHddRate, kHddCost, 4 * MiB).unit, 4 * MiB);
  // A small file's own bound is below the cap: the cap changes nothing.
  EXPECT_EQ(Choose(64 * MiB, 4, 0, 0, 12 * MiB).unit, 4 * MiB);
}

// A grid's column is read a block at a time: the block (file / P²) caps the unit like the
// engines' request does, so a block reaches several disks (CSMqGraph: between the average and
// the largest request).
TEST(StripeUnit, AGridsBlockIsTheTypicalRequest) {
  StripeUnitInputs in{192 * MiB, 4};
  EXPECT_EQ(ChooseStripeUnit(in).unit, 8 * MiB);  // block unknown: 4 units per disk
  in.typical_request = 192 * MiB / 64;           // the demo's P = 8: 3 MiB blocks
  const StripeUnitChoice c = ChooseStripeUnit(in);
  EXPECT_EQ(c.unit, 2 * MiB);
  EXPECT_NE(c.reason.find("typical request (a block) of 3 MiB"), std::string::npos) << c.reason;
  in.typical_request = 48 * MiB;  // larger than the engines' request: that one caps
  EXPECT_EQ(ChooseStripeUnit(in).unit, 8 * MiB);
  StripeUnitInputs big{3 * GiB, 4};
  big.typical_request = 3 * GiB / 256;  // scale 24, P = 16: 12 MiB blocks
  EXPECT_EQ(ChooseStripeUnit(big).unit, 8 * MiB);
  big.typical_request = 256 * 1024;  // tiny blocks: still at least 1 MiB
  EXPECT_EQ(ChooseStripeUnit(big).unit, MiB);
}

TEST(StripeUnit, AnHddLikeRequestCostWinsOverUnitsPerDisk) {
  // 64 MiB over 4 disks wants 4 MiB for 4 units per disk, but a 4 MiB request on this disk
  // spends 8 ms seeking for 28 ms of transfer; (c) wins, held to 16 MiB (one unit per disk).
  const auto hdd = Choose(64 * MiB, 4, kHddRate, kHddCost);
  EXPECT_EQ(hdd.unit, 16 * MiB);
  EXPECT_NE(hdd.reason.find("8.00 ms at 150 MB/s"), std::string::npos) << hdd.reason;
  EXPECT_NE(hdd.reason.find("32 MiB"), std::string::npos) << hdd.reason;
  // 32 MiB over 4 disks: held to one unit per disk, 8 MiB, so every disk keeps part of the file.
  const auto held = Choose(32 * MiB, 4, kHddRate, kHddCost);
  EXPECT_EQ(held.unit, 8 * MiB);
  EXPECT_NE(held.reason.find("one unit per disk"), std::string::npos) << held.reason;
  // A moderate cost: 100 MB/s, 2 ms -> 4e6 bytes -> 4 MiB, taken whole when the file allows.
  EXPECT_EQ(Choose(16 * MiB, 4, 100e6, 2e-3).unit, 4 * MiB);  // (b) alone: 1 MiB
  EXPECT_EQ(Choose(16 * MiB, 4).unit, MiB);
  // No conflict: a large file gets (b)'s unit, which is more than (c) asks.
  EXPECT_EQ(Choose(192 * MiB, 4, 100e6, 2e-3).unit, 8 * MiB);
  // An SSD-like cost (500 MB/s, 0.1 ms -> 1e6 bytes) changes nothing.
  EXPECT_EQ(Choose(64 * MiB, 4, 500e6, 1e-4).unit, 4 * MiB);
  // A fast disk with a cost (3 GB/s, 0.08 ms -> 4.8e6 bytes) wants 8 MiB.
  EXPECT_EQ(Choose(64 * MiB, 4, 3e9, 8e-5).unit, 8 * MiB);
}

TEST(StripeUnit, WithoutACalibrationTheRequestCostIsLeftOut) {
  const auto none = Choose(32 * MiB, 4);
  EXPECT_EQ(none.unit, 2 * MiB);
  EXPECT_NE(none.reason.find("not measured"), std::string::npos) << none.reason;
  // A calibration with a rate but no cost beyond the bytes: the same unit, said so.
  const auto free_requests = Choose(32 * MiB, 4, 200e6, 0);
  EXPECT_EQ(free_requests.unit, 2 * MiB);
  EXPECT_NE(free_requests.reason.find("0.00 ms at 200 MB/s"), std::string::npos) << free_requests.reason;
  // A cost without a rate is no calibration; a negative cost (noise) is none; a wild one is capped.
  EXPECT_EQ(Choose(32 * MiB, 4, 0, 1.0).unit, 2 * MiB);
  EXPECT_EQ(Choose(32 * MiB, 4, 200e6, -1e-3).unit, 2 * MiB);
  EXPECT_EQ(Choose(2 * GiB, 4, 1e12, 1e6).unit, 16 * MiB);
}

TEST(StripeUnit, OneDisk) {
  EXPECT_EQ(Choose(192 * MiB, 1).unit, 16 * MiB);  // 48 MiB a quarter
  EXPECT_EQ(Choose(8 * MiB, 1).unit, 2 * MiB);
  EXPECT_EQ(Choose(512 << 10, 1).unit, MiB);
  EXPECT_EQ(Choose(8 * MiB, 1, kHddRate, kHddCost).unit, 8 * MiB);  // one unit per disk
  EXPECT_EQ(Choose(8 * MiB, 0).unit, Choose(8 * MiB, 1).unit);      // 0 disks read as 1
}

// Over many inputs: a power of two in [1, 16] MiB, never above the engines' request (from
// 1 MiB up), at least 4 units per disk unless (c) or the 1 MiB floor says why not, and never
// smaller for a larger file or a costlier request.
TEST(StripeUnit, InvariantsOverASweep) {
  const std::vector<double> costs = {0, 1e-5, 1e-4, 1e-3, 5e-3, 2e-2};
  for (uint32_t disks : {1u, 2u, 3u, 4u, 8u, 16u}) {
    for (uint64_t request : std::vector<uint64_t>{512 << 10, 3 * MiB, 12 * MiB, 24 * MiB}) {
      for (double rate : {0.0, 50e6, 200e6, 2e9}) {
        std::vector<uint64_t> previous_by_size(costs.size(), 0);
        for (uint64_t size = MiB; size <= 8 * GiB; size += size / 3 + 4096) {
          uint64_t previous_by_cost = 0;
          for (size_t k = 0; k < costs.size(); ++k) {
            const double cost = costs[k];
            const auto c = Choose(size, disks, rate, cost, request);
            const std::string at = "size " + std::to_string(size) + ", " + std::to_string(disks) + " disks, request " +
                                   std::to_string(request) + ", " + std::to_string(rate) + " B/s, " +
                                   std::to_string(cost) + " s: " + c.reason;
            ASSERT_TRUE(std::has_single_bit(c.unit)) << at;
            ASSERT_GE(c.unit, MiB) << at;
            ASSERT_LE(c.unit, 16 * MiB) << at;
            ASSERT_LE(c.unit, std::max(MiB, request)) << at;
            ASSERT_GE(c.unit, previous_by_cost) << at;
            ASSERT_GE(c.unit, previous_by_size[k]) << at;
            previous_by_cost = previous_by_size[k] = c.unit;
            // At least 4 units per disk, unless the unit is the smallest or the request cost
            // asked for it (no more than twice what it asks: the power of two above).
            const bool four_per_disk = size / c.unit >= 4ull * disks;
            const bool cost_bound = rate > 0 && static_cast<double>(c.unit) < 2 * rate * cost / kRequestCostShare;
            ASSERT_TRUE(four_per_disk || c.unit == MiB || cost_bound) << at;
            // And always at least one unit per disk once the file has 1 MiB per disk.
            if (size >= MiB * disks) {
              ASSERT_GE(size / c.unit, disks) << at;
            }
            ASSERT_FALSE(c.reason.empty());
          }
        }
      }
    }
  }
}

void SaveCost(const std::string& dir, double rate, double cost) {
  DiskCalibration c;
  c.path = dir;
  c.bytes_per_second = rate;
  c.seconds_per_request = cost;
  c.random_read_seconds = cost + 4096 / rate;
  c.probe_bytes = 64 * MiB;
  c.measured_unix = 1;
  ASSERT_TRUE(SaveCalibration(c).ok());
}

TEST(StripeUnit, MedianRequestCostOfTheCalibratedDisks) {
  TempDir tmp;
  std::vector<std::string> disks = {tmp.Sub("d0"), tmp.Sub("d1"), tmp.Sub("d2"), tmp.Sub("d3"), tmp.Sub("d4")};
  EXPECT_EQ(MedianRequestCost(disks).calibrated, 0u);
  EXPECT_EQ(MedianRequestCost(disks).bytes_per_second, 0.0);
  EXPECT_NE(MedianRequestCost(disks).Describe().find("no calibration"), std::string::npos);
  SaveCost(disks[0], 100e6, 1e-3);
  SaveCost(disks[1], 300e6, 5e-3);
  SaveCost(disks[2], 200e6, 2e-3);
  // disks[3]: none; disks[4]: damaged, left out.
  std::ofstream(CalibrationPath(disks[4])) << "{\"bytes_per_second\": ";
  auto m = MedianRequestCost(disks);
  EXPECT_EQ(m.calibrated, 3u);
  EXPECT_EQ(m.disks, 5u);
  EXPECT_DOUBLE_EQ(m.bytes_per_second, 200e6);  // each median on its own
  EXPECT_DOUBLE_EQ(m.seconds_per_request, 2e-3);
  EXPECT_NE(m.Describe().find("3 of 5"), std::string::npos) << m.Describe();
  // An even count: the mean of the middle two.
  auto two = MedianRequestCost({disks[0], disks[1], disks[3]});
  EXPECT_DOUBLE_EQ(two.bytes_per_second, 200e6);
  EXPECT_DOUBLE_EQ(two.seconds_per_request, 3e-3);
}

// ---- the tool -----------------------------------------------------------------------------

void WriteBytes(const std::string& path, uint64_t bytes) {
  std::string data(bytes, '\0');
  for (uint64_t i = 0; i < bytes; ++i) data[i] = static_cast<char>((i * 2654435761u) >> 13);
  std::ofstream(path, std::ios::binary).write(data.data(), static_cast<std::streamsize>(data.size()));
}

uint64_t UnitOf(const std::string& path) {
  auto m = ReadManifest(path);
  if (!m.ok() || !m->has_value()) {
    ADD_FAILURE() << path << " has no manifest";
    return 0;
  }
  return (*m)->layout.unit;
}

std::string FileIdOf(const std::string& path) {
  auto m = ReadManifest(path);
  return m.ok() && m->has_value() ? (*m)->file_id : "";
}

testing::BinaryRun Stripe(const std::vector<std::string>& disks, const std::string& graph) {
  std::string list;
  for (const auto& d : disks) list += (list.empty() ? "" : ",") + d;
  // --parity 0: the pending records these tests write are of runs without parity (a record of
  // another K is not resumed).
  return testing::RunBinary({GRAPHFS_STRIPE_TOOL, "--parity", "0", "--compress", "none", "--min-size", "1M", "--disks", list,
                             graph}, 120);
}

TEST(StripeUnitTool, ChoosesEachFilesUnitWithoutUnit) {
  TempDir tmp;
  const std::vector<std::string> disks = {tmp.Sub("d0"), tmp.Sub("d1"), tmp.Sub("d2")};
  const std::string graph = tmp.Sub("graph");
  WriteBytes(graph + "/column", 24 * MiB);
  WriteBytes(graph + "/row", 5 * MiB);
  WriteBytes(graph + "/meta", 4096);  // below --min-size: stays plain
  auto r = Stripe(disks, graph);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  // No calibration: 24 MiB over 3 disks is 2 MiB a quarter; 5 MiB gets the smallest unit.
  EXPECT_EQ(UnitOf(graph + "/column"), ChooseStripeUnit({24 * MiB, 3}).unit);
  EXPECT_EQ(UnitOf(graph + "/column"), 2 * MiB);
  EXPECT_EQ(UnitOf(graph + "/row"), ChooseStripeUnit({5 * MiB, 3}).unit);
  EXPECT_EQ(UnitOf(graph + "/row"), MiB);
  EXPECT_FALSE((*ReadManifest(graph + "/meta")).has_value());
  // Each file's choice is printed with its reason, and the summary gives the range.
  EXPECT_NE(r.output.find("column: unit " + ChooseStripeUnit({24 * MiB, 3}).reason), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("row: unit 1 MiB"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no calibration"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("unit 1 MiB to 2 MiB (per file)"), std::string::npos) << r.output;
}

TEST(StripeUnitTool, ReadsTheDisksCalibrations) {
  TempDir tmp;
  const std::vector<std::string> disks = {tmp.Sub("d0"), tmp.Sub("d1"), tmp.Sub("d2")};
  // Two of three disks measured: 100 MB/s, 2 ms a request -> (c) wants 4 MiB.
  SaveCost(disks[0], 100e6, 2e-3);
  SaveCost(disks[2], 100e6, 2e-3);
  const std::string graph = tmp.Sub("graph");
  WriteBytes(graph + "/column", 24 * MiB);
  auto r = Stripe(disks, graph);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  const auto want = ChooseStripeUnit({24 * MiB, 3, kDefaultEngineRequest, 100e6, 2e-3});
  EXPECT_EQ(UnitOf(graph + "/column"), want.unit);
  EXPECT_EQ(want.unit, 4 * MiB);  // not the 2 MiB of the uncalibrated disks
  EXPECT_NE(r.output.find("2 of 3 disks' calibrations"), std::string::npos) << r.output;
}

TEST(StripeUnitTool, UnitOverridesAndEngineRequestCaps) {
  TempDir tmp;
  const std::vector<std::string> disks = {tmp.Sub("d0"), tmp.Sub("d1")};
  const std::string graph = tmp.Sub("graph");
  WriteBytes(graph + "/column", 24 * MiB);
  WriteBytes(graph + "/row", 24 * MiB);
  auto r = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "-q", "--compress", "none", "--unit", "64K", "--min-size", "1M",
                               "--disks", disks[0] + "," + disks[1], graph + "/column"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  EXPECT_EQ(UnitOf(graph + "/column"), 64u << 10);
  EXPECT_EQ(r.output.find("column: unit"), std::string::npos) << r.output;  // told, not chosen
  // 24 MiB over 2 disks: 3 MiB a quarter -> 2 MiB; the engines' 1 MiB request caps it.
  r = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "-q", "--compress", "none", "--engine-request", "1M", "--min-size",
                          "1M", "--disks", disks[0] + "," + disks[1], graph + "/row"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  EXPECT_EQ(UnitOf(graph + "/row"), MiB);
  EXPECT_EQ(r.output.find("row: unit"), std::string::npos) << r.output;  // -q
  r = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "--engine-request", "0", "--disks", disks[0], graph});
  EXPECT_TRUE(r.exited && r.exit_code == 2) << r.How() << "\n" << r.output;
  EXPECT_NE(r.output.find("--engine-request 0: more than 0"), std::string::npos) << r.output;
}

// Without --compress, graphfs-stripe compresses with `auto` where a codec pays (issue 31): a
// compressible file gets a packed stream; a file no codec shrinks, or one whose disks deliver raw
// bytes faster than any codec decodes, is striped raw, and the output says why.
TEST(StripeUnitTool, CompressesWithAutoByDefaultWhereItPays) {
  TempDir tmp;
  const std::vector<std::string> disks = {tmp.Sub("d0"), tmp.Sub("d1")};
  const std::string graph = tmp.Sub("graph");
  std::string edges(8 * MiB, '\0');  // 8-byte records of small, slowly growing ids: compressible
  for (uint64_t i = 0; i < edges.size() / 4; ++i) {
    const uint32_t v = static_cast<uint32_t>(i / 16 + (i % 3));
    std::memcpy(&edges[i * 4], &v, 4);
  }
  std::ofstream(graph + "/column", std::ios::binary).write(edges.data(), static_cast<std::streamsize>(edges.size()));
  std::string noise(4 * MiB, '\0');
  std::mt19937_64 rng(31);
  for (char& c : noise) c = static_cast<char>(rng());
  std::ofstream(graph + "/row", std::ios::binary).write(noise.data(), static_cast<std::streamsize>(noise.size()));
  auto r = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "--min-size", "1M", "--disks", disks[0] + "," + disks[1], graph}, 120);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  auto column = ReadManifest(graph + "/column");
  ASSERT_TRUE(column.ok() && column->has_value());
  EXPECT_TRUE((*column)->packed.has_value()) << "compressible: compressed by default\n" << r.output;
  auto row = ReadManifest(graph + "/row");
  ASSERT_TRUE(row.ok() && row->has_value()) << "striped all the same";
  EXPECT_FALSE((*row)->packed.has_value()) << "random bytes: raw\n" << r.output;
  EXPECT_NE(r.output.find("row: auto: raw bytes deliver faster"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("striped raw"), std::string::npos) << r.output;

  // Disks faster than any decoding on one core (1 TB/s): the compressible file stays raw too.
  const std::string fast = tmp.Sub("fast");
  std::ofstream(fast + "/column", std::ios::binary).write(edges.data(), static_cast<std::streamsize>(edges.size()));
  r = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "--min-size", "1M", "--disk-bandwidth", "1000G", "--disks",
                          tmp.Sub("d2") + "," + tmp.Sub("d3"), fast}, 120);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  auto fast_column = ReadManifest(fast + "/column");
  ASSERT_TRUE(fast_column.ok() && fast_column->has_value());
  EXPECT_FALSE((*fast_column)->packed.has_value()) << r.output;
  EXPECT_NE(r.output.find("estimated slower to deliver than raw bytes"), std::string::npos) << r.output;
  // --compress none: raw, no codec tried.
  const std::string none = tmp.Sub("none");
  std::ofstream(none + "/column", std::ios::binary).write(edges.data(), static_cast<std::streamsize>(edges.size()));
  r = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "--compress", "none", "--min-size", "1M", "--disks",
                          tmp.Sub("d4") + "," + tmp.Sub("d5"), none}, 120);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  auto none_column = ReadManifest(none + "/column");
  ASSERT_TRUE(none_column.ok() && none_column->has_value());
  EXPECT_FALSE((*none_column)->packed.has_value());
  EXPECT_EQ(r.output.find("auto:"), std::string::npos) << r.output;
}

// --memory (the budget the graph will be read under) puts auto's model in memory's terms and
// says so; it replaces --memory-passes, and the two together are a usage error.
TEST(StripeUnitTool, AutoWeighsCodecsAgainstTheMemoryItIsTold) {
  TempDir tmp;
  const std::string graph = tmp.Sub("graph");
  std::string edges(8 * MiB, '\0');
  for (uint64_t i = 0; i < edges.size() / 4; ++i) {
    const uint32_t v = static_cast<uint32_t>(i / 16 + (i % 3));
    std::memcpy(&edges[i * 4], &v, 4);
  }
  std::ofstream(graph + "/column", std::ios::binary).write(edges.data(), static_cast<std::streamsize>(edges.size()));
  auto r = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "--min-size", "1M", "--memory", "1M", "--memory-passes", "2",
                               "--disks", tmp.Sub("d0") + "," + tmp.Sub("d1"), graph});
  EXPECT_TRUE(r.exited && r.exit_code == 2) << r.How() << "\n" << r.output;
  EXPECT_NE(r.output.find("--memory"), std::string::npos) << r.output;
  r = testing::RunBinary({GRAPHFS_STRIPE_TOOL, "--min-size", "1M", "--memory", "1M", "--disk-bandwidth", "10M",
                          "--disks", tmp.Sub("d0") + "," + tmp.Sub("d1"), graph}, 120);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  EXPECT_NE(r.output.find("1 MiB of memory"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("% from memory"), std::string::npos) << r.output;
  auto column = ReadManifest(graph + "/column");
  ASSERT_TRUE(column.ok() && column->has_value());
  EXPECT_TRUE((*column)->packed.has_value()) << "slow disks, little memory: compressed\n" << r.output;
}

// A run killed after its pending record was written resumes with that record's unit, not a new
// choice; a record of another source (the file changed since) is ignored.
TEST(StripeUnitTool, AResumedRunKeepsTheUnitItStartedWith) {
  TempDir tmp;
  const std::vector<std::string> disks = {tmp.Sub("d0"), tmp.Sub("d1"), tmp.Sub("d2")};
  const std::string graph = tmp.Sub("graph");
  WriteBytes(graph + "/column", 24 * MiB);
  WriteBytes(graph + "/row", 24 * MiB);
  const std::string pending = tmp.Sub("graph/.graphfs/pending-stripe");
  auto record = [&](const std::string& name, uint64_t unit, int64_t mtime_shift) {
    struct stat st;
    EXPECT_EQ(::stat((graph + "/" + name).c_str(), &st), 0);
    const std::string id = NewId();
    nlohmann::json j = {{"id", id},
                        {"size", static_cast<uint64_t>(st.st_size)},
                        {"mtime_ns", static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec +
                                         mtime_shift},
                        {"ino", static_cast<uint64_t>(st.st_ino)},
                        {"unit", unit},
                        {"first", FirstDiskFor(name, 3)},
                        {"done", 0}};
    std::ofstream(pending + "/" + name + ".json") << j.dump() << "\n";
    return id;
  };
  const std::string column_id = record("column", 64 << 10, 0);  // what a killed run chose
  const std::string row_id = record("row", 64 << 10, 1);        // a record of an older row
  auto r = Stripe(disks, graph);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  EXPECT_EQ(UnitOf(graph + "/column"), 64u << 10);
  EXPECT_EQ(FileIdOf(graph + "/column"), column_id);  // resumed, not started over
  EXPECT_NE(r.output.find("column: resuming with unit 64 KiB"), std::string::npos) << r.output;
  EXPECT_EQ(UnitOf(graph + "/row"), ChooseStripeUnit({24 * MiB, 3}).unit);
  EXPECT_NE(FileIdOf(graph + "/row"), row_id);
  EXPECT_TRUE(std::filesystem::is_empty(pending));
}

}  // namespace
}  // namespace graphfs
