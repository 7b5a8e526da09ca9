// graphfs-scrub (scrub.h): a flipped byte in a raw data unit, in a parity unit and in a sums file
// is found, repaired on the disk and counted per file and per disk; a row whose parity no longer
// matches its data is given its data's parity; more bad units in a block than the parity is
// reported as unrepairable with the file bytes named, and the tool exits non-zero; --no-repair
// writes nothing; a missing disk is reported; bad input is refused with a message.
#include <gtest/gtest.h>

#include <filesystem>

#include "striping/disk_set.h"
#include "striping/scrub.h"
#include "tests/engines/run_binary.h"
#include "tests/striping/parity_graph.h"

namespace graphfs {
namespace {

using testing::ParityGraph;
using testing::ByteAt;
using testing::FlipByte;
using testing::RandomBytes;

constexpr uint64_t kUnit = ParityGraph::kUnit;
constexpr uint64_t kBlock = ParityGraph::kBlock;

TEST(Scrub, CleanGraphReadsEveryUnitAndFindsNothing) {
  ParityGraph g(4);
  const std::string data = RandomBytes(10 * kUnit + 5000, 1);
  g.Stripe("column", data, 1);
  auto r = g.RunScrub();
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->files.size(), 1u);
  EXPECT_EQ(r->files[0].rows, 4u);  // 11 data units, 3 per row
  // Every unit, data and parity, was read: the data and a whole parity unit per row (the last
  // row's is as long as its first data unit).
  EXPECT_EQ(r->total.bytes_read, data.size() + 4 * kUnit);
  EXPECT_EQ(r->total.checksum_errors + r->total.repaired_blocks + r->total.unrepaired_blocks, 0u);
  EXPECT_FALSE(r->damage_left());
  for (const ScrubDisk& d : r->disks) EXPECT_EQ(d.state, "healthy");
}

TEST(Scrub, FlippedBytesInDataParityAndSumsAreRepairedAndCounted) {
  ParityGraph g(4);
  const std::string data = RandomBytes(12 * kUnit, 2);
  const StripeManifest m = g.Stripe("column", data, 1);
  const StripeMap map = *StripeMap::Create(m.layout);
  // A raw data unit (row 1, data column 2), a parity unit (row 3), and a sum (row 3's unit on disk 0).
  const uint32_t data_disk = g.FlipInUnit(m, 1, 2, 3 * kBlock + 7);
  const uint32_t parity_disk = g.FlipInUnit(m, 3, map.data_units(), 100);
  const uint32_t sum_disk = 0;
  FlipByte(g.SumsPath(sum_disk, m), UnitSums::Offset(3, 1, kUnit, kBlock) + 2);
  ASSERT_NE(data_disk, parity_disk);
  const std::string data_part = g.PartPath(data_disk, m);
  const char original = data[map.SlotFileOffset(1, 2) + 3 * kBlock + 7];
  ASSERT_NE(ByteAt(data_part, 1 * kUnit + 3 * kBlock + 7), original);

  auto r = g.RunScrub();
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_FALSE(r->damage_left());
  EXPECT_EQ(r->total.checksum_errors, 3u);
  EXPECT_EQ(r->total.repaired_blocks, 2u);
  EXPECT_EQ(r->total.sum_repairs, 1u);
  EXPECT_EQ(r->total.unrepaired_blocks, 0u);
  EXPECT_EQ(r->disks[data_disk].counts.repaired_blocks, data_disk == parity_disk ? 2u : 1u);
  EXPECT_EQ(r->disks[parity_disk].counts.repaired_blocks, 1u);
  EXPECT_EQ(r->disks[sum_disk].counts.sum_repairs, 1u);
  EXPECT_EQ(r->disks[data_disk].state, "failing");
  EXPECT_EQ(r->files[0].counts.repaired_blocks, 2u);
  EXPECT_TRUE(r->files[0].damage.empty());
  // Written back on the disk: the original byte is there again, and a second scrub finds nothing.
  EXPECT_EQ(ByteAt(data_part, 1 * kUnit + 3 * kBlock + 7), original);
  auto again = g.RunScrub();
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(again->total.checksum_errors, 0u);
  EXPECT_EQ(again->total.repaired_blocks + again->total.sum_repairs + again->total.parity_rewrites, 0u);
}

TEST(Scrub, StaleParityIsRewrittenFromTheData) {
  // A lost write: a data block and its sum changed together, the row's parity not.
  ParityGraph g(3);
  const std::string data = RandomBytes(8 * kUnit, 3);
  const StripeManifest m = g.Stripe("column", data, 1);
  const StripeMap map = *StripeMap::Create(m.layout);
  const uint32_t disk = map.SlotDisk(1, 0);
  const std::string block = RandomBytes(kBlock, 33);
  {
    UniqueFd part(::open(g.PartPath(disk, m).c_str(), O_RDWR));
    ASSERT_EQ(::pwrite(part.get(), block.data(), kBlock, static_cast<off_t>(kUnit + kBlock)), static_cast<ssize_t>(kBlock));
    const uint64_t sum = BlockSum(block, kBlock);
    UniqueFd sums(::open(g.SumsPath(disk, m).c_str(), O_RDWR));
    ASSERT_EQ(::pwrite(sums.get(), &sum, 8, static_cast<off_t>(UnitSums::Offset(1, 1, kUnit, kBlock))), 8);
  }
  auto r = g.RunScrub();
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->total.checksum_errors, 0u);
  EXPECT_EQ(r->total.parity_rewrites, 1u);
  EXPECT_EQ(r->disks[map.SlotDisk(1, map.data_units())].counts.parity_rewrites, 1u);
  EXPECT_FALSE(r->damage_left());
  auto again = g.RunScrub();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->total.parity_rewrites, 0u) << "the parity rewritten is what the data encodes to";
  EXPECT_EQ(again->total.checksum_errors, 0u) << "and its sums were rewritten with it";
}

TEST(Scrub, MoreBadUnitsInABlockThanParityAreUnrepairableAndNamed) {
  ParityGraph g(4);
  const std::string data = RandomBytes(9 * kUnit, 4);
  const StripeManifest m = g.Stripe("column", data, 1);
  // Row 0: block 1 of data columns 0 and 1 both bad (K + 1 units there); block 2 of column 2
  // bad alone, which one parity unit still repairs.
  g.FlipInUnit(m, 0, 0, kBlock + 5);
  g.FlipInUnit(m, 0, 1, kBlock + 9);
  const uint32_t alone = g.FlipInUnit(m, 0, 2, 2 * kBlock + 1);
  auto r = g.RunScrub();
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->damage_left());
  EXPECT_EQ(r->total.unrepaired_blocks, 2u);
  EXPECT_EQ(r->total.repaired_blocks, 1u);
  EXPECT_EQ(r->disks[alone].counts.repaired_blocks, 1u);
  ASSERT_EQ(r->files[0].damage.size(), 2u);
  EXPECT_NE(r->files[0].damage[0].find("file bytes [16384, 32768)"), std::string::npos) << r->files[0].damage[0];
  EXPECT_NE(r->files[0].damage[1].find("file bytes [81920, 98304)"), std::string::npos) << r->files[0].damage[1];
  EXPECT_NE(r->files[0].damage[0].find("parity 1"), std::string::npos) << r->files[0].damage[0];

  // The tool says so and exits 1; its table names the file.
  auto run = testing::RunBinary({GRAPHFS_SCRUB_TOOL, "-q", g.graph});
  ASSERT_TRUE(run.exited) << run.How();
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("damage left:"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("2 block(s) left unrepairable"), std::string::npos) << run.output;
}

TEST(Scrub, NoRepairWritesNothingAndExitsNonZero) {
  ParityGraph g(3);
  const std::string data = RandomBytes(6 * kUnit, 5);
  const StripeManifest m = g.Stripe("column", data, 1);
  const uint32_t disk = g.FlipInUnit(m, 1, 0, 10);
  const char bad = ByteAt(g.PartPath(disk, m), kUnit + 10);
  auto r = g.RunScrub(/*repair=*/false);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->total.checksum_errors, 1u);
  EXPECT_EQ(r->total.repaired_blocks, 0u);
  EXPECT_EQ(r->total.unrepaired_blocks, 1u);
  EXPECT_TRUE(r->damage_left());
  EXPECT_EQ(ByteAt(g.PartPath(disk, m), kUnit + 10), bad);
  auto run = testing::RunBinary({GRAPHFS_SCRUB_TOOL, "-q", "--no-repair", g.graph});
  EXPECT_TRUE(run.exited && run.exit_code == 1) << run.How() << "\n" << run.output;
  run = testing::RunBinary({GRAPHFS_SCRUB_TOOL, "-q", g.graph});
  EXPECT_TRUE(run.exited && run.exit_code == 0) << run.How() << "\n" << run.output;
  EXPECT_NE(ByteAt(g.PartPath(disk, m), kUnit + 10), bad);
}

TEST(Scrub, MissingDiskIsReportedAndTheRestChecked) {
  ParityGraph g(4);
  const std::string data = RandomBytes(9 * kUnit, 6);
  const StripeManifest m = g.Stripe("column", data, 1);
  const uint32_t flipped = g.FlipInUnit(m, 2, 1, 5);
  const uint32_t gone = (flipped + 1) % 4;
  std::filesystem::remove_all(g.disks[gone]);
  auto r = g.RunScrub();
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->missing, std::vector<uint32_t>{gone});
  EXPECT_EQ(r->disks[gone].state, "missing");
  EXPECT_TRUE(r->damage_left());
  // Row 2 lost its redundancy with the disk: the bad block is found, and cannot be repaired.
  EXPECT_EQ(r->disks[flipped].counts.checksum_errors, 1u);
  EXPECT_EQ(r->disks[flipped].counts.unrepaired_blocks, 1u);
  auto run = testing::RunBinary({GRAPHFS_SCRUB_TOOL, "-q", g.graph});
  EXPECT_TRUE(run.exited && run.exit_code == 1) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("graphfs-rebuild --disk " + std::to_string(gone)), std::string::npos) << run.output;
}

TEST(Scrub, BadInputIsRefusedWithAMessage) {
  ParityGraph g(3);
  g.Stripe("column", RandomBytes(4 * kUnit, 7), 0);  // no parity, no sums
  auto r = g.RunScrub();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("nothing to scrub"), std::string::npos) << r.error().message();
  auto run = testing::RunBinary({GRAPHFS_SCRUB_TOOL, "-q", g.graph});
  EXPECT_TRUE(run.exited && run.exit_code == 2) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("striped without --parity"), std::string::npos) << run.output;

  const std::string plain = g.tmp.Sub("plain");
  run = testing::RunBinary({GRAPHFS_SCRUB_TOOL, "-q", plain});
  EXPECT_TRUE(run.exited && run.exit_code == 2) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find(plain + ": no striped graph at or under it"), std::string::npos) << run.output;
  run = testing::RunBinary({GRAPHFS_SCRUB_TOOL, "-q", "--rate", "fast", g.graph});
  EXPECT_TRUE(run.exited && run.exit_code == 2) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("--rate fast: expected bytes per second such as 100M"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace graphfs
