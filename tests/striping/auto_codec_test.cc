#include "striping/auto_codec.h"

#include <gtest/gtest.h>

namespace graphfs {
namespace {

constexpr uint64_t MiB = 1ull << 20;
// Measured on a scale-22 R-MAT column (graphfs-codec-bench, 2 MiB units, one core).
constexpr double kSvbRatio = 0.604, kSvbDecode = 4.0e9;
constexpr double kShuffleZstdRatio = 0.444, kShuffleZstdDecode = 1.34e9;
constexpr uint64_t kColumn = 768 * MiB;

AutoCostModel Model(uint64_t memory) {
  AutoCostModel m;
  m.disk_bandwidth = 400e6;  // 4 disks of 100 MB/s
  m.memory = memory;
  return m;
}

TEST(AutoCodecCost, WithoutMemoryAPassFromTheDisksThenPassesOfDecodingAlone) {
  AutoCostModel m = Model(0);
  m.memory_passes = 4;
  const AutoCost c = AutoPassCost(m, 0.5, 1e9, kColumn);
  EXPECT_DOUBLE_EQ(c.disk, 0.5 / 400e6);
  EXPECT_DOUBLE_EQ(c.decode, 1e-9);
  EXPECT_DOUBLE_EQ(c.pass, std::max(c.disk, c.decode) + 4 * c.decode);
  EXPECT_EQ(c.from_memory, 0);
  // Two cores decoding halve the decoding's part.
  m.decode_cores = 2;
  EXPECT_DOUBLE_EQ(AutoPassCost(m, 0.5, 1e9, kColumn).decode, 0.5e-9);
}

TEST(AutoCodecCost, LittleMemoryTheSmallerFramesWin) {
  // An eighth of the graph's column + row (the sweep's f = 1/8): most of every pass comes from
  // the disks, and shuffle-zstd's smaller frames cost less than svb's faster decoding saves.
  const AutoCostModel m = Model(192 * MiB);
  const AutoCost svb = AutoPassCost(m, kSvbRatio, kSvbDecode, kColumn);
  const AutoCost zstd = AutoPassCost(m, kShuffleZstdRatio, kShuffleZstdDecode, kColumn);
  EXPECT_LT(zstd.pass, svb.pass * 0.98);
  EXPECT_GT(zstd.from_memory, svb.from_memory) << "smaller frames: more of them fit";
  EXPECT_GT(svb.disk, svb.decode) << "svb's pass is the disks'";
  // Raw bytes: nothing to decode, but the most bytes from the disks.
  const AutoCost raw = AutoPassCost(m, 1.0, 0, kColumn);
  EXPECT_EQ(raw.decode, 0);
  EXPECT_GT(raw.pass, svb.pass);
}

TEST(AutoCodecCost, FramesThatFitTheFasterDecoderWins) {
  // Room for svb's frames but not for the decoded file: every pass decodes the whole file from
  // memory.
  const AutoCostModel m = Model(1024 * MiB);
  const AutoCost svb = AutoPassCost(m, kSvbRatio, kSvbDecode, kColumn);
  const AutoCost zstd = AutoPassCost(m, kShuffleZstdRatio, kShuffleZstdDecode, kColumn);
  EXPECT_DOUBLE_EQ(svb.from_memory, 1.0);
  EXPECT_DOUBLE_EQ(svb.disk, 0);
  EXPECT_DOUBLE_EQ(svb.pass, svb.decode);
  EXPECT_LT(svb.pass, zstd.pass * 0.98);
  // Half the graph (the sweep's f = 1/2): most of svb's frames fit, and it still wins.
  const AutoCostModel half = Model(768 * MiB);
  EXPECT_LT(AutoPassCost(half, kSvbRatio, kSvbDecode, kColumn).pass,
            AutoPassCost(half, kShuffleZstdRatio, kShuffleZstdDecode, kColumn).pass * 0.98);
}

TEST(AutoCodecCost, AFileThatFitsDecodedCostsNothingOncePassedOver) {
  // Twice the graph: the decoded units are kept, so no candidate pays a pass, and ties go to
  // the smaller frames (ChooseCodec) — what the disks read once.
  const AutoCostModel m = Model(3072 * MiB);
  EXPECT_EQ(AutoPassCost(m, kSvbRatio, kSvbDecode, kColumn).pass, 0);
  EXPECT_EQ(AutoPassCost(m, kShuffleZstdRatio, kShuffleZstdDecode, kColumn).pass, 0);
  EXPECT_EQ(AutoPassCost(m, 1.0, 0, kColumn).pass, 0);
  // A byte more than the frames' share of the memory: decoding again.
  const uint64_t just_over = static_cast<uint64_t>(3072.0 * MiB * kAutoFramesShareOfMemory) + 1;
  EXPECT_GT(AutoPassCost(m, kSvbRatio, kSvbDecode, just_over).decode, 0);
}

}  // namespace
}  // namespace graphfs
