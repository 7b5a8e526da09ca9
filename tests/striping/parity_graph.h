// A graph directory whose `column` (and, when asked, `row`) is striped with parity by
// graphfs-stripe's code over N disk directories, and ways to damage its parts and sums on the
// disks: the fixture of the scrub and rebuild tests.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "striping/manifest.h"
#include "striping/restripe.h"
#include "striping/stripe_map.h"
#include "striping/unit_sums.h"
#include "tests/testutil/file_bytes.h"
#include "tests/testutil/temp_dir.h"

namespace graphfs::testing {

struct ParityGraph {
  static constexpr uint64_t kUnit = 64 * 1024;
  static constexpr uint64_t kBlock = 16 * 1024;  // four sum blocks per unit

  TempDir tmp;
  std::vector<std::string> disks;
  std::string graph;

  ParityGraph(uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) disks.push_back(tmp.Sub("d" + std::to_string(i)));
    graph = tmp.Sub("graph");
  }

  // Writes `name` with `data` and stripes it with parity `k` (0: plain striping, no sums).
  StripeManifest Stripe(const std::string& name, const std::string& data, uint32_t k) {
    WriteFile(graph + "/" + name, data);
    StripeRequest req;
    req.path = graph + "/" + name;
    req.disks = disks;
    req.unit = kUnit;
    req.sum_block = kBlock;
    req.min_size = 1;
    req.progress = false;
    req.parity = k;
    auto report = StripeFiles(req);
    EXPECT_TRUE(report.ok()) << report.error().message();
    auto m = ReadManifest(graph + "/" + name);
    EXPECT_TRUE(m.ok() && m->has_value());
    return **m;
  }

  std::string PartPath(uint32_t disk, const StripeManifest& m) const { return disks[disk] + "/parts/" + m.file_id; }
  std::string SumsPath(uint32_t disk, const StripeManifest& m) const { return PartPath(disk, m) + ".sums"; }

  static char ByteAt(const std::string& path, uint64_t offset) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY));
    char c = 0;
    EXPECT_EQ(::pread(fd.get(), &c, 1, static_cast<off_t>(offset)), 1) << path;
    return c;
  }
  static void Flip(const std::string& path, uint64_t offset) {
    UniqueFd fd(::open(path.c_str(), O_RDWR));
    const char c = static_cast<char>(ByteAt(path, offset) ^ 0x21);
    ASSERT_EQ(::pwrite(fd.get(), &c, 1, static_cast<off_t>(offset)), 1) << path;
  }
  // Flips a byte at `within` of slot `slot`'s unit in row `row` on its disk; returns the disk.
  uint32_t FlipInUnit(const StripeManifest& m, uint64_t row, uint32_t slot, uint64_t within) {
    const StripeMap map = *StripeMap::Create(m.layout);
    const uint32_t disk = map.SlotDisk(row, slot);
    Flip(PartPath(disk, m), row * kUnit + within);
    return disk;
  }
};

}  // namespace graphfs::testing
