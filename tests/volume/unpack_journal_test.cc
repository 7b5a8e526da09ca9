// volume/internal/unpack_journal.h: what a mount does with the records a killed Unpack left.
#include "volume/internal/unpack_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "striping/manifest.h"
#include "tests/chunkindex/chunkindex_test_util.h"

namespace graphfs::volume {
namespace {

using chunkindex::testing::TempDir;

class UnpackJournal : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i) paths.push_back(Sub("disk" + std::to_string(i)));
    auto set = DiskSet::Claim(paths);
    ASSERT_TRUE(set.ok()) << set.error().message();
    disks.emplace(std::move(*set));
    for (uint32_t d = 0; d < disks->size(); ++d) std::filesystem::create_directories(paths[d] + "/parts");
  }
  void MakeParts(const std::string& id) {
    for (uint32_t d = 0; d < disks->size(); ++d) std::ofstream(disks->PartPath(d, id)) << "bytes";
  }
  bool HasParts(const std::string& id) {
    for (uint32_t d = 0; d < disks->size(); ++d)
      if (!std::filesystem::exists(disks->PartPath(d, id))) return false;
    return true;
  }
  // A stub at `path` whose manifest names `id`.
  void MakeStub(const std::string& path, const std::string& id) {
    int fd = ::open(path.c_str(), O_CREAT | O_RDWR, 0644);
    ASSERT_GE(fd, 0);
    StripeManifest m;
    m.file_id = id;
    m.set_id = disks->set_id();
    m.layout.unit = 4096;
    m.layout.disks = disks->size();
    ASSERT_TRUE(WriteManifestFd(fd, m).ok());
    ::close(fd);
  }
  std::string Sub(const std::string& name) {
    std::filesystem::create_directories(tmp.File(name));
    return tmp.File(name);
  }
  UnpackOutcome Finish() {
    return FinishPendingUnpacks(*disks, [&](const std::string& id) {
      for (uint32_t d = 0; d < disks->size(); ++d) ::unlink(disks->PartPath(d, id).c_str());
    });
  }
  bool Pending(const std::string& new_id) {
    return std::filesystem::exists(paths[0] + "/" + kPendingUnpackDir + "/" + new_id + ".json");
  }

  TempDir tmp;
  std::vector<std::string> paths;
  std::optional<DiskSet> disks;
};

TEST_F(UnpackJournal, TheCopyTheStubDoesNotNameIsRemoved) {
  const std::string stub_a = Sub("graph") + "/a", stub_b = tmp.File("graph/b");
  MakeParts("old-a");
  MakeParts("new-a");
  MakeParts("old-b");
  MakeParts("new-b");
  MakeStub(stub_a, "new-a");  // killed after the switch: the old parts are left over
  MakeStub(stub_b, "old-b");  // killed before it: the new copy is
  ASSERT_TRUE(WriteUnpackRecord(*disks, {"old-a", "new-a", stub_a}).ok());
  ASSERT_TRUE(WriteUnpackRecord(*disks, {"old-b", "new-b", stub_b}).ok());
  const UnpackOutcome out = Finish();
  EXPECT_EQ(out.finished, 2);
  EXPECT_EQ(out.kept, 0);
  EXPECT_TRUE(HasParts("new-a"));
  EXPECT_FALSE(HasParts("old-a"));
  EXPECT_TRUE(HasParts("old-b"));
  EXPECT_FALSE(HasParts("new-b"));
  EXPECT_FALSE(Pending("new-a"));
  EXPECT_FALSE(Pending("new-b"));
  EXPECT_EQ(Finish().finished, 0);  // nothing left to do
}

TEST_F(UnpackJournal, AnUnlinkedFilesCopiesBothGo) {
  MakeParts("old");
  MakeParts("new");
  ASSERT_TRUE(WriteUnpackRecord(*disks, {"old", "new", ""}).ok());
  EXPECT_EQ(Finish().finished, 1);
  EXPECT_FALSE(HasParts("old"));
  EXPECT_FALSE(HasParts("new"));
  EXPECT_FALSE(Pending("new"));
}

// A stub renamed or replaced since: which copy is live cannot be told from the record, so
// nothing is removed and the record stays for the admin.
TEST_F(UnpackJournal, AStubThatNamesNeitherKeepsBothCopiesAndTheRecord) {
  const std::string moved = Sub("graph") + "/moved", other = tmp.File("graph/other");
  MakeParts("old");
  MakeParts("new");
  MakeStub(other, "someone-else");
  ASSERT_TRUE(WriteUnpackRecord(*disks, {"old", "new", moved}).ok());  // no file there any more
  ASSERT_TRUE(WriteUnpackRecord(*disks, {"old", "new2", other}).ok());
  const UnpackOutcome out = Finish();
  EXPECT_EQ(out.finished, 0);
  EXPECT_EQ(out.kept, 2);
  EXPECT_TRUE(HasParts("old"));
  EXPECT_TRUE(HasParts("new"));
  EXPECT_TRUE(Pending("new"));
  EXPECT_TRUE(Pending("new2"));
}

TEST_F(UnpackJournal, ADamagedRecordRemovesNothing) {
  MakeParts("old");
  std::filesystem::create_directories(paths[0] + "/" + kPendingUnpackDir);
  std::ofstream(paths[0] + "/" + kPendingUnpackDir + "/x.json") << "{\"old\": \"old\", \"new\": ";
  std::ofstream(paths[0] + "/" + kPendingUnpackDir + "/y.json") << R"({"old": "old", "new": "old", "stub": ""})";
  const UnpackOutcome out = Finish();
  EXPECT_EQ(out.kept, 2);
  EXPECT_TRUE(HasParts("old"));
}

// A record the kill caught before its rename never took effect (no part follows it): its
// temporary file goes.
TEST_F(UnpackJournal, AHalfWrittenRecordIsRemoved) {
  std::filesystem::create_directories(paths[0] + "/" + kPendingUnpackDir);
  const std::string tmp_record = paths[0] + "/" + kPendingUnpackDir + "/new.json.tmp.123";
  std::ofstream(tmp_record) << "{\"old\"";
  EXPECT_EQ(Finish().finished, 0);
  EXPECT_FALSE(std::filesystem::exists(tmp_record));
}

}  // namespace
}  // namespace graphfs::volume
