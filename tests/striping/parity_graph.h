// A graph directory whose `column` (and, when asked, `row`) is striped with parity by
// graphfs-stripe's code over N disk directories, and ways to damage its parts and sums on the
// disks (tests/testutil/striped_files.h), and the file opened as the mount opens it: the fixture
// of the parity read, write, scrub and rebuild tests.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/unique_fd.h"
#include "striping/disk_set.h"
#include "striping/io_engine.h"
#include "striping/manifest.h"
#include "striping/rebuild.h"
#include "striping/scrub.h"
#include "striping/stripe_map.h"
#include "striping/striped_file.h"
#include "tests/testutil/file_bytes.h"
#include "tests/testutil/striped_files.h"
#include "tests/testutil/temp_dir.h"

namespace graphfs::testing {

struct ParityGraph {
  static constexpr uint64_t kUnit = kTestUnit;
  static constexpr uint64_t kBlock = 16 * 1024;  // four sum blocks per unit

  TempDir tmp;
  std::vector<std::string> disks;
  std::string graph;
  // What OpenFile opens through (made there when not yet).
  std::unique_ptr<DiskSet> set;
  std::unique_ptr<IoEngine> io;
  // Where OpenFile's degraded files keep their rows' blocks (null: a pool of each file's own).
  std::shared_ptr<RowSharePool> row_share;

  explicit ParityGraph(uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) disks.push_back(tmp.Sub("d" + std::to_string(i)));
    graph = tmp.Sub("graph");
  }

  // Writes `name` with `data` and stripes it with parity `k` (0: plain striping, no sums) and
  // sums of kBlock bytes.
  StripeManifest Stripe(const std::string& name, const std::string& data, uint32_t k) {
    const std::string path = graph + "/" + name;
    WriteFile(path, data);
    StripeRequest req = TestStripeRequest(path, disks, kUnit);
    req.sum_block = kBlock;
    req.parity = k;
    return StripeAndRead(req, path);
  }

  // graphfs-rebuild's request, without its progress line, for disk `disk` of this graph onto `to`.
  RebuildRequest RebuildOf(uint32_t disk, const std::string& to) const {
    RebuildRequest req;
    req.paths = {graph};
    req.disk = disk;
    req.to = to;
    req.progress = false;
    return req;
  }

  std::string PartPath(uint32_t disk, const StripeManifest& m) const { return testing::PartPath(disks[disk], m); }
  std::string SumsPath(uint32_t disk, const StripeManifest& m) const { return testing::SumsPath(disks[disk], m); }

  // An I/O engine with a queue per disk, as the mount's.
  Status StartIo() {
    if (io) return Status::Ok();
    IoEngineOptions o;
    o.disks = static_cast<uint32_t>(disks.size());
    auto engine = IoEngine::Start(o);
    if (!engine.ok()) return engine.error();
    io = std::move(*engine);
    return Status::Ok();
  }
  // Opens the set as the mount does (the registry's parity decides how many may be missing).
  Status OpenSet() {
    auto registry = ReadRegistry(graph);
    if (!registry.ok()) return registry.error();
    auto s = DiskSet::Open(*registry);
    if (!s.ok()) return s.error();
    set = std::make_unique<DiskSet>(std::move(*s));
    return Status::Ok();
  }
  // `name` opened as the mount opens it, its manifest read from its stub — writable: the journal
  // is replayed first; not `writable`, as a read-only mount does, nothing is — through `set`
  // (opened first when there is none, or when `reopen_set`: a disk may have gone since) and `io`.
  Result<std::shared_ptr<StripedFile>> OpenFile(const std::string& name = "column", bool reopen_set = false,
                                                bool writable = true) {
    GRAPHFS_RETURN_IF_ERROR(StartIo());
    if (!set || reopen_set) GRAPHFS_RETURN_IF_ERROR(OpenSet());
    const std::string path = graph + "/" + name;
    auto m = ReadManifest(path);
    if (!m.ok()) return m.error();
    if (!m->has_value()) return Error(EINVAL, path + " is not striped");
    StripedFileOptions o;
    o.writable = writable;
    o.direct_io = false;  // tmpfs has none; the reads are the same
    o.row_share = row_share;
    return StripedFile::Open(*set, io.get(), UniqueFd(::open(path.c_str(), O_RDONLY)), **m, o);
  }

  // graphfs-scrub over the graph directory, repairing unless told not to.
  Result<ScrubReport> RunScrub(bool repair = true) const {
    ScrubRequest req;
    req.paths = {graph};
    req.repair = repair;
    req.progress = false;
    return Scrub(req);
  }
  // graphfs-scrub's verdict without repairing: Ok when every block and every row's parity is right.
  ::testing::AssertionResult ScrubClean() const {
    auto r = RunScrub(/*repair=*/false);
    if (!r.ok()) return ::testing::AssertionFailure() << r.error().message();
    const ScrubCounts& t = r->total;
    if (r->damage_left() || t.checksum_errors || t.read_errors || t.parity_rewrites || t.unrepaired_blocks) {
      std::string what;
      for (const auto& f : r->files)
        for (const auto& d : f.damage) what += d + "; ";
      return ::testing::AssertionFailure() << "scrub: " << t.checksum_errors << " checksum errors, " << t.unrepaired_blocks
                                           << " unrepaired, " << t.parity_rewrites << " stale parity, " << r->stale.size()
                                           << " stale: " << what;
    }
    return ::testing::AssertionSuccess();
  }

  // Flips a byte at `within` of slot `slot`'s unit in row `row` on its disk; returns the disk.
  uint32_t FlipInUnit(const StripeManifest& m, uint64_t row, uint32_t slot, uint64_t within) {
    const StripeMap map = *StripeMap::Create(m.layout);
    const uint32_t disk = map.SlotDisk(row, slot);
    FlipByte(PartPath(disk, m), row * kUnit + within);
    return disk;
  }
};

// A ParityGraph whose `column` holds `data`, striped with parity `k` over `n` disks: the fixture
// of the write tests.
struct ParityColumn : ParityGraph {
  StripeManifest manifest;
  ParityColumn(uint32_t n, uint32_t k, const std::string& data) : ParityGraph(n) {
    manifest = Stripe("column", data, k);
  }
  // Opens the file as the mount does (writable: the journal is replayed first), the set afresh.
  Result<std::shared_ptr<StripedFile>> Open() { return OpenFile("column", /*reopen_set=*/true); }
};

// The whole file as a read serves it (a failed read fails the test).
inline std::string ReadAll(StripedFile& f) {
  std::string got(f.size(), '\0');
  auto n = f.Read(0, got.size(), got.data());
  EXPECT_TRUE(n.ok()) << n.error().message();
  return got;
}

// Every one of the first `acked` blocks (fsync'ed before a kill) is in `now`, the file's bytes
// after it. The blocks lie at increasing offsets, apart: a later one never overlaps an earlier.
inline void ExpectFsyncedBlocksKept(const std::string& now, const std::vector<std::pair<uint64_t, std::string>>& blocks,
                                    uint32_t acked) {
  for (uint32_t i = 0; i < acked; ++i) {
    const auto& [at, bytes] = blocks[i];
    ASSERT_GE(now.size(), at + bytes.size()) << "block " << i << " fsync'ed, the file is shorter";
    EXPECT_TRUE(now.compare(at, bytes.size(), bytes) == 0) << "fsync'ed block " << i << " differs";
  }
}

// What a killed writer writes (WriteInAChildUntilKilled): blocks of varied sizes at increasing
// offsets up to 14 units, past a 10-unit file's end too.
inline std::vector<std::pair<uint64_t, std::string>> RandomWriteBlocks(std::mt19937& rng) {
  constexpr uint64_t kUnit = ParityGraph::kUnit;
  std::vector<std::pair<uint64_t, std::string>> blocks;
  for (uint64_t at = rng() % kUnit; at < 14 * kUnit;) {
    const uint64_t len = 1000 + rng() % (kUnit + kUnit / 2);
    blocks.emplace_back(at, RandomBytes(len, rng()));
    at += len + rng() % 3000;
  }
  return blocks;
}

// A child process opens the file (`open()`, a Result of a StripedFile pointer), writes `blocks`
// in order and fsyncs each, telling the parent of each fsync on a pipe; it is killed with SIGKILL
// after 1-6 fsyncs and up to 20 ms more. Returns how many fsyncs it told of (all reported before
// the kill), and its wait status in `*status`. The caller drops its I/O engine first: no engine
// threads in the parent when it forks (the child starts its own).
template <typename Open>
uint32_t WriteInAChildUntilKilled(Open&& open, const std::vector<std::pair<uint64_t, std::string>>& blocks,
                                  std::mt19937& rng, int* status) {
  int fds[2];
  if (::pipe(fds) != 0) {
    ADD_FAILURE() << "pipe";
    return 0;
  }
  const pid_t child = ::fork();
  if (child < 0) {
    ADD_FAILURE() << "fork";
    return 0;
  }
  if (child == 0) {
    ::close(fds[0]);
    auto f = open();
    if (!f.ok()) ::_exit(2);
    for (size_t i = 0; i < blocks.size(); ++i) {
      if (!(*f)->Write(blocks[i].first, blocks[i].second.data(), blocks[i].second.size()).ok()) ::_exit(3);
      if (!(*f)->Sync().ok()) ::_exit(4);
      const uint32_t done = static_cast<uint32_t>(i + 1);
      if (::write(fds[1], &done, sizeof done) != sizeof done) ::_exit(5);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  uint32_t acked = 0, got = 0;
  const uint32_t wait_for = 1 + rng() % 6;
  while (acked < wait_for && ::read(fds[0], &got, sizeof got) == sizeof got) acked = got;
  ::usleep(rng() % 20000);
  ::kill(child, SIGKILL);
  *status = 0;
  ::waitpid(child, status, 0);
  while (::read(fds[0], &got, sizeof got) == sizeof got) acked = got;  // reported before the kill
  ::close(fds[0]);
  return acked;
}

}  // namespace graphfs::testing
