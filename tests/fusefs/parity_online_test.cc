// The disk set's tasks run by the mount's daemon through MOUNTPOINT/.graphfs/disks (issue 44;
// docs/parity.md, "graphfs-rebuild" and "graphfs-scrub"): a lost disk rebuilt while a reader
// streams the file, then switched in without a remount — stats no longer degraded, the registry
// naming the new directory, and, with another disk failing afterwards, the bytes still whole
// (with parity 1 only possible if the new disk serves its units); a scrub whose repair rewrites a
// parity unit and its sums, after which a degraded read that needs that parity works (the
// daemon's kept sums are read again); and bad lines refused with the reason. A descriptor opened
// for writing before the switch writes degraded, then through it afterwards, as the same writes to
// a plain file do, and the daemon's scrub finds every row's parity and sums right; writes and
// truncates while the rebuild runs land, and the switched disk holds them (another disk failing,
// the bytes are whole); a kill -9 while a file the rebuild passed is written loses nothing
// fsync'ed, and the rebuild resumed keeps the writes; a kill -9 while such a descriptor writes
// after the switch loses nothing fsync'ed.
// Writes with a disk lost through the mount, the disk back at the next mount: stale in stats,
// the log and .graphfs/disks, read through parity, refused as a rebuild's source of `rebuild`,
// resynced by the daemon's scrub (only the rows written), healthy again and serving its units; and
// kill -9 of the daemon during degraded writes loses nothing fsync'ed.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>
#include <utility>

#include <sys/wait.h>

#include "common/aligned_buffer.h"
#include "striping/disk_set.h"
#include "striping/rebuild.h"
#include "striping/stripe_map.h"
#include "striping/unit_sums.h"
#include "tests/fusefs/disk_tasks_fixture.h"
#include "tests/fusefs/write_log.h"

namespace graphfs::testing {
namespace {

constexpr uint64_t kUnit = kTestUnit;

class ParityOnline : public DiskTasksMount {
 protected:
  // `column` striped with parity from `data`, a plain twin file of the same bytes, disk 1's
  // directory gone and the graph mounted degraded; `fd` (the mount's column) and `plain` (the
  // twin) open read-write, for the same writes on both.
  void OpenDegradedBesideAPlainTwin(const std::string& data, int* fd, int* plain, std::string* plain_path) {
    manifest = StripeWithParity("column", data);
    *plain_path = tmp.path() + "/plain";
    WriteFile(*plain_path, data);
    std::filesystem::remove_all(disks[1]);
    DoMount({"cache_size=0"});
    *fd = ::open((mnt + "/graph/column").c_str(), O_RDWR);
    ASSERT_GE(*fd, 0) << std::strerror(errno);
    *plain = ::open(plain_path->c_str(), O_RDWR);
    ASSERT_GE(*plain, 0) << std::strerror(errno);
  }
  StripeManifest manifest;
};


// A descriptor opened for writing while disk 1 is missing (it writes degraded then) writes through
// the mount once the rebuilt disk is switched in, with no reopen; the file reads as a plain file
// given the same writes, and the daemon's scrub finds nothing to repair on any disk.
TEST_F(ParityOnline, ADescriptorOpenedBeforeTheSwitchWritesThroughItAfterwards) {
  const std::string data = RandomBytes(24 * kUnit + 999, 86);
  int fd = -1, plain = -1;
  std::string plain_path;
  ASSERT_NO_FATAL_FAILURE(OpenDegradedBesideAPlainTwin(data, &fd, &plain, &plain_path));
  // A write with the disk lost lands degraded; the rebuild carries it onto the new disk.
  ASSERT_EQ(WriteBoth(fd, plain, 5, "degraded"), 0);
  ASSERT_EQ(::fsync(fd), 0) << std::strerror(errno);

  const std::string to = tmp.Sub("new-disk");
  ASSERT_EQ(WriteControl(DisksFile(), "rebuild 1 " + to + "\n"), 0);
  ASSERT_EQ(WaitForTask()["state"], "done");
  ASSERT_EQ(Stats()["degraded"], nlohmann::json::array());

  // Writes inside a unit, across units and rows, and past the end, through the old descriptor.
  std::mt19937 rng(87);
  for (int i = 0; i < 40; ++i) {
    const uint64_t at = rng() % (data.size() + kUnit);
    const std::string bytes = RandomBytes(1 + rng() % (3 * kUnit / 2), rng());
    ASSERT_EQ(WriteBoth(fd, plain, at, bytes), 0) << "write " << i << " at " << at;
  }
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(data.size() - 3 * kUnit / 2)), 0) << std::strerror(errno);
  ASSERT_EQ(::ftruncate(plain, static_cast<off_t>(data.size() - 3 * kUnit / 2)), 0);
  ASSERT_EQ(WriteBoth(fd, plain, data.size() - 2 * kUnit, RandomBytes(kUnit, 88)), 0);
  ASSERT_EQ(::fsync(fd), 0) << std::strerror(errno);
  ::close(plain);
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == ReadFile(plain_path));

  ExpectScrubFindsNothing("after the writes through the switched disk");
  // With disk 0 failing every read the bytes come whole only from disk 1's (the new disk's) units.
  WriteFile(mnt + "/.graphfs/fault", "0 5\n");
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == ReadFile(plain_path));
  WriteFile(mnt + "/.graphfs/fault", "0 0\n");
  ::close(fd);
}

// Kill -9 of the daemon while a file open across the switch is being written and fsynced: the
// next mount (its registry naming the new disk) loses nothing fsync'ed, and the daemon's scrub
// finds every row's parity and sums right on every disk — the journal's entries since the switch
// are replayed onto the new disk too.
TEST_F(ParityOnline, FsyncedWritesAfterTheSwitchSurviveKillNine) {
  const std::string data = RandomBytes(1 << 20, 91);
  manifest = StripeWithParity("column", data);
  std::filesystem::remove_all(disks[1]);
  DoMount({"readahead=0", "cache_size=0"});
  // Opened with disk 1 lost: the daemon's file is this one until the kill (the inode keeps it).
  const int holder = ::open((mnt + "/graph/column").c_str(), O_RDWR);
  ASSERT_GE(holder, 0) << std::strerror(errno);
  const std::string to = tmp.Sub("new-disk");
  ASSERT_EQ(WriteControl(DisksFile(), "rebuild 1 " + to + "\n"), 0);
  ASSERT_EQ(WaitForTask()["state"], "done");
  std::atomic<bool> stop{false};
  WriteLog log;
  std::thread writer([&] { WriteUntilFailure(mnt + "/graph/column", 92, stop, &log, &data); });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  mount.Kill();
  stop = true;
  writer.join();
  ::close(holder);
  ASSERT_GT(log.acked, 0) << "no fsync finished before the kill: the test proves nothing";

  DoMount({"readahead=0", "cache_size=0"});
  EXPECT_EQ(Stats()["degraded"], nlohmann::json::array());
  EXPECT_EQ(Stats()["disks"][1]["path"], to);
  ExpectSurvived("column written after the switch", ReadFile(mnt + "/graph/column"), log);
  ExpectScrubFindsNothing("after the kill and the remount");
}

// Writes through the mount with disk 1 lost equal a plain file's; the disk comes back at the next
// mount holding its old units, which still match their old sums: the mount says it is stale and
// reads the written file through parity (the bytes equal the plain file's, which they would not
// if the old units were served: the test checks that they differ); the daemon's scrub resyncs the
// rows written onto it, the disk is healthy again, and with disk 0 failing every read the bytes
// are still whole — only if disk 1's resynced units serve.
TEST_F(ParityOnline, WritesWithADiskLostAreKeptFromItWhenItReturnsUntilTheScrubResyncsIt) {
  const std::string data = RandomBytes(12 * kUnit + 555, 95);
  manifest = StripeWithParity("column", data);
  const std::string plain_path = tmp.path() + "/plain";
  WriteFile(plain_path, data);
  std::filesystem::rename(disks[1], disks[1] + ".away");
  DoMount({"cache_size=0"});
  {
    const int fd = ::open((mnt + "/graph/column").c_str(), O_RDWR);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    const int plain = ::open(plain_path.c_str(), O_RDWR);
    ASSERT_GE(plain, 0);
    std::mt19937 rng(96);
    for (int i = 0; i < 30; ++i) {
      const uint64_t at = rng() % (data.size() + kUnit);
      ASSERT_EQ(WriteBoth(fd, plain, at, RandomBytes(1 + rng() % (2 * kUnit), rng())), 0) << "write " << i;
    }
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(data.size() - kUnit)), 0) << std::strerror(errno);
    ASSERT_EQ(::ftruncate(plain, static_cast<off_t>(data.size() - kUnit)), 0);
    ASSERT_EQ(::fsync(fd), 0) << std::strerror(errno);
    ::close(plain);
    ::close(fd);
  }
  const std::string want = ReadFile(plain_path);
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == want);
  mount.Unmount();

  std::filesystem::rename(disks[1] + ".away", disks[1]);
  DoMount({"cache_size=0"});
  nlohmann::json stats = Stats();
  EXPECT_EQ(stats["stale"], nlohmann::json::array({1}));
  EXPECT_EQ(stats["disks"][1]["state"], "stale");
  EXPECT_EQ(Disks()["stale"], nlohmann::json::array({1}));
  EXPECT_NE(ReadFile(mount.log()).find("stale: disk 1 (" + disks[1] + ")"), std::string::npos) << ReadFile(mount.log());
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == want) << "the stale disk's old units were served";
  // Those old units are not the file's: served, the read above would have differed.
  {
    const StripeMap map = *StripeMap::Create(manifest.layout);
    const std::string part = ReadFile(PartPath(disks[1], manifest));
    size_t differ = 0;
    for (const StripeExtent& e : map.Split(0, want.size())) {
      if (e.disk != 1 || e.disk_offset >= part.size()) continue;
      const uint64_t n = std::min<uint64_t>(e.length, part.size() - e.disk_offset);
      differ += part.compare(e.disk_offset, n, want, e.file_offset, n) != 0;
    }
    EXPECT_GT(differ, 0u) << "disk 1's old units equal the written file: the test proves nothing";
  }
  // `rebuild` of a stale disk is refused, naming what resyncs it.
  EXPECT_EQ(WriteControl(DisksFile(), "rebuild 1 " + tmp.Sub("elsewhere") + "\n"), EINVAL);
  EXPECT_NE(Disks()["task"]["error"].get<std::string>().find("stale"), std::string::npos) << Disks().dump();

  ASSERT_EQ(WriteControl(DisksFile(), "scrub\n"), 0);
  const nlohmann::json task = WaitForTask();
  ASSERT_EQ(task["state"], "done") << task.dump();
  EXPECT_EQ(task["report"]["damage_left"], false) << task.dump();
  EXPECT_EQ(task["report"]["stale"], nlohmann::json::array()) << task.dump();
  EXPECT_GT(task["report"]["total"]["resynced_blocks"].get<uint64_t>(), 0u) << task.dump();
  stats = Stats();
  EXPECT_EQ(stats["stale"], nlohmann::json::array());
  EXPECT_EQ(stats["disks"][1]["state"], "healthy");
  ExpectScrubFindsNothing("after the resync");
  WriteFile(mnt + "/.graphfs/fault", "0 5\n");
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == want) << "disk 1's resynced units do not serve";
  WriteFile(mnt + "/.graphfs/fault", "0 0\n");
  mount.Unmount();
  // The next mount finds nothing stale.
  DoMount({"cache_size=0"});
  EXPECT_EQ(Stats()["stale"], nlohmann::json::array());
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == want);
}

// Kill -9 of the daemon while a writer writes and fsyncs with disk 1 lost: the next mount (still
// degraded) loses nothing fsync'ed, and once disk 1 is back and resynced by the daemon's scrub,
// nothing is wrong on any disk and the bytes are the same.
TEST_F(ParityOnline, FsyncedWritesWithADiskLostSurviveKillNine) {
  const std::string data = RandomBytes(1 << 20, 97);
  manifest = StripeWithParity("column", data);
  std::filesystem::rename(disks[1], disks[1] + ".away");
  std::mt19937 rng(98);
  int acked = 0;
  std::string known = data;
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    DoMount({"readahead=0", "cache_size=0"});
    std::atomic<bool> stop{false};
    WriteLog log;
    std::thread writer([&] { WriteUntilFailure(mnt + "/graph/column", 99 + round, stop, &log, &known); });
    std::this_thread::sleep_for(std::chrono::milliseconds(200 + rng() % 600));
    mount.Kill();
    stop = true;
    writer.join();
    acked += log.acked;
    DoMount({"readahead=0", "cache_size=0"});
    EXPECT_EQ(Stats()["degraded"], nlohmann::json::array({1}));
    known = ReadFile(mnt + "/graph/column");
    ExpectSurvived("column written degraded", known, log);
    mount.Unmount();
    if (HasFailure()) return;
  }
  ASSERT_GT(acked, 0) << "no fsync finished before a kill: the test proves nothing";
  std::filesystem::rename(disks[1] + ".away", disks[1]);
  DoMount({"readahead=0", "cache_size=0"});
  EXPECT_EQ(Stats()["stale"], nlohmann::json::array({1}));
  ASSERT_EQ(WriteControl(DisksFile(), "scrub\n"), 0);
  const nlohmann::json task = WaitForTask();
  ASSERT_EQ(task["state"], "done") << task.dump();
  EXPECT_EQ(task["report"]["stale"], nlohmann::json::array()) << task.dump();
  ExpectScrubFindsNothing("after the kills and the resync");
  WriteFile(mnt + "/.graphfs/fault", "0 5\n");
  EXPECT_TRUE(ReadFile(mnt + "/graph/column") == known);
  WriteFile(mnt + "/.graphfs/fault", "0 0\n");
}

// Writes and truncates while the daemon's rebuild runs (slowed by its rate, so that they come
// mid-way) land, as md takes writes during a resync: the file reads as a plain file given the same
// operations all along, the rebuild does again the rows written behind it (counted: else the test
// proves nothing), the same descriptor writes on after the switch, the daemon's scrub finds every
// row's parity and sums right, and with disk 0 failing every read the bytes are still whole — only
// if the new disk holds the rows written while it was rebuilt.
TEST_F(ParityOnline, WritesAndTruncatesWhileTheRebuildRunsLandOnTheSwitchedDisk) {
  const std::string data = RandomBytes(24 * kUnit + 321, 89);
  int fd = -1, plain = -1;
  std::string plain_path;
  // Closed however the test ends: a descriptor left open would keep the daemon from exiting.
  struct Close {
    int* fds[2];
    ~Close() {
      for (int* f : fds)
        if (*f >= 0) ::close(std::exchange(*f, -1));
    }
  } close_both{{&fd, &plain}};
  ASSERT_NO_FATAL_FAILURE(OpenDegradedBesideAPlainTwin(data, &fd, &plain, &plain_path));

  const std::string to = tmp.Sub("new-disk");
  ASSERT_EQ(WriteControl(DisksFile(), "rebuild 1 " + to + " 512K\n"), 0);
  std::mt19937 rng(90);
  uint64_t size = data.size();
  int mid_way = 0, wrong_reads = 0;
  for (int i = 0; Disks()["task"]["state"] == "running"; ++i) {
    if (i % 6 == 5) {
      size = size / 2 + rng() % size;  // cut or grown
      ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0) << "truncate " << i << ": " << std::strerror(errno);
      ASSERT_EQ(::ftruncate(plain, static_cast<off_t>(size)), 0);
    } else {
      const uint64_t at = rng() % (size + kUnit), length = 1 + rng() % kUnit;
      ASSERT_EQ(WriteBoth(fd, plain, at, RandomBytes(length, rng())), 0) << "write " << i << " at " << at;
      size = std::max(size, at + length);
    }
    mid_way += Disks()["task"]["state"] == "running";
    wrong_reads += ReadDirect(mnt + "/graph/column") != ReadFile(plain_path);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const nlohmann::json task = WaitForTask();
  ASSERT_EQ(task["state"], "done") << task.dump();
  ASSERT_GE(mid_way, 3) << "the writes did not come while the rebuild ran: the test proves nothing";
  EXPECT_GT(task["report"]["redone_rows"].get<uint64_t>(), 0u)
      << "no write came behind the rebuild: the test proves nothing; " << task.dump();
  EXPECT_EQ(wrong_reads, 0);
  EXPECT_EQ(Stats()["degraded"], nlohmann::json::array());

  for (int i = 0; i < 10; ++i) {
    const uint64_t at = rng() % (size + kUnit);
    ASSERT_EQ(WriteBoth(fd, plain, at, RandomBytes(1 + rng() % (2 * kUnit), rng())), 0) << "write " << i;
  }
  ASSERT_EQ(::fsync(fd), 0) << std::strerror(errno);
  ::close(std::exchange(plain, -1));
  ::close(std::exchange(fd, -1));
  const std::string want = ReadFile(plain_path);
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == want);
  ExpectScrubFindsNothing("after the writes during the rebuild and the switch");
  WriteFile(mnt + "/.graphfs/fault", "0 5\n");
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == want) << "the new disk lacks rows written during the rebuild";
  WriteFile(mnt + "/.graphfs/fault", "0 0\n");
}

// Kill -9 of the daemon while a file the rebuild has passed is written and fsynced, and another is
// still being rebuilt: the next mount (still degraded) loses nothing fsync'ed, and the rebuild
// asked again resumes, does again the rows the write-intent records mark (written since the killed
// run passed them), and switches in a disk that serves the same bytes: the scrub finds nothing,
// and with disk 0 failing every read both files read as before the switch.
TEST_F(ParityOnline, FsyncedWritesDuringTheRebuildSurviveKillNineAndTheResumedRebuildKeepsThem) {
  const std::string data = RandomBytes(1 << 20, 101), slow = RandomBytes(2 << 20, 102);
  manifest = StripeWithParity("column", data);
  StripeWithParity("row", slow);  // rebuilt after column
  std::filesystem::remove_all(disks[1]);
  DoMount({"readahead=0", "cache_size=0"});
  const std::string to = tmp.Sub("new-disk");
  ASSERT_EQ(WriteControl(DisksFile(), "rebuild 1 " + to + " 256K\n"), 0);
  ASSERT_TRUE(WaitUntilRebuildPassed(to, manifest.file_id)) << "the rebuild never passed column";
  std::atomic<bool> stop{false};
  WriteLog log;
  std::thread writer([&] { WriteUntilFailure(mnt + "/graph/column", 103, stop, &log, &data); });
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  ASSERT_EQ(Disks()["task"]["state"], "running") << "the rebuild ended before the kill: slow it down";
  mount.Kill();
  stop = true;
  writer.join();
  ASSERT_GT(log.acked, 0) << "no fsync finished before the kill: the test proves nothing";

  DoMount({"readahead=0", "cache_size=0"});
  EXPECT_EQ(Stats()["degraded"], nlohmann::json::array({1}));
  const std::string known = ReadFile(mnt + "/graph/column");
  ExpectSurvived("column written during the rebuild", known, log);
  ASSERT_EQ(WriteControl(DisksFile(), "rebuild 1 " + to + "\n"), 0);
  const nlohmann::json task = WaitForTask();
  ASSERT_EQ(task["state"], "done") << task.dump();
  EXPECT_EQ(task["report"]["resumed"], true) << task.dump();
  EXPECT_GT(task["report"]["redone_rows"].get<uint64_t>(), 0u) << task.dump();
  EXPECT_EQ(Stats()["degraded"], nlohmann::json::array());
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == known);
  EXPECT_TRUE(ReadDirect(mnt + "/graph/row") == slow);
  ExpectScrubFindsNothing("after the kill and the resumed rebuild");
  WriteFile(mnt + "/.graphfs/fault", "0 5\n");
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == known) << "the new disk lacks rows written during the rebuild";
  EXPECT_TRUE(ReadDirect(mnt + "/graph/row") == slow);
  WriteFile(mnt + "/.graphfs/fault", "0 0\n");
}

TEST_F(ParityOnline, RebuildThroughTheControlFileSwitchesTheMountToTheNewDisk) {
  const std::string data = RandomBytes(40 * kUnit + 12345, 81);
  manifest = StripeWithParity("column", data);
  std::filesystem::remove_all(disks[1]);
  DoMount({"cache_size=0"});
  EXPECT_EQ(Disks()["degraded"], nlohmann::json::array({1}));
  EXPECT_TRUE(Disks()["task"].is_null());

  // A reader streams the file all along: through parity, then from the new disk.
  std::atomic<bool> stop{false};
  std::atomic<int> rounds{0}, wrong{0};
  std::string first_wrong;
  std::thread reader([&] {
    while (!stop.load()) {
      const std::string got = ReadDirect(mnt + "/graph/column");
      if (got != data && wrong.fetch_add(1) == 0) first_wrong = got.substr(0, 200);
      ++rounds;
    }
  });
  const std::string to = tmp.Sub("new-disk");
  // A low rate first, so that the reads and the rebuild overlap for a while.
  ASSERT_EQ(WriteControl(DisksFile(), "rebuild 1 " + to + " 4M\n"), 0);
  const nlohmann::json task = WaitForTask();
  while (rounds.load() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  stop = true;
  reader.join();
  EXPECT_EQ(wrong.load(), 0) << "a read during the rebuild differed: " << first_wrong;
  EXPECT_EQ(task["state"], "done") << task.dump();
  EXPECT_EQ(task["kind"], "rebuild");
  EXPECT_EQ(task["done_bytes"], task["total_bytes"]) << task.dump();
  EXPECT_GT(task["total_bytes"].get<uint64_t>(), 0u);

  const nlohmann::json stats = Stats();
  EXPECT_EQ(stats["degraded"], nlohmann::json::array());
  EXPECT_EQ(stats["disks"][1]["path"], to);
  EXPECT_EQ(stats["disks"][1]["state"], "healthy");
  EXPECT_EQ(stats["disk_task"]["state"], "done");
  auto registry = ReadRegistry(graph);
  ASSERT_TRUE(registry.ok());
  EXPECT_EQ(registry->disks[1], to);
  const std::string log = ReadFile(mount.log());
  EXPECT_NE(log.find("disk 1 back: " + to), std::string::npos) << log;

  // Disk 0 now fails every read: with one parity unit per row its units come back only if the new
  // disk 1 serves its own.
  const uint64_t read_before = stats["disks"][1]["bytes_read"].get<uint64_t>();
  WriteFile(mnt + "/.graphfs/fault", "0 5\n");
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == data) << "the switched mount does not read the new disk";
  const nlohmann::json after = Stats();
  EXPECT_GT(after["disks"][1]["bytes_read"].get<uint64_t>(), read_before);
  EXPECT_GT(after["disks"][0]["rebuilt_bytes"].get<uint64_t>(), 0u);
  WriteFile(mnt + "/.graphfs/fault", "0 0\n");
}

TEST_F(ParityOnline, ScrubThroughTheControlFileRepairsAndADegradedReadAfterItWorks) {
  const std::string data = RandomBytes(12 * kUnit, 82);
  manifest = StripeWithParity("column", data);
  const StripeMap map = *StripeMap::Create(manifest.layout);
  // A lost write on row 2's parity: its bytes and their sum changed together, so every block
  // matches its sum but the parity is not what the data encodes to.
  const uint64_t row = 2;
  const uint32_t pdisk = map.SlotDisk(row, map.data_units());
  const std::string part = PartPath(disks[pdisk], manifest);
  FlipByte(part, row * kUnit + 100, 0x33);
  const uint64_t b = manifest.sum_block;
  const std::string block = ReadFile(part).substr(row * kUnit, b);
  const uint64_t sum = BlockSum(block, b);
  {
    const int fd = ::open(SumsPath(disks[pdisk], manifest).c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, &sum, 8, static_cast<off_t>(kSumsHeaderSize + row * (kUnit / b) * 8)), 8);
    ::close(fd);
  }
  // A second, plain flip the scrub repairs from parity, on a data unit.
  const DiskLocation flip = map.Locate(7 * kUnit + 5);
  FlipByte(PartPath(disks[flip.disk], manifest), flip.disk_offset, 0x5a);
  DoMount({"cache_size=0"});
  // A healthy read keeps the sums of every disk it read (the stale parity's among them) and heals
  // the flipped byte itself; scrub then finds the parity.
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == data);
  FlipByte(PartPath(disks[flip.disk], manifest), flip.disk_offset, 0x5a);  // bad again, for the scrub

  ASSERT_EQ(WriteControl(DisksFile(), "scrub\n"), 0);
  const nlohmann::json task = WaitForTask();
  ASSERT_EQ(task["state"], "done") << task.dump();
  EXPECT_EQ(task["kind"], "scrub");
  EXPECT_EQ(task["report"]["total"]["parity_rewrites"], 1) << task.dump();
  EXPECT_EQ(task["report"]["total"]["repaired_blocks"], 1) << task.dump();
  EXPECT_EQ(task["report"]["damage_left"], false) << task.dump();
  EXPECT_EQ(ByteAt(PartPath(disks[flip.disk], manifest), flip.disk_offset), data[7 * kUnit + 5]);

  // A read of row 2 with one of its data disks failing needs the parity the scrub rewrote: it
  // must be checked against the sums on the disk now, not those the daemon kept from before.
  const uint32_t ddisk = map.SlotDisk(row, 0);
  WriteFile(mnt + "/.graphfs/fault", std::to_string(ddisk) + " 5\n");
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == data) << "a degraded read after the scrub failed";
  WriteFile(mnt + "/.graphfs/fault", std::to_string(ddisk) + " 0\n");
}

TEST_F(ParityOnline, BadLinesAreRefusedWithTheReason) {
  const std::string data = RandomBytes(30 * kUnit, 83);
  manifest = StripeWithParity("column", data);
  std::filesystem::remove_all(disks[2]);
  const std::string full = tmp.Sub("full");
  WriteFile(full + "/something", "x");
  const std::string other = tmp.Sub("other-set");
  WriteFile(other + "/.graphfs-disk", EncodeDiskIdentity({"0123456789abcdef0123456789abcdef", 2, 3}));
  DoMount({"cache_size=0"});
  const std::string file = DisksFile();
  EXPECT_EQ(WriteControl(file, "frobnicate\n"), EINVAL);
  EXPECT_EQ(WriteControl(file, "rebuild\n"), EINVAL);
  EXPECT_EQ(WriteControl(file, "rebuild 7 " + tmp.Sub("a") + "\n"), EINVAL);
  EXPECT_EQ(WriteControl(file, "rebuild 2 relative/dir\n"), EINVAL);
  EXPECT_EQ(WriteControl(file, "rebuild 2 " + tmp.Sub("b") + " fast\n"), EINVAL);
  EXPECT_EQ(WriteControl(file, "rebuild 0 " + tmp.Sub("c") + "\n"), EINVAL);  // disk 0 is not lost
  EXPECT_EQ(WriteControl(file, "rebuild 2 " + full + "\n"), ENOTEMPTY);
  EXPECT_EQ(WriteControl(file, "rebuild 2 " + other + "\n"), EINVAL);
  EXPECT_EQ(Disks()["task"]["state"], "refused");
  EXPECT_NE(Disks()["task"]["error"].get<std::string>().find("belongs to disk set 0123456789abcdef"),
            std::string::npos)
      << Disks()["task"].dump();
  const std::string log = ReadFile(mount.log());
  EXPECT_NE(log.find("is not empty"), std::string::npos) << log;
  EXPECT_NE(log.find("unknown command 'frobnicate'"), std::string::npos) << log;

  // A task already running: a rebuild at 1 KiB/s runs for minutes; the unmount stops it.
  ASSERT_EQ(WriteControl(file, "rebuild 2 " + tmp.Sub("slow") + " 1K\n"), 0);
  EXPECT_EQ(WriteControl(file, "scrub\n"), EBUSY);
  EXPECT_EQ(Disks()["task"]["state"], "running");
  EXPECT_EQ(Disks()["degraded"], nlohmann::json::array({2}));
  const auto t0 = std::chrono::steady_clock::now();
  mount.Unmount();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20)) << "the unmount waited for the task";
  EXPECT_NE(ReadFile(mount.log()).find("disks: rebuild stopped"), std::string::npos) << ReadFile(mount.log());
}

// The tools find the mount serving the graph and hand it the work: the mount reads the new disk
// afterwards without a remount; graphfs-rebuild --offline beside it is refused (exit 1, saying
// why); graphfs-scrub --offline leaves the mount as it was.
TEST_F(ParityOnline, TheToolsHandTheirWorkToTheMount) {
  const std::string data = RandomBytes(10 * kUnit + 77, 85);
  manifest = StripeWithParity("column", data);
  std::filesystem::remove_all(disks[0]);
  DoMount({"cache_size=0"});
  const std::string to = tmp.Sub("new-disk"), out = tmp.path() + "/tool.out";
  const auto run = [&](const std::string& args) {
    const int status = std::system((args + " > " + out + " 2>&1").c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  // --offline beside the mount, which may write with the disk lost: refused, nothing written.
  EXPECT_EQ(run(std::string(GRAPHFS_REBUILD_TOOL) + " --offline -q --disk 0 --to " + to + " " + graph), 1)
      << ReadFile(out);
  EXPECT_NE(ReadFile(out).find("in use by a running graphfs mount"), std::string::npos) << ReadFile(out);
  EXPECT_TRUE(std::filesystem::is_empty(to));
  EXPECT_EQ(run(std::string(GRAPHFS_REBUILD_TOOL) + " -q --disk 0 --to " + to + " " + graph), 0) << ReadFile(out);
  EXPECT_NE(ReadFile(out).find("is mounted at " + mnt), std::string::npos) << ReadFile(out);
  EXPECT_EQ(Stats()["degraded"], nlohmann::json::array());
  EXPECT_EQ(Stats()["disks"][0]["path"], to);
  // Run again: the mount reads the disk from there, healthy — done, nothing handed over.
  EXPECT_EQ(run(std::string(GRAPHFS_REBUILD_TOOL) + " -q --disk 0 --to " + to + " " + graph), 0) << ReadFile(out);
  EXPECT_NE(ReadFile(out).find("disk 0 is " + std::filesystem::canonical(to).string() + " already"), std::string::npos)
      << ReadFile(out);
  EXPECT_EQ(ReadFile(out).find("its daemon rebuilds"), std::string::npos) << ReadFile(out);
  // A refusal by the daemon is the tool's failure, with the reason.
  EXPECT_EQ(run(std::string(GRAPHFS_REBUILD_TOOL) + " -q --disk 0 --to " + tmp.Sub("again") + " " + graph), 1);
  EXPECT_NE(ReadFile(out).find("is not missing from the mount"), std::string::npos) << ReadFile(out);
  // A flipped byte on disk 1 or 2 (disk 0's directory is the new one now).
  const StripeMap map = *StripeMap::Create(manifest.layout);
  uint64_t at = 9;
  while (map.Locate(at).disk == 0) at += kUnit;
  const DiskLocation flip = map.Locate(at);
  FlipByte(PartPath(disks[flip.disk], manifest), flip.disk_offset, 0x11);
  EXPECT_EQ(run(std::string(GRAPHFS_SCRUB_TOOL) + " -q " + graph), 0) << ReadFile(out);
  EXPECT_NE(ReadFile(out).find("through the mount at " + mnt), std::string::npos) << ReadFile(out);
  EXPECT_EQ(Disks()["task"]["kind"], "scrub");
  EXPECT_EQ(Disks()["task"]["report"]["total"]["repaired_blocks"], 1) << Disks().dump();
  EXPECT_EQ(ByteAt(PartPath(disks[flip.disk], manifest), flip.disk_offset), data[at]);
  EXPECT_EQ(run(std::string(GRAPHFS_SCRUB_TOOL) + " --offline -q " + graph), 0) << ReadFile(out);
  EXPECT_EQ(ReadFile(out).find("through the mount"), std::string::npos) << ReadFile(out);
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == data);
}

TEST_F(ParityOnline, ScrubOfAGraphWithoutChecksumsIsRefused) {
  Stripe("column", RandomBytes(4 * kUnit, 84));
  DoMount({"cache_size=0"});
  EXPECT_EQ(WriteControl(DisksFile(), "scrub\n"), EINVAL);
  const nlohmann::json task = Disks()["task"];
  EXPECT_EQ(task["state"], "refused");
  EXPECT_NE(task["error"].get<std::string>().find("nothing to scrub"), std::string::npos) << task.dump();
}

}  // namespace
}  // namespace graphfs::testing
