// Files striped with parity through the mount (issue 44; docs/parity.md, "Reads"): with a disk's
// directory gone, with a disk failing every read, and with a flipped byte in a raw unit, readers
// get exactly the original bytes, and `.graphfs/stats` says what happened — the disk's state
// (missing, avoided, failing), the missing disks under `degraded`, and the counters of what was
// rebuilt, found bad, healed on the disk. The log names a missing disk from the start; a mount
// missing more disks than the files' parity is refused, naming them. graphfs-rebuild run offline
// beside a writable mount is refused; beside a read-only one it leaves the mount reading through
// parity, and mounted again, the graph is whole.
// A compressed file with parity (its packed stream in parity rows) reads the same way: a disk
// gone, a flipped byte in a frame (repaired before the frame is decoded, healed, counted), and
// more lost parts than K is EIO with the disks named in the log.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "striping/rebuild.h"
#include "striping/stripe_map.h"
#include "tests/fusefs/striped_fixture.h"

namespace graphfs::testing {
namespace {

constexpr uint64_t kUnit = kTestUnit;

class ParityMount : public StripedMount {
 protected:
  // `column` striped with one parity unit per row over the fixture's three disks.
  void StripeColumnWithParity(const std::string& bytes) {
    manifest = StripeWithParity("column", bytes);
    ASSERT_FALSE(HasFailure());
  }
  DiskLocation Locate(uint64_t offset) const { return StripeMap::Create(manifest.layout)->Locate(offset); }
  std::string PartPath(uint32_t disk) const { return testing::PartPath(disks[disk], manifest); }
  uint64_t DiskCounter(const nlohmann::json& stats, uint32_t disk, const char* name) {
    return stats["disks"][disk][name].get<uint64_t>();
  }

  // `column` compressed (zstd:1, units of 50,000 bytes) with one parity unit per row and a sum
  // every `sum_block` bytes.
  void CompressColumnWithParity(const std::string& bytes, uint64_t sum_block = 64 * 1024) {
    StripeRequest req = TestStripeRequest(graph + "/column", disks);
    req.sum_block = sum_block;
    WriteFile(graph + "/column", bytes);
    req.compress = "zstd:1";
    req.compress_unit = 50000;
    req.parity = 1;
    manifest = StripeAndRead(req, graph + "/column");
    ASSERT_TRUE(manifest.packed.has_value());
    ASSERT_EQ(manifest.layout.parity, 1u);
  }
  void FlippedByteInACompressedUnit(uint64_t sum_block);
  StripeManifest manifest;
};

TEST_F(ParityMount, DiskDirectoryGoneReadsTheOriginalBytesAndStatsSayDegraded) {
  const std::string data = RandomBytes(20 * kUnit + 12345, 44);
  ASSERT_NO_FATAL_FAILURE(StripeColumnWithParity(data));
  std::filesystem::remove_all(disks[1]);
  DoMount({"cache_size=0"});
  const std::string log = ReadFile(mount.log());
  EXPECT_NE(log.find("degraded: disk 1 (" + disks[1] + ") is missing"), std::string::npos) << log;
  nlohmann::json before = Stats();
  EXPECT_EQ(before["degraded"], nlohmann::json::array({1}));
  EXPECT_EQ(before["disks"][1]["state"], "missing");
  EXPECT_EQ(before["disks"][0]["state"], "healthy");
  EXPECT_EQ(DiskCounter(before, 1, "rebuilt_bytes"), 0u);

  EXPECT_TRUE(ReadFile(mnt + "/graph/column") == data) << "the bytes read through parity differ";
  const nlohmann::json after = Stats();
  // Every data byte disk 1 held was rebuilt from the two others (a third of the file, less what
  // parity units took of its share), and nothing was healed: there is no disk to write to.
  EXPECT_GE(DiskCounter(after, 1, "rebuilt_bytes"), data.size() / 4);
  EXPECT_EQ(DiskCounter(after, 1, "healed_blocks"), 0u);
  EXPECT_EQ(DiskCounter(after, 0, "rebuilt_bytes") + DiskCounter(after, 2, "rebuilt_bytes"), 0u);
  EXPECT_EQ(after["disks"][1]["state"], "missing");
}

TEST_F(ParityMount, FlippedByteInARawUnitIsRepairedHealedAndCounted) {
  const std::string data = RandomBytes(12 * kUnit, 45);
  ASSERT_NO_FATAL_FAILURE(StripeColumnWithParity(data));
  const uint64_t offset = 5 * kUnit + 777;
  const DiskLocation where = Locate(offset);
  FlipByte(PartPath(where.disk), where.disk_offset, 0x5a);
  DoMount({"cache_size=0"});
  EXPECT_EQ(Stats()["disks"][where.disk]["state"], "healthy");

  EXPECT_TRUE(ReadFile(mnt + "/graph/column") == data) << "a flipped byte was served";
  const nlohmann::json stats = Stats();
  EXPECT_EQ(DiskCounter(stats, where.disk, "checksum_errors"), 1u);
  EXPECT_EQ(DiskCounter(stats, where.disk, "healed_blocks"), 1u);
  EXPECT_GT(DiskCounter(stats, where.disk, "rebuilt_bytes"), 0u);
  EXPECT_EQ(DiskCounter(stats, where.disk, "sum_repairs"), 0u);
  EXPECT_EQ(stats["disks"][where.disk]["state"], "failing");
  EXPECT_EQ(stats["degraded"], nlohmann::json::array());
  // Healed in place: the part holds the original byte again.
  EXPECT_EQ(ByteAt(PartPath(where.disk), where.disk_offset), data[offset]);
}

TEST_F(ParityMount, DiskFailingEveryReadIsAvoidedAndItsBytesRebuilt) {
  const std::string data = RandomBytes(9 * kUnit + 4096, 46);
  ASSERT_NO_FATAL_FAILURE(StripeColumnWithParity(data));
  DoMount({"cache_size=0", "readahead=0"});
  const uint32_t bad = Locate(kUnit).disk;
  WriteFile(mnt + "/.graphfs/fault", std::to_string(bad) + " 5\n");
  EXPECT_TRUE(ReadFile(mnt + "/graph/column") == data) << "reads around a failing disk differ";
  const nlohmann::json stats = Stats();
  EXPECT_EQ(stats["disks"][bad]["state"], "avoided");
  EXPECT_GT(DiskCounter(stats, bad, "rebuilt_bytes"), 0u);
  EXPECT_GT(DiskCounter(stats, bad, "errors"), 0u);
  EXPECT_EQ(DiskCounter(stats, bad, "healed_blocks"), 0u) << "nothing is written to a disk that fails";
}

TEST_F(ParityMount, RebuiltWhileMountedTheNextMountIsWhole) {
  const std::string data = RandomBytes(15 * kUnit + 999, 48);
  ASSERT_NO_FATAL_FAILURE(StripeColumnWithParity(data));
  std::filesystem::remove_all(disks[1]);
  RebuildRequest req;
  req.paths = {graph};
  req.disk = 1;
  req.to = tmp.Sub("new-disk");
  req.progress = false;
  // A writable mount may write with the disk lost: the offline rebuild is refused beside it
  // (striping/set_hold.h), naming the daemon, before anything is written.
  DoMount({"cache_size=0"});
  auto refused = Rebuild(req);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), EBUSY);
  EXPECT_NE(refused.error().message().find("in use by a running graphfs mount"), std::string::npos)
      << refused.error().message();
  EXPECT_NE(refused.error().message().find("(graphfs)"), std::string::npos) << "the daemon not named: "
                                                                            << refused.error().message();
  EXPECT_TRUE(std::filesystem::is_empty(req.to));
  mount.Unmount();
  // A read-only one writes no row: the rebuild runs beside it.
  DoMount({"cache_size=0", "ro"});
  EXPECT_TRUE(ReadFile(mnt + "/graph/column") == data);
  auto rebuilt = Rebuild(req);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().message();
  // The mount read the registry when it started: it goes on through parity, unharmed.
  EXPECT_TRUE(ReadFile(mnt + "/graph/column") == data);
  EXPECT_EQ(Stats()["disks"][1]["state"], "missing");
  mount.Unmount();
  DoMount({"cache_size=0"});
  EXPECT_TRUE(ReadFile(mnt + "/graph/column") == data);
  const nlohmann::json stats = Stats();
  EXPECT_EQ(stats["degraded"], nlohmann::json::array());
  EXPECT_EQ(stats["disks"][1]["state"], "healthy");
  EXPECT_EQ(stats["disks"][1]["path"], req.to);
  EXPECT_GT(DiskCounter(stats, 1, "bytes_read"), 0u);
  for (uint32_t d = 0; d < 3; ++d) EXPECT_EQ(DiskCounter(stats, d, "rebuilt_bytes"), 0u) << "disk " << d;
}

TEST_F(ParityMount, MoreDisksMissingThanParityRefusesTheMountNamingThem) {
  ASSERT_NO_FATAL_FAILURE(StripeColumnWithParity(RandomBytes(6 * kUnit, 47)));
  std::filesystem::remove_all(disks[0]);
  std::filesystem::remove_all(disks[2]);
  ASSERT_FALSE(mount.Mount(src, mnt, {}));
  EXPECT_NE(mount.error().find("disks 0 (" + disks[0] + ") and 2 (" + disks[2] + ")"), std::string::npos)
      << mount.error();
  EXPECT_NE(mount.error().find("survive 1"), std::string::npos) << mount.error();
}

TEST_F(ParityMount, CompressedFileWithADiskGoneReadsTheOriginalBytes) {
  const std::string data = CompressibleBytes(1500 * 1000 + 17, 51);
  ASSERT_NO_FATAL_FAILURE(CompressColumnWithParity(data));
  std::filesystem::remove_all(disks[2]);
  DoMount({"cache_size=0"});
  EXPECT_EQ(Stats()["degraded"], nlohmann::json::array({2}));
  EXPECT_TRUE(ReadFile(mnt + "/graph/column") == data) << "the bytes decoded through parity differ";
  const nlohmann::json stats = Stats();
  // Disk 2's share of the packed stream (a third, less its parity units) was rebuilt.
  EXPECT_GE(DiskCounter(stats, 2, "rebuilt_bytes"), manifest.packed->stream_size / 4);
  EXPECT_EQ(DiskCounter(stats, 0, "rebuilt_bytes") + DiskCounter(stats, 1, "rebuilt_bytes"), 0u);
  EXPECT_GT(stats["compressed"]["units_decoded"].get<uint64_t>(), 0u) << stats["compressed"].dump();
  EXPECT_EQ(stats["compressed"]["checksum_errors"].get<uint64_t>(), 0u);
}

// A flipped byte in a compressed file's packed stream, with a sum every `sum_block` bytes.
void ParityMount::FlippedByteInACompressedUnit(uint64_t sum_block) {
  const std::string data = CompressibleBytes(800 * 1000, 52);
  // With sums of 4 KiB, frames start on 4 KiB, so the bad block holds bytes of one frame only. A
  // 64 KiB block holds several frames, and the kernel's concurrent reads of those frames each
  // find the block bad: the heal re-reads it under the row's lock, so only the first writes it
  // and counts it.
  ASSERT_NO_FATAL_FAILURE(CompressColumnWithParity(data, sum_block));
  const uint64_t at = 3 * kUnit + 999;  // a byte of the packed stream, inside a frame
  ASSERT_LT(at, manifest.packed->directory_offset);
  const DiskLocation where = Locate(at);
  const char original = ByteAt(PartPath(where.disk), where.disk_offset);
  FlipByte(PartPath(where.disk), where.disk_offset, 0x5a);
  // With the cache, each frame is read from the disks once (single-flight), however many of the
  // kernel's reads want its unit. (With cache_size=0 every read decodes the frames it overlaps.)
  DoMount();

  EXPECT_TRUE(ReadFile(mnt + "/graph/column") == data) << "a flipped byte was served";
  const nlohmann::json stats = Stats();
  // Each read that found the block bad counts it; with 4 KiB sums one read does.
  if (sum_block == 4096) {
    EXPECT_EQ(DiskCounter(stats, where.disk, "checksum_errors"), 1u);
  } else {
    EXPECT_GE(DiskCounter(stats, where.disk, "checksum_errors"), 1u);
  }
  EXPECT_EQ(DiskCounter(stats, where.disk, "healed_blocks"), 1u);
  EXPECT_GT(DiskCounter(stats, where.disk, "rebuilt_bytes"), 0u);
  EXPECT_EQ(stats["disks"][where.disk]["state"], "failing");
  // The frame never saw the bad byte: its own checksum held.
  EXPECT_EQ(stats["compressed"]["checksum_errors"].get<uint64_t>(), 0u) << stats["compressed"].dump();
  EXPECT_EQ(ByteAt(PartPath(where.disk), where.disk_offset), original) << "not healed on the disk";
}

TEST_F(ParityMount, FlippedByteInACompressedUnitIsRepairedHealedAndCounted) { FlippedByteInACompressedUnit(4096); }
TEST_F(ParityMount, FlippedByteInACompressedUnitWith64KSumsIsHealedAndCountedOnce) {
  FlippedByteInACompressedUnit(64 * 1024);
}

TEST_F(ParityMount, CompressedFileWithMorePartsLostThanParityIsEioNamingTheDisks) {
  ASSERT_NO_FATAL_FAILURE(CompressColumnWithParity(CompressibleBytes(600 * 1000, 53)));
  // The disks are there (the mount starts), but the file's parts on two of them are gone.
  std::filesystem::remove(PartPath(0));
  std::filesystem::remove(PartPath(2));
  DoMount({"cache_size=0"});
  const int fd = ::open((mnt + "/graph/column").c_str(), O_RDONLY);
  char byte = 0;
  const bool read = fd >= 0 && ::pread(fd, &byte, 1, 0) == 1;
  const int error = errno;
  if (fd >= 0) ::close(fd);
  EXPECT_FALSE(read) << "bytes served with two parts lost and parity 1";
  EXPECT_EQ(error, EIO) << std::strerror(error);
  const std::string log = ReadFile(mount.log());
  EXPECT_NE(log.find("disk 0"), std::string::npos) << log;
  EXPECT_NE(log.find("disk 2"), std::string::npos) << log;
}

// The first write to a compressed file with parity makes it plain (the volume's unpack): the plain
// copy keeps K and gets its sums, so the written file survives a lost disk like the compressed one.
TEST_F(ParityMount, AWrittenCompressedFileKeepsItsParity) {
  std::string data = CompressibleBytes(1500 * 1000 + 17, 54);
  ASSERT_NO_FATAL_FAILURE(CompressColumnWithParity(data));
  DoMount();
  {
    const int fd = ::open((mnt + "/graph/column").c_str(), O_WRONLY);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    const std::string written = RandomBytes(10000, 55);
    EXPECT_EQ(::pwrite(fd, written.data(), written.size(), 700001), static_cast<ssize_t>(written.size()));
    EXPECT_EQ(::fsync(fd), 0) << std::strerror(errno);
    ::close(fd);
    data.replace(700001, written.size(), written);
  }
  EXPECT_TRUE(ReadFile(mnt + "/graph/column") == data);
  mount.Unmount();
  auto m = ReadManifest(graph + "/column");
  ASSERT_TRUE(m.ok() && m->has_value());
  EXPECT_FALSE((*m)->packed) << "the write did not make the file plain";
  EXPECT_EQ((*m)->layout.parity, 1u) << "the plain copy lost its parity";
  EXPECT_EQ((*m)->sum_block, manifest.sum_block);
  EXPECT_NE((*m)->file_id, manifest.file_id);
  EXPECT_EQ((*m)->size, data.size());
  manifest = **m;
  ExpectOnlyNamedParts();

  std::filesystem::remove_all(disks[1]);
  DoMount({"cache_size=0"});
  EXPECT_TRUE(ReadFile(mnt + "/graph/column") == data) << "the written file read through parity differs";
  EXPECT_GT(DiskCounter(Stats(), 1, "rebuilt_bytes"), 0u);
}

}  // namespace
}  // namespace graphfs::testing
