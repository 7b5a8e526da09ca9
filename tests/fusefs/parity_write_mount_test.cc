// Writes to files striped with parity through the mount (issue 44; docs/parity.md, "Writes: the
// row journal"): the operations pjdfstest tries on a file — write, truncate, O_APPEND, chmod,
// utimens, rename, unlink — do what they do on a plain file; fsx-style random writes and
// truncates read back as a plain copy does, then with a disk gone; and kill -9 of the daemon
// while a writer writes and fsyncs loses nothing fsync'ed, with every row's parity and sums
// right afterwards (graphfs-scrub --no-repair exits 0).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "striping/row_journal.h"
#include "striping/scrub.h"
#include "striping/unit_sums.h"
#include "tests/fusefs/striped_fixture.h"
#include "tests/fusefs/write_log.h"

namespace graphfs::testing {
namespace {

constexpr uint64_t kUnit = kTestUnit;

class ParityMountWrite : public StripedMount {
 protected:
  // graphfs-scrub --no-repair over the graph: its exit status, its output in `out`.
  int ScrubNoRepair(std::string* out) {
    const std::string log = tmp.path() + "/scrub.out";
    const std::string cmd = std::string(GRAPHFS_SCRUB_TOOL) + " --no-repair -q " + graph + " > " + log + " 2>&1";
    const int status = std::system(cmd.c_str());
    *out = ReadFile(log);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
};

// The outcome of one call: its return value and errno.
struct Outcome {
  long ret;
  int err;
  bool operator==(const Outcome& o) const { return ret == o.ret && err == o.err; }
};
std::ostream& operator<<(std::ostream& os, const Outcome& o) { return os << o.ret << " (errno " << o.err << ")"; }
template <typename F>
Outcome Call(F f) {
  errno = 0;
  const long r = static_cast<long>(f());
  return {r, r < 0 ? errno : 0};
}

TEST_F(ParityMountWrite, OperationsOnAParityFileBehaveAsOnAPlainFile) {
  const std::string data = RandomBytes(5 * kUnit + 777, 71);
  StripeWithParity("column", data);
  const StripeManifest row = StripeWithParity("row", RandomBytes(3 * kUnit, 72));
  const std::string plain_dir = tmp.Sub("plain");
  WriteFile(plain_dir + "/column", data);
  DoMount();
  const std::string striped = mnt + "/graph/column", plain = plain_dir + "/column";
  // Runs `op` on both files and expects the same outcome, the same bytes and the same size.
  auto same = [&](const char* what, const std::function<long(const std::string&)>& op) {
    SCOPED_TRACE(what);
    const Outcome a = Call([&] { return op(striped); });
    const Outcome b = Call([&] { return op(plain); });
    EXPECT_EQ(a, b);
    struct stat sa, sb;
    ASSERT_EQ(::stat(striped.c_str(), &sa), 0);
    ASSERT_EQ(::stat(plain.c_str(), &sb), 0);
    EXPECT_EQ(sa.st_size, sb.st_size);
    EXPECT_EQ(sa.st_mode, sb.st_mode);
    EXPECT_TRUE(ReadFile(striped) == ReadFile(plain)) << "contents differ";
  };
  auto pwrite_at = [](uint64_t off, uint64_t len, uint64_t seed) {
    return [=](const std::string& path) -> long {
      const std::string bytes = RandomBytes(len, seed);
      int fd = ::open(path.c_str(), O_WRONLY);
      if (fd < 0) return -1;
      const long n = ::pwrite(fd, bytes.data(), len, static_cast<off_t>(off));
      ::close(fd);
      return n;
    };
  };
  same("a small write inside", pwrite_at(100, 4096, 1));
  same("a write across units and rows", pwrite_at(kUnit - 10, 2 * kUnit + 20, 2));
  same("a write past the end", pwrite_at(6 * kUnit, 5000, 3));
  same("truncate down inside a row", [](const std::string& p) { return static_cast<long>(::truncate(p.c_str(), 3 * kUnit + 123)); });
  same("truncate up", [](const std::string& p) { return static_cast<long>(::truncate(p.c_str(), 7 * kUnit + 5)); });
  same("truncate to a row boundary", [](const std::string& p) { return static_cast<long>(::truncate(p.c_str(), 2 * kUnit)); });
  same("ftruncate with O_TRUNC open", [](const std::string& p) {
    int fd = ::open(p.c_str(), O_WRONLY | O_TRUNC);
    if (fd < 0) return -1L;
    const long n = ::write(fd, "hello", 5);
    ::close(fd);
    return n;
  });
  same("O_APPEND writes", [](const std::string& p) {
    int fd = ::open(p.c_str(), O_WRONLY | O_APPEND);
    if (fd < 0) return -1L;
    long total = 0;
    for (int i = 0; i < 20; ++i) {
      const std::string bytes = RandomBytes(7000 + i, 80 + i);
      total += ::write(fd, bytes.data(), bytes.size());
    }
    ::close(fd);
    return total;
  });
  same("chmod", [](const std::string& p) { return static_cast<long>(::chmod(p.c_str(), 0600)); });
  same("write to a file of mode 0600", pwrite_at(10, 100, 4));
  same("chmod back", [](const std::string& p) { return static_cast<long>(::chmod(p.c_str(), 0644)); });
  {
    const struct timespec times[2] = {{1000000, 5}, {2000000, 7}};
    same("utimens", [&](const std::string& p) { return static_cast<long>(::utimensat(AT_FDCWD, p.c_str(), times, 0)); });
    struct stat sa;
    ASSERT_EQ(::stat(striped.c_str(), &sa), 0);
    EXPECT_EQ(sa.st_mtim.tv_sec, 2000000);
    EXPECT_EQ(sa.st_atim.tv_sec, 1000000);
  }
  // Renamed and back: the bytes go with the name, and it is still written through parity.
  ASSERT_EQ(::rename(striped.c_str(), (mnt + "/graph/column2").c_str()), 0);
  ASSERT_EQ(::rename(plain.c_str(), (plain_dir + "/column2").c_str()), 0);
  EXPECT_TRUE(ReadFile(mnt + "/graph/column2") == ReadFile(plain_dir + "/column2"));
  ASSERT_EQ(::rename((mnt + "/graph/column2").c_str(), striped.c_str()), 0);
  ASSERT_EQ(::rename((plain_dir + "/column2").c_str(), plain.c_str()), 0);
  same("a write after the renames", pwrite_at(kUnit, 3 * kUnit, 5));
  auto m = ReadManifest(graph + "/column");
  ASSERT_TRUE(m.ok() && m->has_value());
  EXPECT_EQ((*m)->layout.parity, 1u) << "still a file with parity";

  // A written parity file unlinked: its part, sums and journal leave every disk (when the kernel
  // forgets it: at the latest, the unmount).
  {
    int fd = ::open((mnt + "/graph/row").c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, "abc", 3, 5), 3);
    ASSERT_EQ(::fsync(fd), 0);
    ::close(fd);
  }
  for (const std::string& d : disks)
    ASSERT_TRUE(std::filesystem::exists(d + "/parts/" + RowJournal::FileName(row.file_id))) << d;
  ASSERT_EQ(::unlink((mnt + "/graph/row").c_str()), 0);
  EXPECT_FALSE(std::filesystem::exists(mnt + "/graph/row"));
  mount.Unmount();  // the kernel forgets the inode: its parts go
  for (const std::string& d : disks) {
    EXPECT_FALSE(std::filesystem::exists(d + "/parts/" + row.file_id)) << d;
    EXPECT_FALSE(std::filesystem::exists(d + "/parts/" + UnitSums::FileName(row.file_id))) << d;
    EXPECT_FALSE(std::filesystem::exists(d + "/parts/" + RowJournal::FileName(row.file_id))) << d;
  }
  std::string out;
  EXPECT_EQ(ScrubNoRepair(&out), 0) << out;
}

TEST_F(ParityMountWrite, RandomWritesAndTruncatesReadAsAPlainFileThenWithADiskGone) {
  std::string model = RandomBytes(6 * kUnit + 99, 91);
  StripeWithParity("column", model);
  DoMount();
  const std::string path = mnt + "/graph/column";
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  std::mt19937 rng(92);
  const int ops = 1500;
  for (int i = 0; i < ops; ++i) {
    const uint32_t kind = rng() % 10;
    if (kind < 7) {
      const uint64_t len = kind < 4 ? 1 + rng() % 5000 : 1 + rng() % (3 * kUnit);
      const uint64_t off = rng() % (model.size() + kUnit);
      const std::string bytes = RandomBytes(len, rng());
      ASSERT_EQ(::pwrite(fd, bytes.data(), len, static_cast<off_t>(off)), static_cast<ssize_t>(len)) << "op " << i;
      if (model.size() < off + len) model.resize(off + len, '\0');
      model.replace(off, len, bytes);
    } else if (kind < 9) {
      const uint64_t to = rng() % (model.size() + 2 * kUnit);
      ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(to)), 0) << "op " << i;
      model.resize(to, '\0');
    } else {
      ASSERT_EQ(::fsync(fd), 0) << "op " << i;
    }
    if (i % 100 == 99 || i == ops - 1) {
      std::string got(model.size() + 10, '\0');
      const ssize_t n = ::pread(fd, got.data(), got.size(), 0);
      ASSERT_EQ(n, static_cast<ssize_t>(model.size())) << "after op " << i;
      got.resize(static_cast<size_t>(n));
      ASSERT_TRUE(got == model) << "after op " << i;
    }
  }
  ASSERT_EQ(::fsync(fd), 0);
  ::close(fd);
  mount.Unmount();
  std::string out;
  EXPECT_EQ(ScrubNoRepair(&out), 0) << out;
  // A disk gone: the mount starts degraded and reads the same bytes through parity.
  std::filesystem::rename(disks[1], disks[1] + ".away");
  DoMount();
  EXPECT_TRUE(ReadFile(path) == model);
  EXPECT_EQ(Stats()["degraded"], nlohmann::json::array({1}));
  mount.Unmount();
}

class ParityMountCrash : public ParityMountWrite {};

TEST_F(ParityMountCrash, FsyncedWritesSurviveKillNineAndScrubFindsNothingWrong) {
  StripeWithParity("column", RandomBytes(1 << 20, 101));
  std::mt19937 rng(102);
  int acked = 0;
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    DoMount({"readahead=0"});
    std::atomic<bool> stop{false};
    WriteLog log;
    std::thread writer([&] { WriteUntilFailure(mnt + "/graph/column", 110 + round, stop, &log); });
    std::this_thread::sleep_for(std::chrono::milliseconds(200 + rng() % 600));
    mount.Kill();
    stop = true;
    writer.join();
    acked += log.acked;
    // Mounting again replays the journal before the file's first read.
    DoMount({"readahead=0"});
    ExpectSurvived("parity column", ReadFile(mnt + "/graph/column"), log);
    mount.Unmount();
    std::string out;
    EXPECT_EQ(ScrubNoRepair(&out), 0) << out;
  }
  EXPECT_GT(acked, 0) << "no fsync finished before a kill: the test proves nothing";
}

// A write past the end that the daemon journaled but never fsynced (killed first) leaves the
// manifest at the old size; the next mount's first open replays it. A stat before that open
// gave the kernel the manifest's size: the open drops it, so the read after it sees the write —
// not the old size, with the bytes appearing at a later stat (as CI once saw).
TEST_F(ParityMountCrash, AWriteReplayedAtTheFirstOpenIsSeenByTheReadAfterIt) {
  const std::string data = RandomBytes(5 * kUnit + 100, 103);
  StripeWithParity("column", data);
  const std::string path = mnt + "/graph/column";
  DoMount({"timeout=60"});
  const std::string tail = RandomBytes(3 * kUnit + 7, 104);
  {
    const int fd = ::open(path.c_str(), O_RDWR);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    const bool wrote = ::pwrite(fd, tail.data(), tail.size(), static_cast<off_t>(data.size())) ==
                       static_cast<ssize_t>(tail.size());
    mount.Kill();
    ::close(fd);
    ASSERT_TRUE(wrote);
  }
  DoMount({"timeout=60"});
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  ASSERT_EQ(static_cast<uint64_t>(st.st_size), data.size()) << "the manifest already had the write: the test proves nothing";
  EXPECT_TRUE(ReadFile(path) == data + tail) << "the read stopped at the size the kernel had before the open";
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), data.size() + tail.size());
}

}  // namespace
}  // namespace graphfs::testing
