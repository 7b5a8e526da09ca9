// A graph directory under a temp source with striped files, three disk directories and a
// mount: the fixture of the striped-file, parity and cache tests (striping by
// tests/testutil/striped_files.h).
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
#include "tests/testutil/striped_files.h"

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
  void Stripe(const std::string& name, const std::string& bytes, uint64_t unit = kTestUnit) {
    WriteAndStripe(graph + "/" + name, bytes, disks, 0, unit);
  }
  // Writes `name` with `bytes` and stripes it with one parity unit per row over the three disks.
  StripeManifest StripeWithParity(const std::string& name, const std::string& bytes) {
    return WriteAndStripe(graph + "/" + name, bytes, disks, 1);
  }
  // Writes `name` and stores it compressed (graphfs-stripe --compress CODEC) in units of `unit`
  // bytes of `record_size`-byte records, with `parity` parity units per row; checks that it got
  // smaller.
  void Compress(const std::string& name, const std::string& bytes, const std::string& codec, uint64_t unit,
                uint32_t record_size = 12, uint32_t parity = 0) {
    const std::string path = graph + "/" + name;
    WriteFile(path, bytes);
    StripeRequest req = TestStripeRequest(path, disks);
    req.compress = codec;
    req.parity = parity;
    req.record_size = record_size;
    req.compress_unit = unit;
    auto r = StripeFiles(req);
    ASSERT_TRUE(r.ok()) << r.error().message();
    ASSERT_EQ(r->converted.size(), 1u);
    auto m = ReadManifest(path);
    ASSERT_TRUE(m.ok() && m->has_value() && (*m)->packed) << name << " was not compressed";
    EXPECT_LT(r->stored, bytes.size()) << codec;
  }
  void DoMount(std::vector<std::string> options = {}) {
    ASSERT_TRUE(mount.Mount(src, mnt, options)) << mount.error();
  }
  nlohmann::json Stats() { return nlohmann::json::parse(ReadFile(mnt + "/.graphfs/stats")); }
  // Every part on the disks (and sums file, and journal) belongs to a file whose stub in the graph
  // directory names it, and every named file has its part on each disk (no orphans left behind,
  // nothing missing).
  void ExpectOnlyNamedParts() {
    std::set<std::string> named;
    for (const auto& e : std::filesystem::directory_iterator(graph)) {
      auto m = ReadManifest(e.path().string());
      if (m.ok() && m->has_value()) named.insert((*m)->file_id);
    }
    for (const std::string& disk : disks) {
      std::set<std::string> on_disk;
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(disk + "/parts", ec)) {
        // A file with parity also has its sums (ID.sums) and row journal (ID.journal).
        const std::string file = e.path().filename().string();
        on_disk.insert(file.substr(0, file.find('.')));
      }
      EXPECT_EQ(on_disk, named) << "parts on " << disk << " vs the files the stubs name";
    }
  }

  TempDir tmp;
  std::string src, graph, mnt;
  std::vector<std::string> disks;
  GraphfsMount mount;
};

}  // namespace graphfs::testing
