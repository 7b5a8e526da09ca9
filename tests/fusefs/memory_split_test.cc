// The daemon's memory split by use as its sampler takes it (MemoryByUseNow: from the volume's
// memory figures alone, fusefs/memory_peak.h) against `stats.memory` (RenderStats: from the whole
// of `stats`). Both price memory through one function; this checks that the figures they are
// given agree. In the test's own process, without a mount: a GraphFs over a started volume, as
// the daemon holds one.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/unique_fd.h"
#include "fusefs/control_dir.h"
#include "fusefs/graphfs.h"
#include "fusefs/mount_options.h"
#include "tests/testutil/file_bytes.h"
#include "tests/testutil/striped_files.h"
#include "tests/testutil/temp_dir.h"

namespace graphfs {
namespace {

using nlohmann::json;
using testing::kTestUnit;
using testing::RandomBytes;
using testing::TempDir;

// `by_use` without "other": the resident memory nothing else accounts for moves with every
// allocation, between any two calls.
json WithoutOther(json by_use) {
  by_use.erase("other");
  return by_use;
}

std::set<std::string> KeysOf(const json& o) {
  std::set<std::string> keys;
  for (const auto& [key, value] : o.items()) keys.insert(key);
  return keys;
}

TEST(MemorySplit, TheSamplersSplitIsTheStatsOwn) {
  TempDir tmp;
  const std::string source = tmp.Sub("src");
  std::vector<std::string> disks;
  for (int i = 0; i < 3; ++i) disks.push_back(tmp.Sub("disk" + std::to_string(i)));
  const std::string path = source + "/data";
  const std::string bytes = RandomBytes(16 * kTestUnit, 42);
  testing::WriteAndStripe(path, bytes, disks);

  GraphFs fs;
  ASSERT_TRUE(ApplyMountOption(fs.options, "memory=64M").ok());
  ASSERT_TRUE(ResolveMountOptions(fs.options).ok());
  fs.source = source;
  fs.options.volume.source = source;
  auto volume = volume::Volume::Open(fs.options.volume);
  ASSERT_TRUE(volume.ok()) << volume.error().message();
  fs.volume = std::move(*volume);
  const Status started = fs.volume->Start();
  ASSERT_TRUE(started.ok()) << started.error().message();

  // The cache holding the whole file.
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  auto stub = volume::StripedStub::Read(path, st);
  ASSERT_TRUE(stub.ok() && stub->has_value()) << path << " is not striped";
  auto file = fs.volume->OpenStriped(UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)), **stub, path);
  ASSERT_TRUE(file.ok()) << file.error().message();
  volume::ReadStreams streams;
  AlignedBuffer scratch;
  for (uint64_t off = 0; off < bytes.size(); off += 2 * kTestUnit)
    ASSERT_TRUE(fs.volume->Read(**file, streams, off, 2 * kTestUnit, 1, scratch).ok());

  // Read-ahead may still be settling: compared once two samples taken around the stats agree.
  json sample, stats;
  for (int tries = 0; tries < 500 && sample.is_null(); ++tries) {
    const json before = MemoryByUseNow(fs);
    stats = json::parse(RenderStats(fs));
    const json after = MemoryByUseNow(fs);
    if (WithoutOther(before["by_use"]) == WithoutOther(after["by_use"]) && before["lps"] == after["lps"] &&
        before["memory_budget"] == after["memory_budget"])
      sample = after;
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_FALSE(sample.is_null()) << "the daemon's memory never held still";
  const json& memory = stats["memory"];
  EXPECT_GT(sample["by_use"]["cache_admitted"].get<uint64_t>(), 0u) << sample.dump();
  EXPECT_EQ(KeysOf(sample["by_use"]), KeysOf(memory["by_use"]));
  EXPECT_EQ(WithoutOther(sample["by_use"]), WithoutOther(memory["by_use"]));
  EXPECT_EQ(sample["lps"], memory["lps"]);
  EXPECT_EQ(sample["memory_budget"], stats["memory_budget"]);
  EXPECT_EQ(KeysOf(sample), (std::set<std::string>{"by_use", "lps", "memory_budget"}));
}

}  // namespace
}  // namespace graphfs
