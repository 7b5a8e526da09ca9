// A disk that fails or fills up: the readers and writers of data on that disk get EIO or
// ENOSPC, everything else keeps working, the daemon neither crashes nor hangs, and stats
// and the log name the disk. Faults are injected through `.graphfs/fault` and, for real,
// on a loop-device disk whose backing is pulled, whose filesystem turns read-only, or
// which runs out of space.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "striping/stripe_map.h"
#include "striping/striped_file.h"
#include "tests/testutil/loop_disk.h"
#include "tests/fusefs/striped_fixture.h"

namespace graphfs::testing {
namespace {

constexpr uint64_t kUnit = 64 << 10;

class DiskFaults : public StripedMount {
 protected:
  // The disk that holds `offset` of the striped file `name`.
  uint32_t DiskOf(const std::string& name, uint64_t offset) {
    auto manifest = ReadManifest(graph + "/" + name);
    auto map = StripeMap::Create((*manifest)->layout);
    return map->Locate(offset).disk;
  }
  bool DaemonAnswers() {
    struct statfs s;
    return ::statfs(mnt.c_str(), &s) == 0;
  }
  // The log names the disk by index and by its directory.
  void ExpectLogNames(uint32_t disk) {
    const std::string log = ReadFile(mount.log());
    EXPECT_NE(log.find("disk " + std::to_string(disk) + ":"), std::string::npos) << log;
    EXPECT_NE(log.find(disks[disk] + "/"), std::string::npos) << log;
  }
  // After a real disk failed: the graph's ordinary files read and write, the daemon answers,
  // stats count the disk's errors, the log names it, and the mount unmounts cleanly.
  void ExpectTheRestWorksAndDiskIsNamed(uint32_t bad) {
    EXPECT_EQ(ReadFile(mnt + "/graph/meta"), "ok");
    WriteFile(mnt + "/graph/notes", "still fine");
    EXPECT_EQ(ReadFile(mnt + "/graph/notes"), "still fine");
    EXPECT_TRUE(DaemonAnswers());
    EXPECT_GT(Stats()["disks"][bad]["errors"].get<uint64_t>(), 0u);
    ExpectLogNames(bad);
    mount.Unmount();
    EXPECT_FALSE(IsMountPoint(mnt));
  }
};

TEST_F(DiskFaults, InjectedWriteFaultFailsOnlyWritersToThatDisk) {
  std::string data = RandomBytes(6 * kUnit, 4);
  Stripe("column", data);
  DoMount({"readahead=0"});
  const uint32_t bad = DiskOf("column", kUnit);
  WriteFile(mnt + "/.graphfs/fault", std::to_string(bad) + " 5\n");
  int fd = ::open((mnt + "/graph/column").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  for (uint64_t u = 0; u < 6; ++u) {
    const std::string block = RandomBytes(kUnit, 50 + static_cast<uint32_t>(u));
    ssize_t n = ::pwrite(fd, block.data(), kUnit, static_cast<off_t>(u * kUnit));
    const int err = errno;
    if (DiskOf("column", u * kUnit) == bad) {
      EXPECT_EQ(n, -1) << "unit " << u;
      EXPECT_EQ(err, EIO) << "unit " << u;
    } else {
      EXPECT_EQ(n, static_cast<ssize_t>(kUnit)) << "unit " << u;
      data.replace(u * kUnit, kUnit, block);
    }
  }
  // Ordinary files and the rest of the mount are untouched.
  WriteFile(mnt + "/graph/notes", "still fine");
  EXPECT_EQ(ReadFile(mnt + "/graph/notes"), "still fine");
  EXPECT_GT(Stats()["disks"][bad]["errors"].get<uint64_t>(), 0u);
  ExpectLogNames(bad);
  // Cleared, the disk takes writes again; what failed never landed.
  WriteFile(mnt + "/.graphfs/fault", std::to_string(bad) + " 0\n");
  EXPECT_EQ(ReadFile(mnt + "/graph/column"), data);
  const std::string block = RandomBytes(kUnit, 99);
  EXPECT_EQ(::pwrite(fd, block.data(), kUnit, static_cast<off_t>(kUnit)), static_cast<ssize_t>(kUnit));
  EXPECT_EQ(::fsync(fd), 0);
  ::close(fd);
  data.replace(kUnit, kUnit, block);
  EXPECT_EQ(ReadFile(mnt + "/graph/column"), data);
}

TEST_F(DiskFaults, PulledDiskFailsItsReadersAndWritersOnly) {
  LoopDisk loop(disks[2], 64 << 20);
  ASSERT_TRUE(loop.ok()) << "this test needs loop devices (root): " << loop.error();
  const std::string data = RandomBytes(12 * kUnit, 5);
  Stripe("column", data);
  WriteFile(graph + "/meta", "ok");
  DoMount({"readahead=0", "cache_size=0"});
  ASSERT_TRUE(loop.Pull());
  int fd = ::open((mnt + "/graph/column").c_str(), O_RDWR | O_DIRECT);
  ASSERT_GE(fd, 0);
  AlignedBuffer buf(kUnit);
  int failed = 0;
  for (uint64_t u = 0; u < 12; ++u) {
    ssize_t n = ::pread(fd, buf.data(), kUnit, static_cast<off_t>(u * kUnit));
    const int err = errno;
    if (DiskOf("column", u * kUnit) == 2) {
      EXPECT_EQ(n, -1) << "unit " << u;
      EXPECT_EQ(err, EIO) << "unit " << u;
      ++failed;
    } else {
      ASSERT_EQ(n, static_cast<ssize_t>(kUnit)) << "unit " << u;
      EXPECT_EQ(std::string(buf.data(), kUnit), data.substr(u * kUnit, kUnit)) << "unit " << u;
    }
  }
  EXPECT_EQ(failed, 4);
  // Writing to the pulled disk fails by the time fsync returns, as it would on ext4.
  uint64_t on_bad = 0;
  while (DiskOf("column", on_bad) != 2) on_bad += kUnit;
  std::memset(buf.data(), 7, kUnit);
  ssize_t w = ::pwrite(fd, buf.data(), kUnit, static_cast<off_t>(on_bad));
  EXPECT_TRUE(w == -1 || ::fsync(fd) != 0) << "a write to a pulled disk was acknowledged";
  ::close(fd);
  // Everything else works and the daemon is alive.
  ExpectTheRestWorksAndDiskIsNamed(2);
}

TEST_F(DiskFaults, ReadOnlyDiskKeepsItsReadersAndFailsOnlyItsWriters) {
  LoopDisk loop(disks[2], 64 << 20);
  ASSERT_TRUE(loop.ok()) << "this test needs loop devices (root): " << loop.error();
  std::string data = RandomBytes(12 * kUnit, 8);
  Stripe("column", data);
  WriteFile(graph + "/meta", "ok");
  DoMount({"readahead=0", "cache_size=0"});
  int fd = ::open((mnt + "/graph/column").c_str(), O_RDWR | O_DIRECT);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fsync(fd), 0);  // the job's last fsync before the disk failed: all is durable
  ASSERT_TRUE(loop.MakeReadOnly()) << "the disk's filesystem did not turn read-only";
  AlignedBuffer buf(kUnit);
  // Every unit still reads, those on the read-only disk included.
  for (uint64_t u = 0; u < 12; ++u) {
    ASSERT_EQ(::pread(fd, buf.data(), kUnit, static_cast<off_t>(u * kUnit)), static_cast<ssize_t>(kUnit))
        << "unit " << u << ": " << strerror(errno);
    EXPECT_EQ(std::string(buf.data(), kUnit), data.substr(u * kUnit, kUnit)) << "unit " << u;
  }
  // Writes to its units fail (EROFS from its filesystem, or EIO); the others land.
  int refused = 0;
  for (uint64_t u = 0; u < 12; ++u) {
    std::memset(buf.data(), static_cast<int>('a' + u), kUnit);
    const ssize_t n = ::pwrite(fd, buf.data(), kUnit, static_cast<off_t>(u * kUnit));
    const int err = errno;
    if (DiskOf("column", u * kUnit) == 2) {
      EXPECT_EQ(n, -1) << "unit " << u;
      EXPECT_TRUE(err == EROFS || err == EIO) << "unit " << u << ": " << strerror(err);
      ++refused;
    } else {
      EXPECT_EQ(n, static_cast<ssize_t>(kUnit)) << "unit " << u << ": " << strerror(err);
      data.replace(u * kUnit, kUnit, std::string(kUnit, static_cast<char>('a' + u)));
    }
  }
  EXPECT_EQ(refused, 4);
  // fsync syncs the parts that took writes; they are on disks that work. (The read-only
  // disk's part holds nothing new; ext4 would answer its fsync with EROFS.)
  EXPECT_EQ(::fsync(fd), 0) << strerror(errno);
  ::close(fd);
  // What was acknowledged reads back, what was refused never landed; the rest of the
  // mount works and the daemon names the disk.
  EXPECT_EQ(ReadFile(mnt + "/graph/column"), data);
  ExpectTheRestWorksAndDiskIsNamed(2);
}

TEST_F(DiskFaults, FullDiskGivesEnospcAndCorruptsNothing) {
  LoopDisk loop(disks[2], 16 << 20);
  ASSERT_TRUE(loop.ok()) << "this test needs loop devices (root): " << loop.error();
  const std::string data = RandomBytes(6 * kUnit, 6);
  Stripe("column", data);
  WriteFile(graph + "/meta", "ok");
  DoMount({"readahead=0"});
  const std::string path = mnt + "/graph/column";
  int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  // Append until the small disk is full: a third of every MiB lands on it.
  const std::string block = RandomBytes(1 << 20, 7);
  std::string appended;
  int err = 0;
  for (int i = 0; i < 128 && err == 0; ++i) {
    size_t done = 0;
    while (done < block.size()) {
      ssize_t n = ::pwrite(fd, block.data() + done, block.size() - done,
                           static_cast<off_t>(data.size() + appended.size() + done));
      if (n <= 0) {
        err = n < 0 ? errno : EIO;
        break;
      }
      done += static_cast<size_t>(n);
    }
    appended += block.substr(0, done);
  }
  EXPECT_EQ(err, ENOSPC) << strerror(err);
  EXPECT_GE(appended.size(), 4u << 20) << "the disk filled too early";
  // Nothing acknowledged is lost or changed, the size is what was acknowledged, and the
  // other files are fine.
  struct stat st;
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), data.size() + appended.size());
  EXPECT_EQ(ReadFile(path), data + appended);
  EXPECT_EQ(ReadFile(mnt + "/graph/meta"), "ok");
  EXPECT_TRUE(DaemonAnswers());
  // Freeing space (truncating back) makes the file writable again.
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(data.size())), 0);
  EXPECT_EQ(::pwrite(fd, block.data(), block.size(), static_cast<off_t>(data.size())),
            static_cast<ssize_t>(block.size()));
  EXPECT_EQ(::fsync(fd), 0);
  ::close(fd);
  mount.Unmount();
  DoMount();
  EXPECT_EQ(ReadFile(path), data + block);
}

}  // namespace
}  // namespace graphfs::testing
