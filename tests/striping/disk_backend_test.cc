// The disk backend interface (striping/disk_backend.h) and its local-directory implementation:
// the factory's specs, files under DIR/parts/, reads short only at the end, durable calls, and
// errors that name the file.
#include "striping/disk_backend.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "striping/local_disk_backend.h"
#include "tests/testutil/file_bytes.h"
#include "tests/testutil/temp_dir.h"

namespace graphfs {
namespace {

using testing::TempDir;
using testing::ReadFile;

TEST(DiskBackend, FactoryOpensDirectoriesAndRefusesWhatItDoesNotKnow) {
  TempDir tmp;
  const std::string disk = tmp.Sub("d0");
  auto plain = OpenDiskBackend(disk);
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  EXPECT_EQ((*plain)->name(), disk);
  auto prefixed = OpenDiskBackend("dir:" + disk);
  ASSERT_TRUE(prefixed.ok()) << prefixed.error().message();
  EXPECT_EQ((*prefixed)->name(), disk);

  auto rados = OpenDiskBackend("rados:graphs");
  ASSERT_FALSE(rados.ok());
  EXPECT_EQ(rados.error().code(), EINVAL);
  EXPECT_NE(rados.error().message().find("unknown backend 'rados'"), std::string::npos) << rados.error().message();
  auto relative = OpenDiskBackend("disks/0");
  ASSERT_FALSE(relative.ok());
  EXPECT_EQ(relative.error().code(), EINVAL);
  EXPECT_NE(relative.error().message().find("absolute path"), std::string::npos);
  EXPECT_EQ(OpenDiskBackend("dir:").error().code(), EINVAL);

  auto missing = OpenDiskBackend(tmp.File("nowhere"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ENOENT);
  EXPECT_NE(missing.error().message().find(tmp.File("nowhere")), std::string::npos);
  { std::ofstream(tmp.File("a-file")) << "x"; }
  EXPECT_EQ(OpenDiskBackend(tmp.File("a-file")).error().code(), ENOTDIR);
}

TEST(DiskBackend, LocalFilesLiveInPartsAndRoundTrip) {
  TempDir tmp;
  auto disk = OpenDiskBackend(tmp.Sub("d1"));
  ASSERT_TRUE(disk.ok());
  auto f = (*disk)->Open("0123abcd", {.create = true, .direct_reads = true});
  ASSERT_TRUE(f.ok()) << f.error().message();
  DiskFile& file = **f;
  EXPECT_EQ(file.where(), tmp.path() + "/d1/parts/0123abcd");
  EXPECT_GE(file.native_fd(), 0);

  const std::string a(5000, 'a'), b = "tail";
  ASSERT_TRUE(file.Write(0, a).ok());
  ASSERT_TRUE(file.Write(8192, b).ok());  // past the end: a hole of zeros in between
  ASSERT_TRUE(file.Sync().ok());
  ASSERT_TRUE((*disk)->SyncNames().ok());
  auto size = file.Size();
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, 8196u);
  EXPECT_EQ(ReadFile(file.where()), a + std::string(8192 - 5000, '\0') + b);

  std::string buf(100, '?');
  auto n = file.Read(4990, buf);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 100u);
  EXPECT_EQ(buf, std::string(10, 'a') + std::string(90, '\0'));
  n = file.Read(8190, buf);  // short only at the end
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 6u);
  EXPECT_EQ(buf.substr(0, 6), std::string(2, '\0') + "tail");
  n = file.Read(9000, buf);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0u);

  ASSERT_TRUE(file.Truncate(4096).ok());
  EXPECT_EQ(*file.Size(), 4096u);
  EXPECT_EQ(std::filesystem::file_size(file.where()), 4096u);

  // Opened again, read-only: same bytes, and writes are refused.
  auto again = (*disk)->Open("0123abcd", {});
  ASSERT_TRUE(again.ok());
  n = (*again)->Read(0, buf);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(buf, std::string(100, 'a'));
  Status w = (*again)->Write(0, b);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code(), EBADF);
  EXPECT_NE(w.error().message().find(file.where()), std::string::npos);
  EXPECT_EQ((*again)->Truncate(0).error().code(), EBADF);
}

TEST(DiskBackend, MissingFilesAreNamedAndRemovalIsIdempotent) {
  TempDir tmp;
  auto disk = OpenDiskBackend(tmp.Sub("d2"));
  ASSERT_TRUE(disk.ok());
  auto none = (*disk)->Open("absent", {.writable = true});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code(), ENOENT);
  EXPECT_NE(none.error().message().find(tmp.path() + "/d2/parts/absent"), std::string::npos)
      << none.error().message();
  ASSERT_TRUE((*disk)->SyncNames().ok());  // no parts/ yet: syncs the disk directory

  auto made = (*disk)->Open("unit.sums", {.create = true});
  ASSERT_TRUE(made.ok());
  EXPECT_TRUE(*(*disk)->Exists("unit.sums"));
  ASSERT_TRUE((*disk)->Remove("unit.sums").ok());
  EXPECT_FALSE(*(*disk)->Exists("unit.sums"));
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "/d2/parts/unit.sums"));
  EXPECT_TRUE((*disk)->Remove("unit.sums").ok());  // gone already: no error
}

TEST(DiskBackend, NamesThatAreNotPlainAreRefused) {
  TempDir tmp;
  const std::string root = tmp.Sub("d3");
  auto disk = OpenDiskBackend(root);
  ASSERT_TRUE(disk.ok());
  { std::ofstream(tmp.File("outside")) << "secret"; }
  const std::vector<std::string> bad_names = {"", ".", "..", "../../outside", "a/b", std::string("a\0b", 3)};
  for (const std::string& bad : bad_names) {
    auto f = (*disk)->Open(bad, {.create = true});
    ASSERT_FALSE(f.ok()) << "'" << bad << "'";
    EXPECT_EQ(f.error().code(), EINVAL);
    EXPECT_EQ((*disk)->Exists(bad).error().code(), EINVAL);
    EXPECT_EQ((*disk)->Remove(bad).error().code(), EINVAL);
  }
  EXPECT_EQ(ReadFile(tmp.File("outside")), "secret");
}

}  // namespace
}  // namespace graphfs
