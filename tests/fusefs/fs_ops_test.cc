// Each POSIX operation on the mount must behave as on a plain (ext4) directory.
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <chrono>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "striping/striped_file.h"
#include "tests/fusefs/fs_fixture.h"

namespace graphfs::testing {
namespace {

using Root = const std::string&;

Outcome WriteAt(const std::string& path, const std::string& data, off_t off, int flags = O_WRONLY | O_CREAT) {
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return Sys(-1);
  Outcome o = Sys(::pwrite(fd, data.data(), data.size(), off));
  ::close(fd);
  return o;
}

std::set<std::string> List(const std::string& dir) {
  std::set<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (struct dirent* e = ::readdir(d)) names.insert(e->d_name);
  ::closedir(d);
  return names;
}

class FsOps : public MountedFs {};

TEST_F(FsOps, CreateWriteReadAppendAndShortReads) {
  Same([](Root r) { return WriteAt(r + "/f", "hello world", 0, O_WRONLY | O_CREAT | O_EXCL); }, "create+write");
  Same([](Root r) {
    int fd = ::open((r + "/f").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    Outcome o = Sys(fd < 0 ? -1 : 0);
    if (fd >= 0) ::close(fd);
    return o;
  }, "O_EXCL on existing");
  Same([](Root r) {
    int fd = ::open((r + "/f").c_str(), O_WRONLY | O_APPEND);
    Outcome o = Sys(::write(fd, "!!", 2));
    ::close(fd);
    return o;
  }, "append");
  Same([](Root r) {
    int fd = ::open((r + "/f").c_str(), O_RDONLY);
    char buf[100];
    long n = ::pread(fd, buf, sizeof buf, 6);  // short read at EOF
    long past = ::pread(fd, buf, sizeof buf, 1000);  // past EOF: 0, not an error
    ::close(fd);
    return Outcome{n * 1000 + past, 0};
  }, "short reads");
  EXPECT_EQ(ReadFile(mnt + "/f"), "hello world!!");
  EXPECT_EQ(ReadFile(src + "/f"), "hello world!!");
  SameStat("f");
  Same([](Root r) { return Sys(::open((r + "/missing").c_str(), O_RDONLY)); }, "open missing");
  Same([](Root r) { return Sys(::open((r + "/f/x").c_str(), O_RDONLY)); }, "open below a file");
}

TEST_F(FsOps, TruncateByPathAndDescriptor) {
  for (Root r : {mnt, plain}) ASSERT_EQ(WriteAt(r + "/t", std::string(10000, 'a'), 0).err, 0);
  Same([](Root r) { return Sys(::truncate((r + "/t").c_str(), 100)); }, "truncate shrink");
  SameStat("t");
  Same([](Root r) { return Sys(::truncate((r + "/t").c_str(), 50000)); }, "truncate grow");
  SameStat("t");
  Same([](Root r) {
    int fd = ::open((r + "/t").c_str(), O_RDWR);
    Outcome o = Sys(::ftruncate(fd, 7));
    ::close(fd);
    return o;
  }, "ftruncate");
  SameStat("t");
  EXPECT_EQ(ReadFile(mnt + "/t"), std::string(7, 'a'));
  Same([](Root r) { return Sys(::truncate((r + "/t").c_str(), -1)); }, "negative truncate");
  Same([](Root r) {
    int fd = ::open((r + "/t").c_str(), O_WRONLY | O_TRUNC);
    Outcome o = Sys(fd < 0 ? -1 : 0);
    if (fd >= 0) ::close(fd);
    return o;
  }, "O_TRUNC");
  SameStat("t");
}

TEST_F(FsOps, RenameOverExistingAcrossDirectoriesAndNoReplace) {
  for (Root r : {mnt, plain}) {
    ASSERT_EQ(::mkdir((r + "/a").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((r + "/b").c_str(), 0755), 0);
    WriteAt(r + "/a/x", "xxx", 0);
    WriteAt(r + "/b/y", "yyyyyy", 0);
  }
  Same([](Root r) { return Sys(::rename((r + "/a/x").c_str(), (r + "/b/y").c_str())); }, "rename over existing");
  SameStat("b/y");
  SameStat("a/x");
  EXPECT_EQ(ReadFile(mnt + "/b/y"), "xxx");
  Same([](Root r) { return Sys(::rename((r + "/b/y").c_str(), (r + "/a/z").c_str())); }, "rename across dirs");
  Same([](Root r) {
    WriteAt(r + "/b/w", "w", 0);
    return Sys(::renameat2(AT_FDCWD, (r + "/b/w").c_str(), AT_FDCWD, (r + "/a/z").c_str(), RENAME_NOREPLACE));
  }, "RENAME_NOREPLACE");
  Same([](Root r) {
    return Sys(::renameat2(AT_FDCWD, (r + "/b/w").c_str(), AT_FDCWD, (r + "/a/z").c_str(), RENAME_EXCHANGE));
  }, "RENAME_EXCHANGE");
  EXPECT_EQ(ReadFile(mnt + "/a/z"), "w");
  EXPECT_EQ(ReadFile(mnt + "/b/w"), "xxx");
  Same([](Root r) { return Sys(::rename((r + "/a").c_str(), (r + "/b").c_str())); }, "rename dir over non-empty dir");
  Same([](Root r) { return Sys(::rename((r + "/a").c_str(), (r + "/c").c_str())); }, "rename dir");
  SameStat("c/z");
  Same([](Root r) { return Sys(::rename((r + "/c").c_str(), (r + "/c/sub").c_str())); }, "rename into itself");
}

TEST_F(FsOps, HardAndSymbolicLinks) {
  for (Root r : {mnt, plain}) WriteAt(r + "/orig", "data", 0);
  Same([](Root r) { return Sys(::link((r + "/orig").c_str(), (r + "/hard").c_str())); }, "link");
  SameStat("orig");
  SameStat("hard");
  Same([](Root r) { return Sys(::link((r + "/orig").c_str(), (r + "/hard").c_str())); }, "link onto existing");
  Same([](Root r) { return Sys(::symlink("orig", (r + "/sym").c_str())); }, "symlink");
  Same([](Root r) { return Sys(::symlink("nowhere", (r + "/dangling").c_str())); }, "dangling symlink");
  SameStat("sym");
  Same([](Root r) {
    char buf[64];
    return Sys(::readlink((r + "/sym").c_str(), buf, sizeof buf));
  }, "readlink");
  Same([](Root r) {
    char buf[64];
    return Sys(::readlink((r + "/orig").c_str(), buf, sizeof buf));
  }, "readlink of a file");
  EXPECT_EQ(ReadFile(mnt + "/sym"), "data");
  Same([](Root r) { return Sys(::open((r + "/dangling").c_str(), O_RDONLY)); }, "open dangling");
  Same([](Root r) { return Sys(::unlink((r + "/orig").c_str())); }, "unlink one link");
  SameStat("hard");
  EXPECT_EQ(ReadFile(mnt + "/hard"), "data");
}

TEST_F(FsOps, UnlinkOfOpenFileKeepsItReadable) {
  for (Root r : {mnt, plain}) {
    WriteAt(r + "/open", "still here", 0);
    int fd = ::open((r + "/open").c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::unlink((r + "/open").c_str()), 0);
    char buf[32] = {};
    EXPECT_EQ(::pread(fd, buf, sizeof buf, 0), 10) << r;
    EXPECT_STREQ(buf, "still here");
    EXPECT_EQ(::pwrite(fd, "S", 1, 0), 1);
    struct stat st;
    ASSERT_EQ(::fstat(fd, &st), 0);
    EXPECT_EQ(st.st_nlink, 0u) << r;
    ::close(fd);
    EXPECT_EQ(::access((r + "/open").c_str(), F_OK), -1);
  }
}

// The daemon owns every handle it gave the kernel until RELEASE, and releases the ones
// the kernel never released at unmount (open_handles.h); stats shows how many it holds.
TEST_F(FsOps, StatsCountOpenHandlesUntilTheyAreReleased) {
  auto held = [&] {
    const nlohmann::json st = nlohmann::json::parse(ReadFile(mnt + "/.graphfs/stats"));
    return std::make_pair(st["open_files"].get<int>(), st["open_dirs"].get<int>());
  };
  ASSERT_EQ(held(), std::make_pair(0, 0));
  std::vector<int> fds;
  for (int i = 0; i < 3; ++i) fds.push_back(::open((mnt + "/h" + std::to_string(i)).c_str(), O_CREAT | O_RDWR, 0644));
  fds.push_back(::open((mnt + "/h0").c_str(), O_RDONLY));
  DIR* d = ::opendir(mnt.c_str());
  ASSERT_NE(d, nullptr);
  for (int fd : fds) ASSERT_GE(fd, 0);
  // The stats file a look opened counts until its RELEASE, which close(2) sends in the background.
  auto settled = [&](std::pair<int, int> want) {
    std::pair<int, int> now = held();
    for (int waited = 0; now != want && waited < 5000; waited += 20) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      now = held();
    }
    return now;
  };
  EXPECT_EQ(settled({4, 1}), std::make_pair(4, 1));
  for (int fd : fds) ::close(fd);
  ::closedir(d);
  // The last look decides: another after it may still count the handle of the one before.
  EXPECT_EQ(settled({0, 0}), std::make_pair(0, 0));
}

TEST_F(FsOps, DirectoriesCreateListRemove) {
  Same([](Root r) { return Sys(::mkdir((r + "/d").c_str(), 0750)); }, "mkdir");
  Same([](Root r) { return Sys(::mkdir((r + "/d").c_str(), 0750)); }, "mkdir existing");
  Same([](Root r) { return Sys(::mkdir((r + "/nope/d").c_str(), 0750)); }, "mkdir missing parent");
  SameStat("d");
  for (Root r : {mnt, plain})
    for (int i = 0; i < 300; ++i) WriteAt(r + "/d/file" + std::to_string(i), "x", 0);
  auto a = List(mnt + "/d"), b = List(plain + "/d");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 302u);
  Same([](Root r) { return Sys(::rmdir((r + "/d").c_str())); }, "rmdir non-empty");
  Same([](Root r) { return Sys(::unlink((r + "/d").c_str())); }, "unlink a directory");
  Same([](Root r) { return Sys(::rmdir((r + "/d/file0").c_str())); }, "rmdir a file");
  for (Root r : {mnt, plain})
    for (int i = 0; i < 300; ++i) ::unlink((r + "/d/file" + std::to_string(i)).c_str());
  Same([](Root r) { return Sys(::rmdir((r + "/d").c_str())); }, "rmdir empty");
  Same([](Root r) { return Sys(::mknod((r + "/fifo").c_str(), S_IFIFO | 0600, 0)); }, "mkfifo");
  SameStat("fifo");
}

TEST_F(FsOps, RootListsControlDirectoryOnce) {
  ::mkdir((src + "/.graphfs").c_str(), 0755);  // a real one in SOURCE is shadowed
  auto names = List(mnt);
  EXPECT_EQ(std::count(names.begin(), names.end(), ".graphfs"), 1);
  auto control = List(mnt + "/.graphfs");
  EXPECT_TRUE(control.count("stats"));
  EXPECT_NE(ReadFile(mnt + "/.graphfs/stats").find("\"disks\""), std::string::npos);
  EXPECT_EQ(::rmdir((mnt + "/.graphfs").c_str()), -1);
  EXPECT_EQ(::open((mnt + "/.graphfs/new").c_str(), O_CREAT | O_WRONLY, 0644), -1);
}

TEST_F(FsOps, ChmodChownUtimens) {
  for (Root r : {mnt, plain}) WriteAt(r + "/m", "m", 0);
  Same([](Root r) { return Sys(::chmod((r + "/m").c_str(), 04711)); }, "chmod");
  SameStat("m");
  Same([](Root r) { return Sys(::chown((r + "/m").c_str(), 1234, 5678)); }, "chown");
  SameStat("m");
  Same([](Root r) {
    struct timespec ts[2] = {{1000000, 5}, {2000000, 7}};
    return Sys(::utimensat(AT_FDCWD, (r + "/m").c_str(), ts, 0));
  }, "utimensat");
  struct stat a;
  ASSERT_EQ(::stat((mnt + "/m").c_str(), &a), 0);
  EXPECT_EQ(a.st_mtim.tv_sec, 2000000);
  EXPECT_EQ(a.st_mtim.tv_nsec, 7);
  EXPECT_EQ(a.st_atim.tv_sec, 1000000);
  Same([](Root r) { return Sys(::chmod((r + "/missing").c_str(), 0644)); }, "chmod missing");
}

TEST_F(FsOps, ExtendedAttributesAndReservedNamespace) {
  for (Root r : {mnt, plain}) WriteAt(r + "/x", "x", 0);
  Same([](Root r) { return Sys(::setxattr((r + "/x").c_str(), "user.color", "blue", 4, 0)); }, "setxattr");
  Same([](Root r) { return Sys(::setxattr((r + "/x").c_str(), "user.color", "red", 3, XATTR_CREATE)); }, "XATTR_CREATE");
  Same([](Root r) {
    char buf[16];
    return Sys(::getxattr((r + "/x").c_str(), "user.color", buf, sizeof buf));
  }, "getxattr");
  Same([](Root r) {
    char buf[2];
    return Sys(::getxattr((r + "/x").c_str(), "user.color", buf, sizeof buf));
  }, "getxattr ERANGE");
  Same([](Root r) {
    char buf[256];
    return Sys(::listxattr((r + "/x").c_str(), buf, sizeof buf));
  }, "listxattr");
  Same([](Root r) { return Sys(::removexattr((r + "/x").c_str(), "user.color")); }, "removexattr");
  Same([](Root r) { return Sys(::removexattr((r + "/x").c_str(), "user.color")); }, "removexattr missing");
  // graphfs's own namespace is off limits through the mount.
  EXPECT_EQ(::setxattr((mnt + "/x").c_str(), "user.graphfs.stripe", "{}", 2, 0), -1);
  EXPECT_EQ(errno, EPERM);
}

TEST_F(FsOps, StatfsAndFsync) {
  struct statvfs a, b;
  ASSERT_EQ(::statvfs(mnt.c_str(), &a), 0);
  ASSERT_EQ(::statvfs(src.c_str(), &b), 0);
  EXPECT_EQ(a.f_blocks, b.f_blocks);
  EXPECT_EQ(a.f_bsize, b.f_bsize);
  Same([](Root r) {
    int fd = ::open((r + "/s").c_str(), O_RDWR | O_CREAT, 0644);
    ::write(fd, "abc", 3);
    long rc = ::fsync(fd) + ::fdatasync(fd);
    ::close(fd);
    int dfd = ::open(r.c_str(), O_RDONLY | O_DIRECTORY);
    rc += ::fsync(dfd);
    ::close(dfd);
    return Sys(rc);
  }, "fsync");
}

TEST_F(FsOps, DirectIoOpenWorksWithAlignedAndUnalignedBuffers) {
  std::string data(3 * 4096 + 100, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  WriteFile(src + "/direct", data);
  int fd = ::open((mnt + "/direct").c_str(), O_RDWR | O_DIRECT);
  ASSERT_GE(fd, 0) << strerror(errno);
  AlignedBuffer buf(4 * 4096);
  // The read runs past EOF (GridGraph rounds lengths up): short, never an error.
  ASSERT_EQ(::pread(fd, buf.data(), 4 * 4096, 0), static_cast<ssize_t>(data.size()));
  EXPECT_EQ(std::memcmp(buf.data(), data.data(), data.size()), 0);
  std::memset(buf.data(), 'w', 4096);
  ASSERT_EQ(::pwrite(fd, buf.data(), 4096, 4096), 4096);
  ::close(fd);
  data.replace(4096, 4096, std::string(4096, 'w'));
  EXPECT_EQ(ReadFile(src + "/direct"), data);
}

TEST_F(FsOps, SharedWritableMmapReachesTheBackingFile) {
  // GridGraph's vertex files: create+truncate, write, reopen O_RDWR|O_DIRECT, mmap shared.
  const size_t size = 64 * 1024;
  {
    int fd = ::open((mnt + "/vertex").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::truncate((mnt + "/vertex").c_str(), size), 0);
    std::string page(4096, 'v');
    ASSERT_EQ(::pwrite(fd, page.data(), page.size(), 0), 4096);
    ::close(fd);
  }
  int fd = ::open((mnt + "/vertex").c_str(), O_RDWR | O_DIRECT);
  ASSERT_GE(fd, 0) << strerror(errno);
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(p, MAP_FAILED) << strerror(errno);
  EXPECT_EQ(static_cast<char*>(p)[0], 'v');
  EXPECT_EQ(::mlock(p, size), 0);
  std::memset(static_cast<char*>(p) + 8192, 'M', 4096);
  ASSERT_EQ(::msync(p, size, MS_SYNC), 0);
  ::munlock(p, size);
  ::munmap(p, size);
  ::close(fd);
  std::string back = ReadFile(src + "/vertex");
  ASSERT_EQ(back.size(), size);
  EXPECT_EQ(back[8192], 'M');
  EXPECT_EQ(back[0], 'v');
  EXPECT_EQ(back[5000], '\0');
}

TEST_F(FsOps, ChangesBehindTheMountAreSeenAfterTheTimeout) {
  WriteFile(src + "/outside", std::string(8192, 'a'));
  EXPECT_EQ(ReadFile(mnt + "/outside"), std::string(8192, 'a'));  // now in the kernel's cache
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  WriteFile(src + "/outside", std::string(8192, 'b'));  // same size, new mtime
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));  // past the 1 s attribute timeout
  const std::string now = ReadFile(mnt + "/outside");
  EXPECT_TRUE(now == std::string(8192, 'b')) << "stale content, starting with '" << now.substr(0, 1) << "'";
}

// Many readers opening, reading and closing files at once, with the kernel's page cache
// dropped at every open (timeout=0), so that every read reaches the daemon and RELEASEs
// run beside READs on other daemon threads. Each reader must get its file's bytes. Under
// TSan this reproduces a report (a handle freed by RELEASE after a spliced read reply had
// used it, with no ordering TSan could see; file_handle.h) that the whole suite hit once.
TEST(ParallelReaders, OpeningReadingAndClosingAtOnceGetTheirBytes) {
  TempDir tmp;
  const std::string src = tmp.Sub("src"), mnt = tmp.Sub("mnt");
  constexpr int kFiles = 20, kThreads = 4, kRounds = 150;
  std::vector<std::string> contents;
  for (int i = 0; i < kFiles; ++i) {
    contents.push_back(std::string(8192 + 512 * i, static_cast<char>('A' + i)));
    WriteFile(src + "/f" + std::to_string(i), contents.back());
  }
  GraphfsMount mount;
  ASSERT_TRUE(mount.Mount(src, mnt, {"timeout=0"})) << mount.error();
  std::atomic<int> wrong{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < kThreads; ++t) {
    readers.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        for (int i = 0; i < kFiles; ++i) {
          const int f = (i + t * 5) % kFiles;
          if (ReadFile(mnt + "/f" + std::to_string(f)) != contents[f]) ++wrong;
        }
      }
    });
  }
  for (auto& r : readers) r.join();
  EXPECT_EQ(wrong.load(), 0) << "reads returned other bytes than the file's";
  mount.Unmount();  // fails the test if the daemon crashed or a sanitizer reported
}

// The kernel's read-ahead window for the mount, as its bdi's sysfs knob says.
std::string ReadAheadKb(const std::string& mountpoint) {
  struct stat st;
  if (::stat(mountpoint.c_str(), &st) != 0) return "stat failed";
  std::string kb = ReadFile("/sys/class/bdi/" + std::to_string(major(st.st_dev)) + ":" +
                            std::to_string(minor(st.st_dev)) + "/read_ahead_kb");
  while (!kb.empty() && kb.back() == '\n') kb.pop_back();
  return kb;
}

// kernel_readahead= sets the window (by default it stays the kernel's 128K), and from the
// first file opened on.
// (The kernel lowers the window to 128K when it processes the INIT reply, so a knob written
// right after mounting, as graphfs once did, was undone before any read.)
TEST(KernelReadAhead, TheOptionSetsTheWindowByTheFirstOpen) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "128"}, {{"kernel_readahead=8M"}, "8192"}, {{"kernel_readahead=64K"}, "64"}};
  for (const auto& [options, want_kb] : cases) {
    SCOPED_TRACE(options.empty() ? "default" : options[0]);
    TempDir tmp;
    const std::string src = tmp.Sub("src"), mnt = tmp.Sub("mnt");
    WriteFile(src + "/f", std::string(1 << 20, 'r'));
    GraphfsMount mount;
    ASSERT_TRUE(mount.Mount(src, mnt, options)) << mount.error();
    const int fd = ::open((mnt + "/f").c_str(), O_RDONLY);
    ASSERT_GE(fd, 0) << strerror(errno);
    EXPECT_EQ(ReadAheadKb(mnt), want_kb);
    char byte = 0;
    EXPECT_EQ(::pread(fd, &byte, 1, 0), 1);
    EXPECT_EQ(byte, 'r');
    ::close(fd);
  }
}

}  // namespace
}  // namespace graphfs::testing
