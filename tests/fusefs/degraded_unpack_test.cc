// The first write to a compressed file with parity while a disk is missing (issue 44, "a disk
// that dies loses nothing"; docs/parity.md, "Writes with a disk lost"): the plain copy the write
// makes goes on the present disks, lost on the missing one from the start, so the write lands
// (it failed with ENOENT before: the copy's part was created on every disk); the file reads as a
// plain file given the same operations, the mount stays degraded, the compressed file's parts go,
// a kill -9 after fsync loses nothing, and a rebuild afterwards — the daemon's or the offline
// tool's — makes the disk whole (the daemon's scrub finds nothing, and with another disk failing
// every read the bytes are still right). Compressed files written while the daemon's rebuild runs
// are rebuilt too: the copy made after the rebuild passed the file, and the copy of a file whose
// compressed parts went before the rebuild reached them.
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
#include <vector>

#include "striping/disk_set.h"
#include "striping/manifest.h"
#include "striping/stale_rows.h"
#include "striping/stripe_map.h"
#include "striping/stripe_parity.h"
#include "striping/rebuild.h"
#include "tests/fusefs/disk_tasks_fixture.h"
#include "tests/fusefs/write_log.h"

namespace graphfs::testing {
namespace {

constexpr uint64_t kUnit = kTestUnit;

class DegradedUnpack : public DiskTasksMount {
 protected:
  // `column` compressed with parity, disk `gone`'s directory removed, mounted degraded: the first
  // write lands, more writes and a truncate read as the plain twin's, fsynced; then the daemon
  // killed while a writer writes and fsyncs, and mounted again (still degraded) with nothing
  // fsync'ed lost. Returns what the file holds then.
  std::string WriteDegradedThenKill(uint32_t gone) {
    const std::string data = CompressibleBytes(1500 * 1000 + 17, 61);
    const StripeManifest compressed = CompressWithParity("column", data);
    std::filesystem::remove_all(disks[gone]);
    DoMount({"cache_size=0"});
    int fd = ::open((mnt + "/graph/column").c_str(), O_RDWR);
    int plain = ::open(twin("column").c_str(), O_RDWR);
    CloseAll close_all{{&fd, &plain}};
    EXPECT_GE(fd, 0) << std::strerror(errno);
    EXPECT_GE(plain, 0);
    if (fd < 0 || plain < 0) return {};
    // The first write makes the plain copy: onto the other two disks only.
    const int first = WriteBoth(fd, plain, 700001, RandomBytes(10000, 62));
    EXPECT_EQ(first, 0) << "the first write with disk " << gone << " gone: " << std::strerror(first) << "\n"
                        << ReadFile(mount.log());
    if (first != 0) return {};
    std::mt19937 rng(63);
    uint64_t size = data.size();
    for (int i = 0; i < 30; ++i) {
      const uint64_t at = rng() % (size + kUnit), length = 1 + rng() % (2 * kUnit);
      EXPECT_EQ(WriteBoth(fd, plain, at, RandomBytes(length, rng())), 0) << "write " << i << " at " << at;
      size = std::max(size, at + length);
    }
    EXPECT_EQ(::ftruncate(fd, static_cast<off_t>(size - kUnit - 77)), 0) << std::strerror(errno);
    EXPECT_EQ(::ftruncate(plain, static_cast<off_t>(size - kUnit - 77)), 0);
    EXPECT_EQ(::fsync(fd), 0) << std::strerror(errno);
    EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == ReadFile(twin("column")))
        << "the written file does not read as the plain twin";

    // Degraded still, and saying so; the plain copy keeps the parity; the compressed parts went.
    const nlohmann::json stats = Stats();
    EXPECT_EQ(stats["degraded"], nlohmann::json::array({gone})) << stats.dump();
    const std::string log = ReadFile(mount.log());
    EXPECT_NE(log.find("degraded: disk " + std::to_string(gone) + " (" + disks[gone] + ") is missing"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("made while disks were missing"), std::string::npos) << log;
    const StripeManifest now = ManifestOf("column");
    EXPECT_FALSE(now.packed) << "the write did not make the file plain";
    EXPECT_EQ(now.layout.parity, 1u);
    EXPECT_NE(now.file_id, compressed.file_id);
    for (uint32_t d = 0; d < 3; ++d) {
      if (d == gone) continue;
      EXPECT_FALSE(std::filesystem::exists(PartPath(disks[d], compressed))) << "compressed part left on disk " << d;
      EXPECT_TRUE(std::filesystem::exists(PartPath(disks[d], now))) << "no part of the copy on disk " << d;
    }

    // Kill -9 while a writer writes and fsyncs the file.
    const std::string known = ReadFile(twin("column"));
    ::close(std::exchange(fd, -1));
    std::atomic<bool> stop{false};
    WriteLog log_of_writes;
    std::thread writer([&] { WriteUntilFailure(mnt + "/graph/column", 64, stop, &log_of_writes, &known); });
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    mount.Kill();
    stop = true;
    writer.join();
    EXPECT_GT(log_of_writes.acked, 0) << "no fsync finished before the kill: the test proves nothing";
    DoMount({"cache_size=0"});
    EXPECT_EQ(Stats()["degraded"], nlohmann::json::array({gone}));
    const std::string after = ReadDirect(mnt + "/graph/column");
    ExpectSurvived("column written degraded", after, log_of_writes);
    return after;
  }
  // The disk rebuilt: not degraded; the daemon's scrub finds nothing; with disk `failing` (not
  // the rebuilt one) failing every read, the bytes come through the new disk's units, and are `want`.
  void ExpectWholeAfterTheRebuild(const std::string& name, const std::string& want, uint32_t failing = 0) {
    EXPECT_EQ(Stats()["degraded"], nlohmann::json::array());
    EXPECT_TRUE(ReadDirect(mnt + "/graph/" + name) == want) << name;
    ExpectScrubFindsNothing("after the rebuild");
    WriteFile(mnt + "/.graphfs/fault", std::to_string(failing) + " 5\n");
    EXPECT_TRUE(ReadDirect(mnt + "/graph/" + name) == want) << name << ": the new disk lacks the copy's units";
    WriteFile(mnt + "/.graphfs/fault", std::to_string(failing) + " 0\n");
  }
};

TEST_F(DegradedUnpack, AWriteLandsSurvivesKillNineAndTheDaemonsRebuildMakesTheDiskWhole) {
  const std::string want = WriteDegradedThenKill(1);
  if (HasFailure()) return;
  const std::string to = tmp.Sub("new-disk");
  ASSERT_EQ(WriteControl(DisksFile(), "rebuild 1 " + to + "\n"), 0);
  const nlohmann::json task = WaitForTask();
  ASSERT_EQ(task["state"], "done") << task.dump();
  ExpectWholeAfterTheRebuild("column", want);
  mount.Unmount();
  DoMount({"cache_size=0"});
  EXPECT_EQ(Stats()["degraded"], nlohmann::json::array());
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == want);
}

// Disk 0 this time: the unpack's record goes on the first present disk.
TEST_F(DegradedUnpack, AWriteLandsSurvivesKillNineAndTheOfflineRebuildMakesTheDiskWhole) {
  const std::string want = WriteDegradedThenKill(0);
  if (HasFailure()) return;
  mount.Unmount();
  RebuildRequest req;
  req.paths = {graph};
  req.disk = 0;
  req.to = tmp.Sub("new-disk");
  req.progress = false;
  auto report = Rebuild(req);
  ASSERT_TRUE(report.ok()) << report.error().message();
  DoMount({"cache_size=0"});
  ExpectWholeAfterTheRebuild("column", want, /*failing=*/1);
}

// Two compressed files written while the daemon rebuilds disk 1 (slowed by its rate, and held up
// by a raw file between them): `column` after the rebuild has done it — its copy is new to the
// rebuild, and the compressed parts it did go — and `row` before the rebuild reaches it — its
// compressed parts go before their turn. Both copies are rebuilt: after the switch the scrub finds
// nothing and, with disk 0 failing every read, both read as their plain twins.
TEST_F(DegradedUnpack, CompressedFilesWrittenWhileTheDaemonRebuildsAreRebuiltToo) {
  const StripeManifest column = CompressWithParity("column", CompressibleBytes(1200 * 1000 + 5, 71));
  const std::string middle = RandomBytes(3 << 20, 72);  // rebuilt between them
  WriteFile(twin("middle"), middle);
  StripeWithParity("middle", middle);
  const StripeManifest row = CompressWithParity("row", CompressibleBytes(900 * 1000 + 3, 73));
  std::filesystem::remove_all(disks[1]);
  DoMount({"readahead=0", "cache_size=0"});
  const std::string to = tmp.Sub("new-disk");
  ASSERT_EQ(WriteControl(DisksFile(), "rebuild 1 " + to + " 256K\n"), 0);
  ASSERT_TRUE(WaitUntilRebuildPassed(to, column.file_id)) << "the rebuild never passed column";
  int fds[2] = {-1, -1}, twins[2] = {-1, -1};
  CloseAll close_all{{&fds[0], &fds[1], &twins[0], &twins[1]}};
  const char* names[2] = {"column", "row"};
  for (int f = 0; f < 2; ++f) {
    fds[f] = ::open((mnt + "/graph/" + names[f]).c_str(), O_RDWR);
    ASSERT_GE(fds[f], 0) << std::strerror(errno);
    twins[f] = ::open(twin(names[f]).c_str(), O_RDWR);
    ASSERT_GE(twins[f], 0);
  }
  std::mt19937 rng(74);
  int mid_way = 0;
  for (int i = 0; i < 12; ++i) {
    const int f = i % 2;
    const uint64_t at = rng() % (800 * 1000), length = 1 + rng() % kUnit;
    const int err = WriteBoth(fds[f], twins[f], at, RandomBytes(length, rng()));
    ASSERT_EQ(err, 0) << names[f] << ", write " << i << ": " << std::strerror(err) << "\n" << ReadFile(mount.log());
    mid_way += Disks()["task"]["state"] == "running";
    EXPECT_TRUE(ReadDirect(mnt + "/graph/" + names[f]) == ReadFile(twin(names[f]))) << names[f] << " after write " << i;
  }
  ASSERT_GE(mid_way, 2) << "the writes did not come while the rebuild ran: the test proves nothing";
  for (int f = 0; f < 2; ++f) ASSERT_EQ(::fsync(fds[f]), 0) << std::strerror(errno);
  const nlohmann::json task = WaitForTask();
  ASSERT_EQ(task["state"], "done") << task.dump() << "\n" << ReadFile(mount.log());
  EXPECT_NE(ReadFile(mount.log()).find("disk 1 back"), std::string::npos);
  // The compressed files' parts are gone from the new disk too.
  for (const StripeManifest& m : {column, row})
    EXPECT_FALSE(std::filesystem::exists(PartPath(to, m))) << m.file_id << " left on the new disk";
  for (int f = 0; f < 2; ++f) EXPECT_NE(ManifestOf(names[f]).file_id, (f == 0 ? column : row).file_id);
  // Written again through the same descriptors after the switch.
  for (int f = 0; f < 2; ++f) ASSERT_EQ(WriteBoth(fds[f], twins[f], 4096 * (f + 1), RandomBytes(5000, 75 + f)), 0);
  for (int f = 0; f < 2; ++f) ASSERT_EQ(::fsync(fds[f]), 0) << std::strerror(errno);
  for (int* fd : close_all.fds)
    if (*fd >= 0) ::close(std::exchange(*fd, -1));
  for (const char* name : {"column", "middle", "row"}) {
    SCOPED_TRACE(name);
    ExpectWholeAfterTheRebuild(name, ReadFile(twin(name)));
  }
}


// The copy a first write makes with disk 1 missing, and disk 1 then back (its directory put back
// as it was, between two mounts): the mount finds it stale, with no part of the copy; the daemon's
// scrub (`scrub` in .graphfs/disks), with the copy open in the daemon the whole time, creates the
// part and the sums on disk 1 and resyncs every row of it (docs/parity.md, "A missing disk that
// comes back"); the records go, the disk is healthy, the open descriptor writes on, and with disk
// 0 failing every read the bytes come through disk 1's new units. Offline, the disks pass
// VerifyStripeParity (every block's sum and every row's parity on all three disks).
TEST_F(DegradedUnpack, TheDaemonsScrubGivesADiskThatComesBackTheCopyMadeWhileItWasMissing) {
  const std::string data = CompressibleBytes(1300 * 1000 + 11, 81);
  const StripeManifest compressed = CompressWithParity("column", data);
  const std::string aside = tmp.path() + "/disk1-unplugged";
  std::filesystem::rename(disks[1], aside);
  DoMount({"cache_size=0"});
  int fd = ::open((mnt + "/graph/column").c_str(), O_RDWR);
  int plain = ::open(twin("column").c_str(), O_RDWR);
  CloseAll close_all{{&fd, &plain}};
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_GE(plain, 0);
  std::mt19937 rng(82);
  for (int i = 0; i < 8; ++i) {
    const uint64_t at = rng() % data.size(), length = 1 + rng() % (2 * kUnit);
    ASSERT_EQ(WriteBoth(fd, plain, at, RandomBytes(length, rng())), 0) << "write " << i << "\n" << ReadFile(mount.log());
  }
  ASSERT_EQ(::fsync(fd), 0) << std::strerror(errno);
  const StripeManifest copy = ManifestOf("column");
  ASSERT_FALSE(copy.packed) << "the write did not make the file plain";
  ASSERT_NE(copy.file_id, compressed.file_id);
  ::close(std::exchange(fd, -1));
  mount.Unmount();

  std::filesystem::rename(aside, disks[1]);
  ASSERT_FALSE(std::filesystem::exists(PartPath(disks[1], copy))) << "disk 1 was missing: it cannot hold the copy";
  DoMount({"cache_size=0"});
  EXPECT_EQ(Stats()["stale"], nlohmann::json::array({1})) << Stats()["stale"].dump();
  EXPECT_EQ(Stats()["degraded"], nlohmann::json::array());
  // The copy open in the daemon across the scrub (the kernel holds its inode while fd is open).
  fd = ::open((mnt + "/graph/column").c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_TRUE(ReadDirect(mnt + "/graph/column") == ReadFile(twin("column"))) << "stale disk 1 served before the scrub";

  ASSERT_EQ(WriteControl(DisksFile(), "scrub\n"), 0);
  const nlohmann::json task = WaitForTask();
  ASSERT_EQ(task["state"], "done") << task.dump() << "\n" << ReadFile(mount.log());
  EXPECT_EQ(task["report"]["stale"], nlohmann::json::array()) << task.dump();
  EXPECT_EQ(task["report"]["damage_left"], false) << task.dump();
  const std::string resynced = task["report"]["resynced"].dump();
  EXPECT_NE(resynced.find("column: disk 1: "), std::string::npos) << resynced;
  EXPECT_NE(resynced.find("rows resynced"), std::string::npos) << resynced;
  EXPECT_EQ(resynced.find("open in the mount"), std::string::npos) << resynced;
  EXPECT_EQ(Stats()["stale"], nlohmann::json::array());
  EXPECT_EQ(Disks()["stale"], nlohmann::json::array()) << Disks().dump();
  // Disk 1 holds the copy's part, its share long, and its sums; no record is left anywhere.
  ASSERT_TRUE(std::filesystem::exists(PartPath(disks[1], copy))) << "the scrub made no part on disk 1";
  const uint64_t size = ReadFile(twin("column")).size();
  EXPECT_EQ(std::filesystem::file_size(PartPath(disks[1], copy)), StripeMap::Create(copy.layout)->PartSize(1, size));
  EXPECT_TRUE(std::filesystem::exists(SumsPath(disks[1], copy)));
  for (uint32_t d = 0; d < 3; ++d)
    EXPECT_FALSE(std::filesystem::exists(disks[d] + "/parts/" + StaleRecordName(copy.file_id, 1))) << "disk " << d;

  // The descriptor open across the scrub writes on (its writer took disk 1); then, with disk 0
  // failing every read, the bytes come through disk 1's units.
  ASSERT_EQ(WriteBoth(fd, plain, 12345, RandomBytes(3 * kUnit, 83)), 0) << ReadFile(mount.log());
  ASSERT_EQ(::fsync(fd), 0) << std::strerror(errno);
  ::close(std::exchange(fd, -1));
  const std::string want = ReadFile(twin("column"));
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == want);
  WriteFile(mnt + "/.graphfs/fault", "0 5\n");
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == want) << "disk 1's units of the copy do not serve";
  WriteFile(mnt + "/.graphfs/fault", "0 0\n");
  ExpectScrubFindsNothing("after the resync");
  mount.Unmount();

  auto registry = ReadRegistry(graph);
  ASSERT_TRUE(registry.ok()) << registry.error().message();
  auto set = DiskSet::Open(*registry);
  ASSERT_TRUE(set.ok()) << set.error().message();
  EXPECT_FALSE(set->degraded());
  EXPECT_EQ(set->state(1), DiskState::kHealthy);
  const StripeManifest last = ManifestOf("column");
  EXPECT_EQ(last.file_id, copy.file_id);
  const Status verified = VerifyStripeParity(*set, last);
  EXPECT_TRUE(verified.ok()) << verified.error().message();
}

}  // namespace
}  // namespace graphfs::testing
