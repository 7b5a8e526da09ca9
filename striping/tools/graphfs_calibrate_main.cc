// graphfs-calibrate [--probe-size SIZE] [--random-reads N] [--dry-run] SOURCE_OR_DISK...
// Measures every disk of the set the graphs under SOURCE are striped over (or the given
// disk directories; or SOURCE itself when nothing under it is striped) for the read-cost
// model of vertex-granular logical partitions, and stores each result on its disk.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <set>

#include "common/cli_manpage.h"
#include "common/cli_size.h"
#include "common/size_parse.h"
#include "striping/calibrate.h"
#include "striping/disk_set.h"

namespace {

// The disks to measure for `path`: the registered disks of the graphs under it, else itself.
graphfs::Result<std::vector<std::string>> DisksOf(const std::string& path) {
  std::set<std::string> disks;
  for (const std::string& g : graphfs::FindRegistries(path, 6)) {
    auto r = graphfs::ReadRegistry(g);
    if (!r.ok()) return r.error();
    disks.insert(r->disks.begin(), r->disks.end());
  }
  if (disks.empty()) return std::vector<std::string>{path};
  return std::vector<std::string>(disks.begin(), disks.end());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"graphfs-calibrate: measures each disk's sequential read throughput and cost per request "
               "(the read-cost model of vertex-granular logical partitions) and stores it on the disk "
               "(DISK/.graphfs-calibration.json), where the daemon reads it at mount"};
  std::vector<std::string> paths;
  graphfs::CalibrateOptions options;
  bool dry_run = false;
  app.add_option("paths", paths, "a source directory (its graphs' disks are measured) or disk directories")
      ->required()
      ->check(CLI::ExistingDirectory);
  graphfs::AddSizeOption(app, "--probe-size", options.probe_bytes, "bytes written and read back per disk",
                         graphfs::SizeRule{4u << 20, 4096});
  app.add_option("--random-reads", options.random_reads, "random 4 KiB reads per disk")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  app.add_flag("--dry-run", dry_run, "measure and print, store nothing");
  graphfs::AddManPageFlag(app);  // --help-man: the manual page (packaging/)
  // --help exits 0; anything CLI11 refuses (a bad size among it) is a usage error, status 2.
  if (auto status = graphfs::ParseCommandLine(app, argc, argv)) return *status;
  std::vector<std::string> disks;
  for (const std::string& p : paths) {
    auto d = DisksOf(p);
    if (!d.ok()) {
      std::fprintf(stderr, "graphfs-calibrate: %s: %s\n", p.c_str(), d.error().message().c_str());
      return 1;
    }
    disks.insert(disks.end(), d->begin(), d->end());
  }
  std::printf("%-40s %12s %14s %14s %14s\n", "disk", "seq MB/s", "random read", "per request", "gap read up to");
  int failed = 0;
  for (const std::string& d : disks) {
    auto c = graphfs::CalibrateDisk(d, options);
    if (!c.ok()) {
      std::fprintf(stderr, "graphfs-calibrate: %s: %s\n", d.c_str(), c.error().message().c_str());
      ++failed;
      continue;
    }
    std::printf("%-40s %12.1f %11.3f ms %11.3f ms %14s%s\n", d.c_str(), c->bytes_per_second / 1e6,
                c->random_read_seconds * 1e3, c->seconds_per_request * 1e3,
                graphfs::FormatSize(static_cast<uint64_t>(c->bytes_per_second * c->seconds_per_request)).c_str(),
                c->direct ? "" : "  (no O_DIRECT here: page-cache numbers)");
    if (!dry_run) {
      graphfs::Status s = graphfs::SaveCalibration(*c);
      if (!s.ok()) {
        std::fprintf(stderr, "graphfs-calibrate: %s\n", s.error().message().c_str());
        ++failed;
      }
    }
  }
  return failed == 0 ? 0 : 1;
}
