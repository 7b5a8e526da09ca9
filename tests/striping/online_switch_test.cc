// The online switch of a rebuilt disk (docs/parity.md, "graphfs-rebuild"), below the mount: a
// file opened with disk 1 missing reads through parity; once the disk is rebuilt onto a new
// directory, DiskSet::Replace and StripedFile::AdoptDisk make the open file read it — proved by
// failing another disk afterwards (K = 1: the bytes can only come whole if the new disk serves its
// units). Reads run on other threads all along. Bad switches (a disk not missing, a directory that
// is not the disk) change nothing; a scrub run with the set bumps the sums epoch, which makes the
// open files read their sums again. A file open for writing across the switch writes again
// through the same open file — its writes and truncates read back as a plain copy's, and every
// row's parity and sums verify on all disks, the new one included — and a write after the switch
// whose in-place writes a kill cut short is replayed from the journal units the new disk holds.
// Writes and truncates racing the rebuild and its switch land on the new disk too; writes that
// keep ahead of the rebuild are held for a few rows only, and a hold past its bound is given up.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "striping/disk_set.h"
#include "striping/rebuild.h"
#include "striping/set_task.h"
#include "striping/row_journal.h"
#include "striping/stripe_parity.h"
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

// Write `i`: up to two units at a random offset of `f` (within a row, across units and rows,
// past the end), done to `model` too.
void RandomWrite(StripedFile& f, std::string& model, std::mt19937& rng, int i) {
  const uint64_t at = rng() % (model.size() + kUnit / 2);
  const std::string bytes = RandomBytes(1 + rng() % (2 * kUnit), rng());
  auto w = f.Write(at, bytes.data(), bytes.size());
  ASSERT_TRUE(w.ok()) << "write " << i << ": " << w.error().message();
  if (at + bytes.size() > model.size()) model.resize(at + bytes.size(), '\0');
  model.replace(at, bytes.size(), bytes);
}

// The file after a rebuild and switch: synced, its bytes read as `model`, every row's parity and
// every block's sum agree on all the disks, and with disk 2 failing every read the bytes still
// come whole — only if the new disk's units are right.
void ExpectWholeOnTheNewDisk(ParityGraph& g, StripedFile& f, const std::string& model) {
  ASSERT_TRUE(f.Sync().ok());
  EXPECT_TRUE(ReadAll(f) == model);
  Status verified = VerifyStripeParity(*g.set, f.manifest());
  EXPECT_TRUE(verified.ok()) << verified.error().message();
  g.io->InjectFault(2, EIO);
  EXPECT_TRUE(ReadAll(f) == model) << "the new disk misses rows written during the rebuild";
  g.io->InjectFault(2, 0);
}

// A rebuild of disk `disk` of `g` (missing, `f` open without it) onto `to`, run beside the set the
// file reads through, whose switch puts the new disk in the set and hands it to `f`.
RebuildRequest LiveRebuildOf(ParityGraph& g, StripedFile& f, uint32_t disk, const std::string& to) {
  RebuildRequest req = g.RebuildOf(disk, to);
  req.live = g.set.get();
  req.switch_in = [&g, &f, disk](const std::string& dir) -> Status {
    GRAPHFS_RETURN_IF_ERROR(g.set->Replace(disk, dir));
    return f.AdoptDisk(disk, *g.set);
  };
  return req;
}

// Disk `disk` of `g` (missing, `f` open without it) rebuilt onto `to` with the set the file reads
// through, switched in, and handed to `f`.
void RebuildAndSwitch(ParityGraph& g, StripedFile& f, uint32_t disk, const std::string& to) {
  RebuildRequest req = g.RebuildOf(disk, to);
  req.live = g.set.get();
  auto rebuilt = Rebuild(req);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().message();
  ASSERT_TRUE(g.set->Replace(disk, to).ok());
  Status adopted = f.AdoptDisk(disk, *g.set);
  ASSERT_TRUE(adopted.ok()) << adopted.error().message();
}

// A file open for writing while disk 1 is missing writes degraded; once the disk is rebuilt and
// switched in, the same open file takes writes and truncates through the journal on every disk,
// and they land on the new disk too.
TEST(OnlineSwitch, AFileOpenForWritingWritesThroughTheSwitchedDisk) {
  ParityGraph g(4);
  std::string model = RandomBytes(14 * kUnit + 777, 74);
  const StripeManifest m = g.Stripe("column", model, 1);
  fs::remove_all(g.disks[1]);
  auto f = g.OpenFile();
  ASSERT_TRUE(f.ok()) << f.error().message();
  // Written degraded first: the rebuild must carry the write onto the new disk.
  auto degraded = (*f)->Write(3 * kUnit + 100, "written while disk 1 was lost", 29);
  ASSERT_TRUE(degraded.ok()) << degraded.error().message();
  model.replace(3 * kUnit + 100, 29, "written while disk 1 was lost");
  ASSERT_TRUE((*f)->Sync().ok());

  const std::string to = g.tmp.Sub("new-disk");
  ASSERT_NO_FATAL_FAILURE(RebuildAndSwitch(g, **f, 1, to));
  EXPECT_FALSE((*f)->degraded());

  // Random writes (within a row, across units and rows, past the end) and truncates, each also
  // done to the model.
  std::mt19937 rng(75);
  for (int i = 0; i < 150; ++i) {
    if (i % 25 == 24) {
      const uint64_t size = rng() % (16 * kUnit);
      ASSERT_TRUE((*f)->Truncate(size).ok()) << "truncate " << i;
      model.resize(size, '\0');
      continue;
    }
    ASSERT_NO_FATAL_FAILURE(RandomWrite(**f, model, rng, i));
    if (i % 10 == 0) {
      ASSERT_TRUE((*f)->Sync().ok());
    }
  }
  ASSERT_TRUE((*f)->Sync().ok());
  EXPECT_EQ((*f)->size(), model.size());
  EXPECT_TRUE(ReadAll(**f) == model);
  // The writes reached the new disk: its journal exists, and every block's sum and every row's
  // parity agree on all four disks.
  EXPECT_TRUE(fs::exists(to + "/parts/" + RowJournal::FileName(m.file_id)));
  Status verified = VerifyStripeParity(*g.set, (*f)->manifest());
  EXPECT_TRUE(verified.ok()) << verified.error().message();
  // Disk 2 failing every read: the bytes come whole only if disk 1's units are right.
  g.io->InjectFault(2, EIO);
  EXPECT_TRUE(ReadAll(**f) == model);
  g.io->InjectFault(2, 0);
  f->reset();
  auto again = g.OpenFile("column", /*reopen_set=*/true);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_TRUE(ReadAll(**again) == model);
}

// Writes and truncates of a file that lost disk 1 go on while the disk is rebuilt with the set
// the file writes through (as the mount's daemon does) and while it is switched in: the rebuild
// does again the rows written behind it and holds the writes for the switch, which hands the file
// the disk; the file then reads as the model, every block's sum and every row's parity agree on
// all four disks, and with disk 2 failing every read the bytes are whole — only if the new disk
// holds the rows written while it was rebuilt.
TEST(OnlineSwitch, WritesAndTruncatesRacingARebuildAndItsSwitchLandOnTheNewDisk) {
  ParityGraph g(4);
  std::string model = RandomBytes(30 * kUnit + 99, 78);
  g.Stripe("column", model, 1);
  fs::remove_all(g.disks[1]);
  auto f = g.OpenFile();
  ASSERT_TRUE(f.ok()) << f.error().message();
  const std::string to = g.tmp.Sub("new-disk");
  RebuildRequest req = LiveRebuildOf(g, **f, 1, to);
  req.rate = 2 << 20;
  std::atomic<bool> done{false};
  Result<RebuildReport> rebuilt = Error(EINVAL, "not run");
  std::thread rebuild([&] {
    rebuilt = Rebuild(req);
    done = true;
  });
  std::mt19937 rng(79);
  int during = 0;
  for (int i = 0; !done.load() || i < 10; ++i) {
    during += !done.load();
    if (i % 8 == 7) {
      const uint64_t size = model.size() / 2 + rng() % model.size();
      ASSERT_TRUE((*f)->Truncate(size).ok()) << "truncate " << i;
      model.resize(size, '\0');
    } else {
      ASSERT_NO_FATAL_FAILURE(RandomWrite(**f, model, rng, i));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  rebuild.join();
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().message();
  ASSERT_GE(during, 10) << "the writes did not come while the rebuild ran: the test proves nothing";
  EXPECT_GT(rebuilt->redone_rows, 0u) << "no write came behind the rebuild: the test proves nothing";
  EXPECT_FALSE((*f)->degraded());
  EXPECT_EQ(g.set->rebuild(1), nullptr);
  ExpectWholeOnTheNewDisk(g, **f, model);
}

constexpr uint64_t kWriteAheadRows = 40;  // the file's rows in WriteAheadOfARebuild

// One run of the test below: writes of 100 bytes row after row, their speed measured first, and
// a rebuild reading at 1/`slower` of it while they go on (a fresh graph each run). `report` and
// `writes_per_second` say what happened; the disk is checked whole after it.
void WriteAheadOfARebuild(double slower, uint32_t seed, RebuildReport* report, double* writes_per_second) {
  constexpr uint64_t kRows = kWriteAheadRows, kRowBytes = 3 * kUnit;
  ParityGraph g(4);
  std::string model = RandomBytes(kRows * kRowBytes, seed);
  g.Stripe("column", model, 1);
  fs::remove_all(g.disks[1]);
  auto f = g.OpenFile();
  ASSERT_TRUE(f.ok()) << f.error().message();
  std::mt19937 rng(seed + 1);
  uint64_t i = 0;
  auto write_next_row = [&] {
    const uint64_t at = (i++ % kRows) * kRowBytes + rng() % (kRowBytes - 100);
    const std::string bytes = RandomBytes(100, rng());
    const bool ok = (*f)->Write(at, bytes.data(), bytes.size()).ok();
    if (ok) model.replace(at, bytes.size(), bytes);
    return ok;
  };
  const auto measure_from = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < measure_from + std::chrono::milliseconds(500)) ASSERT_TRUE(write_next_row());
  *writes_per_second = static_cast<double>(i) / 0.5;
  const double rows_per_second = std::max(*writes_per_second / slower, 1.0);
  RebuildRequest req = LiveRebuildOf(g, **f, 1, g.tmp.Sub("new-disk"));
  req.rate = static_cast<uint64_t>(rows_per_second * static_cast<double>(kRowBytes));
  Result<RebuildReport> rebuilt = Error(EINVAL, "not run");
  std::atomic<bool> done{false};
  std::thread rebuild([&] {
    rebuilt = Rebuild(req);
    done = true;
  });
  // Every row written again and again for six passes at the rate (the first rebuilds the disk,
  // four more do the written rows again at it, the next at full speed), 30 s at most.
  const double pass_seconds = static_cast<double>(kRows) / rows_per_second;
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(static_cast<int64_t>(1000 * std::min(30.0, 6 * pass_seconds)));
  while (std::chrono::steady_clock::now() < until && !done.load()) ASSERT_TRUE(write_next_row()) << "write " << i;
  rebuild.join();
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().message();
  *report = *rebuilt;
  EXPECT_FALSE((*f)->degraded());
  ExpectWholeOnTheNewDisk(g, **f, model);
}

// Writes that keep coming faster than the rebuild does their rows again at its rate: the rebuild
// goes on in passes — at full speed past the first few — with the writes going on, and holds them
// only once at most 16 rows are left (kRebuildRowsToHold; the write under way finishes first),
// never for all the rows the writes keep dirtying (before, it held them after 4 passes whatever
// was left, done without the rate).
TEST(OnlineSwitch, WritesFasterThanTheRebuildAreHeldForAFewRowsOnly) {
  // The hold lets the write under way finish first: one row beyond the rows it waited for.
  constexpr uint64_t kRows = kWriteAheadRows, kMostHeld = 16 + 1;
  // The writes must keep ahead of the rebuild, and how fast they go depends on the machine's
  // load (each is journaled and fsynced): their speed is measured first and the rebuild reads
  // at a third of it. Under a load that rises after the measure (ctest -j2) the writes can still
  // fall behind, and then the run proved nothing: it is run again with a rebuild twice as slow.
  RebuildReport report;
  double writes_per_second = 0;
  double slower = 3;
  for (int attempt = 0; attempt < 3; ++attempt, slower *= 2) {
    ASSERT_NO_FATAL_FAILURE(WriteAheadOfARebuild(slower, 90 + 2 * attempt, &report, &writes_per_second));
    if (report.redone_rows > 2 * kRows) break;
  }
  EXPECT_GT(report.redone_rows, 2 * kRows) << "the writes (" << writes_per_second
                                           << " a second) did not keep ahead of the rebuild: the test proves nothing";
  EXPECT_LE(report.held_rows, kMostHeld) << "the writes were held for " << report.held_rows << " rows";
  EXPECT_EQ(report.holds_given_up, 0u);
}

// A hold that runs past RebuildRequest::max_hold is given up once it has done a row: the writes
// go on, and the rows left are done in later holds. With a bound of 0 every hold does one row:
// ten rows written behind the rebuild take ten holds, nine of them given up, and the disk still
// comes out whole.
TEST(OnlineSwitch, AHoldPastItsBoundIsGivenUpAndTheRowsLeftAreDoneLater) {
  constexpr uint64_t kRows = 24, kRowBytes = 3 * kUnit, kWritten = 10;
  ParityGraph g(4);
  std::string model = RandomBytes(kRows * kRowBytes, 92);
  g.Stripe("column", model, 1);
  fs::remove_all(g.disks[1]);
  auto f = g.OpenFile();
  ASSERT_TRUE(f.ok()) << f.error().message();
  SetTaskProgress task;
  RebuildRequest req = LiveRebuildOf(g, **f, 1, g.tmp.Sub("new-disk"));
  req.task = &task;
  req.rate = 2 << 20;  // about 10 rows a second
  req.max_hold = std::chrono::milliseconds(0);
  Result<RebuildReport> rebuilt = Error(EINVAL, "not run");
  std::atomic<bool> done{false};
  std::thread rebuild([&] {
    rebuilt = Rebuild(req);
    done = true;
  });
  // Once the rebuild is past row kWritten + 2 (each row reads 3 units of the others), one write
  // into each of rows 0..kWritten-1: behind it, remembered, done again after the file.
  while (task.done.load() < (kWritten + 2) * kRowBytes && !done.load())
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_FALSE(done.load()) << "the rebuild ended before the writes: the test proves nothing";
  for (uint64_t r = 0; r < kWritten; ++r) {
    const std::string bytes = RandomBytes(100, 93 + r);
    ASSERT_TRUE((*f)->Write(r * kRowBytes + 7, bytes.data(), bytes.size()).ok());
    model.replace(r * kRowBytes + 7, bytes.size(), bytes);
  }
  rebuild.join();
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().message();
  EXPECT_EQ(rebuilt->held_rows, kWritten);
  EXPECT_EQ(rebuilt->holds_given_up, kWritten - 1);
  ExpectWholeOnTheNewDisk(g, **f, model);
}

// The write hole after the switch: a write through the switched file whose journal entry is
// durable but whose in-place writes reached all but disk 0, and disk 0's journal damaged too (as
// if torn). With N = 3 and K = 1 the entry is replayable only from the units on disks 1 (the new
// disk) and 2: the new disk's journal must hold its unit.
TEST(OnlineSwitch, AWriteCutShortAfterTheSwitchIsReplayedFromTheNewDisksJournal) {
  ParityGraph g(3);
  std::string model = RandomBytes(8 * kUnit, 76);
  const StripeManifest m = g.Stripe("column", model, 1);
  fs::remove_all(g.disks[1]);
  auto f = g.OpenFile();
  ASSERT_TRUE(f.ok()) << f.error().message();
  const std::string to = g.tmp.Sub("new-disk");
  ASSERT_NO_FATAL_FAILURE(RebuildAndSwitch(g, **f, 1, to));
  ASSERT_TRUE((*f)->Write(0, "x", 1).ok());  // the journals exist on every disk
  ASSERT_TRUE((*f)->Sync().ok());
  model[0] = 'x';
  const std::string part0 = g.PartPath(0, m), sums0 = g.SumsPath(0, m);
  const std::string old_part = testing::ReadFile(part0), old_sums = testing::ReadFile(sums0);
  const std::string bytes = RandomBytes(kUnit + 5000, 77);  // row 0's units on every disk change
  ASSERT_TRUE((*f)->Write(kUnit - 2000, bytes.data(), bytes.size()).ok());
  model.replace(kUnit - 2000, bytes.size(), bytes);
  f->reset();
  g.io.reset();  // nothing of the writer's left running
  // Killed during the in-place writes: disk 0's part and sums as they were, its journal gone.
  testing::WriteFile(part0, old_part);
  testing::WriteFile(sums0, old_sums);
  ASSERT_TRUE(fs::remove(g.disks[0] + "/parts/" + RowJournal::FileName(m.file_id)));
  {
    auto read_only = g.OpenFile("column", /*reopen_set=*/true, /*writable=*/false);
    ASSERT_TRUE(read_only.ok()) << read_only.error().message();
    ASSERT_FALSE(ReadAll(**read_only) == model) << "the file reads right without a replay: the test proves nothing";
  }
  // The next open finds the new disk in the registry (the rebuild rewrote it) and replays.
  auto again = g.OpenFile("column", /*reopen_set=*/true);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(g.set->path(1), fs::canonical(to).string());
  EXPECT_TRUE(ReadAll(**again) == model);
  Status verified = VerifyStripeParity(*g.set, (*again)->manifest());
  EXPECT_TRUE(verified.ok()) << verified.error().message();
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
