// graphfs-rebuild --disk I --to DIR [--rate SIZE] [--disks D0,D1,...] [-q] PATH...
#include <CLI/CLI.hpp>
#include <cstdio>

#include "common/cli_manpage.h"
#include "common/cli_size.h"
#include "common/size_parse.h"
#include "striping/rebuild.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Rebuilds a lost disk of a striped set onto a new, empty disk directory: every unit it held — data and parity "
      "of every striped file of the graphs at or under PATH, with their checksums — from the other disks through "
      "parity, verified; then the graphs' registries (.graphfs/disks.json) name the new directory for the disk."};
  graphfs::RebuildRequest req;
  std::string disks;
  bool quiet = false;
  app.add_option("--disk", req.disk, "index of the disk to rebuild in its set (as graphfs-scrub and .graphfs/stats number them)")
      ->required();
  app.add_option("--to", req.to,
                 "the new disk's directory: empty (but for lost+found), or holding a killed rebuild of this disk, "
                 "which is resumed; may be the lost disk's own path when the new disk is mounted there")
      ->required();
  graphfs::AddRateOption(app, "--rate", req.rate,
                         "read at most this many bytes per second from the other disks together (e.g. 100M), so "
                         "that jobs reading them keep their bandwidth; default: as fast as the disks go");
  app.add_option("--disks", disks, "disk directories overriding the registered paths, comma-separated");
  graphfs::AddSizeOption(app, "--checkpoint", req.checkpoint, "bytes written between durable progress records",
                         graphfs::SizeRule{1});
  app.add_flag("-q,--quiet", quiet, "no progress line");
  app.add_option("path", req.paths,
                 "graph directories, or directories holding graphs (walked for .graphfs/disks.json): every graph "
                 "striped over the set, so that the new disk holds all of its units")
      ->required();
  app.footer(
      "Nothing is written before every check passed: the disk index is in the set, the directory is empty and not a "
      "disk of this or another set, every striped file has parity (graphfs-stripe --parity K), the directory has "
      "room. Killed, a rerun with the same arguments resumes from the last durable checkpoint "
      "(DIR/.graphfs-rebuild.json). Each unit is rebuilt from the other disks' units verified against their "
      "checksums, and read back from the new disk and checked while the next ones are rebuilt; once every part "
      "was read back whole, the directory gets the disk's identity, "
      "and every named graph's registry switches to it. Mounted graphs keep reading the disk through parity until "
      "they are mounted again (a mount reads the registry when it starts; with disks= in fstab, change that line). "
      "Exit status: 0 when the disk was rebuilt and the registries switched; 1 when it failed (the message says "
      "why; nothing switched); 2 for bad arguments.");
  graphfs::AddManPageFlag(app);  // --help-man: the manual page (packaging/)
  // --help exits 0; anything CLI11 refuses (a bad size among it) is a usage error, status 2 as the
  // footer says.
  if (auto status = graphfs::ParseCommandLine(app, argc, argv)) return *status;
  req.progress = !quiet;
  if (!disks.empty()) req.disks = graphfs::SplitList(disks, ',');
  auto report = graphfs::Rebuild(req);
  if (!report.ok()) {
    std::fprintf(stderr, "\ngraphfs-rebuild: %s\n", report.error().message().c_str());
    return 1;
  }
  if (report->bad_source_blocks > 0)
    std::fprintf(stderr,
                 "graphfs-rebuild: %lu block(s) of the other disks failed their checksum and were rebuilt around; "
                 "graphfs-scrub repairs them\n",
                 report->bad_source_blocks);
  std::printf("graphfs-rebuild: disk %u of set %s is %s now: %lu file(s), %s written in %.2f s, read back and "
              "checked as written (%.2f s more after the last write)%s\n",
              req.disk, report->set_id.c_str(), report->to.c_str(), report->files,
              graphfs::FormatSize(report->bytes).c_str(), report->rebuild_seconds, report->verify_seconds,
              report->resumed ? " (resumed)" : "");
  for (const auto& g : report->registries) std::printf("graphfs-rebuild: %s/.graphfs/disks.json names it\n", g.c_str());
  return 0;
}
