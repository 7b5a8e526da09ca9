// graphfs-stripe's parity change of striped files (`--parity 1` over files striped with none)
// stopped by SIGKILL at each named point (striping/restripe_crash_points.h, GRAPHFS_CRASH_AT), then
// rerun: the disks then hold what an uninterrupted run over the same files writes — each file's
// parts and sums byte for byte (the sums' header names the copy's own random id, compared as such)
// and nothing else: no part of the old layout or of an abandoned copy —, no progress record is
// left, the registry says parity 1, the files read back unchanged and the set scrubs clean.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "common/crash_point.h"
#include "striping/disk_set.h"
#include "striping/manifest.h"
#include "striping/restripe_crash_points.h"
#include "striping/unit_sums.h"
#include "tests/engines/run_binary.h"
#include "tests/striping/parity_graph.h"
#include "tests/testutil/crash_points.h"

namespace graphfs {
namespace {

namespace fs = std::filesystem;
using testing::ParityGraph;
using testing::RandomBytes;
using testing::ReadFile;

constexpr uint64_t kUnit = ParityGraph::kUnit;
const std::vector<std::string> kFiles = {"column", "row"};

// Two files striped without parity over four disks, in the same layout whatever the fixture;
// their bytes by name.
std::map<std::string, std::string> StripeWithoutParity(ParityGraph& g) {
  std::map<std::string, std::string> data = {{"column", RandomBytes(40 * kUnit + 777, 70)},
                                             {"row", RandomBytes(20 * kUnit + 4321, 71)}};
  for (const auto& [name, bytes] : data) g.Stripe(name, bytes, 0);
  return data;
}

// graphfs-stripe --parity 1 over `g`'s graph (raw: nothing compressed), a checkpoint every 128K,
// stopped at `at` if one is given.
testing::BinaryRun ChangeParity(const ParityGraph& g, std::string_view at = {}) {
  std::vector<std::string> argv;
  if (!at.empty()) argv = {"env", std::string(kCrashAtVariable) + "=" + std::string(at)};
  std::string list;
  for (const std::string& d : g.disks) list += (list.empty() ? "" : ",") + d;
  for (const std::string& a : {std::string(GRAPHFS_STRIPE_TOOL), std::string("-q"), std::string("--parity"),
                               std::string("1"), std::string("--compress"), std::string("none"),
                               std::string("--checkpoint"), std::string("128K"), std::string("--disks"), list,
                               g.graph})
    argv.push_back(a);
  return testing::RunBinary(argv, 120);
}

// The id of `name`'s copy the stub names.
std::string IdOf(const ParityGraph& g, const std::string& name) {
  auto m = ReadManifest(g.graph + "/" + name);
  EXPECT_TRUE(m.ok() && m->has_value()) << name;
  return m.ok() && m->has_value() ? (*m)->file_id : std::string();
}

// What disk `d` of `g` holds under parts/ and its bytes, each file's id (in its part's and sums'
// names, and in its sums' header) replaced by the file's name: two runs writing the same bytes
// under other ids compare equal (an id no stub names stays as it is).
std::map<std::string, std::string> PartsByName(const ParityGraph& g, uint32_t d) {
  std::map<std::string, std::string> ids;  // id -> file name
  for (const std::string& name : kFiles) ids[IdOf(g, name)] = name;
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(g.disks[d] + "/parts")) {
    std::string file = e.path().filename().string(), bytes = ReadFile(e.path());
    for (const auto& [id, name] : ids) {
      if (!file.starts_with(id)) continue;
      file = name + file.substr(id.size());
      // A sums file's header names the id (and its check covers it): encoded again with the name.
      auto header = file.ends_with(".sums") ? DecodeSumsHeader(std::span<const char>(bytes).first(
                                                  std::min<size_t>(bytes.size(), kSumsHeaderSize)))
                                            : Result<SumsHeader>(Error(EINVAL, "not a sums file"));
      if (header.ok()) {
        header->file_id = name;
        bytes.replace(0, kSumsHeaderSize, EncodeSumsHeader(*header));
      }
    }
    out[file] = std::move(bytes);
  }
  return out;
}

// Whether the disks of `g` hold what those of `want` do (PartsByName); else what differs.
::testing::AssertionResult SameParts(const ParityGraph& g, const ParityGraph& want) {
  std::string diff;
  for (uint32_t d = 0; d < g.disks.size(); ++d) {
    const auto have = PartsByName(g, d), wanted = PartsByName(want, d);
    for (const auto& [name, bytes] : wanted) {
      const auto it = have.find(name);
      if (it == have.end()) {
        diff += "; disk " + std::to_string(d) + ": missing " + name;
      } else if (it->second != bytes) {
        const auto at = std::mismatch(bytes.begin(), bytes.end(), it->second.begin(), it->second.end());
        diff += "; disk " + std::to_string(d) + ": " + name + " differs from byte " +
                std::to_string(at.first - bytes.begin()) + " (" + std::to_string(it->second.size()) + " bytes, want " +
                std::to_string(bytes.size()) + ")";
      }
    }
    for (const auto& [name, bytes] : have)
      if (!wanted.contains(name)) diff += "; disk " + std::to_string(d) + ": left " + name;
  }
  if (diff.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << diff;
}

// The progress records left under the graph's .graphfs/pending-*/ (none once a run finished).
std::vector<std::string> PendingRecords(const ParityGraph& g) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(g.graph + "/" + kRegistryDir))
    if (e.is_directory() && e.path().filename().string().starts_with("pending-"))
      for (const auto& r : fs::directory_iterator(e.path())) out.push_back(fs::relative(r.path(), g.graph).string());
  return out;
}

class ParityChangeCrash : public ::testing::TestWithParam<CrashPointInfo> {
 protected:
  // The same files converted by an uninterrupted run, once for all the points.
  static void SetUpTestSuite() {
    reference = std::make_unique<ParityGraph>(4);
    StripeWithoutParity(*reference);
    const testing::BinaryRun run = ChangeParity(*reference);
    ASSERT_TRUE(run.exited && run.exit_code == 0) << run.How() << ": " << run.output;
  }
  static void TearDownTestSuite() { reference.reset(); }

  void SetUp() override { data = StripeWithoutParity(g); }

  std::string_view point() const { return GetParam().name; }

  static std::unique_ptr<ParityGraph> reference;
  ParityGraph g{4};
  std::map<std::string, std::string> data;
};

std::unique_ptr<ParityGraph> ParityChangeCrash::reference;

TEST_P(ParityChangeCrash, ARerunEndsWithTheUninterruptedRunsPartsAndNothingElse) {
  ASSERT_TRUE(reference) << "the uninterrupted run failed";
  const testing::BinaryRun killed = ChangeParity(g, point());
  ASSERT_TRUE(!killed.exited && killed.signal == SIGKILL) << killed.How() << ": " << killed.output;
  EXPECT_NE(killed.output.find("GRAPHFS_CRASH_AT=" + std::string(point()) + ": killed here"), std::string::npos)
      << killed.output;
  // Killed, every file still reads back whole through its stub, whichever copy it names.
  for (const std::string& name : kFiles) {
    auto f = g.OpenFile(name, /*reopen_set=*/true, /*writable=*/false);
    ASSERT_TRUE(f.ok()) << f.error().message();
    EXPECT_TRUE(testing::ReadAll(**f) == data[name]) << name << " reads otherwise after the kill";
  }
  g.set.reset();

  const testing::BinaryRun rerun = ChangeParity(g);
  ASSERT_TRUE(rerun.exited && rerun.exit_code == 0) << rerun.How() << ": " << rerun.output;
  EXPECT_TRUE(SameParts(g, *reference)) << "the disks differ from an uninterrupted run's";
  EXPECT_TRUE(PendingRecords(g).empty()) << PendingRecords(g).front() << " left";
  EXPECT_EQ(ReadRegistry(g.graph)->parity, 1u);
  for (const std::string& name : kFiles) {
    auto m = ReadManifest(g.graph + "/" + name);
    ASSERT_TRUE(m.ok() && m->has_value()) << name;
    EXPECT_EQ((*m)->layout.parity, 1u) << name;
    auto f = g.OpenFile(name, /*reopen_set=*/true, /*writable=*/false);
    ASSERT_TRUE(f.ok()) << f.error().message();
    EXPECT_TRUE(testing::ReadAll(**f) == data[name]) << name << " reads otherwise after the rerun";
  }
  EXPECT_TRUE(g.ScrubClean());
}

INSTANTIATE_TEST_SUITE_P(Points, ParityChangeCrash, ::testing::ValuesIn(kStripeCrashPoints), testing::CrashPointCaseName);

// A point graphfs-stripe does not have is a usage error, before anything is touched.
TEST(ParityChangeCrashPoints, AnUnknownPointIsRefusedAndNamesTheKnownOnes) {
  ParityGraph g(4);
  StripeWithoutParity(g);
  const std::string id = IdOf(g, "column");
  const testing::BinaryRun run = ChangeParity(g, "parity-copyed");
  EXPECT_TRUE(run.exited && run.exit_code == 2) << run.How() << ": " << run.output;
  EXPECT_NE(run.output.find("GRAPHFS_CRASH_AT=parity-copyed names no crash point of graphfs-stripe"),
            std::string::npos)
      << run.output;
  for (const CrashPointInfo& p : kStripeCrashPoints)
    EXPECT_NE(run.output.find(std::string(p.name)), std::string::npos) << p.name << " not listed: " << run.output;
  EXPECT_EQ(IdOf(g, "column"), id);
  EXPECT_TRUE(PendingRecords(g).empty());
}

}  // namespace
}  // namespace graphfs
