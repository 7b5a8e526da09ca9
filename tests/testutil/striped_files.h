// Files striped for a test by graphfs-stripe's own code (StripeFiles, UnstripeFiles) and their
// parts on the disks: what the striping, parity, scrub, rebuild, volume, admin and mount tests
// share (tests/striping/parity_graph.h and tests/fusefs/striped_fixture.h build on it). Header-only;
// a test that includes it links graphfs_restripe.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "striping/manifest.h"
#include "striping/restripe.h"
#include "tests/testutil/file_bytes.h"

namespace graphfs::testing {

// The tests' stripe unit: small files still make several rows.
inline constexpr uint64_t kTestUnit = 64 * 1024;

// StripeFiles' request for a test: `path` (a file, or a graph directory) over `disks` in units of
// `unit`, every file however small, no progress line, raw (no codec), no parity; the test sets
// the rest.
inline StripeRequest TestStripeRequest(const std::string& path, const std::vector<std::string>& disks,
                                       uint64_t unit = kTestUnit) {
  StripeRequest req;
  req.path = path;
  req.disks = disks;
  req.unit = unit;
  req.min_size = 0;
  req.progress = false;
  return req;
}

// Runs `req` and returns the manifest of `file`, which it striped (a failure is the test's).
inline StripeManifest StripeAndRead(const StripeRequest& req, const std::string& file) {
  auto report = StripeFiles(req);
  EXPECT_TRUE(report.ok()) << report.error().message();
  auto m = ReadManifest(file);
  EXPECT_TRUE(m.ok() && m->has_value()) << file << " was not striped";
  return m.ok() && m->has_value() ? **m : StripeManifest{};
}

// Writes `path` with `bytes` and stripes it over `disks` with `parity` parity units per row (0:
// none, no sums) in 64K units; returns its manifest.
inline StripeManifest WriteAndStripe(const std::string& path, const std::string& bytes,
                                     const std::vector<std::string>& disks, uint32_t parity = 0,
                                     uint64_t unit = kTestUnit) {
  WriteFile(path, bytes);
  StripeRequest req = TestStripeRequest(path, disks, unit);
  req.parity = parity;
  StripeManifest m = StripeAndRead(req, path);
  EXPECT_EQ(m.layout.parity, parity) << path;
  return m;
}

// graphfs-unstripe of `path` (a file or a graph directory), quietly.
inline Result<ConvertReport> Unstripe(const std::string& path) {
  UnstripeRequest u;
  u.path = path;
  u.progress = false;
  return UnstripeFiles(u);
}

// The part file of `m` on the disk directory `disk`, and its sums file.
inline std::string PartPath(const std::string& disk, const StripeManifest& m) { return disk + "/parts/" + m.file_id; }
inline std::string SumsPath(const std::string& disk, const StripeManifest& m) { return PartPath(disk, m) + ".sums"; }

// The byte at `offset` of the file at `path`, and that byte changed on the disk behind graphfs's
// back (XOR `mask`: twice restores it).
inline char ByteAt(const std::string& path, uint64_t offset) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY));
  char c = 0;
  EXPECT_EQ(::pread(fd.get(), &c, 1, static_cast<off_t>(offset)), 1) << path;
  return c;
}
inline void FlipByte(const std::string& path, uint64_t offset, char mask = 0x21) {
  UniqueFd fd(::open(path.c_str(), O_RDWR));
  const char c = static_cast<char>(ByteAt(path, offset) ^ mask);
  ASSERT_EQ(::pwrite(fd.get(), &c, 1, static_cast<off_t>(offset)), 1) << path;
}

}  // namespace graphfs::testing
