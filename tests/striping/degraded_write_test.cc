// Writes and truncates of a striped file with parity while disks are lost (issue 44, "a disk that
// dies loses nothing"; docs/parity.md, "Writes with a disk lost"): they read back as the same
// operations on a plain string, with K = 1 and K = 2; the rows written are marked in write-intent
// records on the present disks; the lost disk coming back with its old units (which still match
// their old sums) is stale for the set, and reads of the file rebuild its units of the rows
// written instead of serving them — without the records the same reads return the old bytes, so
// the check bites — while its units of the other rows serve;
// graphfs-scrub resyncs only the marked rows onto the returned disk, after which every disk
// agrees (scrub clean, the file whole with any other disk gone) and the disk is healthy again;
// graphfs-rebuild onto a new directory clears the records too; a writer killed with SIGKILL while
// writing degraded loses nothing fsync'ed; more disks lost than K is an error naming them; and
// writes wait while the mount's daemon rebuilds the lost disk.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/unique_fd.h"
#include "striping/disk_set.h"
#include "striping/manifest.h"
#include "striping/rebuild.h"
#include "striping/scrub.h"
#include "striping/stale_rows.h"
#include "striping/stripe_parity.h"
#include "striping/striped_file.h"
#include "tests/striping/parity_graph.h"
#include "tests/testutil/file_bytes.h"

namespace graphfs {
namespace {

namespace fs = std::filesystem;
using testing::RandomBytes;
using testing::ReadAll;
using testing::ReadFile;

constexpr uint64_t kUnit = testing::ParityGraph::kUnit;

struct Graph : testing::ParityColumn {
  using ParityColumn::ParityColumn;
  void Away(uint32_t d) { fs::rename(disks[d], disks[d] + ".away"); }
  void Back(uint32_t d) { fs::rename(disks[d] + ".away", disks[d]); }
  std::string Record(uint32_t on, uint32_t lost) const {
    return disks[on] + "/parts/" + StaleRecordName(manifest.file_id, lost);
  }
};

// Random writes (small, unit- and row-crossing, past the end), truncates (down, up, to row
// boundaries) and syncs, on `f` and on `model`, compared now and then.
void RandomOps(StripedFile& f, std::string& model, uint32_t seed, int ops, uint64_t row_bytes) {
  std::mt19937 rng(seed);
  for (int i = 0; i < ops; ++i) {
    const uint32_t kind = rng() % 10;
    if (kind < 7) {
      const uint64_t len = kind < 4 ? 1 + rng() % 5000 : 1 + rng() % (3 * kUnit);
      const uint64_t off = rng() % (model.size() + kUnit);
      const std::string bytes = RandomBytes(len, rng());
      auto w = f.Write(off, bytes.data(), len);
      ASSERT_TRUE(w.ok()) << "op " << i << ": " << w.error().message();
      if (model.size() < off + len) model.resize(off + len, '\0');
      model.replace(off, len, bytes);
    } else if (kind < 9) {
      uint64_t to = rng() % (model.size() + 2 * kUnit);
      if (rng() % 4 == 0) to = to / row_bytes * row_bytes;
      Status t = f.Truncate(to);
      ASSERT_TRUE(t.ok()) << "op " << i << ": " << t.error().message();
      model.resize(to, '\0');
    } else {
      Status s = f.Sync();
      ASSERT_TRUE(s.ok()) << "op " << i << ": " << s.error().message();
    }
    ASSERT_EQ(f.size(), model.size()) << "op " << i;
    if (i % 20 == 19 || i == ops - 1) {
      ASSERT_TRUE(ReadAll(f) == model) << "after op " << i;
    }
  }
  ASSERT_TRUE(f.Sync().ok());
}

// Writes with `lost` gone, then the disks back stale, read, resynced by scrub, checked.
void LoseWriteReturnResync(uint32_t n, uint32_t k, std::vector<uint32_t> lost, uint32_t seed) {
  std::string model = RandomBytes(9 * kUnit + 4321, seed);
  Graph g(n, k, model);
  const StripeMap map = *StripeMap::Create(g.manifest.layout);
  uint64_t bytes_row = 0;  // a row (of the file as striped) whose data slot 0 is on lost[0]
  while (map.SlotDisk(bytes_row, 0) != lost[0]) ++bytes_row;
  ASSERT_LT((bytes_row + 1) * kUnit * (n - k), model.size());
  for (uint32_t d : lost) g.Away(d);
  {
    auto f = g.Open();
    ASSERT_TRUE(f.ok()) << f.error().message();
    EXPECT_TRUE((*f)->degraded());
    ASSERT_NO_FATAL_FAILURE(RandomOps(**f, model, seed + 1, 400, kUnit * (n - k)));
    // Last, the whole of a row whose first data unit lies on a lost disk, which held that row
    // whole when it was lost (its old unit and old sums agree: served, they would pass).
    const std::string row_bytes = RandomBytes(kUnit * (n - k), seed + 2);
    ASSERT_TRUE((*f)->Write(bytes_row * kUnit * (n - k), row_bytes.data(), row_bytes.size()).ok());
    if (model.size() < (bytes_row + 1) * kUnit * (n - k)) model.resize((bytes_row + 1) * kUnit * (n - k), '\0');
    model.replace(bytes_row * kUnit * (n - k), row_bytes.size(), row_bytes);
    ASSERT_TRUE((*f)->Sync().ok());
  }
  // The rows written are marked on every present disk, for every lost one.
  for (uint32_t d = 0; d < n; ++d) {
    if (std::find(lost.begin(), lost.end(), d) != lost.end()) continue;
    for (uint32_t l : lost) EXPECT_TRUE(fs::exists(g.Record(d, l))) << "disk " << d << " lost " << l;
  }
  {
    auto f = g.Open();  // still degraded: reopened, the writes read back
    ASSERT_TRUE(f.ok()) << f.error().message();
    EXPECT_TRUE(ReadAll(**f) == model);
  }

  // The disks come back holding what they held when they were lost.
  std::vector<std::string> stale_parts;
  for (uint32_t d : lost) {
    g.Back(d);
    stale_parts.push_back(ReadFile(g.PartPath(d, g.manifest)));
  }
  ASSERT_TRUE(g.OpenSet().ok());
  for (uint32_t d : lost) EXPECT_EQ(g.set->state(d), DiskState::kStale) << "disk " << d;
  bool noted = false;
  for (const std::string& note : g.set->DegradedNotes()) noted |= note.find("stale: disk " + std::to_string(lost[0])) == 0;
  EXPECT_TRUE(noted) << "the set's notes name the stale disk";
  {
    auto f = g.Open();
    ASSERT_TRUE(f.ok()) << f.error().message();
    EXPECT_TRUE((*f)->degraded()) << "the stale disk is read through parity";
    EXPECT_TRUE(ReadAll(**f) == model) << "stale units served";
  }
  {
    // Without the records the same disks would be served as they are: wrong bytes. (So the
    // check above bites: the records are what keeps the stale units out.)
    const fs::path aside = g.tmp.Sub("records-aside");
    for (uint32_t d = 0; d < n; ++d)
      for (uint32_t l : lost)
        if (fs::exists(g.Record(d, l))) fs::rename(g.Record(d, l), aside / (std::to_string(d) + "-" + std::to_string(l)));
    auto f = g.OpenFile("column", /*reopen_set=*/true, /*writable=*/false);
    ASSERT_TRUE(f.ok()) << f.error().message();
    const uint64_t at = bytes_row * kUnit * (n - k), len = kUnit * (n - k);
    std::string got(len, '\0');
    auto read = (*f)->Read(at, len, got.data());
    ASSERT_TRUE(read.ok()) << read.error().message();
    EXPECT_NE(got, model.substr(at, len)) << "the lost disk's old unit reads right: the test proves nothing";
    f->reset();
    for (uint32_t d = 0; d < n; ++d)
      for (uint32_t l : lost)
        if (fs::exists(aside / (std::to_string(d) + "-" + std::to_string(l))))
          fs::rename(aside / (std::to_string(d) + "-" + std::to_string(l)), g.Record(d, l));
  }

  // The resync: only the marked rows rewritten, the records gone, the disks healthy again.
  auto r = g.RunScrub(/*repair=*/true);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->stale.empty());
  EXPECT_GT(r->total.resynced_blocks, 0u);
  EXPECT_EQ(r->total.unrepaired_blocks, 0u);
  ASSERT_EQ(r->resynced.size(), lost.size());
  for (const std::string& line : r->resynced) EXPECT_NE(line.find("rows resynced"), std::string::npos) << line;
  for (size_t i = 0; i < lost.size(); ++i)
    EXPECT_NE(ReadFile(g.PartPath(lost[i], g.manifest)), stale_parts[i]) << "disk " << lost[i] << " not rewritten";
  for (uint32_t d = 0; d < n; ++d)
    for (uint32_t l : lost) EXPECT_FALSE(fs::exists(g.Record(d, l))) << "disk " << d << " lost " << l;
  ASSERT_TRUE(g.OpenSet().ok());
  for (uint32_t d : lost) EXPECT_EQ(g.set->state(d), DiskState::kHealthy);
  EXPECT_TRUE(g.ScrubClean());
  // Every pattern of K disks gone reads the same: the resynced disks serve their units.
  for (uint32_t gone = 0; gone < n; ++gone) {
    SCOPED_TRACE("disk " + std::to_string(gone) + (k == 2 ? " and the next" : "") + " gone");
    for (uint32_t j = 0; j < k; ++j) g.Away((gone + j) % n);
    auto f = g.Open();
    ASSERT_TRUE(f.ok()) << f.error().message();
    EXPECT_TRUE(ReadAll(**f) == model);
    f->reset();
    for (uint32_t j = 0; j < k; ++j) g.Back((gone + j) % n);
  }
}

TEST(DegradedWrite, WritesWithADiskLostReadAsAPlainFileAndTheReturnedStaleDiskIsResynced) {
  LoseWriteReturnResync(4, 1, {2}, 201);
}

TEST(DegradedWrite, WritesWithTwoDisksLostUnderTwoParityUnitsAreResyncedOntoBoth) {
  LoseWriteReturnResync(5, 2, {1, 3}, 202);
}

// A stale disk is stale only in the rows its records mark: its other rows are read from it. With
// another disk failing every read (K = 1), the rows not written while it was lost still read
// whole — possible only from its units — and those written are EIO, never its old units; a row
// the open file writes with the disk stale is rebuilt from then on, before the file is reopened.
TEST(DegradedWrite, AStaleDiskServesTheRowsItDidNotMissAndNoneItMissed) {
  constexpr uint32_t kStale = 2, kFailing = 0;
  const uint64_t row_bytes = 3 * kUnit;
  std::string model = RandomBytes(8 * row_bytes, 261);
  Graph g(4, 1, model);
  const StripeMap map = *StripeMap::Create(g.manifest.layout);
  const std::set<uint64_t> missed = {1, 5};
  g.Away(kStale);
  {
    auto f = g.Open();
    ASSERT_TRUE(f.ok()) << f.error().message();
    for (uint64_t row : missed) {
      const std::string bytes = RandomBytes(kUnit + 100, 262 + row);
      const uint64_t at = row * row_bytes + kUnit / 2;
      ASSERT_TRUE((*f)->Write(at, bytes.data(), bytes.size()).ok());
      model.replace(at, bytes.size(), bytes);
    }
    ASSERT_TRUE((*f)->Sync().ok());
  }
  g.Back(kStale);
  auto f = g.Open();
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_EQ(g.set->state(kStale), DiskState::kStale);
  EXPECT_TRUE((*f)->degraded());
  EXPECT_TRUE(ReadAll(**f) == model) << "stale units served";
  auto read_row = [&](uint64_t row) {
    std::string got(row_bytes, '\0');
    auto n = (*f)->Read(row * row_bytes, row_bytes, got.data());
    return n.ok() ? Result<std::string>(got) : Result<std::string>(n.error());
  };
  auto expect_rows = [&](const std::set<uint64_t>& stale) {
    for (uint64_t row = 0; row < 8; ++row) {
      SCOPED_TRACE("row " + std::to_string(row));
      auto got = read_row(row);
      if (stale.count(row) != 0) {
        ASSERT_FALSE(got.ok()) << "disk " << kFailing << " failing and disk " << kStale << " stale in the row: served";
        EXPECT_EQ(got.error().code(), EIO);
      } else {
        ASSERT_TRUE(got.ok()) << got.error().message();
        EXPECT_TRUE(*got == model.substr(row * row_bytes, row_bytes));
      }
    }
  };
  // Disk kFailing fails every read, then works again (as its probe would find).
  auto with_failing = [&](const std::set<uint64_t>& stale) {
    g.io->InjectFault(kFailing, EIO);
    expect_rows(stale);
    g.io->InjectFault(kFailing, 0);
    g.io->NoteReadOk(kFailing);
  };
  const uint64_t stale_reads = g.io->counters(kStale).bytes_read.load();
  ASSERT_NO_FATAL_FAILURE(with_failing(missed));
  EXPECT_GT(g.io->counters(kStale).bytes_read.load(), stale_reads) << "the stale disk served nothing";

  // A row not missed whose data the stale disk holds, written whole by the open file: the disk
  // keeps its old unit there (it is lost to the writes), which the reads must no longer serve.
  uint64_t row = 0;
  while (missed.count(row) != 0 || map.DiskSlot(row, kStale) >= map.data_units()) ++row;
  ASSERT_LT(row, 8u);
  const std::string bytes = RandomBytes(row_bytes, 270);
  ASSERT_TRUE((*f)->Write(row * row_bytes, bytes.data(), bytes.size()).ok());
  model.replace(row * row_bytes, row_bytes, bytes);
  auto got = read_row(row);
  ASSERT_TRUE(got.ok()) << got.error().message();
  EXPECT_TRUE(*got == bytes) << "the stale disk's old unit of a row written since the open served";
  std::set<uint64_t> now_missed = missed;
  now_missed.insert(row);
  ASSERT_NO_FATAL_FAILURE(with_failing(now_missed));
  ASSERT_TRUE((*f)->Sync().ok());
  f->reset();
  // The records say so too: reopened, the same.
  f = g.Open();
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_TRUE(ReadAll(**f) == model);
  ASSERT_NO_FATAL_FAILURE(with_failing(now_missed));
}

// A disk missing when the file was opened comes back while it is open (the mount's daemon
// takes it back: DiskSet::TakeBack, then StripedFile::TakeBackDisk for each open file) — not
// before it is there as this set's disk: nothing there, an empty directory and another set's disk
// are refused and change nothing. Taken back, it is stale; the open file reads its rows not missed
// from it (with disk 0 failing every read they come whole, and the disk serves bytes) and never
// its units of the rows written while it was away (EIO with disk 0 failing, not its old bytes); a
// row written after the return is kept from it too. The scrub run with the set (as the daemon's)
// resyncs it with the file open: healthy, the file takes the disk for reads and writes, and every
// row reads whole with disk 0 failing.
TEST(DegradedWrite, ADiskTakenBackUnderAnOpenFileServesTheRowsItDidNotMissAndNoneItMissed) {
  constexpr uint32_t kBack = 2, kFailing = 0;
  const uint64_t row_bytes = 3 * kUnit;
  std::string model = RandomBytes(8 * row_bytes, 281);
  Graph g(4, 1, model);
  const StripeMap map = *StripeMap::Create(g.manifest.layout);
  g.Away(kBack);
  auto f = g.Open();
  ASSERT_TRUE(f.ok()) << f.error().message();
  const std::set<uint64_t> missed = {2, 6};
  for (uint64_t row : missed) {
    const std::string bytes = RandomBytes(kUnit + 300, 282 + row);
    const uint64_t at = row * row_bytes + kUnit / 3;
    ASSERT_TRUE((*f)->Write(at, bytes.data(), bytes.size()).ok());
    model.replace(at, bytes.size(), bytes);
  }
  ASSERT_TRUE((*f)->Sync().ok());

  // Not the disk: nothing there, an empty directory, another set's disk of the same index.
  Status s = g.set->TakeBack(kBack);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), ENOENT) << s.error().message();
  fs::create_directory(g.disks[kBack]);
  s = g.set->TakeBack(kBack);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), ENODEV) << s.error().message();
  EXPECT_NE(s.error().message().find("holds no .graphfs-disk"), std::string::npos) << s.error().message();
  fs::remove(g.disks[kBack]);
  std::vector<std::string> foreign;
  for (int i = 0; i < 4; ++i) foreign.push_back(g.tmp.Sub("foreign" + std::to_string(i)));
  auto other = DiskSet::Claim(foreign);
  ASSERT_TRUE(other.ok()) << other.error().message();
  fs::rename(foreign[kBack], g.disks[kBack]);
  s = g.set->TakeBack(kBack);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), EINVAL) << s.error().message();
  EXPECT_NE(s.error().message().find("of set " + other->set_id() + ", not disk 2 of 4 of set " + g.set->set_id()),
            std::string::npos)
      << s.error().message();
  fs::remove_all(g.disks[kBack]);
  EXPECT_EQ(g.set->state(kBack), DiskState::kMissing);
  // A file asked before the set took the disk back keeps reading through parity.
  EXPECT_FALSE((*f)->TakeBackDisk(kBack, *g.set).ok());
  EXPECT_TRUE(ReadAll(**f) == model);

  g.Back(kBack);
  ASSERT_TRUE(g.set->TakeBack(kBack).ok());
  EXPECT_EQ(g.set->state(kBack), DiskState::kStale);
  EXPECT_FALSE(g.set->degraded());
  EXPECT_FALSE(g.set->TakeBack(kBack).ok()) << "taken back twice";
  bool stale = false;
  Status taken = (*f)->TakeBackDisk(kBack, *g.set, &stale);
  ASSERT_TRUE(taken.ok()) << taken.error().message();
  EXPECT_TRUE(stale);
  EXPECT_TRUE((*f)->degraded());
  EXPECT_TRUE(ReadAll(**f) == model) << "stale units served";

  auto expect_rows = [&](const std::set<uint64_t>& stale_rows) {
    for (uint64_t row = 0; row < 8; ++row) {
      SCOPED_TRACE("row " + std::to_string(row));
      std::string got(row_bytes, '\0');
      auto n = (*f)->Read(row * row_bytes, row_bytes, got.data());
      if (stale_rows.count(row) != 0) {
        ASSERT_FALSE(n.ok()) << "disk " << kFailing << " failing and disk " << kBack << " missed the row: served";
        EXPECT_EQ(n.error().code(), EIO);
      } else {
        ASSERT_TRUE(n.ok()) << n.error().message();
        EXPECT_TRUE(got == model.substr(row * row_bytes, row_bytes));
      }
    }
  };
  auto with_failing = [&](const std::set<uint64_t>& stale_rows) {
    g.io->InjectFault(kFailing, EIO);
    expect_rows(stale_rows);
    g.io->InjectFault(kFailing, 0);
    g.io->NoteReadOk(kFailing);
  };
  const uint64_t back_reads = g.io->counters(kBack).bytes_read.load();
  ASSERT_NO_FATAL_FAILURE(with_failing(missed));
  EXPECT_GT(g.io->counters(kBack).bytes_read.load(), back_reads) << "the disk taken back served nothing";

  // A row not missed whose data the disk holds, written whole after the return: kept from it.
  uint64_t row = 0;
  while (missed.count(row) != 0 || map.DiskSlot(row, kBack) >= map.data_units()) ++row;
  ASSERT_LT(row, 8u);
  const std::string bytes = RandomBytes(row_bytes, 290);
  ASSERT_TRUE((*f)->Write(row * row_bytes, bytes.data(), bytes.size()).ok());
  model.replace(row * row_bytes, row_bytes, bytes);
  ASSERT_TRUE((*f)->Sync().ok());
  std::set<uint64_t> now_missed = missed;
  now_missed.insert(row);
  ASSERT_NO_FATAL_FAILURE(with_failing(now_missed));
  EXPECT_TRUE(ReadAll(**f) == model);

  // The daemon's scrub (run with the set the file reads through) resyncs it, the file open.
  ScrubRequest req;
  req.paths = {g.graph};
  req.progress = false;
  req.live = g.set.get();
  auto scrub = Scrub(req);
  ASSERT_TRUE(scrub.ok()) << scrub.error().message();
  EXPECT_TRUE(scrub->stale.empty());
  EXPECT_EQ(g.set->state(kBack), DiskState::kHealthy);
  EXPECT_FALSE((*f)->degraded());
  ASSERT_NO_FATAL_FAILURE(with_failing({}));
  const std::string more = RandomBytes(2 * kUnit, 291);
  ASSERT_TRUE((*f)->Write(2 * row_bytes, more.data(), more.size()).ok());
  model.replace(2 * row_bytes, more.size(), more);
  ASSERT_TRUE((*f)->Sync().ok());
  ASSERT_NO_FATAL_FAILURE(with_failing({}));
  for (uint32_t d = 0; d < 4; ++d) EXPECT_FALSE(fs::exists(g.Record(d, kBack))) << "disk " << d;
  Status verified = VerifyStripeParity(*g.set, (*f)->manifest());
  EXPECT_TRUE(verified.ok()) << verified.error().message();
}

// graphfs-rebuild onto a new directory writes every row, so it clears the records too.
TEST(DegradedWrite, ARebuildOntoANewDiskClearsTheRecordsAndServesTheWrites) {
  std::string model = RandomBytes(6 * kUnit + 17, 211);
  Graph g(4, 1, model);
  g.Away(1);
  {
    auto f = g.Open();
    ASSERT_TRUE(f.ok()) << f.error().message();
    ASSERT_NO_FATAL_FAILURE(RandomOps(**f, model, 212, 120, 3 * kUnit));
  }
  ASSERT_TRUE(fs::exists(g.Record(0, 1)));
  const std::string to = g.tmp.Sub("new-disk");
  auto rebuilt = Rebuild(g.RebuildOf(1, to));
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().message();
  for (uint32_t d : {0u, 2u, 3u}) EXPECT_FALSE(fs::exists(g.Record(d, 1))) << "disk " << d;
  g.disks[1] = to;
  EXPECT_TRUE(g.ScrubClean());
  g.Away(3);  // the new disk serves its units
  auto f = g.Open();
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_TRUE(ReadAll(**f) == model);
}

// A shrink journaled with every disk there, the writer killed before its cut reached any disk
// (parts, sums and the stub's size put back as they were, the journal kept), then disk 2 lost
// before the next open: the recovery replays the shrink on the present disks, and disk 2 keeps
// its units of the rows cut. The file grown back over them with the disk still lost must read
// zeros there also once the disk is back — its old units match their old sums, so only their
// rows' marks keep them from being served —, and the scrub resyncs them.
TEST(DegradedWrite, AShrinkReplayedWithADiskLostMarksTheRowsItCutForIt) {
  const uint64_t row = 3 * kUnit;  // N = 4, K = 1
  std::string model = RandomBytes(4 * row, 230);
  Graph g(4, 1, model);
  {
    auto f = g.Open();
    ASSERT_TRUE(f.ok()) << f.error().message();
    ASSERT_TRUE((*f)->Write(0, "x", 1).ok());  // the journals exist
    ASSERT_TRUE((*f)->Sync().ok());
    model[0] = 'x';
  }
  const std::string stub = g.graph + "/column";
  auto manifest = ReadManifest(stub);
  ASSERT_TRUE(manifest.ok() && manifest->has_value());
  std::vector<std::pair<std::string, std::string>> parts;  // every part and sums file, not the journals
  for (const std::string& d : g.disks)
    for (const auto& e : fs::directory_iterator(d + "/parts"))
      if (!e.path().string().ends_with(".journal")) parts.emplace_back(e.path(), ReadFile(e.path()));
  {
    auto f = g.Open();
    ASSERT_TRUE(f.ok()) << f.error().message();
    ASSERT_TRUE((*f)->Truncate(row).ok());  // a row boundary: the entry rewrites no row
  }
  g.io.reset();
  for (const auto& [path, bytes] : parts) testing::WriteFile(path, bytes);
  {
    UniqueFd fd(::open(stub.c_str(), O_RDWR));
    ASSERT_TRUE(WriteManifestFd(fd.get(), **manifest).ok());
  }
  g.Away(2);
  {
    auto f = g.Open();  // the shrink replayed with disk 2 lost
    ASSERT_TRUE(f.ok()) << f.error().message();
    ASSERT_EQ((*f)->size(), row) << "the shrink was not replayed: the test proves nothing";
    ASSERT_TRUE((*f)->Truncate(4 * row).ok());
    ASSERT_TRUE((*f)->Sync().ok());
  }
  model = model.substr(0, row) + std::string(3 * row, '\0');
  for (uint32_t d : {0u, 1u, 3u}) EXPECT_TRUE(fs::exists(g.Record(d, 2))) << "disk " << d;
  g.Back(2);
  {
    auto f = g.Open();
    ASSERT_TRUE(f.ok()) << f.error().message();
    EXPECT_TRUE(ReadAll(**f) == model) << "disk 2's units of the rows cut were served";
  }
  auto scrub = g.RunScrub();
  ASSERT_TRUE(scrub.ok()) << scrub.error().message();
  EXPECT_TRUE(scrub->stale.empty());
  EXPECT_TRUE(g.ScrubClean());
  g.Away(0);
  auto f = g.Open();
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_TRUE(ReadAll(**f) == model) << "the resynced disk's units are not the file's";
}

// The file cut in the middle of a lost disk's unit, the disk back and resynced: the blocks of that
// unit past the cut are gone from the disk's part, and their sums must be the zero blocks' too —
// grown again, the file reads zeros there with another disk gone, and the scrub finds nothing.
TEST(DegradedWrite, AResyncAfterAShrinkLeavesZeroSumsPastTheDisksUnitInTheLastRow) {
  const uint64_t row = 3 * kUnit;  // N = 4, K = 1
  std::string model = RandomBytes(4 * row, 240);
  Graph g(4, 1, model);
  const StripeMap map = *StripeMap::Create(g.manifest.layout);
  const uint32_t lost = map.SlotDisk(2, 0), other = (lost + 1) % 4;
  // Inside row 2's first data unit, on `lost`: its last sum block (of four) lies wholly past the cut.
  const uint64_t cut = 2 * row + kUnit / 2 + 100;
  static_assert(kUnit / 2 + 100 <= kUnit - testing::ParityGraph::kBlock);
  g.Away(lost);
  {
    auto f = g.Open();
    ASSERT_TRUE(f.ok()) << f.error().message();
    ASSERT_TRUE((*f)->Truncate(cut).ok());
    ASSERT_TRUE((*f)->Sync().ok());
  }
  g.Back(lost);
  auto scrub = g.RunScrub();
  ASSERT_TRUE(scrub.ok()) << scrub.error().message();
  ASSERT_TRUE(scrub->stale.empty());
  {
    auto f = g.Open();
    ASSERT_TRUE(f.ok()) << f.error().message();
    ASSERT_TRUE((*f)->Truncate(4 * row).ok());
    ASSERT_TRUE((*f)->Sync().ok());
  }
  model = model.substr(0, cut) + std::string(4 * row - cut, '\0');
  EXPECT_TRUE(g.ScrubClean());
  g.Away(other);
  auto f = g.Open();
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_TRUE(ReadAll(**f) == model);
}

// A writer killed with SIGKILL while it writes and fsyncs with a disk lost: every fsync'ed block
// is there at the next open (still degraded), and again once the disk is back and resynced.
TEST(DegradedWrite, AWriterKilledWhileWritingDegradedLosesNothingFsynced) {
  const std::string original = RandomBytes(10 * kUnit, 221);
  Graph g(4, 1, original);
  g.Away(2);
  std::mt19937 rng(222);
  std::vector<std::pair<uint64_t, std::string>> acked_blocks;
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::vector<std::pair<uint64_t, std::string>> blocks = testing::RandomWriteBlocks(rng);
    g.io.reset();  // no engine threads in the parent when it forks: the child starts its own
    int status = 0;
    const uint32_t acked = testing::WriteInAChildUntilKilled([&] { return g.Open(); }, blocks, rng, &status);
    ASSERT_GT(acked, 0u) << "no fsync before the kill: the test proves nothing";
    ASSERT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << "the child failed: " << WEXITSTATUS(status);

    auto f = g.Open();
    ASSERT_TRUE(f.ok()) << f.error().message();
    const std::string now = ReadAll(**f);
    f->reset();
    testing::ExpectFsyncedBlocksKept(now, blocks, acked);
    // This round's blocks are what a later one must not lose: they lie apart, later rounds may
    // overwrite them, so only the last round's are checked after the resync.
    acked_blocks.assign(blocks.begin(), blocks.begin() + acked);
    if (HasFailure()) return;
  }
  auto before = g.Open();
  ASSERT_TRUE(before.ok());
  const std::string model = ReadAll(**before);
  before->reset();
  g.Back(2);
  auto r = g.RunScrub(/*repair=*/true);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->stale.empty());
  EXPECT_TRUE(g.ScrubClean());
  g.Away(0);  // disk 2's resynced units serve
  auto f = g.Open();
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_TRUE(ReadAll(**f) == model);
  const std::string now = ReadAll(**f);
  for (const auto& [at, bytes] : acked_blocks) EXPECT_TRUE(now.compare(at, bytes.size(), bytes) == 0);
}

// K + 1 disks lost: the set with both directories gone is refused naming them; with one gone and
// the other's part gone too, the file is refused naming both.
TEST(DegradedWrite, MoreDisksLostThanParityIsAnErrorNamingThem) {
  Graph g(4, 1, RandomBytes(4 * kUnit, 231));
  g.Away(1);
  g.Away(3);
  auto f = g.Open();
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code(), ENODEV);
  EXPECT_NE(f.error().message().find("disks 1 ("), std::string::npos) << f.error().message();
  EXPECT_NE(f.error().message().find("and 3 ("), std::string::npos) << f.error().message();
  g.Back(3);
  fs::remove(g.PartPath(3, g.manifest));
  f = g.Open();
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code(), EIO);
  EXPECT_NE(f.error().message().find("disks 1, 3 lost"), std::string::npos) << f.error().message();
}

// While the mount's daemon rebuilds the lost disk, writes go on: each row written in place (or
// cut by a shrink) that the rebuild has passed is told to it, and no other; while it holds the
// writes for the switch a write waits, and lands once they are let go.
TEST(DegradedWrite, WritesDuringTheDaemonsRebuildTellItTheRowsItPassedAndWaitForTheSwitch) {
  Graph g(4, 1, RandomBytes(4 * kUnit, 241));  // rows of 3 data units: rows 0 and 1
  g.Away(2);
  auto f = g.Open();
  ASSERT_TRUE(f.ok()) << f.error().message();
  const std::string id = g.manifest.file_id;
  auto watch = g.set->WatchRebuild(2);
  watch->Passed(id, 1);
  ASSERT_TRUE((*f)->Write(10, "passed", 6).ok());
  ASSERT_TRUE((*f)->Write(3 * kUnit + 5, "ahead", 5).ok());
  EXPECT_EQ(watch->TakeWritten(), (std::map<std::string, std::set<uint64_t>>{{id, {0}}}));
  // A shrink rewrites its new last row and cuts the rows past it.
  watch->Passed(id, UINT64_MAX);
  ASSERT_TRUE((*f)->Truncate(100).ok());
  EXPECT_EQ(watch->TakeWritten(), (std::map<std::string, std::set<uint64_t>>{{id, {0, 1}}}));

  watch->Hold();
  std::atomic<bool> landed{false};
  std::thread writer([&] {
    auto w = (*f)->Write(0, "z", 1);
    EXPECT_TRUE(w.ok()) << w.error().message();
    landed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(landed.load()) << "a write landed while the rebuild held them";
  EXPECT_EQ(watch->written(), 0u);
  g.set->EndRebuild(2);
  writer.join();
  EXPECT_TRUE(landed.load());
  EXPECT_EQ(g.set->rebuild(2), nullptr);
}

// The record's name and its damaged header: a copy that does not verify stands for every row.
TEST(StaleRows, NamesParseAndADamagedRecordMarksEveryRow) {
  EXPECT_EQ(StaleRecordDisk(StaleRecordName("abc", 3)).value_or(99), 3u);
  EXPECT_FALSE(StaleRecordDisk("abc.sums").has_value());
  EXPECT_FALSE(StaleRecordDisk("abc.stale-").has_value());
  EXPECT_FALSE(StaleRecordDisk("abc.stale-x1").has_value());
  Graph g(4, 1, RandomBytes(4 * kUnit, 251));
  g.Away(1);
  {
    auto f = g.Open();
    ASSERT_TRUE(f.ok()) << f.error().message();
    ASSERT_TRUE((*f)->Write(3 * kUnit + 5, "x", 1).ok());  // row 1 only
  }
  g.Back(1);
  ASSERT_TRUE(g.OpenSet().ok());
  auto rows = LoadStaleRows(*g.set, g.manifest.file_id, 1);
  ASSERT_TRUE(rows.ok() && rows->has_value());
  EXPECT_FALSE((*rows)->Has(0));
  EXPECT_TRUE((*rows)->Has(1));
  EXPECT_FALSE((*rows)->Has(2));
  testing::FlipByte(g.Record(2, 1), 20);
  rows = LoadStaleRows(*g.set, g.manifest.file_id, 1);
  ASSERT_TRUE(rows.ok() && rows->has_value());
  EXPECT_TRUE((*rows)->all);
  EXPECT_TRUE((*rows)->Has(0));
}

}  // namespace
}  // namespace graphfs
