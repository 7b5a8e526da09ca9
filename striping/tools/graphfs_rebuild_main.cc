// graphfs-rebuild --disk I --to DIR [--rate SIZE] [--disks D0,D1,...] [-q] PATH...
#include <limits.h>
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/cli_manpage.h"
#include "common/cli_size.h"
#include "common/size_parse.h"
#include "striping/live_mount.h"
#include "striping/rebuild.h"
#include "striping/rebuild_crash_points.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Rebuilds a lost disk of a striped set onto a new, empty disk directory: every unit it held — data and parity "
      "of every striped file of the graphs at or under PATH, with their checksums — from the other disks through "
      "parity, verified; then the graphs' registries (.graphfs/disks.json) name the new directory for the disk."};
  graphfs::RebuildRequest req;
  std::string disks;
  bool quiet = false, offline = false;
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
  app.add_flag("--offline", offline,
               "rebuild in this process, not in a mount's daemon; refused while a writable graphfs mount serves the "
               "set (its writes with the disk lost would not reach the new disk); a read-only mount reads the disk "
               "through parity until it is mounted again");
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
      "and every named graph's registry switches to it. When a graphfs mount serves the graphs (its source is PATH or "
      "holds it), the tool hands the rebuild to the mount's daemon (MOUNTPOINT/.graphfs/disks) and shows its "
      "progress: the daemon rebuilds the same way, row by row under the locks its own reads take, switches the registries "
      "and then reads the disk from DIR without a remount (--checkpoint and --disks are then the daemon's own). "
      "With --offline, a writable mount of the set makes the tool refuse (exit 1: the daemon holds the disks, and a "
      "mount started meanwhile is refused); read-only mounts keep reading the disk through parity until they are "
      "mounted again. "
      "Exit status: 0 when the disk was rebuilt and the registries switched, or when DIR is the disk already (a "
      "finished rebuild run again: its identity, every registry naming it, every file's part and sums there, no "
      "write-intent record naming it — or, mounted, the mount reading the disk from DIR, neither missing nor stale; "
      "nothing is written); 1 when it failed or DIR is the disk but not all of that holds (the message says why; "
      "nothing switched); 2 for bad arguments.");
  graphfs::AddManPageFlag(app);  // --help-man: the manual page (packaging/)
  // --help exits 0; anything CLI11 refuses (a bad size among it) is a usage error, status 2 as the
  // footer says.
  if (auto status = graphfs::ParseCommandLine(app, argc, argv)) return *status;
  // Tests stop the run at a named point (striping/rebuild_crash_points.h); a name it does not have
  // is a usage error, not a run that never stops. A run handed to a mount's daemon stops at none.
  if (auto status = graphfs::ArmCrashPointOrUsageError("graphfs-rebuild", graphfs::kRebuildCrashPoints)) return *status;
  req.progress = !quiet;
  if (!disks.empty()) req.disks = graphfs::SplitList(disks, ',');
  if (!offline && disks.empty()) {
    if (auto live = graphfs::FindLiveMount(req.paths.front())) {
      char to[PATH_MAX];
      if (::realpath(req.to.c_str(), to) == nullptr) {
        std::fprintf(stderr, "graphfs-rebuild: %s: %s\n", req.to.c_str(), std::strerror(errno));
        return 1;
      }
      // A rerun after the daemon's rebuild (or for a disk never lost): the daemon would refuse a
      // disk it does not miss; what it reads says the rebuild is done.
      auto in_place = graphfs::MountReadsDiskFrom(*live, req.disk, to);
      if (!in_place.ok()) {
        std::fprintf(stderr, "graphfs-rebuild: %s\n", in_place.error().message().c_str());
        return 1;
      }
      if (*in_place) {
        std::printf("graphfs-rebuild: disk %u is %s already (rebuilt there, or never lost): the mount at %s reads it "
                    "there (%s); nothing to rebuild\n",
                    req.disk, to, live->mountpoint.c_str(), (*in_place)->c_str());
        return 0;
      }
      std::fprintf(stderr, "graphfs-rebuild: %s is mounted at %s: its daemon rebuilds disk %u\n",
                   live->source.c_str(), live->mountpoint.c_str(), req.disk);
      const std::string line = "rebuild " + std::to_string(req.disk) + " " + to + " " + std::to_string(req.rate) + "\n";
      auto task = graphfs::RunInDaemon(*live, line, req.progress, "graphfs-rebuild");
      if (!task.ok()) {
        std::fprintf(stderr, "\ngraphfs-rebuild: %s\n", task.error().message().c_str());
        return 1;
      }
      const auto& r = (*task)["report"];
      std::printf("graphfs-rebuild: disk %u is %s now, read by the mount at %s: %lu file(s), %s written%s\n", req.disk,
                  r.value("to", std::string()).c_str(), live->mountpoint.c_str(), r.value("files", uint64_t{0}),
                  graphfs::FormatSize(r.value("bytes", uint64_t{0})).c_str(),
                  r.value("resumed", false) ? " (resumed)" : "");
      for (const auto& g : r["registries"])
        std::printf("graphfs-rebuild: %s/.graphfs/disks.json names it\n", g.get<std::string>().c_str());
      return 0;
    }
  }
  auto report = graphfs::Rebuild(req);
  if (!report.ok()) {
    std::fprintf(stderr, "\ngraphfs-rebuild: %s\n", report.error().message().c_str());
    return 1;
  }
  if (report->in_place) {
    // A rerun of a finished rebuild (rebuild_in_place.h): the state it was run for holds.
    std::printf("graphfs-rebuild: disk %u of set %s is %s already (rebuilt there, or never lost): its identity says "
                "so, every registry names it, it holds the parts and sums of its %lu file(s) and no write-intent "
                "record names it; nothing to rebuild\n",
                req.disk, report->set_id.c_str(), report->to.c_str(), report->files);
    return 0;
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
