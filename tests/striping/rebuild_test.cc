// graphfs-rebuild (rebuild.h): a lost disk's parts and sums come back byte for byte on a new
// directory, which the registry then names, and the set opens whole again; killed (SIGKILL) at
// points spread over a run, a rerun resumes and ends with the same bytes, and reads back the rows
// the killed run wrote too (one damaged on the new disk in between fails it); bad input (a directory
// that is not empty, a disk of another set or of this one, a graph without parity, an index out
// of range) is refused before anything is written.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "striping/disk_backend.h"
#include "striping/disk_set.h"
#include "striping/rebuild.h"
#include "striping/rebuild_read_back.h"
#include "striping/set_files.h"
#include "striping/scrub.h"
#include "striping/stale_rows.h"
#include "tests/engines/run_binary.h"
#include "tests/striping/parity_graph.h"

namespace graphfs {
namespace {

namespace fs = std::filesystem;
using testing::ParityGraph;
using testing::RandomBytes;
using testing::ReadFile;

constexpr uint64_t kUnit = ParityGraph::kUnit;

// Every file under DIR/parts and its bytes.
std::map<std::string, std::string> PartsOf(const std::string& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir + "/parts", ec)) out[e.path().filename()] = ReadFile(e.path());
  return out;
}

TEST(Rebuild, LostDiskComesBackByteForByteAndTheRegistryNamesIt) {
  for (uint32_t k : {1u, 2u}) {
    SCOPED_TRACE("parity " + std::to_string(k));
    ParityGraph g(5);
    // Two files; the second ends in a short last row, where some units are short or absent.
    g.Stripe("column", RandomBytes(13 * kUnit, 10 + k), k);
    g.Stripe("row", RandomBytes(7 * kUnit + 12345, 20 + k), k);
    const uint32_t lost = 3;
    const auto before = PartsOf(g.disks[lost]);
    ASSERT_EQ(before.size(), 4u);  // two parts, two sums files
    fs::remove_all(g.disks[lost]);
    const std::string to = g.tmp.Sub("new-disk");
    fs::create_directory(to + "/lost+found");  // as a fresh ext4 has

    auto r = Rebuild(g.RebuildOf(lost, to));
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(r->files, 2u);
    EXPECT_FALSE(r->resumed);
    EXPECT_EQ(PartsOf(to), before) << "the rebuilt parts and sums differ from the lost disk's";
    EXPECT_FALSE(fs::exists(to + "/" + kRebuildRecordFile));
    auto registry = ReadRegistry(g.graph);
    ASSERT_TRUE(registry.ok());
    EXPECT_EQ(registry->disks[lost], to);
    auto set = DiskSet::Open(*registry);
    ASSERT_TRUE(set.ok()) << set.error().message();
    EXPECT_FALSE(set->degraded());
    // A scrub of the whole set finds every unit and row right.
    ScrubRequest scrub;
    scrub.paths = {g.graph};
    scrub.progress = false;
    auto s = Scrub(scrub);
    ASSERT_TRUE(s.ok()) << s.error().message();
    EXPECT_FALSE(s->damage_left());
    EXPECT_EQ(s->total.checksum_errors + s->total.parity_rewrites, 0u);
    // Run again onto the same directory: it is the disk now, which is done, and nothing changes.
    auto again = Rebuild(g.RebuildOf(lost, to));
    ASSERT_TRUE(again.ok()) << again.error().message();
    EXPECT_TRUE(again->in_place);
    EXPECT_EQ(again->bytes, 0u);
    EXPECT_EQ(PartsOf(to), before);
  }
}

// A rerun of a finished rebuild succeeds, saying the disk is DIR already, only while the disks
// prove it: the identity with no progress record, every registry naming DIR, no write-intent
// record naming the disk, every file's part and sums there. Each of these taken away in turn makes
// it fail (exit 1) with a message naming what is wrong, and nothing is written either way.
TEST(Rebuild, ARerunOfAFinishedRebuildIsDoneOnlyWhileTheDisksProveIt) {
  ParityGraph g(4);
  const StripeManifest m = g.Stripe("column", RandomBytes(11 * kUnit + 300, 40), 1);
  const uint32_t lost = 2;
  fs::remove_all(g.disks[lost]);
  const std::string to = g.tmp.Sub("new-disk");
  ASSERT_TRUE(Rebuild(g.RebuildOf(lost, to)).ok());
  const auto parts = PartsOf(to);
  auto run = [&] {
    return testing::RunBinary({GRAPHFS_REBUILD_TOOL, "-q", "--offline", "--disk", "2", "--to", to, g.graph});
  };
  testing::BinaryRun r = run();
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
  EXPECT_NE(r.output.find("disk 2 of set " + m.set_id + " is " + to + " already (rebuilt there, or never lost)"),
            std::string::npos)
      << r.output;
  // A disk never lost, given as its own directory, is in place the same way.
  auto own = Rebuild(g.RebuildOf(1, g.disks[1]));
  ASSERT_TRUE(own.ok()) << own.error().message();
  EXPECT_TRUE(own->in_place);

  // A registry that still names the lost path.
  const DiskRegistry registry = *ReadRegistry(g.graph);
  DiskRegistry old = registry;
  old.disks[lost] = g.disks[lost];
  ASSERT_TRUE(WriteRegistry(g.graph, old).ok());
  r = run();
  EXPECT_TRUE(r.exited && r.exit_code == 1) << r.How() << "\n" << r.output;
  EXPECT_NE(r.output.find("names " + g.disks[lost] + " for it: nothing to rebuild"), std::string::npos) << r.output;
  ASSERT_TRUE(WriteRegistry(g.graph, registry).ok());

  // A write-intent record naming the disk: it missed writes, the scrub's to resync.
  {
    auto set = DiskSet::Open(registry);
    ASSERT_TRUE(set.ok()) << set.error().message();
    std::vector<bool> gone(4, false);
    gone[lost] = true;
    auto stale = StaleRowsWriter::Open(*set, m.file_id, 4, gone);
    ASSERT_TRUE(stale.ok()) << stale.error().message();
    ASSERT_TRUE((*stale)->Mark(3, 4).ok());
    r = run();
    EXPECT_TRUE(r.exited && r.exit_code == 1) << r.How() << "\n" << r.output;
    EXPECT_NE(r.output.find("missed writes while it was lost"), std::string::npos) << r.output;
    ASSERT_TRUE(ClearStaleRows(*set, m.file_id, lost).ok());
  }

  // A part gone from the directory.
  const std::string part = to + "/parts/" + m.file_id;
  fs::rename(part, part + ".aside");
  r = run();
  EXPECT_TRUE(r.exited && r.exit_code == 1) << r.How() << "\n" << r.output;
  EXPECT_NE(r.output.find("does not hold " + g.graph + "/column whole"), std::string::npos) << r.output;
  fs::rename(part + ".aside", part);

  EXPECT_EQ(PartsOf(to), parts) << "a rerun wrote something";
  r = run();
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.How() << "\n" << r.output;
}

// The read back checks the new disk's rows against their sums with O_DIRECT where the
// filesystem has it, and where it has none (tmpfs) writes the range back, drops it from the page
// cache and reads it buffered (rebuild_read_back.h). The tests' disks have O_DIRECT, so the
// second way is asked for: both pass a part that is right, and both stop at a flipped byte,
// naming its row.
TEST(RebuildReadBack, WithAndWithoutODirectRowsAreCheckedAgainstTheirSums) {
  for (RebuildReadBack::Io io : {RebuildReadBack::Io::kDirect, RebuildReadBack::Io::kBuffered}) {
    SCOPED_TRACE(io == RebuildReadBack::Io::kDirect ? "O_DIRECT" : "buffered (no O_DIRECT)");
    ParityGraph g(4);
    const StripeManifest m = g.Stripe("column", RandomBytes(9 * kUnit + 777, 31), 1);
    const StripedFileRef f{g.graph + "/column", m};
    const uint32_t disk = 2;
    const uint64_t rows = StripeMap::Create(m.layout)->Rows(m.stored_size());
    auto backend = OpenDiskBackend(g.disks[disk]);
    ASSERT_TRUE(backend.ok()) << backend.error().message();
    {
      RebuildReadBack read_back(**backend, disk, io);
      read_back.Rows(f, 0, rows);
      read_back.Length(f);
      const Status s = read_back.Wait();
      EXPECT_TRUE(s.ok()) << s.error().message();
    }
    // A byte of row 1's unit on the disk flipped (through the page cache, as a write would be).
    const std::string part = g.PartPath(disk, m);
    UniqueFd fd(::open(part.c_str(), O_RDWR | O_CLOEXEC));
    ASSERT_TRUE(fd.valid());
    char c = 0;
    ASSERT_EQ(::pread(fd.get(), &c, 1, kUnit + 100), 1);
    c = static_cast<char>(c ^ 0x40);
    ASSERT_EQ(::pwrite(fd.get(), &c, 1, kUnit + 100), 1);
    RebuildReadBack read_back(**backend, disk, io);
    read_back.Rows(f, 0, rows);
    const Status s = read_back.Wait();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message().find("row 1"), std::string::npos) << s.error().message();
  }
}

TEST(Rebuild, OntoTheLostDisksOwnPathWhenANewDiskIsMountedThere) {
  ParityGraph g(3);
  g.Stripe("column", RandomBytes(9 * kUnit + 100, 30), 1);
  const auto before = PartsOf(g.disks[1]);
  fs::remove_all(g.disks[1]);
  fs::create_directory(g.disks[1]);  // the replacement, empty, where the old one was
  auto r = Rebuild(g.RebuildOf(1, g.disks[1]));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(PartsOf(g.disks[1]), before);
  auto set = DiskSet::Open(*ReadRegistry(g.graph));
  ASSERT_TRUE(set.ok()) << set.error().message();
  EXPECT_FALSE(set->degraded());
}

TEST(Rebuild, KilledRunsResumeToTheSameBytes) {
  ParityGraph g(4);
  g.Stripe("column", RandomBytes(40 * kUnit + 777, 40), 1);
  g.Stripe("row", RandomBytes(30 * kUnit, 41), 1);
  const uint32_t lost = 2;
  const auto before = PartsOf(g.disks[lost]);
  fs::remove_all(g.disks[lost]);
  // Slowed down so that kills land mid-way: 64 units of the other disks at 2 MB/s, about 2.5 s.
  auto argv = [&](const std::string& to) {
    return std::vector<std::string>{GRAPHFS_REBUILD_TOOL, "-q", "--disk", std::to_string(lost), "--to", to,
                                    "--rate", "2M", "--checkpoint", "128K", g.graph};
  };
  int resumed = 0;
  for (int tenth : {2, 5, 8}) {
    SCOPED_TRACE("killed at " + std::to_string(tenth) + "/10");
    const std::string to = g.tmp.Sub("new-" + std::to_string(tenth));
    int status = 0;
    const bool finished = testing::RunAndKill(argv(to), std::chrono::milliseconds(150 * tenth), &status);
    ASSERT_FALSE(finished) << "the run ended before its kill; slow it down";
    // The registry still names the lost disk until a run finishes.
    EXPECT_EQ(ReadRegistry(g.graph)->disks[lost], g.disks[lost]);
    resumed += fs::exists(to + "/" + kRebuildRecordFile);
    auto run = testing::RunBinary(argv(to), 120);
    ASSERT_TRUE(run.exited && run.exit_code == 0) << run.How() << "\n" << run.output;
    EXPECT_NE(run.output.find("(resumed)"), std::string::npos) << run.output;
    EXPECT_EQ(PartsOf(to), before) << "a resumed rebuild differs from the lost disk";
    EXPECT_EQ(ReadRegistry(g.graph)->disks[lost], to);
    // Back to the lost state for the next round: the registry names the gone disk again.
    auto registry = *ReadRegistry(g.graph);
    registry.disks[lost] = g.disks[lost];
    ASSERT_TRUE(WriteRegistry(g.graph, registry).ok());
  }
  EXPECT_EQ(resumed, 3) << "every killed run left its record";
}

// Each row is read back as it is written, but a killed run's reads back are not recorded: the
// resumed run reads back the rows the killed one made durable. One of them damaged on the new
// disk in between (a write the disk lost) fails the run, and nothing is switched.
TEST(Rebuild, AResumedRunReadsBackTheKilledRunsRowsToo) {
  ParityGraph g(4);
  const StripeManifest m = g.Stripe("column", RandomBytes(40 * kUnit, 50), 1);
  const uint32_t lost = 2;
  fs::remove_all(g.disks[lost]);
  const std::string to = g.tmp.Sub("new-disk");
  const std::vector<std::string> argv{GRAPHFS_REBUILD_TOOL, "-q",   "--disk",       std::to_string(lost), "--to", to,
                                      "--rate",             "2M",   "--checkpoint", "128K",               g.graph};
  int status = 0;
  ASSERT_FALSE(testing::RunAndKill(argv, std::chrono::milliseconds(750), &status))
      << "the run ended before its kill; slow it down";
  const auto record = nlohmann::json::parse(ReadFile(to + "/" + kRebuildRecordFile));
  ASSERT_EQ(record.at("file").get<std::string>(), m.file_id);
  ASSERT_GE(record.at("row").get<uint64_t>(), 1u) << "no row was durable yet; kill later";
  // Row 0's unit on the new disk: the resumed run does not write it again.
  testing::FlipByte(testing::PartPath(to, m), 100);
  auto run = testing::RunBinary(argv, 120);
  EXPECT_TRUE(run.exited && run.exit_code == 1) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("reading back the rebuilt units of " + g.graph + "/column"), std::string::npos)
      << run.output;
  EXPECT_EQ(ReadRegistry(g.graph)->disks[lost], g.disks[lost]) << "switched to a disk that did not read back right";
  EXPECT_FALSE(fs::exists(to + "/" + kDiskIdentityFile));
}

TEST(Rebuild, BadInputIsRefusedBeforeAnythingIsWritten) {
  ParityGraph g(3);
  g.Stripe("column", RandomBytes(6 * kUnit, 50), 1);
  g.Stripe("row", RandomBytes(3 * kUnit, 51), 0);  // no parity: refused last, after the checks above it
  fs::remove_all(g.disks[2]);
  const std::string to = g.tmp.Sub("new");

  auto r = Rebuild(g.RebuildOf(3, to));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "--disk 3: the set has disks 0..2");

  testing::WriteFile(to + "/stray", "x");
  r = Rebuild(g.RebuildOf(2, to));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find(to + " is not empty (1 entry: stray)"), std::string::npos) << r.error().message();
  fs::remove(to + "/stray");

  r = Rebuild(g.RebuildOf(2, g.disks[0]));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find(g.disks[0] + " is disk 0 of set"), std::string::npos) << r.error().message();

  // A disk of another set.
  const std::string other = g.tmp.Sub("other");
  ASSERT_TRUE(DiskSet::Claim({other}).ok());
  r = Rebuild(g.RebuildOf(2, other));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find(other + " belongs to disk set"), std::string::npos) << r.error().message();

  // A graph with a file without parity beside the one with.
  r = Rebuild(g.RebuildOf(2, to));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("/row has no parity (--parity 0): its units on disk 2 cannot be rebuilt"),
            std::string::npos)
      << r.error().message();
  EXPECT_TRUE(fs::is_empty(to)) << "something was written before the checks";

  // The tool: exit 1 with the message; 2 for arguments it cannot parse.
  auto run = testing::RunBinary({GRAPHFS_REBUILD_TOOL, "-q", "--disk", "2", "--to", to, g.graph});
  EXPECT_TRUE(run.exited && run.exit_code == 1) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("cannot be rebuilt"), std::string::npos) << run.output;
  run = testing::RunBinary({GRAPHFS_REBUILD_TOOL, "--disk", "2", "--to", to, "--rate", "0", g.graph});
  EXPECT_TRUE(run.exited && run.exit_code == 2) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("--rate 0: more than 0"), std::string::npos) << run.output;
  run = testing::RunBinary({GRAPHFS_REBUILD_TOOL, "--disk", "2", "--to", to, "--checkpoint", "1Q", g.graph});
  EXPECT_TRUE(run.exited && run.exit_code == 2) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find("--checkpoint 1Q: expected a size such as 64M"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace graphfs
