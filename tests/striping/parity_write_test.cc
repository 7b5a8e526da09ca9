// Writes and truncates of striped files with parity through the row journal (docs/parity.md,
// "Writes: the row journal"): thousands of random writes and truncates read back exactly as a
// plain copy does, also with K disks gone afterwards, and leave every row's parity and sums right
// (graphfs-scrub's check); a journal entry that reached enough disks is replayed at the next
// open, one torn on too many is dropped with the row left as it was, a damaged journal unit is
// rebuilt from the others; a process killed (SIGKILL) while writing and fsyncing loses nothing
// fsync'ed (writes with a disk lost: degraded_write_test.cc). The offline tools
// (graphfs-scrub, graphfs-rebuild, graphfs-unstripe) replay such a journal before they read the
// file, and one that cannot write it (a read-only filesystem) refuses, naming the file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "striping/disk_set.h"
#include "striping/io_engine.h"
#include "striping/rebuild.h"
#include "striping/restripe.h"
#include "striping/row_journal.h"
#include "striping/scrub.h"
#include "striping/stripe_parity.h"
#include "striping/striped_file.h"
#include "tests/engines/run_binary.h"
#include "tests/striping/parity_graph.h"
#include "tests/testutil/file_bytes.h"

namespace graphfs {
namespace {

using testing::RandomBytes;
using testing::ReadAll;
using testing::ReadFile;
using testing::WriteFile;

constexpr uint64_t kUnit = testing::ParityGraph::kUnit;

struct Graph : testing::ParityColumn {
  using ParityColumn::ParityColumn;
  // The file's bytes as a read-only open serves them: nothing replayed.
  std::string ReadOnlyBytes() {
    auto f = OpenFile("column", /*reopen_set=*/true, /*writable=*/false);
    EXPECT_TRUE(f.ok()) << f.error().message();
    if (!f.ok()) return "";
    std::string got((*f)->size(), '\0');
    auto n = (*f)->Read(0, got.size(), got.data());
    EXPECT_TRUE(n.ok()) << n.error().message();
    return got;
  }
};

// fsx: random writes (small, unit-crossing, row-crossing, past the end) and truncates (down,
// up, to row boundaries) on the striped file and on a string; compared after every few.
void Fsx(uint32_t n, uint32_t k, uint32_t seed, int ops) {
  SCOPED_TRACE("N=" + std::to_string(n) + " K=" + std::to_string(k));
  std::string model = RandomBytes(7 * kUnit + 1234, seed);
  Graph g(n, k, model);
  {
    auto f = g.Open();
    ASSERT_TRUE(f.ok()) << f.error().message();
    std::mt19937 rng(seed);
    const uint64_t row = kUnit * (n - k);
    for (int i = 0; i < ops; ++i) {
      const uint32_t kind = rng() % 10;
      if (kind < 7) {
        const uint64_t len = kind < 4 ? 1 + rng() % 5000 : 1 + rng() % (3 * kUnit);
        const uint64_t off = rng() % (model.size() + kUnit);
        const std::string bytes = RandomBytes(len, rng());
        auto w = (*f)->Write(off, bytes.data(), len);
        ASSERT_TRUE(w.ok()) << "op " << i << ": " << w.error().message();
        if (model.size() < off + len) model.resize(off + len, '\0');
        model.replace(off, len, bytes);
      } else if (kind < 9) {
        uint64_t to = rng() % (model.size() + 2 * kUnit);
        if (rng() % 4 == 0) to = to / row * row;  // a row boundary
        Status t = (*f)->Truncate(to);
        ASSERT_TRUE(t.ok()) << "op " << i << ": " << t.error().message();
        model.resize(to, '\0');
      } else {
        Status s = (*f)->Sync();
        ASSERT_TRUE(s.ok()) << "op " << i << ": " << s.error().message();
      }
      ASSERT_EQ((*f)->size(), model.size()) << "op " << i;
      if (i % 50 == 49 || i == ops - 1) {
        ASSERT_TRUE(ReadAll(**f) == model) << "after op " << i;
      }
    }
    ASSERT_TRUE((*f)->Sync().ok());
  }
  EXPECT_TRUE(g.ScrubClean());
  // Every disk's pattern of K lost disks still reads the same bytes through parity.
  for (uint32_t gone = 0; gone < n; ++gone) {
    SCOPED_TRACE("disk " + std::to_string(gone) + (k == 2 ? " and the next" : "") + " gone");
    std::vector<std::string> moved;
    for (uint32_t j = 0; j < k; ++j) {
      const std::string d = g.disks[(gone + j) % n];
      std::filesystem::rename(d, d + ".away");
      moved.push_back(d);
    }
    auto f = g.Open();
    ASSERT_TRUE(f.ok()) << f.error().message();
    EXPECT_TRUE(ReadAll(**f) == model);
    f->reset();
    for (const std::string& d : moved) std::filesystem::rename(d + ".away", d);
  }
}

TEST(ParityWrite, RandomWritesAndTruncatesReadAsAPlainFileAlsoWithADiskGone) { Fsx(4, 1, 11, 2000); }
TEST(ParityWrite, RandomWritesAndTruncatesWithTwoParityUnitsSurviveTwoDisksGone) { Fsx(5, 2, 12, 800); }

// A file grown by a truncate keeps parts shorter than their shares (the tail reads as zero
// blocks) and headers that say the old lengths: the read back takes it whole. Bytes a part holds
// past its share would show through the next grow: the read back refuses them.
TEST(ParityWrite, AFileGrownPastItsPartsReadsBackAndBytesPastAShareDoNot) {
  const std::string data = RandomBytes(5 * kUnit + 77, 15);
  Graph g(4, 1, data);
  const uint64_t grown = data.size() + 7 * kUnit + 5;
  {
    auto f = g.Open();
    ASSERT_TRUE(f.ok()) << f.error().message();
    ASSERT_TRUE((*f)->Truncate(grown).ok());
    ASSERT_TRUE((*f)->Sync().ok());
  }
  auto read = ReadManifest(g.graph + "/column");
  ASSERT_TRUE(read.ok() && *read);
  const StripeManifest* m = &**read;
  ASSERT_EQ(m->stored_size(), grown);
  auto map = StripeMap::Create(m->layout);
  ASSERT_TRUE(map.ok());
  uint32_t short_part = 0;  // a disk whose part ends before its share: what the test is about
  for (uint32_t d = 0; d < 4; ++d)
    if (std::filesystem::file_size(g.PartPath(d, *m)) < map->PartSize(d, grown)) short_part = d + 1;
  ASSERT_NE(short_part, 0u) << "the grow extended every part: the test proves nothing";
  Status verified = VerifyStripeParity(*g.set, *m);
  EXPECT_TRUE(verified.ok()) << verified.error().message();

  const std::string part = g.PartPath(short_part - 1, *m);
  std::filesystem::resize_file(part, map->PartSize(short_part - 1, grown) + 1);
  verified = VerifyStripeParity(*g.set, *m);
  ASSERT_FALSE(verified.ok());
  EXPECT_NE(verified.error().message().find("past the file's share"), std::string::npos) << verified.error().message();
}

// Bytes of every file under the disks (parts, sums, journals), to put a state back.
using DiskImage = std::vector<std::pair<std::string, std::string>>;
DiskImage Image(const Graph& g) {
  DiskImage image;
  for (const std::string& d : g.disks)
    for (const auto& e : std::filesystem::directory_iterator(d + "/parts")) image.emplace_back(e.path(), ReadFile(e.path()));
  return image;
}
// Puts back the parts and sums (never the journals) of the disks whose path starts with `under`.
void Restore(const DiskImage& image, const std::string& under) {
  for (const auto& [path, bytes] : image) {
    const bool journal = path.size() > 8 && path.compare(path.size() - 8, 8, ".journal") == 0;
    if (!journal && path.rfind(under, 0) == 0) WriteFile(path, bytes);
  }
}

// A write whose journal entry is durable but whose in-place writes reached only some disks (disk
// 0's part and sums put back as they were, the journal kept), as a writer killed during them
// leaves it: every unit of row 0 changes, and disk 0 holds the old one. Returns `model` with the
// write, what the journal makes the file; `seed` picks the bytes.
std::string LeaveJournaledWrite(Graph& g, std::string model, uint32_t seed) {
  auto f = g.Open();
  EXPECT_TRUE(f.ok()) << f.error().message();
  if (!f.ok()) return model;
  EXPECT_TRUE((*f)->Write(0, "x", 1).ok());  // the journals exist
  EXPECT_TRUE((*f)->Sync().ok());
  model[0] = 'x';
  const DiskImage before = Image(g);
  const std::string bytes = RandomBytes(kUnit + 5000, seed);
  EXPECT_TRUE((*f)->Write(kUnit - 2000, bytes.data(), bytes.size()).ok());
  model.replace(kUnit - 2000, bytes.size(), bytes);
  f->reset();
  g.io.reset();  // nothing of the writer's left running
  Restore(before, g.disks[0] + "/");  // as if killed during the in-place writes
  return model;
}

// The row's parity disagrees with its data until the next open replays the entry.
TEST(ParityJournal, EntryDurableBeforeTheInPlaceWritesIsReplayedAtOpen) {
  const std::string original = RandomBytes(6 * kUnit, 21);
  Graph g(4, 1, original);
  const std::string model = LeaveJournaledWrite(g, original, 22);
  ASSERT_FALSE(g.ReadOnlyBytes() == model) << "the test proves nothing: the file reads right without the journal";
  auto again = g.Open();
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_TRUE(ReadAll(**again) == model);
  again->reset();
  EXPECT_TRUE(g.ScrubClean());
}

// The offline tools read the parts themselves: each brings the file to what its journal says
// before it reads a row — scrub would otherwise "repair" row 0 into old and new bytes mixed,
// rebuild would rebuild a unit from them, unstripe would copy the old bytes.
TEST(ParityJournal, ScrubReplaysTheJournalOfAKilledWriterFirst) {
  const std::string original = RandomBytes(6 * kUnit, 71);
  Graph g(4, 1, original);
  const std::string model = LeaveJournaledWrite(g, original, 72);
  ASSERT_FALSE(g.ReadOnlyBytes() == model) << "the test proves nothing: the file reads right without the journal";
  ScrubRequest req;
  req.paths = {g.graph};
  req.progress = false;
  auto r = Scrub(req);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->replayed, std::vector<std::string>{g.graph + "/column"});
  EXPECT_EQ(r->total.repaired_blocks + r->total.parity_rewrites, 0u) << "scrub repaired rows the journal rewrites";
  EXPECT_TRUE(g.ReadOnlyBytes() == model) << "scrub left other bytes than the journaled write's";
}

TEST(ParityJournal, RebuildReplaysTheJournalOfAKilledWriterFirst) {
  const std::string original = RandomBytes(6 * kUnit, 81);
  Graph g(4, 1, original);
  const std::string model = LeaveJournaledWrite(g, original, 82);
  const uint32_t lost = 1;  // not disk 0, whose row 0 is stale: the others' are rebuilt from it
  std::filesystem::remove_all(g.disks[lost]);
  auto r = Rebuild(g.RebuildOf(lost, g.tmp.Sub("new-disk")));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(g.ReadOnlyBytes() == model) << "the rebuilt disk holds other bytes than the journaled write's";
  EXPECT_TRUE(g.ScrubClean());
}

TEST(ParityJournal, UnstripeReplaysTheJournalOfAKilledWriterFirst) {
  const std::string original = RandomBytes(6 * kUnit, 91);
  Graph g(4, 1, original);
  const std::string model = LeaveJournaledWrite(g, original, 92);
  UnstripeRequest req;
  req.path = g.graph + "/column";
  req.progress = false;
  auto r = UnstripeFiles(req);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->converted, std::vector<std::string>{"column"});
  EXPECT_TRUE(ReadFile(g.graph + "/column") == model) << "the plain copy holds other bytes than the journaled write's";
}

// On a read-only filesystem (the graph directory bound read-only in a mount namespace of its own)
// the replay cannot run: graphfs-scrub refuses, naming the file and why, and changes nothing.
TEST(ParityJournal, AToolThatCannotReplayTheJournalRefusesNamingTheFile) {
  if (::geteuid() != 0) GTEST_SKIP() << "a read-only bind mount needs root";
  const std::string original = RandomBytes(6 * kUnit, 101);
  Graph g(4, 1, original);
  const std::string model = LeaveJournaledWrite(g, original, 102);
  const std::string stale = g.ReadOnlyBytes();
  auto run = testing::RunBinary({"unshare", "-m", "sh", "-c", "mount --bind -o ro \"$0\" \"$0\" && exec \"$1\" -q \"$0\"",
                                 g.graph, GRAPHFS_SCRUB_TOOL});
  if (run.output.find("unshare:") != std::string::npos || run.output.find("mount:") != std::string::npos)
    GTEST_SKIP() << "no mount namespace here: " << run.output;
  EXPECT_TRUE(run.exited && run.exit_code == 2) << run.How() << "\n" << run.output;
  EXPECT_NE(run.output.find(g.graph + "/column: its row journal holds writes"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("Read-only file system"), std::string::npos) << run.output;
  EXPECT_TRUE(g.ReadOnlyBytes() == stale) << "a refused replay changed the file";
}

// The same with one disk's journal unit damaged: K = 1 rebuilds it from the others.
TEST(ParityJournal, DamagedJournalUnitIsRebuiltFromTheOthers) {
  std::string model = RandomBytes(6 * kUnit, 31);
  Graph g(4, 1, model);
  auto f = g.Open();
  ASSERT_TRUE(f.ok()) << f.error().message();
  ASSERT_TRUE((*f)->Write(0, "y", 1).ok());
  ASSERT_TRUE((*f)->Sync().ok());
  model[0] = 'y';
  const DiskImage before = Image(g);
  const std::string bytes = RandomBytes(3000, 32);
  ASSERT_TRUE((*f)->Write(2 * kUnit + 100, bytes.data(), bytes.size()).ok());
  model.replace(2 * kUnit + 100, bytes.size(), bytes);
  f->reset();
  Restore(before, "");  // as if killed right after the journal's fsync
  // The entry is seq 2, in slot 2: flip a byte of its bytes on the disk of the data unit written.
  const StripeMap map = *StripeMap::Create(g.manifest.layout);
  const uint32_t disk = map.Locate(2 * kUnit).disk;
  const std::string journal = g.disks[disk] + "/parts/" + RowJournal::FileName(g.manifest.file_id);
  testing::FlipByte(journal, kJournalHeaderSize + 2 * (kJournalHeaderSize + kUnit) + kJournalHeaderSize + 10);
  auto again = g.Open();
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_TRUE(ReadAll(**again) == model);
  again->reset();
  EXPECT_TRUE(g.ScrubClean());
}

// An entry that reached fewer than D disks (the journal's fsync never returned): dropped, the
// row stays as it was, and later writes go on from a fresh sequence number.
TEST(ParityJournal, TornEntryIsDroppedAndTheRowStaysAsItWas) {
  std::string model = RandomBytes(6 * kUnit, 41);
  Graph g(4, 1, model);
  auto f = g.Open();
  ASSERT_TRUE(f.ok()) << f.error().message();
  // Two disks fail the journal's writes: the entry is on two of four, D = 3. The write covers
  // all of row 1's data, so it reads nothing first and fails at the journal.
  const uint32_t a = 1, b = 2;
  g.io->InjectFault(a, EIO);
  g.io->InjectFault(b, EIO);
  const std::string bytes = RandomBytes(3 * kUnit, 42);
  auto w = (*f)->Write(3 * kUnit, bytes.data(), bytes.size());
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message().find("journal"), std::string::npos) << w.error().message();
  g.io->InjectFault(a, 0);
  g.io->InjectFault(b, 0);
  f->reset();
  g.io.reset();  // a fresh engine: nothing remembered of the faults
  auto again = g.Open();
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_TRUE(ReadAll(**again) == model) << "a torn entry was applied";
  EXPECT_TRUE(g.ScrubClean());
  ASSERT_TRUE((*again)->Write(3 * kUnit, bytes.data(), bytes.size()).ok());
  model.replace(3 * kUnit, bytes.size(), bytes);
  again->reset();
  auto third = g.Open();
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(ReadAll(**third) == model);
  third->reset();
  EXPECT_TRUE(g.ScrubClean());
}

// A record header damaged on the disk is not a record: an entry with D good units still replays.
TEST(ParityJournal, RecordHeaderDecodeRefusesDamage) {
  JournalRecord r;
  r.seq = 9;
  r.row = 3;
  r.begin = 4096;
  r.length = 8192;
  r.file_size = 1 << 20;
  r.slot = 2;
  r.hashes = {1, 2, 3, 4};
  auto bytes = EncodeJournalRecord("file-1", r);
  ASSERT_TRUE(bytes.ok());
  auto back = DecodeJournalRecord(*bytes, "file-1", 4);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->seq, 9u);
  EXPECT_EQ(back->row, 3u);
  EXPECT_EQ(back->hashes, r.hashes);
  EXPECT_FALSE(DecodeJournalRecord(*bytes, "file-2", 4).ok());
  EXPECT_FALSE(DecodeJournalRecord(*bytes, "file-1", 5).ok());
  std::string flipped = *bytes;
  flipped[20] ^= 1;
  auto bad = DecodeJournalRecord(flipped, "file-1", 4);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("damaged journal record"), std::string::npos);
}

// A child process writes blocks in order and fsyncs each, reporting each fsync on a pipe; it is
// killed with SIGKILL at several points. Every reported block is there, the rest is either old
// or new bytes, and every row's parity and sums are right after the next open.
TEST(ParityJournal, KilledWriterLosesNothingFsyncedAndParityVerifies) {
  const std::string original = RandomBytes(10 * kUnit, 61);
  Graph g(4, 1, original);
  std::mt19937 rng(62);
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::vector<std::pair<uint64_t, std::string>> blocks = testing::RandomWriteBlocks(rng);
    g.io.reset();  // no engine threads in the parent when it forks: the child starts its own
    int status = 0;
    const uint32_t acked = testing::WriteInAChildUntilKilled([&] { return g.Open(); }, blocks, rng, &status);
    ASSERT_GT(acked, 0u) << "no fsync before the kill: the test proves nothing";

    auto f = g.Open();
    ASSERT_TRUE(f.ok()) << f.error().message();
    const std::string now = ReadAll(**f);
    f->reset();
    testing::ExpectFsyncedBlocksKept(now, blocks, acked);
    EXPECT_TRUE(g.ScrubClean());
    // The next round starts from the bytes as they are now (the child's writes included).
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace graphfs
