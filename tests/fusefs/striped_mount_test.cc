// Striped files through a real mount: bytes, sizes, durability, cleanup, disk checks.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "common/unique_fd.h"
#include "striping/disk_set.h"
#include "striping/manifest.h"
#include "striping/restripe.h"
#include "striping/striped_file.h"
#include <gtest/gtest.h>

#include "tests/testutil/mount_harness.h"
#include "tests/fusefs/striped_fixture.h"

namespace graphfs::testing {
namespace {

TEST_F(StripedMount, SameNamesSizesAndBytesAsBeforeStriping) {
  const std::string data = RandomBytes(1000000 + 123, 1);
  Stripe("column", data);
  WriteFile(graph + "/meta", "0 100 1000 4");
  DoMount();
  struct stat st;
  ASSERT_EQ(::stat((mnt + "/graph/column").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(data.size()));
  EXPECT_EQ(ReadFile(mnt + "/graph/column"), data);
  EXPECT_EQ(ReadFile(mnt + "/graph/meta"), "0 100 1000 4");
  // Every disk served its share.
  auto s = Stats();
  ASSERT_EQ(s["disks"].size(), 3u);
  uint64_t total = 0;
  for (auto& d : s["disks"]) {
    EXPECT_GT(d["bytes_read"].get<uint64_t>(), 0u);
    total += d["bytes_read"].get<uint64_t>();
  }
  EXPECT_GE(total, data.size());
  // GridGraph-style reads: rounded up past EOF, O_DIRECT; short, never an error.
  int fd = ::open((mnt + "/graph/column").c_str(), O_RDONLY | O_DIRECT);
  ASSERT_GE(fd, 0);
  AlignedBuffer buf(1 << 20);
  const off_t last = static_cast<off_t>(data.size() / 4096 * 4096);
  ASSERT_EQ(::pread(fd, buf.data(), 1 << 20, last), static_cast<ssize_t>(data.size() - last));
  EXPECT_EQ(std::string(buf.data(), data.size() - last), data.substr(last));
  EXPECT_EQ(::pread(fd, buf.data(), 4096, static_cast<off_t>(data.size()) + 4096), 0);
  ::close(fd);
}

// Random reads, writes, truncates and mmap writes through the mount, checked against a
// model, on a striped file and on a plain one.
void RandomOps(const std::string& path, std::string model, uint32_t seed, int ops) {
  std::mt19937_64 rng(seed);
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << path << ": " << strerror(errno);
  const uint64_t max_size = 3 << 20;
  for (int i = 0; i < ops; ++i) {
    const int kind = static_cast<int>(rng() % 10);
    const uint64_t off = rng() % max_size;
    const uint64_t len = 1 + rng() % (300 << 10);
    if (kind < 4) {
      std::string b = RandomBytes(len, static_cast<uint32_t>(rng()));
      ASSERT_EQ(::pwrite(fd, b.data(), len, static_cast<off_t>(off)), static_cast<ssize_t>(len));
      if (model.size() < off + len) model.resize(off + len, '\0');
      model.replace(off, len, b);
    } else if (kind < 7) {
      std::string b(len, 'Z');
      ssize_t n = ::pread(fd, b.data(), len, static_cast<off_t>(off));
      const uint64_t want = off >= model.size() ? 0 : std::min<uint64_t>(len, model.size() - off);
      ASSERT_EQ(n, static_cast<ssize_t>(want)) << "op " << i;
      ASSERT_EQ(b.substr(0, want), model.substr(std::min<uint64_t>(off, model.size()), want)) << "op " << i;
    } else if (kind == 7) {
      const uint64_t ns = rng() % max_size;
      ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(ns)), 0);
      model.resize(ns, '\0');
    } else if (kind == 8 && !model.empty()) {
      // A shared writable mapping, written and synced.
      void* p = ::mmap(nullptr, model.size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      ASSERT_NE(p, MAP_FAILED) << strerror(errno);
      const uint64_t at = rng() % model.size();
      const uint64_t n = std::min<uint64_t>(len, model.size() - at);
      std::string b = RandomBytes(n, static_cast<uint32_t>(rng()));
      std::memcpy(static_cast<char*>(p) + at, b.data(), n);
      ASSERT_EQ(::msync(p, model.size(), MS_SYNC), 0);
      ::munmap(p, model.size());
      model.replace(at, n, b);
    } else {
      struct stat st;
      ASSERT_EQ(::fstat(fd, &st), 0);
      ASSERT_EQ(static_cast<uint64_t>(st.st_size), model.size()) << "op " << i;
    }
  }
  ASSERT_EQ(::fsync(fd), 0);
  ::close(fd);
  const std::string got = ReadFile(path);
  if (got == model) return;
  // Which layer holds the wrong bytes: the kernel's page cache of the mount, or what the
  // daemon serves (O_DIRECT reads bypass the former).
  size_t first = 0;
  while (first < std::min(got.size(), model.size()) && got[first] == model[first]) ++first;
  std::string direct(model.size() + 4096, '\0');
  void* buf = nullptr;
  ASSERT_EQ(::posix_memalign(&buf, 4096, direct.size()), 0);
  int dfd = ::open(path.c_str(), O_RDONLY | O_DIRECT);
  ssize_t n = 0, r;
  while (dfd >= 0 && (r = ::pread(dfd, static_cast<char*>(buf) + n, direct.size() - n, n)) > 0) n += r;
  if (dfd >= 0) ::close(dfd);
  direct.assign(static_cast<char*>(buf), static_cast<size_t>(std::max<ssize_t>(n, 0)));
  std::free(buf);
  ADD_FAILURE() << "final content of " << path << ": " << got.size() << " bytes read, " << model.size()
                << " expected, first difference at byte " << first << "; an O_DIRECT read of the mount "
                << (direct == model ? "matches the model (the kernel's page cache was stale)"
                                    : "differs too (the daemon serves wrong bytes)");
}

TEST_F(StripedMount, RandomOperationsOnStripedAndPlainFiles) {
  const std::string data = RandomBytes(2 << 20, 2);
  Stripe("column", data, 64 << 10);
  WriteFile(graph + "/plain", data);
  DoMount();
  RandomOps(mnt + "/graph/column", data, 11, 2500);
  RandomOps(mnt + "/graph/plain", data, 12, 2500);
}

// A compressed file (graphfs-stripe --compress) under the same random operations: its first
// write turns it into a plain striped file (new parts, the manifest switched, the compressed
// parts gone), and everything after behaves as on any striped file, across a remount.
TEST_F(StripedMount, RandomOperationsOnACompressedFile) {
  std::string data(2 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>("graphfs"[i % 7] + (i / 65536) % 3);
  ASSERT_NO_FATAL_FAILURE(Compress("column", data, "zstd:1", 100000, 1));
  const StripeManifest packed = **ReadManifest(graph + "/column");
  ASSERT_TRUE(packed.packed.has_value());
  DoMount();
  RandomOps(mnt + "/graph/column", data, 13, 1500);
  const std::string model = ReadFile(mnt + "/graph/column");
  mount.Unmount();
  const StripeManifest now = **ReadManifest(graph + "/column");
  EXPECT_FALSE(now.packed.has_value()) << "the first write makes it plain";
  EXPECT_EQ(now.size, model.size());
  for (const auto& d : disks) EXPECT_FALSE(std::filesystem::exists(d + "/parts/" + packed.file_id)) << d;
  DoMount();
  EXPECT_TRUE(ReadFile(mnt + "/graph/column") == model) << "after a remount";
  mount.Unmount();
  // Made plain while open, then unlinked while open: its current parts go when it is closed.
  const StripeManifest again = **ReadManifest(graph + "/column");
  ASSERT_NO_FATAL_FAILURE(Compress("packed", data, "zstd:1", 100000, 1));
  const StripeManifest second = **ReadManifest(graph + "/packed");
  DoMount();
  {
    UniqueFd fd(::open((mnt + "/graph/packed").c_str(), O_RDWR));
    ASSERT_TRUE(fd.valid());
    ASSERT_EQ(::pwrite(fd.get(), "x", 1, 5), 1);
    ASSERT_EQ(::unlink((mnt + "/graph/packed").c_str()), 0);
  }
  mount.Unmount();
  for (const auto& d : disks) {
    for (const auto& e : std::filesystem::directory_iterator(d + "/parts")) {
      EXPECT_EQ(e.path().filename().string(), again.file_id) << "only column's parts remain; " << second.file_id
                                                             << " was the unlinked compressed file";
    }
  }
}

TEST_F(StripedMount, WritesSizeAndLayoutSurviveRemountAndUnstripe) {
  std::string data = RandomBytes(500000, 3);
  Stripe("row", data);
  DoMount();
  const std::string more = RandomBytes(300000, 4);
  {
    int fd = ::open((mnt + "/graph/row").c_str(), O_WRONLY | O_APPEND);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, more.data(), more.size()), static_cast<ssize_t>(more.size()));
    ASSERT_EQ(::fsync(fd), 0);
    ::close(fd);
  }
  data += more;
  mount.Unmount();
  auto m = ReadManifest(graph + "/row");
  ASSERT_TRUE(m.ok() && m->has_value());
  EXPECT_EQ((*m)->size, data.size());
  EXPECT_FALSE((*m)->checksum.has_value()) << "a modified file must not keep its old checksum";
  DoMount();
  EXPECT_EQ(ReadFile(mnt + "/graph/row"), data);
  mount.Unmount();
  UnstripeRequest u;
  u.path = graph;
  u.progress = false;
  auto r = UnstripeFiles(u);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(ReadFile(graph + "/row"), data);
  EXPECT_FALSE((*ReadManifest(graph + "/row")).has_value());
  for (const auto& d : disks) EXPECT_TRUE(std::filesystem::is_empty(d + "/parts")) << d;
}

TEST_F(StripedMount, UnlinkAndRenameOverRemoveParts) {
  Stripe("a", RandomBytes(200000, 5));
  Stripe("b", RandomBytes(200000, 6));
  auto count_parts = [&] {
    size_t n = 0;
    for (const auto& d : disks)
      for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(d + "/parts")) ++n;
    return n;
  };
  EXPECT_EQ(count_parts(), 6u);
  DoMount();
  // Open, unlink, still readable; parts go once it is closed.
  int fd = ::open((mnt + "/graph/a").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::unlink((mnt + "/graph/a").c_str()), 0);
  char buf[100];
  EXPECT_EQ(::pread(fd, buf, sizeof buf, 1000), 100);
  ::close(fd);
  WriteFile(mnt + "/graph/c", "plain");
  ASSERT_EQ(::rename((mnt + "/graph/c").c_str(), (mnt + "/graph/b").c_str()), 0);
  EXPECT_EQ(ReadFile(mnt + "/graph/b"), "plain");
  mount.Unmount();  // the kernel forgets every inode
  EXPECT_EQ(count_parts(), 0u);
}

TEST_F(StripedMount, SharedQueueModeServesTheSameBytes) {
  const std::string data = RandomBytes(3 << 20, 7);
  Stripe("column", data);
  DoMount({"io=shared", "io_workers=2", "readahead=0"});
  EXPECT_EQ(ReadFile(mnt + "/graph/column"), data);
  EXPECT_EQ(Stats()["io_mode"], "shared");
}

TEST_F(StripedMount, MissingSwappedOrForeignDiskRefusesToMount) {
  Stripe("column", RandomBytes(100000, 8));
  // Missing: the disk directory is gone.
  std::filesystem::rename(disks[1], disks[1] + ".away");
  GraphfsMount m1;
  EXPECT_FALSE(m1.Mount(src, mnt));
  EXPECT_NE(m1.error().find("disk 1"), std::string::npos) << m1.error();
  EXPECT_NE(m1.error().find(disks[1]), std::string::npos) << m1.error();
  std::filesystem::rename(disks[1] + ".away", disks[1]);
  // Swapped: the fstab line names disks in the wrong order.
  GraphfsMount m2;
  EXPECT_FALSE(m2.Mount(src, mnt, {"disks=" + disks[1] + ":" + disks[0] + ":" + disks[2]}));
  EXPECT_NE(m2.error().find("swapped"), std::string::npos) << m2.error();
  // Foreign: a disk of another set.
  std::string other = tmp.Sub("other");
  ASSERT_TRUE(DiskSet::Claim({other}).ok());
  GraphfsMount m3;
  EXPECT_FALSE(m3.Mount(src, mnt, {"disks=" + disks[0] + ":" + other + ":" + disks[2]}));
  EXPECT_NE(m3.error().find("foreign"), std::string::npos) << m3.error();
  EXPECT_FALSE(IsMountPoint(mnt));
  // Exit status is non-zero for each.
  auto r = RunCommand({GraphfsBinary(), src, mnt, "-o", "disks=" + disks[2] + ":" + disks[1] + ":" + disks[0]});
  EXPECT_NE(r.status, 0);
  EXPECT_FALSE(IsMountPoint(mnt));
  // The right disks mount.
  DoMount();
  EXPECT_TRUE(IsMountPoint(mnt));
}

TEST_F(StripedMount, InjectedDiskFaultFailsOnlyReadersOfThatDisk) {
  const std::string data = RandomBytes(6 * (64 << 10), 9);
  Stripe("column", data);
  WriteFile(graph + "/meta", "ok");
  DoMount({"readahead=0"});
  const auto manifest = **ReadManifest(graph + "/column");
  auto map = StripeMap::Create(manifest.layout);
  // Fail disk of unit 1 only.
  const uint32_t bad = map->Locate(64 << 10).disk;
  WriteFile(mnt + "/.graphfs/fault", std::to_string(bad) + " 5\n");
  int fd = ::open((mnt + "/graph/column").c_str(), O_RDONLY | O_DIRECT);
  ASSERT_GE(fd, 0);
  AlignedBuffer buf(64 << 10);
  for (int u = 0; u < 6; ++u) {
    ssize_t n = ::pread(fd, buf.data(), 64 << 10, static_cast<off_t>(u) * (64 << 10));
    const int err = errno;
    if (map->Locate(static_cast<uint64_t>(u) * (64 << 10)).disk == bad) {
      EXPECT_EQ(n, -1);
      EXPECT_EQ(err, EIO);
    } else {
      EXPECT_EQ(n, 64 << 10) << "unit " << u;
    }
  }
  ::close(fd);
  EXPECT_EQ(ReadFile(mnt + "/graph/meta"), "ok");
  EXPECT_GT(Stats()["disks"][bad]["errors"].get<uint64_t>(), 0u);
  WriteFile(mnt + "/.graphfs/fault", std::to_string(bad) + " 0\n");
  EXPECT_EQ(ReadFile(mnt + "/graph/column"), data);
  EXPECT_NE(ReadFile(mount.log()).find("fault injection"), std::string::npos);
}

// mount(8) hands fuse.graphfs to mount.fuse3, which runs `graphfs` from a fixed PATH:
// /usr/local/bin before /usr/bin, where the package installs it. For the test, a link in
// /usr/local/bin points at the binary under test, and whatever was there is put back afterwards.
class LinkedDaemon {
 public:
  LinkedDaemon() {
    // One link for the whole machine: the passthrough and passthrough_off instances of a test
    // run at once under ctest -j, and one's destructor would pull the link from under the other.
    lock_.reset(::open("/tmp/graphfs-test-linked-daemon.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (lock_.valid()) ::flock(lock_.get(), LOCK_EX);
    std::error_code ec;
    if (std::filesystem::is_symlink(kLink, ec)) previous_ = std::filesystem::read_symlink(kLink, ec).string();
    else if (std::filesystem::exists(kLink, ec)) std::filesystem::rename(kLink, std::string(kLink) + ".graphfs-test", ec), moved_ = true;
    std::filesystem::remove(kLink, ec);
    std::filesystem::create_symlink(GraphfsBinary(), kLink, ec);
    ok_ = !ec;
  }
  ~LinkedDaemon() {
    std::error_code ec;
    std::filesystem::remove(kLink, ec);
    if (!previous_.empty()) std::filesystem::create_symlink(previous_, kLink, ec);
    if (moved_) std::filesystem::rename(std::string(kLink) + ".graphfs-test", kLink, ec);
  }
  bool ok() const { return ok_; }

 private:
  static constexpr const char* kLink = "/usr/local/bin/graphfs";
  UniqueFd lock_;  // flock held while the link is ours (released last: members go after the body)
  std::string previous_;
  bool moved_ = false;
  bool ok_ = false;
};

TEST_F(StripedMount, MountTypeFuseGraphfsLikeFstab) {
  Stripe("column", RandomBytes(100000, 10));
  LinkedDaemon linked;
  ASSERT_TRUE(linked.ok());
  auto r = RunCommand({"mount", "-t", "fuse.graphfs", src, mnt, "-o", "allow_other,readahead=2"});
  ASSERT_EQ(r.status, 0) << r.output;
  bool mounted = IsMountPoint(mnt);
  std::string bytes = mounted ? ReadFile(mnt + "/graph/column") : "";
  auto u = RunCommand({"umount", mnt});
  if (u.status != 0) RunCommand({"umount", "-l", mnt});
  EXPECT_TRUE(mounted);
  EXPECT_EQ(bytes.size(), 100000u);
  EXPECT_EQ(u.status, 0) << u.output;
  for (int i = 0; i < 100 && IsMountPoint(mnt); ++i) ::usleep(20000);
  EXPECT_FALSE(IsMountPoint(mnt));
}

TEST_F(StripedMount, BadOptionsAreRefusedWithAMessage) {
  for (const char* bad : {"threads=0", "io=raid", "readahead_mem=-5", "cache_size=150%", "cache_policy=fifo", "cache_window=0", "queue_depth=x",
                          "disks=a::b", "memory=0", "memory=150%", "memory=64M,cache_size=32M",
                          "nice=-21", "nice=20", "nice=x"}) {
    auto r = RunCommand({GraphfsBinary(), src, mnt, "-o", bad});
    EXPECT_EQ(r.status, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("option"), std::string::npos) << bad << ": " << r.output;
    EXPECT_FALSE(IsMountPoint(mnt));
  }
  auto r = RunCommand({GraphfsBinary(), tmp.path() + "/nowhere", mnt});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("nowhere"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace graphfs::testing
