// A non-root caller gets what ext4 would give it: same errors, files owned by the caller.
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/fusefs/fs_fixture.h"

namespace graphfs::testing {
namespace {

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

// Runs `body` in a child as nobody:nogroup with umask 022; returns what it reported.
std::vector<Outcome> AsNobody(const std::function<std::vector<Outcome>()>& body) {
  int p[2];
  if (::pipe(p) != 0) return {};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    if (::setgroups(0, nullptr) != 0 || ::setgid(kNogroup) != 0 || ::setuid(kNobody) != 0) ::_exit(3);
    ::umask(022);
    std::vector<Outcome> out = body();
    ssize_t n = ::write(p[1], out.data(), out.size() * sizeof(Outcome));
    ::_exit(n < 0 ? 4 : 0);
  }
  ::close(p[1]);
  std::vector<Outcome> out;
  Outcome o;
  while (::read(p[0], &o, sizeof o) == sizeof o) out.push_back(o);
  ::close(p[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  return out;
}

class Permissions : public MountedFs {
 protected:
  void SetUp() override {
    MountedFs::SetUp();
    // Let others reach the test directories.
    for (const auto& d : {tmp.path(), src, plain, mnt}) ::chmod(d.c_str(), 0755);
    for (const std::string& r : {src, plain}) {
      ASSERT_EQ(::mkdir((r + "/pub").c_str(), 01777), 0);
      ::chmod((r + "/pub").c_str(), 01777);
      ASSERT_EQ(::mkdir((r + "/private").c_str(), 0700), 0);
      ASSERT_EQ(::mkdir((r + "/sgid").c_str(), 0777), 0);
      ASSERT_EQ(::chown((r + "/sgid").c_str(), 0, 1234), 0);
      ASSERT_EQ(::chmod((r + "/sgid").c_str(), 02777), 0);
      WriteFile(r + "/secret", "secret");
      ::chmod((r + "/secret").c_str(), 0600);
      WriteFile(r + "/readable", "readable");
      ::chmod((r + "/readable").c_str(), 0644);
      WriteFile(r + "/pub/roots", "root's file in a sticky directory");
      ::chmod((r + "/pub/roots").c_str(), 0666);
    }
  }
};

std::vector<Outcome> NobodyOps(const std::string& r) {
  std::vector<Outcome> out;
  auto open_close = [&](const std::string& p, int flags, mode_t mode = 0644) {
    int fd = ::open(p.c_str(), flags, mode);
    out.push_back(Sys(fd < 0 ? -1 : 0));
    if (fd >= 0) ::close(fd);
  };
  open_close(r + "/secret", O_RDONLY);
  open_close(r + "/readable", O_RDONLY);
  open_close(r + "/readable", O_WRONLY);
  open_close(r + "/newfile", O_WRONLY | O_CREAT);
  open_close(r + "/pub/mine", O_WRONLY | O_CREAT, 0666);
  out.push_back(Sys(::mkdir((r + "/pub/mydir").c_str(), 0777)));
  out.push_back(Sys(::mkdir((r + "/nodir").c_str(), 0777)));
  out.push_back(Sys(::unlink((r + "/pub/roots").c_str())));  // sticky: not ours
  out.push_back(Sys(::rename((r + "/pub/roots").c_str(), (r + "/pub/taken").c_str())));
  out.push_back(Sys(::chmod((r + "/readable").c_str(), 0777)));
  out.push_back(Sys(::chown((r + "/pub/mine").c_str(), 0, 0)));
  out.push_back(Sys(::chmod((r + "/pub/mine").c_str(), 0600)));
  out.push_back(Sys(::truncate((r + "/readable").c_str(), 0)));
  DIR* d = ::opendir((r + "/private").c_str());
  out.push_back(Sys(d == nullptr ? -1 : 0));
  if (d != nullptr) ::closedir(d);
  out.push_back(Sys(::access((r + "/private/x").c_str(), F_OK)));
  open_close(r + "/sgid/inherits", O_WRONLY | O_CREAT);
  out.push_back(Sys(::symlink("readable", (r + "/pub/link").c_str())));
  out.push_back(Sys(::link((r + "/pub/mine").c_str(), (r + "/pub/mine2").c_str())));
  out.push_back(Sys(::unlink((r + "/pub/mine2").c_str())));
  return out;
}

TEST_F(Permissions, NonRootCallerIsTreatedAsOnExt4) {
  auto on_mount = AsNobody([&] { return NobodyOps(mnt); });
  auto on_plain = AsNobody([&] { return NobodyOps(plain); });
  ASSERT_EQ(on_mount.size(), on_plain.size());
  ASSERT_FALSE(on_mount.empty());
  for (size_t i = 0; i < on_mount.size(); ++i) EXPECT_EQ(on_mount[i], on_plain[i]) << "operation " << i;
  EXPECT_EQ(on_mount[0].err, EACCES);  // the secret stays secret
  // Created files belong to the caller, with the caller's umask applied.
  for (const char* rel : {"pub/mine", "pub/mydir", "pub/link", "sgid/inherits"}) SameStat(rel);
  struct stat st;
  ASSERT_EQ(::lstat((src + "/pub/mine").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kNobody);
  EXPECT_EQ(st.st_gid, kNogroup);
  EXPECT_EQ(st.st_mode & 07777, 0600u);  // 0666 & ~022, then chmod 0600 by the owner
  ASSERT_EQ(::lstat((src + "/sgid/inherits").c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, 1234u);  // setgid directory passes its group on
  EXPECT_EQ(::access((src + "/pub/roots").c_str(), F_OK), 0);
}

// setuid and setgid bits: cleared by a write, a truncate or a chown as ext4 clears them,
// stripped from a new file's mode when the creator is not in the setgid directory's group,
// inherited by a directory made in a setgid directory.
TEST_F(Permissions, SetuidAndSetgidBitsAsOnExt4) {
  for (const std::string& r : {src, plain}) {
    for (const char* name : {"suid_write", "suid_trunc", "suid_chown"}) {
      WriteFile(r + "/" + name, "x");
      ASSERT_EQ(::chmod((r + "/" + name).c_str(), 04777), 0);
    }
    WriteFile(r + "/sgid_write", "x");
    ASSERT_EQ(::chown((r + "/sgid_write").c_str(), 0, 1234), 0);
    ASSERT_EQ(::chmod((r + "/sgid_write").c_str(), 02777), 0);
  }
  auto ops = [](const std::string& r) {
    std::vector<Outcome> out;
    int fd = ::open((r + "/suid_write").c_str(), O_WRONLY);
    out.push_back(Sys(fd < 0 ? -1 : ::write(fd, "y", 1)));
    if (fd >= 0) ::close(fd);
    fd = ::open((r + "/sgid_write").c_str(), O_WRONLY | O_APPEND);
    out.push_back(Sys(fd < 0 ? -1 : ::write(fd, "y", 1)));
    if (fd >= 0) ::close(fd);
    out.push_back(Sys(::truncate((r + "/suid_trunc").c_str(), 0)));
    fd = ::open((r + "/sgid/created").c_str(), O_WRONLY | O_CREAT, 02755);
    out.push_back(Sys(fd < 0 ? -1 : 0));
    if (fd >= 0) ::close(fd);
    out.push_back(Sys(::mkdir((r + "/sgid/subdir").c_str(), 0755)));
    return out;
  };
  auto on_mount = AsNobody([&] { return ops(mnt); });
  auto on_plain = AsNobody([&] { return ops(plain); });
  ASSERT_EQ(on_mount.size(), 5u);
  ASSERT_EQ(on_mount.size(), on_plain.size());
  for (size_t i = 0; i < on_mount.size(); ++i) EXPECT_EQ(on_mount[i], on_plain[i]) << "operation " << i;
  EXPECT_EQ(::chown((mnt + "/suid_chown").c_str(), kNobody, kNogroup), 0);
  EXPECT_EQ(::chown((plain + "/suid_chown").c_str(), kNobody, kNogroup), 0);
  for (const char* rel : {"suid_write", "sgid_write", "suid_trunc", "suid_chown", "sgid/created", "sgid/subdir"})
    SameStat(rel);
  struct stat st;
  ASSERT_EQ(::stat((mnt + "/suid_write").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07000, 0u) << "a write by another user keeps setuid";
  ASSERT_EQ(::stat((mnt + "/suid_chown").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07000, 0u) << "chown keeps setuid";
  ASSERT_EQ(::stat((mnt + "/sgid/created").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & S_ISGID, 0u) << "setgid kept by a creator outside the group";
  EXPECT_EQ(st.st_gid, 1234u);
  ASSERT_EQ(::stat((mnt + "/sgid/subdir").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & S_ISGID, 0u) << "a directory in a setgid directory inherits setgid";
}

TEST_F(Permissions, ControlFilesRefuseOtherUsers) {
  auto out = AsNobody([&] {
    std::vector<Outcome> o;
    int fd = ::open((mnt + "/.graphfs/fault").c_str(), O_WRONLY);
    o.push_back(Sys(fd < 0 ? -1 : 0));
    if (fd >= 0) ::close(fd);
    fd = ::open((mnt + "/.graphfs/stats").c_str(), O_RDONLY);
    o.push_back(Sys(fd < 0 ? -1 : 0));
    if (fd >= 0) ::close(fd);
    return o;
  });
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].err, EACCES);
  EXPECT_EQ(out[1].err, 0);
}

}  // namespace
}  // namespace graphfs::testing
