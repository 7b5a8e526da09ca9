// The online switch of a rebuilt disk (docs/parity.md, "graphfs-rebuild"), below the mount: a
// file opened with disk 1 missing reads through parity; once the disk is rebuilt onto a new
// directory, DiskSet::Replace and StripedFile::AdoptDisk make the open file read it — proved by
// failing another disk afterwards (K = 1: the bytes can only come whole if the new disk serves its
// units). Reads run on other threads all along. Bad switches (a disk not missing, a directory that
// is not the disk) change nothing; a scrub run with the set bumps the sums epoch, which makes the
// open files read their sums again.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "striping/disk_set.h"
#include "striping/rebuild.h"
#include "striping/striped_file.h"
#include "tests/striping/parity_graph.h"

namespace graphfs {
namespace {

namespace fs = std::filesystem;
using testing::ParityGraph;
using testing::RandomBytes;

constexpr uint64_t kUnit = ParityGraph::kUnit;

std::string ReadAll(StripedFile& f) {
  std::string out(f.size(), '\0');
  auto n = f.Read(0, out.size(), out.data());
  if (!n.ok()) return "error: " + n.error().message();
  out.resize(*n);
  return out;
}

TEST(OnlineSwitch, AnOpenFileReadsTheRebuiltDiskOnceSwitched) {
  ParityGraph g(3);
  const std::string data = RandomBytes(17 * kUnit + 4321, 71);
  g.Stripe("column", data, 1);
  fs::remove_all(g.disks[1]);
  auto f = g.OpenFile();
  ASSERT_TRUE(f.ok()) << f.error().message();
  ASSERT_EQ(g.set->state(1), DiskState::kMissing);
  EXPECT_EQ(ReadAll(**f), data);
  uint64_t on_lost = 0;  // a data byte on disk 1
  while ((*f)->map().Locate(on_lost).disk != 1) on_lost += kUnit;
  EXPECT_TRUE((*f)->Rebuilt(on_lost));

  // Readers keep reading while the disk is rebuilt and switched in.
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, rounds{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t)
    readers.emplace_back([&] {
      while (!stop.load()) {
        if (ReadAll(**f) != data) ++bad;
        ++rounds;
      }
    });
  const std::string to = g.tmp.Sub("new-disk");
  RebuildRequest req = g.RebuildOf(1, to);
  req.live = g.set.get();
  auto rebuilt = Rebuild(req);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().message();
  ASSERT_TRUE(g.set->Replace(1, to).ok());
  ASSERT_TRUE((*f)->AdoptDisk(1, *g.set).ok());
  while (rounds.load() < 4) std::this_thread::yield();
  stop = true;
  for (auto& r : readers) r.join();
  EXPECT_EQ(bad.load(), 0) << "a read during the switch differed";

  EXPECT_EQ(g.set->state(1), DiskState::kHealthy);
  EXPECT_EQ(g.set->path(1), fs::canonical(to).string());
  EXPECT_FALSE(g.set->degraded());
  EXPECT_FALSE((*f)->Rebuilt(on_lost));
  // Disk 0 now fails every read: with parity 1, its units come back only from disks 1 and 2.
  g.io->InjectFault(0, EIO);
  EXPECT_EQ(ReadAll(**f), data) << "the switched file does not read the new disk";
  EXPECT_GT(g.io->counters(1).bytes_read.load(), 0u);
}

TEST(OnlineSwitch, ASwitchToTheWrongDirectoryOrOfAPresentDiskChangesNothing) {
  ParityGraph g(3);
  const std::string data = RandomBytes(6 * kUnit, 72);
  g.Stripe("column", data, 1);
  fs::remove_all(g.disks[2]);
  auto f = g.OpenFile();
  ASSERT_TRUE(f.ok()) << f.error().message();
  // Not missing: disk 0 is there.
  Status s = g.set->Replace(0, g.disks[0]);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("is not missing"), std::string::npos) << s.error().message();
  // Not the disk: an empty directory, and disk 1 of this set.
  s = g.set->Replace(2, g.tmp.Sub("empty"));
  EXPECT_FALSE(s.ok());
  s = g.set->Replace(2, g.disks[1]);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("not disk 2"), std::string::npos) << s.error().message();
  EXPECT_EQ(g.set->state(2), DiskState::kMissing);
  // A file asked to take a disk still missing keeps reading through parity.
  EXPECT_FALSE((*f)->AdoptDisk(2, *g.set).ok());
  EXPECT_EQ(ReadAll(**f), data);
}

TEST(OnlineSwitch, ARebuildRunWithTheSetRefusesADiskThatIsNotMissing) {
  ParityGraph g(3);
  g.Stripe("column", RandomBytes(4 * kUnit, 73), 1);
  ASSERT_TRUE(g.OpenSet().ok());
  RebuildRequest req = g.RebuildOf(1, g.tmp.Sub("new-disk"));
  req.live = g.set.get();
  auto r = PrepareRebuild(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), EINVAL);
  EXPECT_NE(r.error().message().find("is not missing from the mount"), std::string::npos) << r.error().message();
}

}  // namespace
}  // namespace graphfs
