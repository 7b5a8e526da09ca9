// A striped file created while a disk of its set is missing (striping/file_creation.h: the plain
// copy a compressed file's first write makes through the mount): its parts, parity and sums on the
// present disks only, the missing disk's units lost from the start and marked in its write-intent
// records; reads rebuild them; graphfs-rebuild writes them onto the new disk (parity and sums right
// on every disk, the records gone). And how such a creation meets a rebuild run by the daemon: it
// waits while the rebuild holds the writes, the hold awaits it, and the rebuild is told of the file
// once it is named, and of a file whose parts are removed. And a missing disk that comes back
// instead: the scrub's resync makes the file's part and sums on it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>

#include "common/aligned_buffer.h"
#include "striping/file_creation.h"
#include "striping/part_io.h"
#include "striping/stale_rows.h"
#include "striping/stripe_parity.h"
#include "tests/striping/parity_graph.h"

namespace graphfs::testing {
namespace {

// The manifest of a new raw file of `size` bytes laid out as `like` (set, unit, disks, parity).
StripeManifest NewFileLike(const StripeManifest& like, uint64_t size) {
  StripeManifest m;
  m.file_id = NewId();
  m.set_id = like.set_id;
  m.layout = like.layout;
  m.sum_block = like.sum_block;
  m.size = size;
  return m;
}

// What the volume's unpack does with a creation: parts on the present disks, the bytes and their
// parity and sums written row by row, made durable, then the stub at `stub` naming the file.
void CreateAndWrite(const DiskSet& set, FileCreation& c, const StripeManifest& m, const std::string& data,
                    const std::string& stub) {
  ASSERT_TRUE(c.CreateParts().ok());
  auto parity = StripeParityWriter::Open(set, m, /*resume=*/false, c.lost());
  ASSERT_TRUE(parity.ok()) << parity.error().message();
  auto parts = OpenParts(set, m.file_id, O_WRONLY, c.lost());
  ASSERT_TRUE(parts.ok()) << parts.error().message();
  const StripeMap map = *StripeMap::Create(m.layout);
  const uint64_t row = map.unit() * map.data_units();
  for (uint64_t off = 0; off < data.size(); off += row) {
    const uint64_t len = std::min<uint64_t>(row, data.size() - off);
    ASSERT_TRUE(WriteToParts(set, map, *parts, off, len, data.data() + off).ok());
    ASSERT_TRUE((*parity)->AddRows(off, data.data() + off, len, *parts).ok());
  }
  for (uint32_t d = 0; d < set.size(); ++d) {
    if (!(*parts)[d].valid()) continue;
    ASSERT_EQ(::ftruncate((*parts)[d].get(), static_cast<off_t>(map.PartSize(d, data.size()))), 0);
    ASSERT_EQ(::fsync((*parts)[d].get()), 0);
  }
  ASSERT_TRUE((*parity)->Finish().ok());
  WriteFile(stub, "");
  UniqueFd fd(::open(stub.c_str(), O_RDWR));
  ASSERT_TRUE(WriteManifestFd(fd.get(), m).ok());
  ASSERT_EQ(::fsync(fd.get()), 0);
  c.Named(stub);
}

TEST(FileCreation, AFileCreatedWithADiskMissingIsLostThereFromTheStartAndTheRebuildWritesIt) {
  ParityGraph g(4);
  const StripeManifest column = g.Stripe("column", RandomBytes(10 * ParityGraph::kUnit, 1), 1);
  std::filesystem::remove_all(g.disks[2]);
  ASSERT_TRUE(g.OpenSet().ok());
  const std::string data = RandomBytes(17 * ParityGraph::kUnit + 4321, 2);
  const StripeManifest m = NewFileLike(column, data.size());
  auto c = FileCreation::Begin(*g.set, m);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->lost(), (std::vector<bool>{false, false, true, false}));
  ASSERT_NO_FATAL_FAILURE(CreateAndWrite(*g.set, *c, m, data, g.graph + "/fresh"));
  // Every row marked for disk 2, on every present disk: a disk 2 that comes back holds none of it.
  for (uint32_t d : {0u, 1u, 3u}) {
    EXPECT_TRUE(std::filesystem::exists(g.disks[d] + "/parts/" + StaleRecordName(m.file_id, 2))) << "disk " << d;
    EXPECT_TRUE(std::filesystem::exists(g.PartPath(d, m))) << "disk " << d;
  }
  {
    auto f = g.OpenFile("fresh");
    ASSERT_TRUE(f.ok()) << f.error().message();
    EXPECT_TRUE((*f)->degraded());
    EXPECT_TRUE(ReadAll(**f) == data) << "the file read through parity differs";
  }

  // Offline, the rebuild finds the file and writes its units of disk 2; the records go.
  const std::string to = g.tmp.Sub("new-disk");
  auto report = Rebuild(g.RebuildOf(2, to));
  ASSERT_TRUE(report.ok()) << report.error().message();
  g.disks[2] = to;
  ASSERT_TRUE(g.OpenSet().ok());
  EXPECT_TRUE(VerifyStripeParity(*g.set, m).ok()) << "parity or sums wrong on some disk";
  for (uint32_t d : {0u, 1u, 3u})
    EXPECT_FALSE(std::filesystem::exists(g.disks[d] + "/parts/" + StaleRecordName(m.file_id, 2))) << "disk " << d;
  EXPECT_TRUE(g.ScrubClean());
  // With another disk gone, disk 2's units serve.
  std::filesystem::remove_all(g.disks[0]);
  auto f = g.OpenFile("fresh", /*reopen_set=*/true);
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_TRUE(ReadAll(**f) == data) << "the rebuilt disk's units do not serve";
}

// The missing disk comes back instead of being rebuilt: it is stale for the file (its records mark
// every row) and holds no part of it. The scrub's resync makes the part and its sums and writes
// every row into them, then removes the records: the set is healthy, parity and sums check on all
// four disks, and with disk 0 gone disk 2's units serve. Also from a part a killed resync left
// (made, empty, its sums not yet).
TEST(FileCreation, ADiskThatComesBackIsGivenTheFilesCreatedWhileItWasMissingByTheScrub) {
  for (bool part_left : {false, true}) {
    SCOPED_TRACE(part_left ? "an empty part left by a killed resync" : "no part on the disk");
    ParityGraph g(4);
    const StripeManifest column = g.Stripe("column", RandomBytes(10 * ParityGraph::kUnit, 5), 1);
    const std::string aside = g.tmp.path() + "/d2-unplugged";
    std::filesystem::rename(g.disks[2], aside);
    ASSERT_TRUE(g.OpenSet().ok());
    const std::string data = RandomBytes(13 * ParityGraph::kUnit + 999, 6);
    const StripeManifest m = NewFileLike(column, data.size());
    auto c = FileCreation::Begin(*g.set, m);
    ASSERT_TRUE(c.ok()) << c.error().message();
    ASSERT_NO_FATAL_FAILURE(CreateAndWrite(*g.set, *c, m, data, g.graph + "/fresh"));

    std::filesystem::rename(aside, g.disks[2]);
    ASSERT_TRUE(g.OpenSet().ok());
    EXPECT_EQ(g.set->state(2), DiskState::kStale);
    ASSERT_FALSE(std::filesystem::exists(g.PartPath(2, m)));
    if (part_left) WriteFile(g.PartPath(2, m), "");

    auto scrub = g.RunScrub(/*repair=*/true);
    ASSERT_TRUE(scrub.ok()) << scrub.error().message();
    EXPECT_TRUE(scrub->stale.empty()) << "disk 2 still stale after the resync";
    EXPECT_NE(std::find(scrub->resynced.begin(), scrub->resynced.end(),
                        g.graph + "/fresh: disk 2: " + std::to_string(StripeMap::Create(m.layout)->Rows(data.size())) +
                            " rows resynced"),
              scrub->resynced.end())
        << ::testing::PrintToString(scrub->resynced);
    const uint64_t share = StripeMap::Create(m.layout)->PartSize(2, data.size());
    ASSERT_TRUE(std::filesystem::exists(g.PartPath(2, m)));
    EXPECT_EQ(std::filesystem::file_size(g.PartPath(2, m)), share);
    EXPECT_TRUE(std::filesystem::exists(g.SumsPath(2, m)));
    for (uint32_t d : {0u, 1u, 3u})
      EXPECT_FALSE(std::filesystem::exists(g.disks[d] + "/parts/" + StaleRecordName(m.file_id, 2))) << "disk " << d;
    ASSERT_TRUE(g.OpenSet().ok());
    EXPECT_FALSE(g.set->degraded());
    EXPECT_TRUE(VerifyStripeParity(*g.set, m).ok()) << "parity or sums wrong on some disk";
    EXPECT_TRUE(g.ScrubClean());
    // With another disk gone, disk 2's units serve: they are the file's bytes.
    std::filesystem::remove_all(g.disks[0]);
    auto f = g.OpenFile("fresh", /*reopen_set=*/true);
    ASSERT_TRUE(f.ok()) << f.error().message();
    EXPECT_TRUE(ReadAll(**f) == data) << "the resynced disk's units do not serve";
  }
}

TEST(FileCreation, AFileWithoutParityIsNotCreatedWithADiskMissing) {
  ParityGraph g(3);
  const StripeManifest column = g.Stripe("column", RandomBytes(4 * ParityGraph::kUnit, 3), 1);
  std::filesystem::remove_all(g.disks[1]);
  ASSERT_TRUE(g.OpenSet().ok());
  StripeManifest m = NewFileLike(column, 1000);
  m.sum_block = 0;
  auto c = FileCreation::Begin(*g.set, m);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), EIO);
  EXPECT_NE(c.error().message().find("disks 1 ("), std::string::npos) << c.error().message();
  // The failed creation is not counted as under way: a hold does not wait for it.
  g.set->AwaitCreations();
}

// Polls `flag` for up to `ms` milliseconds.
bool Within(const std::atomic<bool>& flag, int ms) {
  for (int i = 0; i < ms / 5 && !flag.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return flag.load();
}

TEST(FileCreation, ACreationWaitsWhileARebuildHoldsTheWritesAndTheHoldAwaitsIt) {
  ParityGraph g(3);
  const StripeManifest column = g.Stripe("column", RandomBytes(4 * ParityGraph::kUnit, 4), 1);
  std::filesystem::remove_all(g.disks[1]);
  ASSERT_TRUE(g.OpenSet().ok());
  const StripeManifest m = NewFileLike(column, 1000);
  std::shared_ptr<RebuildWatch> watch = g.set->WatchRebuild(1);

  // Held: a creation waits until the writes are let go.
  watch->Hold();
  std::atomic<bool> began{false};
  std::optional<FileCreation> creation;
  std::thread t([&] {
    auto c = FileCreation::Begin(*g.set, m);
    if (c.ok()) creation.emplace(std::move(*c));
    began = true;
  });
  EXPECT_FALSE(Within(began, 200)) << "a creation began while the rebuild held the writes";
  watch->Release();
  EXPECT_TRUE(Within(began, 5000));
  t.join();
  ASSERT_TRUE(creation.has_value());

  // Under way: a hold awaits it; named, the rebuild is told of the file.
  watch->Hold();
  std::atomic<bool> awaited{false};
  std::thread w([&] {
    g.set->AwaitCreations();
    awaited = true;
  });
  EXPECT_FALSE(Within(awaited, 200)) << "the hold did not await the creation under way";
  creation->Named(g.graph + "/fresh");
  EXPECT_TRUE(Within(awaited, 5000));
  w.join();
  const std::vector<RebuildWatch::CreatedFile> told = watch->TakeCreated();
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0].file_id, m.file_id);
  EXPECT_EQ(told[0].path, g.graph + "/fresh");

  // Parts removed while the rebuild runs: it is told before they go.
  EXPECT_FALSE(watch->removed(column.file_id));
  RemovePartsOf(*g.set, column.file_id);
  EXPECT_TRUE(watch->removed(column.file_id));
  g.set->EndRebuild(1);
}

}  // namespace
}  // namespace graphfs::testing
