// A disk missing since the mount that comes back under the running mount (issue 44, "a lost disk
// loses nothing"; docs/parity.md, "A disk that comes back under the mount"): the daemon's probe
// finds its directory again, checks that it is this set's disk (an empty directory and another
// set's disk are refused, the log saying so, the disk still missing), and takes it back stale: the
// files written while it was missing read the rows they marked through parity and the rest from
// it, the files that were not read it whole; the daemon's scrub then resyncs it to healthy, the
// files open across all of it included — also a file the daemon created while the disk was
// missing (a compressed file's first write), whose part the scrub makes.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "striping/disk_set.h"
#include "striping/manifest.h"
#include "striping/stale_rows.h"
#include "striping/stripe_map.h"
#include "striping/stripe_parity.h"
#include "tests/fusefs/disk_tasks_fixture.h"
#include "tests/fusefs/write_log.h"

namespace graphfs::testing {
namespace {

constexpr uint64_t kUnit = kTestUnit;

// `length` bytes at `offset` of `path`, read with O_DIRECT (`offset` 4 KiB aligned); the errno of
// a failed read instead.
struct RangeRead {
  std::string bytes;
  int error = 0;
};
RangeRead ReadRangeDirect(const std::string& path, uint64_t offset, uint64_t length) {
  RangeRead r;
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT);
  if (fd < 0) {
    r.error = errno;
    return r;
  }
  const uint64_t aligned = (length + 4095) / 4096 * 4096;
  void* buf = nullptr;
  if (::posix_memalign(&buf, 4096, aligned) != 0) {
    ::close(fd);
    r.error = ENOMEM;
    return r;
  }
  uint64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd, static_cast<char*>(buf) + done, aligned - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      r.error = errno;
      break;
    }
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
  }
  if (r.error == 0) r.bytes.assign(static_cast<const char*>(buf), std::min(done, length));
  ::free(buf);
  ::close(fd);
  return r;
}

class DiskReturn : public DiskTasksMount {
 protected:
  // Polls `done` for up to `seconds`; whether it came true.
  static bool Within(int seconds, const std::function<bool()>& done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < until) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
  }
  bool LogSays(const std::string& what) { return ReadFile(mount.log()).find(what) != std::string::npos; }
  // An offset inside row `row` of `m`'s file whose byte lies in a data unit on disk `disk`, or
  // nullopt when disk `disk` holds the row's parity.
  static std::optional<uint64_t> OffsetOnDisk(const StripeMap& map, uint64_t row, uint32_t disk) {
    for (uint32_t slot = 0; slot < map.data_units(); ++slot)
      if (map.SlotDisk(row, slot) == disk) return map.SlotFileOffset(row, slot);
    return std::nullopt;
  }
  // The scrub run by the daemon resyncs disk 1: done, nothing stale left, `name` among the files
  // resynced.
  void ExpectScrubResyncs(const std::vector<std::string>& names) {
    ASSERT_EQ(WriteControl(DisksFile(), "scrub\n"), 0);
    const nlohmann::json task = WaitForTask();
    ASSERT_EQ(task["state"], "done") << task.dump() << "\n" << ReadFile(mount.log());
    EXPECT_EQ(task["report"]["stale"], nlohmann::json::array()) << task.dump();
    EXPECT_EQ(task["report"]["damage_left"], false) << task.dump();
    const std::string resynced = task["report"]["resynced"].dump();
    for (const std::string& name : names)
      EXPECT_NE(resynced.find(name + ": disk 1: "), std::string::npos) << resynced;
    EXPECT_EQ(resynced.find("records kept"), std::string::npos) << resynced;
    EXPECT_EQ(Stats()["stale"], nlohmann::json::array());
    EXPECT_EQ(Disks()["disks"][1]["state"], "healthy") << Disks().dump();
  }
  // After the unmount: the set opens healthy and every file given passes VerifyStripeParity
  // (every block's sum and every row's parity, on all three disks).
  void ExpectVerifiedOffline(const std::vector<std::string>& names) {
    auto registry = ReadRegistry(graph);
    ASSERT_TRUE(registry.ok()) << registry.error().message();
    auto set = DiskSet::Open(*registry);
    ASSERT_TRUE(set.ok()) << set.error().message();
    EXPECT_FALSE(set->degraded());
    EXPECT_EQ(set->state(1), DiskState::kHealthy);
    for (const std::string& name : names) {
      const Status verified = VerifyStripeParity(*set, ManifestOf(name));
      EXPECT_TRUE(verified.ok()) << name << ": " << verified.error().message();
    }
  }
};

// Raw files with parity over the three disks, disk 1's directory moved aside before the mount:
// `written` is written in two rows (in disk 1's data units) while the disk is missing, `untouched`
// only read. An empty directory, then another set's disk 1, put where disk 1 belongs: refused,
// logged, the disk still missing. The disk itself put back: taken back stale within seconds, the
// log and stats saying so. With disk 0 failing every read, `untouched` reads whole (disk 1 serves
// it, and a file open since before the return took it) and `written` reads whole but in the rows
// written while disk 1 was away, which are EIO — never disk 1's old units, which do differ there.
// A write after the return (the descriptor open all along) is kept from disk 1 too. The daemon's
// scrub resyncs: disk 1 healthy, both files whole with disk 0 failing, the open descriptor writes
// on, a second scrub is clean, and offline the disks pass VerifyStripeParity.
TEST_F(DiskReturn, ADiskBackUnderTheMountIsTakenBackStaleAndTheDaemonsScrubResyncsIt) {
  const uint64_t row_bytes = 2 * kUnit;  // three disks, one parity unit per row
  const std::string written_data = RandomBytes(10 * row_bytes + 4321, 91);
  const std::string untouched_data = RandomBytes(6 * row_bytes + 17, 92);
  WriteFile(twin("written"), written_data);
  WriteFile(twin("untouched"), untouched_data);
  const StripeManifest written = StripeWithParity("written", written_data);
  StripeWithParity("untouched", untouched_data);
  auto map = StripeMap::Create(written.layout);
  ASSERT_TRUE(map.ok());
  ASSERT_EQ(map->data_units(), 2u);
  const std::string aside = tmp.path() + "/disk1-unplugged";
  std::filesystem::rename(disks[1], aside);

  DoMount({"cache_size=0"});
  EXPECT_EQ(Stats()["degraded"], nlohmann::json::array({1}));
  int fd = ::open((mnt + "/graph/written").c_str(), O_RDWR);
  int plain = ::open(twin("written").c_str(), O_RDWR);
  int other = ::open((mnt + "/graph/untouched").c_str(), O_RDONLY);
  CloseAll close_all{{&fd, &plain, &other}};
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_GE(plain, 0);
  ASSERT_GE(other, 0) << std::strerror(errno);
  ASSERT_TRUE(ReadDirect(mnt + "/graph/untouched") == untouched_data);
  // Rows 2 and 5 written while disk 1 is missing, each in its unit on disk 1.
  std::vector<uint64_t> missed;
  for (uint64_t row : {2u, 5u}) {
    std::optional<uint64_t> at = OffsetOnDisk(*map, row, 1);
    if (!at) at = OffsetOnDisk(*map, ++row, 1);
    ASSERT_TRUE(at.has_value()) << "no data unit of disk 1 in rows near " << row;
    ASSERT_EQ(WriteBoth(fd, plain, *at + 1000, RandomBytes(5000, 93 + row)), 0) << ReadFile(mount.log());
    missed.push_back(row);
  }
  ASSERT_EQ(::fsync(fd), 0) << std::strerror(errno);

  // An empty directory where disk 1 belongs: not its disk.
  std::filesystem::create_directory(disks[1]);
  EXPECT_TRUE(Within(15, [&] { return LogSays("holds no .graphfs-disk"); })) << ReadFile(mount.log());
  EXPECT_TRUE(LogSays("not taken back; disk 1 stays missing")) << ReadFile(mount.log());
  EXPECT_EQ(Stats()["degraded"], nlohmann::json::array({1}));
  // Another set's disk 1 there: not its disk either.
  std::filesystem::remove(disks[1]);
  std::vector<std::string> foreign;
  for (int i = 0; i < 3; ++i) foreign.push_back(tmp.Sub("foreign" + std::to_string(i)));
  auto claimed = DiskSet::Claim(foreign);
  ASSERT_TRUE(claimed.ok()) << claimed.error().message();
  std::filesystem::rename(foreign[1], disks[1]);
  EXPECT_TRUE(Within(15, [&] { return LogSays("of set " + claimed->set_id() + ", not disk 1 of 3 of set " + written.set_id); }))
      << ReadFile(mount.log());
  EXPECT_EQ(Stats()["degraded"], nlohmann::json::array({1}));
  EXPECT_EQ(Stats()["stale"], nlohmann::json::array());
  if (HasFailure()) return;

  // The disk itself back: taken back, stale.
  std::filesystem::remove_all(disks[1]);
  std::filesystem::rename(aside, disks[1]);
  ASSERT_TRUE(Within(15, [&] { return Stats()["stale"] == nlohmann::json::array({1}); }))
      << Stats()["stale"].dump() << "\n" << ReadFile(mount.log());
  EXPECT_EQ(Stats()["degraded"], nlohmann::json::array());
  EXPECT_EQ(Disks()["disks"][1]["state"], "stale") << Disks().dump();
  // The set says stale first, then the open files are handed the disk, then the log line.
  ASSERT_TRUE(Within(15, [&] { return LogSays("disk 1 (" + disks[1] + ") is back under the mount"); }))
      << ReadFile(mount.log());
  EXPECT_TRUE(LogSays("open files: 1 took it whole, 1 read the rows it missed through parity, 0 did not take it"))
      << ReadFile(mount.log());
  // Disk 1's units of the rows written while it was away still hold the old bytes.
  for (uint64_t row : missed) {
    const uint64_t at = *OffsetOnDisk(*map, row, 1) + 1000;
    const DiskLocation loc = map->Locate(at);
    ASSERT_EQ(loc.disk, 1u);
    EXPECT_EQ(ReadFile(PartPath(disks[1], written)).substr(loc.disk_offset, 5000), written_data.substr(at, 5000))
        << "row " << row << ": disk 1's unit changed while it was away: the test proves nothing";
  }
  EXPECT_TRUE(ReadDirect(mnt + "/graph/written") == ReadFile(twin("written")));
  EXPECT_TRUE(ReadDirect(mnt + "/graph/untouched") == untouched_data);

  // With disk 0 failing every read, only disk 1 can give what disk 0 cannot: its rows it did not miss.
  // A write after the return lands, kept from disk 1 as well (row 8).
  const uint64_t late_row = OffsetOnDisk(*map, 8, 1) ? 8 : 9;
  ASSERT_EQ(WriteBoth(fd, plain, *OffsetOnDisk(*map, late_row, 1) + 10, RandomBytes(3000, 99)), 0) << ReadFile(mount.log());
  ASSERT_EQ(::fsync(fd), 0) << std::strerror(errno);
  missed.push_back(late_row);
  const std::string want = ReadFile(twin("written"));
  WriteFile(mnt + "/.graphfs/fault", "0 5\n");
  EXPECT_TRUE(ReadDirect(mnt + "/graph/untouched") == untouched_data) << "disk 1 does not serve a file it missed nothing of";
  for (uint64_t row = 0; row * row_bytes < want.size(); ++row) {
    const RangeRead r = ReadRangeDirect(mnt + "/graph/written", row * row_bytes, row_bytes);
    const bool was_missed = std::find(missed.begin(), missed.end(), row) != missed.end();
    if (was_missed) {
      EXPECT_NE(r.error, 0) << "row " << row << ", written while disk 1 was away, was served with disk 0 failing: "
                            << (r.bytes == want.substr(row * row_bytes, row_bytes) ? "right bytes?" : "disk 1's old bytes");
    } else {
      EXPECT_EQ(r.error, 0) << "row " << row << ": " << std::strerror(r.error) << " (disk 1 does not serve it)";
      EXPECT_TRUE(r.bytes == want.substr(row * row_bytes, row_bytes)) << "row " << row;
    }
  }
  WriteFile(mnt + "/.graphfs/fault", "0 0\n");
  EXPECT_TRUE(ReadDirect(mnt + "/graph/written") == want);

  // The daemon's scrub resyncs disk 1, the files open across it included.
  ExpectScrubResyncs({"written"});
  for (uint32_t d = 0; d < 3; ++d)
    EXPECT_FALSE(std::filesystem::exists(disks[d] + "/parts/" + StaleRecordName(written.file_id, 1))) << "disk " << d;
  WriteFile(mnt + "/.graphfs/fault", "0 5\n");
  EXPECT_TRUE(ReadDirect(mnt + "/graph/written") == want) << "disk 1 does not serve the resynced rows";
  EXPECT_TRUE(ReadDirect(mnt + "/graph/untouched") == untouched_data);
  WriteFile(mnt + "/.graphfs/fault", "0 0\n");
  // The descriptor open across the return and the resync writes on, onto disk 1 too.
  ASSERT_EQ(WriteBoth(fd, plain, *OffsetOnDisk(*map, missed[0], 1) + 7, RandomBytes(4000, 100)), 0) << ReadFile(mount.log());
  ASSERT_EQ(::fsync(fd), 0) << std::strerror(errno);
  EXPECT_TRUE(ReadDirect(mnt + "/graph/written") == ReadFile(twin("written")));
  ExpectScrubFindsNothing("after the resync");
  for (int* f : close_all.fds)
    if (*f >= 0) ::close(std::exchange(*f, -1));
  mount.Unmount();
  ExpectVerifiedOffline({"written", "untouched"});
}

// A compressed file's first write with disk 1 missing makes its plain copy on disks 0 and 2 only;
// disk 1 then comes back under the mount with the copy open in the daemon all along: stale, and
// the copy — no part there — keeps reading through parity; the daemon's scrub makes the copy's
// part and sums on disk 1 and resyncs every row, the open copy takes the disk, and with disk 0
// failing every read the bytes come through disk 1's new units.
TEST_F(DiskReturn, TheDaemonsScrubGivesADiskBackUnderTheMountTheCopyMadeWhileItWasMissing) {
  const std::string data = CompressibleBytes(1100 * 1000 + 3, 101);
  const StripeManifest compressed = CompressWithParity("column", data);
  ASSERT_TRUE(compressed.packed.has_value()) << "column was not compressed";
  const std::string aside = tmp.path() + "/disk1-unplugged";
  std::filesystem::rename(disks[1], aside);

  DoMount({"cache_size=0"});
  int fd = ::open((mnt + "/graph/column").c_str(), O_RDWR);
  int plain = ::open(twin("column").c_str(), O_RDWR);
  CloseAll close_all{{&fd, &plain}};
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_GE(plain, 0);
  ASSERT_EQ(WriteBoth(fd, plain, 300001, RandomBytes(20000, 102)), 0) << ReadFile(mount.log());
  ASSERT_EQ(::fsync(fd), 0) << std::strerror(errno);
  const StripeManifest copy = ManifestOf("column");
  ASSERT_FALSE(copy.packed) << "the write did not make the file plain";
  ASSERT_NE(copy.file_id, compressed.file_id);

  std::filesystem::rename(aside, disks[1]);
  ASSERT_TRUE(Within(15, [&] { return Stats()["stale"] == nlohmann::json::array({1}); }))
      << Stats()["stale"].dump() << "\n" << ReadFile(mount.log());
  EXPECT_EQ(Stats()["degraded"], nlohmann::json::array());
  ASSERT_FALSE(std::filesystem::exists(PartPath(disks[1], copy))) << "disk 1 was missing: it cannot hold the copy";
  EXPECT_TRUE(Within(15, [&] { return LogSays("0 took it whole, 0 read the rows it missed through parity, 1 did not take it"); }))
      << ReadFile(mount.log());
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == ReadFile(twin("column")));

  ExpectScrubResyncs({"column"});
  ASSERT_TRUE(std::filesystem::exists(PartPath(disks[1], copy))) << "the scrub made no part on disk 1";
  EXPECT_TRUE(std::filesystem::exists(SumsPath(disks[1], copy)));
  for (uint32_t d = 0; d < 3; ++d)
    EXPECT_FALSE(std::filesystem::exists(disks[d] + "/parts/" + StaleRecordName(copy.file_id, 1))) << "disk " << d;
  // The copy open all along writes on, and disk 1's units serve.
  ASSERT_EQ(WriteBoth(fd, plain, 777777, RandomBytes(9000, 103)), 0) << ReadFile(mount.log());
  ASSERT_EQ(::fsync(fd), 0) << std::strerror(errno);
  const std::string want = ReadFile(twin("column"));
  WriteFile(mnt + "/.graphfs/fault", "0 5\n");
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == want) << "disk 1's units of the copy do not serve";
  WriteFile(mnt + "/.graphfs/fault", "0 0\n");
  ExpectScrubFindsNothing("after the resync");
  for (int* f : close_all.fds)
    if (*f >= 0) ::close(std::exchange(*f, -1));
  mount.Unmount();
  ExpectVerifiedOffline({"column"});
}

}  // namespace
}  // namespace graphfs::testing
