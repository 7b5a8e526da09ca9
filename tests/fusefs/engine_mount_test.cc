// Unmodified engines on a real mount: a small weighted R-MAT graph, indexed and striped, read
// through the shared cache (small enough to evict) by the whole job mix at once, must give the
// same results as the same apps on a plain copy of the graph — also when it is compressed with
// one parity unit per row and a disk's directory is gone (issue 44: its bytes rebuilt from the
// packed stream's parity).
#include <cmath>
#include <cstring>
#include <filesystem>

#include "tests/fusefs/result_arrays.h"
#include "tests/fusefs/striped_fixture.h"

namespace graphfs::testing {
namespace {

constexpr int kScale = 14;     // 16 Ki vertices, 256 Ki edges: column is 3 MiB
constexpr int kPartitions = 4;

std::string Bin(const std::string& tool) { return BinDir() + "/" + tool; }

void RunOk(const std::vector<std::string>& argv, int timeout = 300) {
  CommandResult r = RunCommand(argv, timeout);
  ASSERT_EQ(r.status, 0) << argv[0] << " failed:\n" << r.output;
}

// How the served copy is striped: `compress` (graphfs-stripe --compress CODEC, "" raw), `parity`
// units per row, and a disk whose directory is removed before the mount (-1: none).
struct Striping {
  const char* compress = "";
  uint32_t parity = 0;
  int lost_disk = -1;
};

class EngineMount : public StripedMount {
 protected:
  void JobMixMatchesThePlainDirectory(const Striping& how);
};

TEST_F(EngineMount, JobMixOnTheStripedCachedMountMatchesThePlainDirectory) { JobMixMatchesThePlainDirectory({}); }

TEST_F(EngineMount, JobMixOnACompressedParityGraphWithADiskGoneMatchesThePlainDirectory) {
  JobMixMatchesThePlainDirectory({"zstd:1", 1, 1});
}

void EngineMount::JobMixMatchesThePlainDirectory(const Striping& how) {
  const std::string edges = tmp.path() + "/edges.bin";
  const std::string plain = tmp.path() + "/plain";
  RunOk({Bin("gen-rmat"), "--scale", std::to_string(kScale), "--weighted", "--seed", "3", "-o", edges});
  RunOk({Bin("preprocess"), "-i", edges, "-o", plain, "-v", std::to_string(1 << kScale), "-p",
       std::to_string(kPartitions), "-t", "1"});
  int32_t start = 0;  // the source of the first edge has out-edges
  const std::string first = ReadFile(edges).substr(0, 4);
  std::memcpy(&start, first.data(), 4);

  // The served copy: indexed in small chunks (many cache units), then its partition files
  // striped; `cp -a` keeps the times the index was checked against.
  std::filesystem::remove(graph);
  RunOk({"cp", "-a", plain, graph});
  RunOk({Bin("graphfs-index"), "--chunk-size", "64K", graph});
  StripeRequest req = TestStripeRequest(graph, disks, 256 << 10);
  req.min_size = 1 << 20;  // column and row; the blocks stay plain
  req.compress = how.compress;
  req.record_size = 12;
  req.compress_unit = 40 << 10;
  req.parity = how.parity;
  auto striped = StripeFiles(req);
  ASSERT_TRUE(striped.ok()) << striped.error().message();
  auto manifest = ReadManifest(graph + "/column");
  ASSERT_TRUE(manifest.ok() && manifest->has_value()) << "column was not striped";
  EXPECT_EQ((*manifest)->packed.has_value(), *how.compress != '\0');
  EXPECT_EQ((*manifest)->layout.parity, how.parity);
  if (how.lost_disk >= 0) std::filesystem::remove_all(disks[static_cast<size_t>(how.lost_disk)]);

  const uint64_t column = std::filesystem::file_size(plain + "/column");
  DoMount({"cache_size=" + std::to_string(column / 3)});  // a third of column: units are evicted

  const std::string s = std::to_string(start);
  const std::string jobs = "pagerank-delta:0.01,wcc,sssp:" + s + ",bfs:" + s + ",pagerank:3,spmv";
  // MEM_GB far below the edge bytes: the apps read with O_DIRECT, as GridGraph does when short
  // of memory, so every byte comes through graphfs's cache and none from the page cache.
  RunOk({Bin("run-jobs"), "--graph", mnt + "/graph", "--jobs", jobs, "--mem-gb", "0.0001"});
  RunOk({Bin("run-jobs"), "--graph", plain, "--jobs", jobs, "--mem-gb", "0.0001", "--sequential"});

  for (const char* exact : {"bfs.level", "wcc.label", "sssp.distance"}) {
    const std::string a = ReadFile(plain + "/" + exact), b = ReadFile(mnt + "/graph/" + exact);
    EXPECT_EQ(a.size(), (size_t{1} << kScale) * 4) << exact;
    EXPECT_TRUE(a == b) << exact << " differs between the plain directory and the mount";
  }
  for (const char* close : {"pagerank-delta.rank", "pagerank.rank", "spmv.output"}) {
    const auto a = ReadArray<double>(plain + "/" + close), b = ReadArray<double>(mnt + "/graph/" + close);
    EXPECT_EQ(a.size(), size_t{1} << kScale) << close;
    EXPECT_LE(WorstRelativeDifference(a, b), 1e-6) << close;
  }

  // The reads really went through the index's chunks and the cache, and it had to evict.
  const nlohmann::json st = Stats();
  ASSERT_EQ(st["indexes"].size(), 1u) << st.dump();
  EXPECT_TRUE(st["indexes"][0]["in_use"].get<bool>()) << st["indexes"][0].dump();
  EXPECT_GT(st["indexes"][0]["column_chunks"].get<uint64_t>(), 16u);
  const auto& c = st["cache"];
  EXPECT_GE(c["bytes_served"].get<uint64_t>(), 6 * column);  // six apps, each at least one pass
  EXPECT_GT(c["evictions"].get<uint64_t>() + c["rejections"].get<uint64_t>(), 0u);
  EXPECT_LE(c["used"].get<uint64_t>(), c["capacity"].get<uint64_t>());
  if (*how.compress != '\0') {
    EXPECT_GT(st["compressed"]["units_decoded"].get<uint64_t>(), 0u) << st["compressed"].dump();
    EXPECT_EQ(st["compressed"]["checksum_errors"].get<uint64_t>(), 0u) << st["compressed"].dump();
  }
  if (how.lost_disk >= 0) {  // the lost disk's share of the packed stream came from parity
    EXPECT_EQ(st["degraded"], nlohmann::json::array({how.lost_disk}));
    EXPECT_GT(st["disks"][how.lost_disk]["rebuilt_bytes"].get<uint64_t>(), 0u) << st["disks"].dump();
  }
}

}  // namespace
}  // namespace graphfs::testing
