// A graph directory under a temp source with striped files, three disk directories and a
// mount: the fixture of the striped-file and cache tests.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "striping/manifest.h"
#include "striping/restripe.h"
#include "tests/testutil/mount_harness.h"

namespace graphfs::testing {

class StripedMount : public ::testing::Test {
 protected:
  void SetUp() override {
    src = tmp.Sub("src");
    graph = tmp.Sub("src/graph");
    mnt = tmp.Sub("mnt");
    for (int i = 0; i < 3; ++i) disks.push_back(tmp.Sub("disk" + std::to_string(i)));
  }
  // Writes `name` with `bytes` into the graph directory and stripes it.
  void Stripe(const std::string& name, const std::string& bytes, uint64_t unit = 64 << 10) {
    WriteFile(graph + "/" + name, bytes);
    StripeRequest req;
    req.path = graph + "/" + name;
    req.disks = disks;
    req.unit = unit;
    req.min_size = 0;
    req.progress = false;
    auto r = StripeFiles(req);
    ASSERT_TRUE(r.ok()) << r.error().message();
    auto m = ReadManifest(graph + "/" + name);
    ASSERT_TRUE(m.ok() && m->has_value()) << name << " was not striped";
  }
  // Writes `name` and stores it compressed (graphfs-stripe --compress CODEC) in units of `unit`
  // bytes of `record_size`-byte records; checks that it got smaller.
  void Compress(const std::string& name, const std::string& bytes, const std::string& codec, uint64_t unit,
                uint32_t record_size = 12) {
    WriteFile(graph + "/" + name, bytes);
    StripeRequest req;
    req.path = graph + "/" + name;
    req.disks = disks;
    req.unit = 64 << 10;
    req.min_size = 0;
    req.progress = false;
    req.compress = codec;
    req.record_size = record_size;
    req.compress_unit = unit;
    auto r = StripeFiles(req);
    ASSERT_TRUE(r.ok()) << r.error().message();
    ASSERT_EQ(r->converted.size(), 1u);
    auto m = ReadManifest(graph + "/" + name);
    ASSERT_TRUE(m.ok() && m->has_value() && (*m)->packed) << name << " was not compressed";
    EXPECT_LT(r->stored, bytes.size()) << codec;
  }
  void DoMount(std::vector<std::string> options = {}) {
    ASSERT_TRUE(mount.Mount(src, mnt, options)) << mount.error();
  }
  nlohmann::json Stats() { return nlohmann::json::parse(ReadFile(mnt + "/.graphfs/stats")); }
  // Every part on the disks belongs to a file whose stub in the graph directory names it, and
  // every named file has its part on each disk (no orphans left behind, nothing missing).
  void ExpectOnlyNamedParts() {
    std::set<std::string> named;
    for (const auto& e : std::filesystem::directory_iterator(graph)) {
      auto m = ReadManifest(e.path().string());
      if (m.ok() && m->has_value()) named.insert((*m)->file_id);
    }
    for (const std::string& disk : disks) {
      std::set<std::string> on_disk;
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(disk + "/parts", ec)) on_disk.insert(e.path().filename());
      EXPECT_EQ(on_disk, named) << "parts on " << disk << " vs the files the stubs name";
    }
  }

  TempDir tmp;
  std::string src, graph, mnt;
  std::vector<std::string> disks;
  GraphfsMount mount;
};

}  // namespace graphfs::testing
