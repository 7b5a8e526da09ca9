// parity-bench [--unit 4M] [--disks 3,4,6,8] [--seconds 1]
// Single-thread speed of what parity costs the CPU (docs/parity.md): encoding a stripe row's K
// parity units, rebuilding one and K lost data units from the survivors (striping/parity_codec.h),
// and checksumming units (striping/unit_checksum.h). Rates are bytes of the row's data units per
// second (what a reader gets), except the checksum's (bytes hashed). Rows stay in memory: run it
// on an idle core (scripts/bench/parity.sh pins it); the buffers exceed the caches for units of
// 1M and more, as the daemon's do.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/cli_size.h"
#include "common/size_parse.h"
#include "striping/parity_codec.h"
#include "striping/unit_checksum.h"

namespace {

using graphfs::ParityCodec;

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// GB/s (1e9) of `bytes` per call of `fn`, repeated for at least `seconds`; the best of 3 rounds.
double Rate(uint64_t bytes, double seconds, const std::function<void()>& fn) {
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    uint64_t calls = 0;
    const double t0 = Now();
    double t = t0;
    do {
      fn();
      ++calls;
      t = Now();
    } while (t - t0 < seconds / 3);
    best = std::max(best, static_cast<double>(bytes * calls) / (t - t0) / 1e9);
  }
  return best;
}

int Fail(const graphfs::Error& e) {
  std::fprintf(stderr, "parity-bench: %s\n", e.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Single-thread speed of stripe rows' parity (encode, rebuild) and of unit checksums."};
  std::string unit_text = "4M", disks_text = "3,4,6,8";
  double seconds = 1;
  app.add_option("--unit", unit_text, "stripe unit (bytes of each unit of a row)");
  app.add_option("--disks", disks_text, "units per row (disks), comma-separated");
  app.add_option("--seconds", seconds, "time per figure");
  // --help: 0; a usage error: 2 (common/cli_size.h).
  if (auto status = graphfs::ParseCommandLine(app, argc, argv)) return *status;
  auto unit = graphfs::ParseSize(unit_text);
  if (!unit.ok()) return Fail(unit.error());

  std::printf("unit %s, one thread; GB/s of data bytes (checksum: of bytes hashed)\n", unit_text.c_str());
  std::printf("%-6s %-3s %-9s %-13s %-13s %s\n", "disks", "K", "encode", "rebuild-1", "rebuild-K", "xxh3");
  std::mt19937_64 rng(1);
  for (const std::string& d : graphfs::SplitList(disks_text, ',')) {
    auto disks = graphfs::ParseSize(d);
    if (!disks.ok() || *disks > ParityCodec::kMaxUnits)
      return Fail(graphfs::Error(EINVAL, "--disks: bad count '" + d + "'"));
    const uint32_t n = static_cast<uint32_t>(*disks);
    for (uint32_t k = 1; k <= ParityCodec::kMaxParity; ++k) {
      auto codec = ParityCodec::Create(n, k);
      if (!codec.ok()) {
        std::printf("%-6u %-3u (%s)\n", n, k, codec.error().message().c_str());
        continue;
      }
      std::vector<std::string> row(n, std::string(*unit, '\0'));
      for (std::string& u : row)
        for (size_t i = 0; i < u.size(); i += 8) u[i] = static_cast<char>(rng());
      std::vector<std::span<const char>> data(row.begin(), row.begin() + codec->data_units());
      std::vector<std::span<char>> parity(row.begin() + codec->data_units(), row.end());
      std::vector<std::span<char>> all(row.begin(), row.end());
      const uint64_t data_bytes = *unit * codec->data_units();
      graphfs::Status status;
      auto keep = [&](graphfs::Status s) {
        if (!s.ok()) status = s;
      };
      const double encode = Rate(data_bytes, seconds, [&] { keep(codec->Encode(data, parity)); });
      const std::vector<uint32_t> one = {0}, lost_k = k == 1 ? one : std::vector<uint32_t>{0, 1};
      const double rebuild1 = Rate(data_bytes, seconds, [&] { keep(codec->Reconstruct(all, one)); });
      const double rebuildk = Rate(data_bytes, seconds, [&] { keep(codec->Reconstruct(all, lost_k)); });
      const double hash = Rate(*unit, seconds, [&] { (void)graphfs::UnitChecksum(row[0]); });
      if (!status.ok()) return Fail(status.error());
      std::printf("%-6u %-3u %-9.2f %-13.2f %-13.2f %.2f\n", n, k, encode, rebuild1, rebuildk, hash);
    }
  }
  return 0;
}
