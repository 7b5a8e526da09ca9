// FUSE passthrough of ordinary files (-o passthrough=auto|off): proof that the kernel
// serves their reads, writes and mapped pages without the daemon (its request counters do
// not move), that the bytes are the plain directory's, that striped files and the control
// directory never use it, what happens to a file striped or unstriped while it is open, and
// the clean fallback when the daemon may not open backing files.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "common/unique_fd.h"
#include "striping/manifest.h"
#include "striping/restripe.h"
#include "tests/testutil/mount_harness.h"
#include "tests/fusefs/striped_fixture.h"

namespace graphfs::testing {
namespace {

using json = nlohmann::json;

json StatsOf(const std::string& mnt) { return json::parse(ReadFile(mnt + "/.graphfs/stats")); }

// Skips the running test on a kernel without FUSE passthrough (graphfs falls back there;
// WithPassthroughOff... and the suite's second run cover that path).
#define SKIP_WITHOUT_KERNEL_PASSTHROUGH(stats)                                                       \
  if ((stats)["passthrough"].value("off_because", "").find("kernel does not offer") != std::string::npos) \
  GTEST_SKIP() << (stats)["passthrough"]["off_because"].get<std::string>()

uint64_t KernelRequests(const json& stats, const char* opcode) {
  const json& k = stats.at("kernel_requests");
  return k.contains(opcode) ? k.at(opcode).get<uint64_t>() : 0;
}

// What the daemon saw of ordinary files' data: requests that carry it.
struct DataRequests {
  uint64_t plain_reads, plain_writes, write, fsync, getxattr, setattr;
  static DataRequests Of(const json& s) {
    return {s["requests"]["plain_reads"].get<uint64_t>(), s["requests"]["plain_writes"].get<uint64_t>(),
            KernelRequests(s, "WRITE"),   KernelRequests(s, "FSYNC"),
            KernelRequests(s, "GETXATTR"), KernelRequests(s, "SETATTR")};
  }
  bool operator==(const DataRequests&) const = default;
};

std::ostream& operator<<(std::ostream& os, const DataRequests& d) {
  return os << "{plain_reads=" << d.plain_reads << " plain_writes=" << d.plain_writes << " WRITE=" << d.write
            << " FSYNC=" << d.fsync << " GETXATTR=" << d.getxattr << " SETATTR=" << d.setattr << "}";
}

// Waits until the kernel's RELEASEs reach the daemon (they are sent after close returns).
bool WaitForOpenFiles(const std::string& mnt, uint64_t want) {
  for (int i = 0; i < 200; ++i) {
    if (StatsOf(mnt)["passthrough"]["open_files"].get<uint64_t>() == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Reads, writes (pwrite, buffered and O_DIRECT), maps and msyncs two ordinary files, one
// that existed (OPEN) and one made through the mount (CREATE), between two snapshots of
// the daemon's counters taken while both are open. Returns {before, after}.
std::pair<DataRequests, DataRequests> ExerciseOrdinaryFiles(const std::string& src, const std::string& mnt,
                                                            std::string* expected_old, std::string* expected_new) {
  *expected_old = RandomBytes(1 << 20, 7);
  WriteFile(src + "/old", *expected_old);
  int a = ::open((mnt + "/old").c_str(), O_RDWR);
  int b = ::open((mnt + "/new").c_str(), O_RDWR | O_CREAT | O_EXCL, 0644);
  int d = ::open((mnt + "/old").c_str(), O_RDONLY | O_DIRECT);
  EXPECT_GE(a, 0);
  EXPECT_GE(b, 0);
  EXPECT_GE(d, 0);
  // The first write to an inode asks once whether it has security.capability.
  EXPECT_EQ(::pwrite(b, "x", 1, 0), 1);
  EXPECT_EQ(::pwrite(a, expected_old->data(), 1, 0), 1);
  expected_new->assign("x");
  const DataRequests before = DataRequests::Of(StatsOf(mnt));

  std::string got(expected_old->size(), '\0');
  EXPECT_EQ(::pread(a, got.data(), got.size(), 0), static_cast<ssize_t>(got.size()));
  EXPECT_TRUE(got == *expected_old) << "buffered read";
  void* aligned = nullptr;
  EXPECT_EQ(::posix_memalign(&aligned, 4096, 1 << 16), 0);
  EXPECT_EQ(::pread(d, aligned, 1 << 16, 1 << 16), 1 << 16);
  EXPECT_EQ(std::memcmp(aligned, expected_old->data() + (1 << 16), 1 << 16), 0) << "O_DIRECT read";
  std::free(aligned);
  for (int i = 0; i < 64; ++i) {
    const std::string block = RandomBytes(4096, 100 + i);
    EXPECT_EQ(::pwrite(a, block.data(), block.size(), i * 8192), 4096);
    expected_old->replace(i * 8192, 4096, block);
    EXPECT_EQ(::pwrite(b, block.data(), block.size(), 1 + i * 4096), 4096);
    expected_new->append(block);
  }
  void* map = ::mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, a, 0);
  EXPECT_NE(map, MAP_FAILED);
  if (map != MAP_FAILED) {
    std::memcpy(static_cast<char*>(map) + 12345, "mapped", 6);
    expected_old->replace(12345, 6, "mapped");
    EXPECT_EQ(::msync(map, 1 << 20, MS_SYNC), 0);
    ::munmap(map, 1 << 20);
  }
  const DataRequests after = DataRequests::Of(StatsOf(mnt));
  ::close(a);
  ::close(b);
  ::close(d);
  return {before, after};
}

class PassthroughFs : public ::testing::Test {
 protected:
  void SetUp() override {
    src = tmp.Sub("src");
    mnt = tmp.Sub("mnt");
  }
  TempDir tmp;
  std::string src, mnt;
  GraphfsMount mount;
};

TEST_F(PassthroughFs, OrdinaryFilesNeverReachTheDaemonAndKeepTheirBytes) {
  ASSERT_TRUE(mount.Mount(src, mnt, {"passthrough=auto"})) << mount.error();
  const json at_start = StatsOf(mnt);
  SKIP_WITHOUT_KERNEL_PASSTHROUGH(at_start);
  ASSERT_EQ(at_start["passthrough"]["active"], true) << at_start["passthrough"].dump();
  std::string old_bytes, new_bytes;
  auto [before, after] = ExerciseOrdinaryFiles(src, mnt, &old_bytes, &new_bytes);
  EXPECT_EQ(before, after) << "reads, writes, mmap and msync of passthrough files reached the daemon";
  EXPECT_EQ(ReadFile(src + "/old"), old_bytes);
  EXPECT_EQ(ReadFile(src + "/new"), new_bytes);
  EXPECT_EQ(ReadFile(mnt + "/old"), old_bytes);
  // Two inodes, three opens: one backing id each, all given back after the last release.
  const json s = StatsOf(mnt);
  EXPECT_EQ(s["passthrough"]["opened"].get<uint64_t>(), 3u + 1u);  // + the ReadFile above
  EXPECT_EQ(s["passthrough"]["daemon_opens"].get<uint64_t>(), 0u);
  EXPECT_TRUE(WaitForOpenFiles(mnt, 0));
  EXPECT_EQ(StatsOf(mnt)["passthrough"]["backing_ids"].get<uint64_t>(), 0u);
}

// The same operations with passthrough=off all pass the daemon: the counters above can move.
TEST_F(PassthroughFs, WithPassthroughOffTheDaemonServesEveryRequest) {
  ASSERT_TRUE(mount.Mount(src, mnt, {"passthrough=off"})) << mount.error();
  std::string old_bytes, new_bytes;
  auto [before, after] = ExerciseOrdinaryFiles(src, mnt, &old_bytes, &new_bytes);
  EXPECT_GT(after.plain_reads, before.plain_reads);
  EXPECT_GE(after.plain_writes - before.plain_writes, 128u);
  EXPECT_GE(after.write - before.write, 128u);
  EXPECT_GT(after.fsync, before.fsync) << "msync of a mapped file";
  EXPECT_EQ(ReadFile(src + "/old"), old_bytes);
  EXPECT_EQ(ReadFile(src + "/new"), new_bytes);
  const json s = StatsOf(mnt);
  EXPECT_EQ(s["passthrough"]["active"], false);
  EXPECT_EQ(s["passthrough"]["off_because"], "passthrough=off");
  EXPECT_EQ(s["passthrough"]["opened"].get<uint64_t>(), 0u);
}

// HANDLE_KILLPRIV_V2: writes no longer make the kernel ask for security.capability each
// time (it did once per write before: the failed GETXATTRs of issue 4's runs).
TEST_F(PassthroughFs, WritesThroughTheDaemonAskForCapabilitiesOncePerFile) {
  ASSERT_TRUE(mount.Mount(src, mnt, {"passthrough=off"})) << mount.error();
  const uint64_t before = KernelRequests(StatsOf(mnt), "GETXATTR");
  int fd = ::open((mnt + "/f").c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(::pwrite(fd, "abcd", 4, i * 4), 4);
  ::close(fd);
  const json s = StatsOf(mnt);
  EXPECT_LE(KernelRequests(s, "GETXATTR") - before, 1u);
  EXPECT_GE(KernelRequests(s, "WRITE"), 100u);
  EXPECT_EQ(s["requests"]["errors"].get<uint64_t>(), 0u);
}

// Opens of one inode are all passthrough or all not: a setuid file stays on the daemon's
// path (the daemon clears the bit on other users' writes), and so do later opens of it.
TEST_F(PassthroughFs, SetuidFilesAreServedByTheDaemon) {
  WriteFile(src + "/suid", "abc");
  ASSERT_EQ(::chmod((src + "/suid").c_str(), 04755), 0);
  ASSERT_TRUE(mount.Mount(src, mnt, {"passthrough=auto"})) << mount.error();
  SKIP_WITHOUT_KERNEL_PASSTHROUGH(StatsOf(mnt));
  EXPECT_EQ(ReadFile(mnt + "/suid"), "abc");
  const json s = StatsOf(mnt);
  EXPECT_EQ(s["passthrough"]["fallbacks"]["setid"].get<uint64_t>(), 1u);
  EXPECT_EQ(s["passthrough"]["opened"].get<uint64_t>(), 0u);
  EXPECT_GT(s["requests"]["plain_reads"].get<uint64_t>(), 0u);
}

class PassthroughStriped : public StripedMount {};

TEST_F(PassthroughStriped, StripedAndControlFilesNeverUseIt) {
  const std::string data = RandomBytes(1 << 20, 21);
  Stripe("column", data);
  DoMount({"passthrough=auto"});
  SKIP_WITHOUT_KERNEL_PASSTHROUGH(Stats());
  EXPECT_EQ(ReadFile(mnt + "/graph/column"), data);
  const json s = Stats();
  EXPECT_EQ(s["passthrough"]["active"], true);
  EXPECT_EQ(s["passthrough"]["opened"].get<uint64_t>(), 0u) << "a striped or control file opened in passthrough";
  EXPECT_GT(s["requests"]["striped_reads"].get<uint64_t>(), 0u);
}

// Striping and unstriping replace the file by a rename. A descriptor opened before keeps
// the file it opened, as on any filesystem: the same bytes (striping does not change them),
// in passthrough or not as it was opened; opens after the rename get the new file.
TEST_F(PassthroughStriped, AFileStripedOrUnstripedWhileOpenKeepsItsBytes) {
  const std::string data = RandomBytes(600000, 22);
  Stripe("registers-the-disks", "x");
  WriteFile(graph + "/edges", data);
  DoMount({"passthrough=auto", "timeout=0"});
  SKIP_WITHOUT_KERNEL_PASSTHROUGH(Stats());
  UniqueFd plain_fd(::open((mnt + "/graph/edges").c_str(), O_RDONLY));
  ASSERT_TRUE(plain_fd.valid());
  EXPECT_EQ(Stats()["passthrough"]["open_files"].get<uint64_t>(), 1u);

  ASSERT_TRUE(StripeFiles(TestStripeRequest(graph + "/edges", disks)).ok());
  ASSERT_TRUE(ReadManifest(graph + "/edges")->has_value());

  std::string got(data.size(), '\0');
  EXPECT_EQ(::pread(plain_fd.get(), got.data(), got.size(), 0), static_cast<ssize_t>(data.size()));
  EXPECT_TRUE(got == data) << "the descriptor opened before striping";
  const uint64_t striped_before = Stats()["requests"]["striped_reads"].get<uint64_t>();
  UniqueFd striped_fd(::open((mnt + "/graph/edges").c_str(), O_RDONLY));
  ASSERT_TRUE(striped_fd.valid());
  std::fill(got.begin(), got.end(), '\0');
  EXPECT_EQ(::pread(striped_fd.get(), got.data(), got.size(), 0), static_cast<ssize_t>(data.size()));
  EXPECT_TRUE(got == data) << "a descriptor opened after striping";
  EXPECT_GT(Stats()["requests"]["striped_reads"].get<uint64_t>(), striped_before) << "not read as striped";
  EXPECT_EQ(Stats()["passthrough"]["open_files"].get<uint64_t>(), 1u) << "the striped open is not passthrough";
  plain_fd.reset();
  EXPECT_TRUE(WaitForOpenFiles(mnt, 0));

  UnstripeRequest u;
  u.path = graph + "/edges";
  u.progress = false;
  ASSERT_TRUE(UnstripeFiles(u).ok());
  std::fill(got.begin(), got.end(), '\0');
  EXPECT_EQ(::pread(striped_fd.get(), got.data(), got.size(), 0), static_cast<ssize_t>(data.size()));
  EXPECT_TRUE(got == data) << "the striped descriptor after unstriping";
  striped_fd.reset();
  EXPECT_EQ(ReadFile(mnt + "/graph/edges"), data);
  EXPECT_EQ(Stats()["passthrough"]["opened"].get<uint64_t>(), 2u) << "the unstriped file is passthrough again";
}

// /dev/fuse with Debian's mode (0666) while a test runs, so that other users can mount
// through fusermount3; containers often make it 0600.
class DevFuseForEveryone {
 public:
  DevFuseForEveryone() {
    struct stat st;
    if (::stat("/dev/fuse", &st) == 0 && (st.st_mode & 0777) != 0666) {
      old_mode_ = st.st_mode & 0777;
      ::chmod("/dev/fuse", 0666);
    }
  }
  ~DevFuseForEveryone() {
    if (old_mode_ != 0) ::chmod("/dev/fuse", old_mode_);
  }

 private:
  mode_t old_mode_ = 0;
};

// A daemon without CAP_SYS_ADMIN (here: run as nobody, mounted through fusermount3) may not
// open backing files: it says so once in its log and serves ordinary files itself.
TEST_F(PassthroughFs, WithoutCapSysAdminItFallsBackWithALogLine) {
  constexpr uid_t kNobody = 65534;
  DevFuseForEveryone dev_fuse;
  struct stat dev;
  if (::stat("/dev/fuse", &dev) != 0 || (dev.st_mode & 0006) != 0006)
    GTEST_SKIP() << "/dev/fuse cannot be opened by other users here, so nobody cannot mount";
  ASSERT_EQ(::chmod(tmp.path().c_str(), 0755), 0);
  ASSERT_EQ(::chown(src.c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(::chown(mnt.c_str(), kNobody, kNobody), 0);
  WriteFile(src + "/f", "hello");
  ASSERT_EQ(::chown((src + "/f").c_str(), kNobody, kNobody), 0);
  WriteFile(mnt + ".log", "");
  ASSERT_EQ(::chown((mnt + ".log").c_str(), kNobody, kNobody), 0);
  mount.SetWrapper({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"});
  ASSERT_TRUE(mount.Mount(src, mnt, {"passthrough=auto"})) << mount.error();
  // Only the mounting user may use a mount without allow_other: read as nobody.
  auto r = RunCommand({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "sh", "-c",
                       "cat " + mnt + "/f && cat " + mnt + "/.graphfs/stats"});
  ASSERT_EQ(r.status, 0) << r.output;
  ASSERT_EQ(r.output.substr(0, 5), "hello");
  const json s = json::parse(r.output.substr(5));
  EXPECT_EQ(s["passthrough"]["active"], false);
  EXPECT_NE(s["passthrough"]["off_because"].get<std::string>().find("CAP_SYS_ADMIN"), std::string::npos);
  EXPECT_GT(s["requests"]["plain_reads"].get<uint64_t>(), 0u);
  mount.Unmount();
  const std::string log = ReadFile(mnt + ".log");
  EXPECT_NE(log.find("passthrough: off, the daemon lacks CAP_SYS_ADMIN"), std::string::npos) << log;
}

}  // namespace
}  // namespace graphfs::testing
