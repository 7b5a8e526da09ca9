#include "striping/striped_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <cstring>
#include <future>
#include <random>

#include "striping/atomic_write.h"
#include "striping/disk_set.h"
#include "striping/local_disk_backend.h"
#include "striping/manifest.h"
#include "striping/unit_sums.h"
#include "tests/testutil/temp_dir.h"

namespace graphfs {
namespace {

using testing::TempDir;

struct Fixture {
  TempDir tmp;
  std::vector<std::string> disk_paths;
  std::unique_ptr<DiskSet> disks;
  std::unique_ptr<IoEngine> io;
  std::string stub;

  Fixture(uint32_t n, IoEngineOptions::Mode mode = IoEngineOptions::Mode::kPerDisk) {
    for (uint32_t i = 0; i < n; ++i) disk_paths.push_back(tmp.Sub("d" + std::to_string(i)));
    auto set = DiskSet::Claim(disk_paths);
    EXPECT_TRUE(set.ok()) << (set.ok() ? "" : set.error().message());
    disks = std::make_unique<DiskSet>(*set);
    IoEngineOptions o;
    o.disks = n;
    o.mode = mode;
    o.shared_workers = 3;
    auto e = IoEngine::Start(o);
    EXPECT_TRUE(e.ok());
    io = std::move(*e);
    stub = tmp.path() + "/stub";
  }

  StripeManifest NewFile(uint64_t unit, uint32_t first = 0) {
    StripeManifest m;
    m.file_id = NewId();
    m.set_id = disks->set_id();
    m.layout = {unit, disks->size(), first};
    EXPECT_TRUE(StripedFile::CreateParts(*disks, m.file_id).ok());
    std::ofstream(stub) << kStubText;
    UniqueFd fd(::open(stub.c_str(), O_RDONLY));
    EXPECT_TRUE(WriteManifestFd(fd.get(), m).ok());
    return m;
  }

  std::shared_ptr<StripedFile> Open() {
    auto m = ReadManifest(stub);
    EXPECT_TRUE(m.ok() && m->has_value());
    StripedFileOptions o;
    auto f = StripedFile::Open(*disks, io.get(), UniqueFd(::open(stub.c_str(), O_RDONLY)), **m, o);
    EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error().message());
    return f.ok() ? *f : nullptr;
  }
};

TEST(DiskSet, ClaimStampsAndOpenVerifies) {
  TempDir tmp;
  std::vector<std::string> d = {tmp.Sub("a"), tmp.Sub("b"), tmp.Sub("c")};
  auto set = DiskSet::Claim(d);
  ASSERT_TRUE(set.ok());
  // Claiming again in the same order keeps the set.
  auto again = DiskSet::Claim(d);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->set_id(), set->set_id());
  ASSERT_TRUE(DiskSet::Open(set->registry()).ok());

  // Swapped order is refused, naming the disk.
  DiskRegistry swapped = set->registry();
  std::swap(swapped.disks[0], swapped.disks[1]);
  auto s = DiskSet::Open(swapped);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("swapped"), std::string::npos) << s.error().message();
  EXPECT_NE(s.error().message().find(swapped.disks[0]), std::string::npos);
  EXPECT_FALSE(DiskSet::Claim({d[1], d[0], d[2]}).ok());

  // A foreign disk (another set) is refused.
  std::string other = tmp.Sub("other");
  ASSERT_TRUE(DiskSet::Claim({other}).ok());
  DiskRegistry foreign = set->registry();
  foreign.disks[2] = other;
  auto f = DiskSet::Open(foreign);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message().find("foreign"), std::string::npos) << f.error().message();

  // A missing disk is refused, naming it.
  DiskRegistry missing = set->registry();
  missing.disks[1] = tmp.path() + "/nowhere";
  auto m = DiskSet::Open(missing);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message().find("disk 1"), std::string::npos) << m.error().message();
  EXPECT_NE(m.error().message().find("nowhere"), std::string::npos);

  // A blank disk cannot join the middle of a set that already has stamped disks elsewhere.
  EXPECT_FALSE(DiskSet::Claim({d[0], d[1], d[2], other}).ok());
}

TEST(DiskSet, RegistryRoundTripAndDiscovery) {
  TempDir tmp;
  auto set = DiskSet::Claim({tmp.Sub("d0"), tmp.Sub("d1")});
  ASSERT_TRUE(set.ok());
  std::string g = tmp.Sub("src/graphs/g1");
  ASSERT_TRUE(WriteRegistry(g, set->registry()).ok());
  auto r = ReadRegistry(g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->set_id, set->set_id());
  EXPECT_EQ(r->disks, set->registry().disks);
  auto found = FindRegistries(tmp.path() + "/src", 4);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], g);
  EXPECT_TRUE(FindRegistries(tmp.path() + "/src", 1).empty());
  std::ofstream(g + "/.graphfs/disks.json") << "{not json";
  EXPECT_FALSE(ReadRegistry(g).ok());
}

// A writer of the registry killed between its temporary copy's sync and its rename leaves
// `disks.json.tmp.PID` for good: the next write removes the copies of dead writers — made here by
// a child that wrote one and exited —, and keeps a live process's (a writer under way), a name
// that is no pid's and another file's copies.
TEST(DiskSet, ARegistryWriteRemovesTheCopiesKilledWritersLeft) {
  TempDir tmp;
  auto set = DiskSet::Claim({tmp.Sub("d0"), tmp.Sub("d1")});
  ASSERT_TRUE(set.ok());
  const std::string g = tmp.Sub("graph");
  ASSERT_TRUE(WriteRegistry(g, set->registry()).ok());
  const std::string dir = g + "/.graphfs/";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::ofstream(dir + "disks.json.tmp." + std::to_string(::getpid())) << "{\"half\":";
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const std::string dead = dir + "disks.json.tmp." + std::to_string(child);
  const std::string live = dir + "disks.json.tmp." + std::to_string(::getppid());
  const std::string not_pid = dir + "disks.json.tmp.12ab", other = dir + "other.json.tmp." + std::to_string(child);
  for (const std::string& p : {live, not_pid, other}) std::ofstream(p) << "x";
  ASSERT_EQ(::access(dead.c_str(), F_OK), 0) << "the child wrote no copy";

  DiskRegistry r = set->registry();
  r.parity = 1;
  ASSERT_TRUE(WriteRegistry(g, r).ok());
  EXPECT_NE(::access(dead.c_str(), F_OK), 0) << dead << " is left";
  for (const std::string& p : {live, not_pid, other}) EXPECT_EQ(::access(p.c_str(), F_OK), 0) << p << " was removed";
  auto back = ReadRegistry(g);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->disks, r.disks);
  EXPECT_EQ(back->parity, 1u);
  // The names it takes for copies: the file's own, then ".tmp." and digits only.
  EXPECT_EQ(TemporaryCopyPid("disks.json.tmp.4242", "disks.json"), std::optional<pid_t>(4242));
  EXPECT_FALSE(TemporaryCopyPid("disks.json.tmp.", "disks.json"));
  EXPECT_FALSE(TemporaryCopyPid("disks.json.tmp.-1", "disks.json"));
  EXPECT_FALSE(TemporaryCopyPid("disks.jsonx.tmp.1", "disks.json"));
  EXPECT_FALSE(TemporaryCopyPid("disks.json.tmp.12345678901", "disks.json"));
}

TEST(Manifest, EncodeDecodeAndRejectDamage) {
  StripeManifest m;
  m.file_id = "abc123";
  m.set_id = "set";
  m.size = 123456789012ull;
  m.layout = {16u << 20, 4, 2};
  m.checksum = 0xfedcba9876543210ull;
  auto d = StripeManifest::Decode(m.Encode());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->size, m.size);
  EXPECT_EQ(d->layout.first_disk, 2u);
  EXPECT_EQ(*d->checksum, *m.checksum);
  EXPECT_FALSE(StripeManifest::Decode("{}").ok());
  EXPECT_FALSE(StripeManifest::Decode("garbage").ok());
  m.file_id = "../etc";
  EXPECT_FALSE(StripeManifest::Decode(m.Encode()).ok());
  m.file_id = "x";
  m.layout.disks = 0;
  EXPECT_FALSE(StripeManifest::Decode(m.Encode()).ok());
}

// Found by tests/fuzz/stripe_manifest_fuzz.cc: nlohmann's get<uint64_t>() of a number
// like 1.234e20 is a float-to-integer conversion out of range (undefined behaviour, UBSan
// aborts), and get<uint32_t>() of -1 is 4294967295. Fields must be what Encode() writes.
TEST(Manifest, RefusesFieldsOfTheWrongTypeOrRange) {
  const std::string head = R"({"v":1,"id":"f","set":"s",)";
  auto decode = [&](const std::string& rest) { return StripeManifest::Decode(head + rest + "}"); };
  ASSERT_TRUE(decode(R"("size":100,"unit":4096,"disks":2,"first":1)").ok());
  auto huge = decode(R"("size":1.234e20,"unit":4096,"disks":2,"first":1)");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message().find("'size'"), std::string::npos) << huge.error().message();
  EXPECT_FALSE(decode(R"("size":100,"unit":4096,"disks":-1,"first":1)").ok());
  EXPECT_FALSE(decode(R"("size":100,"unit":4096.5,"disks":2,"first":1)").ok());
  EXPECT_FALSE(decode(R"("size":"100","unit":4096,"disks":2,"first":1)").ok());
  EXPECT_FALSE(StripeManifest::Decode(R"({"v":1.0,"id":"f","set":"s","size":1,"unit":1,"disks":1,"first":0})").ok());
  // The size is st_size, an off_t.
  EXPECT_FALSE(decode(R"("size":9223372036854775808,"unit":4096,"disks":2,"first":1)").ok());
  EXPECT_TRUE(decode(R"("size":9223372036854775807,"unit":4096,"disks":2,"first":1)").ok());
  // A row of unit x disks must fit 64 bits (StripeMap::PartSize divides by it).
  EXPECT_FALSE(decode(R"("size":100,"unit":9223372036854775808,"disks":2,"first":1)").ok());
  // The checksum is the 16 hex digits Encode() writes; std::stoull took "-1" and "12junk".
  const std::string layout = R"("size":100,"unit":4096,"disks":2,"first":1,"xxh3":)";
  auto sum = decode(layout + R"("00000000000000ff")");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum->checksum, 255u);
  EXPECT_FALSE(decode(layout + R"("-1")").ok());
  EXPECT_FALSE(decode(layout + R"("12junk")").ok());
  EXPECT_FALSE(decode(layout + R"("0000000000000000ff")").ok());
  EXPECT_FALSE(decode(layout + "255").ok());
}

// Same for the disk identity and the registry (DecodeDiskIdentity, DecodeRegistry).
TEST(DiskSet, IdentityAndRegistryRefuseFieldsOfTheWrongTypeOrRange) {
  auto id = DecodeDiskIdentity(R"({"version":1,"set":"s","index":1,"count":2})");
  ASSERT_TRUE(id.ok()) << id.error().message();
  EXPECT_EQ(id->index, 1u);
  EXPECT_EQ(EncodeDiskIdentity(*id), "{\"count\":2,\"index\":1,\"set\":\"s\",\"version\":1}\n");
  EXPECT_FALSE(DecodeDiskIdentity(R"({"set":"s","index":1e30,"count":2})").ok());
  EXPECT_FALSE(DecodeDiskIdentity(R"({"set":"s","index":-1,"count":2})").ok());
  EXPECT_FALSE(DecodeDiskIdentity(R"({"set":"s","index":2,"count":2})").ok()) << "index past the count";
  EXPECT_FALSE(DecodeDiskIdentity(R"({"set":7,"index":0,"count":2})").ok());
  EXPECT_FALSE(DecodeDiskIdentity("[1,2]").ok());
  auto r = DecodeRegistry(EncodeRegistry({"s", {"/d0", "/d1"}}));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->disks, (std::vector<std::string>{"/d0", "/d1"}));
  EXPECT_FALSE(DecodeRegistry(R"({"set":"s","disks":["/d0",1]})").ok());
  EXPECT_FALSE(DecodeRegistry(R"({"set":"s","disks":"/d0"})").ok());
  EXPECT_FALSE(DecodeRegistry(R"({"set":"s"})").ok());
}

TEST(IoEngine, CountsBytesPerDiskAndZeroFillsHoles) {
  Fixture fx(2);
  fx.NewFile(4096);
  auto f = fx.Open();
  ASSERT_NE(f, nullptr);
  std::vector<char> data(4 * 4096, 'x');
  ASSERT_TRUE(f->Write(0, data.data(), data.size()).ok());
  EXPECT_EQ(fx.io->counters(0).bytes_written.load(), 2 * 4096u);
  EXPECT_EQ(fx.io->counters(1).bytes_written.load(), 2 * 4096u);
  // Grow by truncate: the new bytes are a hole and read as zeros.
  ASSERT_TRUE(f->Truncate(8 * 4096).ok());
  std::vector<char> out(8 * 4096, 'q');
  auto n = f->Read(0, out.size(), out.data());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, out.size());
  EXPECT_EQ(out[4 * 4096 - 1], 'x');
  EXPECT_EQ(out[4 * 4096], 0);
  EXPECT_EQ(out.back(), 0);
}

TEST(IoEngine, InjectedFaultFailsOnlyThatDisk) {
  Fixture fx(2);
  fx.NewFile(4096);
  auto f = fx.Open();
  std::vector<char> data(4 * 4096, 'x');
  ASSERT_TRUE(f->Write(0, data.data(), data.size()).ok());
  fx.io->InjectFault(1, EIO);
  std::vector<char> out(4096);
  EXPECT_TRUE(f->Read(0, 4096, out.data()).ok());  // unit 0 is on disk 0
  auto bad = f->Read(4096, 4096, out.data());       // unit 1 is on disk 1
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), EIO);
  EXPECT_GT(fx.io->counters(1).errors.load(), 0u);
  fx.io->InjectFault(1, 0);
  EXPECT_TRUE(f->Read(4096, 4096, out.data()).ok());
}

// Random reads, writes and truncates on a striped file, checked against a byte vector.
void RandomOps(IoEngineOptions::Mode mode, uint64_t unit, uint32_t disks, uint32_t first) {
  Fixture fx(disks, mode);
  fx.NewFile(unit, first);
  auto f = fx.Open();
  ASSERT_NE(f, nullptr);
  std::vector<char> model;
  std::mt19937_64 rng(42 + unit + disks);
  const uint64_t max_size = unit * disks * 5 + 777;
  for (int op = 0; op < 1500; ++op) {
    int kind = static_cast<int>(rng() % 10);
    uint64_t off = rng() % max_size;
    uint64_t len = 1 + rng() % (unit * 3);
    if (kind < 4) {
      std::vector<char> buf(len);
      for (auto& c : buf) c = static_cast<char>(rng());
      ASSERT_TRUE(f->Write(off, buf.data(), len).ok());
      if (model.size() < off + len) model.resize(off + len, 0);
      std::copy(buf.begin(), buf.end(), model.begin() + static_cast<long>(off));
    } else if (kind < 7) {
      std::vector<char> buf(len, 'Z');
      auto n = f->Read(off, len, buf.data());
      ASSERT_TRUE(n.ok());
      uint64_t want = off >= model.size() ? 0 : std::min<uint64_t>(len, model.size() - off);
      ASSERT_EQ(*n, want) << "op " << op;
      ASSERT_TRUE(std::equal(buf.begin(), buf.begin() + static_cast<long>(want),
                             model.begin() + static_cast<long>(std::min<uint64_t>(off, model.size()))))
          << "op " << op << " off " << off << " len " << len;
    } else if (kind == 7 && !model.empty()) {
      // Several ranges in one submission (the LP loader's runs): each lands in its own buffer.
      std::vector<std::vector<char>> bufs(1 + rng() % 5);
      std::vector<StripedFile::ReadRequest> reqs;
      for (auto& b : bufs) {
        const uint64_t at = rng() % model.size();
        b.assign(1 + rng() % std::min<uint64_t>(model.size() - at, unit * 2), 'Z');
        reqs.push_back({at, b.size(), b.data()});
      }
      ASSERT_TRUE(f->ReadMany(reqs).ok());
      for (const auto& r : reqs)
        ASSERT_TRUE(std::equal(r.buf, r.buf + r.length, model.begin() + static_cast<long>(r.offset))) << "op " << op;
      // Two submissions in flight at once (the loader's pipelined batches), waited in turn.
      std::vector<char> other(std::min<uint64_t>(model.size(), unit * 3), 'Y');
      const std::vector<StripedFile::ReadRequest> second{{model.size() - other.size(), other.size(), other.data()}};
      for (auto& b : bufs) std::fill(b.begin(), b.end(), 'Z');
      auto first_read = f->StartReadMany(reqs);
      auto second_read = f->StartReadMany(second);
      ASSERT_TRUE(first_read.ok() && second_read.ok());
      ASSERT_TRUE((*second_read)->Wait().ok());
      ASSERT_TRUE((*first_read)->Wait().ok());
      for (const auto& r : reqs)
        ASSERT_TRUE(std::equal(r.buf, r.buf + r.length, model.begin() + static_cast<long>(r.offset))) << "op " << op;
      ASSERT_TRUE(std::equal(other.begin(), other.end(), model.end() - static_cast<long>(other.size()))) << "op " << op;
      reqs.push_back({model.size() - 1, 2, bufs[0].data()});  // past the end: refused
      EXPECT_FALSE(f->ReadMany(reqs).ok());
    } else if (kind == 8) {
      uint64_t ns = rng() % max_size;
      ASSERT_TRUE(f->Truncate(ns).ok());
      model.resize(ns, 0);
    } else {
      // The cache's load path: a whole unit into an aligned buffer, length rounded up to 4 KiB.
      uint64_t idx = model.empty() ? 0 : (rng() % model.size()) / unit;
      const uint64_t start = idx * unit;
      AlignedBuffer ub((unit + 4095) / 4096 * 4096);
      auto n = f->Read(start, ub.size(), ub.data());
      ASSERT_TRUE(n.ok());
      const uint64_t want = start >= model.size() ? 0 : std::min<uint64_t>(ub.size(), model.size() - start);
      ASSERT_EQ(*n, want);
      ASSERT_TRUE(std::equal(ub.data(), ub.data() + want, model.begin() + static_cast<long>(std::min<uint64_t>(start, model.size()))))
          << "unit " << idx;
    }
    ASSERT_EQ(f->size(), model.size());
  }
  // Durable after Sync: reopen and compare everything.
  ASSERT_TRUE(f->Sync().ok());
  f.reset();
  auto g = fx.Open();
  ASSERT_EQ(g->size(), model.size());
  std::vector<char> all(model.size());
  ASSERT_TRUE(g->Read(0, all.size(), all.data()).ok());
  EXPECT_TRUE(all == model);
  auto m = ReadManifest(fx.stub);
  EXPECT_FALSE((*m)->checksum.has_value());
}

TEST(StripedFile, RandomOpsPerDiskQueues) { RandomOps(IoEngineOptions::Mode::kPerDisk, 4096, 4, 1); }
TEST(StripedFile, RandomOpsSharedQueueOddUnit) { RandomOps(IoEngineOptions::Mode::kShared, 5000, 3, 2); }
TEST(StripedFile, RandomOpsSingleDisk) { RandomOps(IoEngineOptions::Mode::kPerDisk, 8192, 1, 0); }

TEST(StripedFile, SizeDurableAfterSyncAndPartsTruncated) {
  Fixture fx(3);
  auto m = fx.NewFile(4096);
  auto f = fx.Open();
  std::vector<char> data(10 * 4096 + 100, 'a');
  ASSERT_TRUE(f->Write(0, data.data(), data.size()).ok());
  ASSERT_TRUE(f->Sync().ok());
  auto on_disk = ReadManifest(fx.stub);
  EXPECT_EQ((*on_disk)->size, data.size());
  ASSERT_TRUE(f->Truncate(4096 + 10).ok());
  struct stat st;
  ASSERT_EQ(::stat(fx.disks->PartPath(0, m.file_id).c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 4096);
  ASSERT_EQ(::stat(fx.disks->PartPath(1, m.file_id).c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 10);
  ASSERT_EQ(::stat(fx.disks->PartPath(2, m.file_id).c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
  EXPECT_EQ((*ReadManifest(fx.stub))->size, 4096u + 10);
}

TEST(StripedFile, MissingPartIsAnErrorNamingTheDisk) {
  Fixture fx(2);
  auto m = fx.NewFile(4096);
  ::unlink(fx.disks->PartPath(1, m.file_id).c_str());
  auto mm = ReadManifest(fx.stub);
  auto f = StripedFile::Open(*fx.disks, fx.io.get(), UniqueFd(::open(fx.stub.c_str(), O_RDONLY)), **mm, {});
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message().find("disk 1"), std::string::npos) << f.error().message();
}

// Its parts hold the packed stream: that is what it reads (size() is the stream's), the
// manifest keeps the file's own size, and writes are refused with the reason.
TEST(StripedFile, ReadsTheStreamOfACompressedFileAndRefusesWrites) {
  Fixture fx(2);
  StripeManifest m = fx.NewFile(4096);
  m.size = 100000;
  m.packed = PackedInfo{"zstd:1", 8192 + 40, 8192};
  auto f = StripedFile::Open(*fx.disks, fx.io.get(), UniqueFd(::open(fx.stub.c_str(), O_RDONLY)), m, {});
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_EQ((*f)->size(), 8232u);
  EXPECT_EQ((*f)->manifest().size, 100000u);
  auto w = (*f)->Write(0, "x", 1);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code(), EOPNOTSUPP);
  EXPECT_NE(w.error().message().find("is compressed (zstd:1"), std::string::npos) << w.error().message();
  EXPECT_EQ((*f)->Truncate(0).error().code(), EOPNOTSUPP);
}

// A file with parity (manifest version 2): its data units are read past the parity units of
// each row; a write goes through the row journal and leaves the row's parity the XOR of its data.
TEST(StripedFile, ReadsAVerifiedParityFileAndWritesKeepItsParity) {
  Fixture fx(3);
  StripeManifest m = fx.NewFile(4096, 1);
  m.layout.parity = 1;
  m.sum_block = 4096;
  m.size = 5 * 4096;
  // Data unit u on disk (1 + u) % 3 at (u / 2) * 4096, as the layout says; row r's parity (the
  // XOR of its data units) on disk (1 + 2r + 2) % 3.
  std::string file(m.size, '\0');
  for (size_t i = 0; i < file.size(); ++i) file[i] = static_cast<char>(i * 7 + i / 4096);
  auto write_unit = [&](uint32_t disk, uint64_t row, const std::string& unit) {
    std::fstream part(fx.disk_paths[disk] + "/parts/" + m.file_id, std::ios::in | std::ios::out | std::ios::binary);
    part.seekp(static_cast<std::streamoff>(row * 4096));
    part.write(unit.data(), static_cast<std::streamsize>(unit.size()));
  };
  std::vector<std::vector<std::pair<uint64_t, std::string>>> units(3);  // per disk: row, unit
  for (uint64_t row = 0; row < 3; ++row) {
    std::string parity(4096, '\0');
    for (uint64_t u = 2 * row; u < std::min<uint64_t>(2 * row + 2, 5); ++u) {
      const std::string unit = file.substr(u * 4096, 4096);
      for (size_t i = 0; i < unit.size(); ++i) parity[i] ^= unit[i];
      units[(1 + u) % 3].push_back({row, unit});
    }
    units[(1 + 2 * row + 2) % 3].push_back({row, parity});
  }
  UniqueFd stub_fd(::open(fx.stub.c_str(), O_RDONLY));
  ASSERT_TRUE(WriteManifestFd(stub_fd.get(), m).ok());
  // Without sums files there is nothing to verify the bytes against: refused, naming them.
  {
    auto none = StripedFile::Open(*fx.disks, fx.io.get(), UniqueFd(::open(fx.stub.c_str(), O_RDONLY)), m, {});
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.error().message().find(".sums"), std::string::npos) << none.error().message();
  }
  for (uint32_t d = 0; d < 3; ++d) {
    auto backend = LocalDiskBackend::Open(fx.disk_paths[d]);
    ASSERT_TRUE(backend.ok());
    auto map = StripeMap::Create(m.layout);
    auto sums = UnitSums::Create(**backend, {m.file_id, d, m.layout, m.sum_block, map->PartSize(d, m.size)});
    ASSERT_TRUE(sums.ok()) << sums.error().message();
    for (const auto& [row, unit] : units[d]) {
      write_unit(d, row, unit);
      ASSERT_TRUE(sums->Write(row, 0, BlockSums(unit, m.sum_block)).ok());
    }
  }
  auto f = fx.Open();
  ASSERT_NE(f, nullptr);
  std::string got(m.size, '\0');
  auto n = f->Read(0, got.size(), got.data());
  ASSERT_TRUE(n.ok()) << n.error().message();
  EXPECT_EQ(*n, m.size);
  EXPECT_TRUE(got == file);
  auto w = f->Write(4096 + 10, "x", 1);  // data unit 1: row 0's second unit, on disk 2
  ASSERT_TRUE(w.ok()) << w.error().message();
  file[4096 + 10] = 'x';
  n = f->Read(0, got.size(), got.data());
  ASSERT_TRUE(n.ok()) << n.error().message();
  EXPECT_TRUE(got == file);
  auto on_disk = [&](uint32_t disk, uint64_t row) {
    std::string unit(4096, '\0');
    std::ifstream part(fx.disk_paths[disk] + "/parts/" + m.file_id, std::ios::binary);
    part.seekg(static_cast<std::streamoff>(row * 4096));
    part.read(unit.data(), 4096);
    return unit;
  };
  const std::string d0 = on_disk(1, 0), d1 = on_disk(2, 0), p0 = on_disk(0, 0);
  EXPECT_EQ(d1[10], 'x');
  size_t wrong = 0;
  for (size_t i = 0; i < 4096; ++i) wrong += p0[i] != static_cast<char>(d0[i] ^ d1[i]);
  EXPECT_EQ(wrong, 0u) << "row 0's parity is not the XOR of its data after the write";
}

TEST(StripedFile, ConcurrentReadersSeeConsistentData) {
  Fixture fx(4);
  fx.NewFile(64 << 10);
  auto f = fx.Open();
  std::vector<char> data(4 << 20);
  std::mt19937 rng(7);
  for (auto& c : data) c = static_cast<char>(rng());
  ASSERT_TRUE(f->Write(0, data.data(), data.size()).ok());
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 6; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937 r(t);
      std::vector<char> buf(300000);
      for (int i = 0; i < 200; ++i) {
        uint64_t off = r() % data.size();
        if (t % 2 == 0) {
          auto n = f->Read(off, buf.size(), buf.data());
          if (!n.ok() || !std::equal(buf.begin(), buf.begin() + static_cast<long>(*n), data.begin() + static_cast<long>(off)))
            ++bad;
        } else {
          // Aligned whole-unit reads (the cache's loads) use the O_DIRECT descriptors.
          const uint64_t start = off / (64 << 10) * (64 << 10);
          AlignedBuffer ub(64 << 10);
          auto n = f->Read(start, ub.size(), ub.data());
          if (!n.ok() || !std::equal(ub.data(), ub.data() + *n, data.begin() + static_cast<long>(start))) ++bad;
        }
      }
    });
  }
  for (auto& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace graphfs

namespace graphfs {
namespace {

// Stopping an engine whose workers share one queue and are busy must not hang: each
// worker has to see the stop, however the wake-ups were spread among them.
TEST(IoEngine, StopsWhileSharedWorkersAreBusy) {
  testing::TempDir tmp;
  const std::string path = tmp.path() + "/data";
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT, 0644));
  ASSERT_TRUE(fd.valid());
  std::vector<char> bytes(1 << 20, 'x');
  ASSERT_EQ(::pwrite(fd.get(), bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  auto done = std::async(std::launch::async, [&] {
    for (int round = 0; round < 40; ++round) {
      IoEngineOptions o;
      o.disks = 2;
      o.mode = IoEngineOptions::Mode::kShared;
      o.shared_workers = 4;
      o.queue_depth = 1 + round % 3;
      auto engine = IoEngine::Start(o);
      if (!engine.ok()) return false;
      // Runs still queued and in flight when the engine stops, as read-ahead loads are at
      // unmount: the destructor drains them, then every worker must see the stop.
      std::vector<char> buf(64 * 4096);
      std::vector<IoRun> runs(64);
      IoBatch batch;
      batch.Add(static_cast<int>(runs.size()));
      std::vector<IoRun*> ptrs;
      for (size_t i = 0; i < runs.size(); ++i) {
        runs[i].disk = static_cast<uint32_t>(i % 2);
        runs[i].fd = fd.get();
        runs[i].offset = i * 4096;
        runs[i].iov = {{buf.data() + i * 4096, 4096}};
        runs[i].batch = &batch;
        ptrs.push_back(&runs[i]);
      }
      (*engine)->Submit(ptrs.data(), ptrs.size() / 2);
      std::this_thread::sleep_for(std::chrono::microseconds(round * 50));
      (*engine)->Submit(ptrs.data() + ptrs.size() / 2, ptrs.size() / 2);
      engine->reset();  // must return, with every run completed
      if (!batch.done()) return false;
    }
    return true;
  });
  ASSERT_EQ(done.wait_for(std::chrono::seconds(60)), std::future_status::ready) << "IoEngine shutdown hangs";
  EXPECT_TRUE(done.get());
}

// The worst case: one worker waits for a slow read (a pipe nobody writes to yet) while the
// engine stops. That worker must not swallow the wake-ups the idle workers need.
TEST(IoEngine, StopsWhileOneWorkerWaitsForSlowIo) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  UniqueFd rd(p[0]), wr(p[1]);
  IoEngineOptions o;
  o.disks = 1;
  o.mode = IoEngineOptions::Mode::kShared;
  o.shared_workers = 4;
  auto engine = IoEngine::Start(o);
  ASSERT_TRUE(engine.ok());
  char buf[8];
  std::vector<IoRun> runs(1);
  runs[0].fd = rd.get();
  runs[0].iov = {{buf, sizeof buf}};
  IoBatch batch;
  batch.Add(1);
  runs[0].batch = &batch;
  IoRun* r = &runs[0];
  (*engine)->Submit(&r, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  // A detached thread: if the stop hangs, the test fails instead of hanging with it.
  auto stopped_promise = std::make_shared<std::promise<void>>();
  std::future<void> stopped = stopped_promise->get_future();
  IoEngine* raw = engine->release();
  std::thread([raw, stopped_promise] {
    delete raw;
    stopped_promise->set_value();
  }).detach();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the stop is seen while the read waits
  ASSERT_EQ(::write(wr.get(), "12345678", 8), 8);
  ASSERT_EQ(stopped.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "IoEngine shutdown hangs";
  EXPECT_TRUE(batch.done());
  EXPECT_EQ(std::string(buf, 8), "12345678");
}

TEST(AlignedBuffer, LargeAndSmallAreAlignedAndUsable) {
  for (size_t size : {size_t{4096}, size_t{100000}, size_t{16} << 20}) {
    AlignedBuffer b(size);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % kDirectAlign, 0u);
    std::memset(b.data(), 1, size);
    AlignedBuffer moved = std::move(b);
    EXPECT_FALSE(b.ok());
    EXPECT_EQ(moved.size(), size);
  }
  EXPECT_FALSE(AlignedBuffer().ok());
}

}  // namespace
}  // namespace graphfs
