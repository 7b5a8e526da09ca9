// graphfs-scrub [--disks D0,D1,...] [--no-repair] [--rate SIZE] [-q] PATH...
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "common/cli_manpage.h"
#include "common/cli_size.h"
#include "common/size_parse.h"
#include "striping/live_mount.h"
#include "striping/scrub.h"

namespace {

void PrintCounts(const char* label, const std::string& state, const graphfs::ScrubCounts& c) {
  std::printf("%-40s %-8s %10s %6lu %7lu %8lu %6lu %6lu %6lu\n", label, state.c_str(),
              graphfs::FormatSize(c.bytes_read).c_str(), c.checksum_errors, c.read_errors, c.repaired_blocks,
              c.sum_repairs, c.parity_rewrites, c.unrepaired_blocks);
}

void PrintHeader(const char* first) {
  std::printf("%-40s %-8s %10s %6s %7s %8s %6s %6s %6s\n", first, "state", "read", "cksum", "readerr", "repaired",
              "sumfix", "parity", "left");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Reads every unit of every striped file with checksums (graphfs-stripe --parity) of the graphs at or under "
      "PATH — data and parity — checks each block against its checksum and each stripe row's parity against its "
      "data, repairs what it can from parity, and reports per file and per disk."};
  graphfs::ScrubRequest req;
  std::string disks;
  bool quiet = false, no_repair = false, offline = false;
  app.add_option("--disks", disks, "disk directories overriding the registered paths, comma-separated");
  app.add_flag("--no-repair", no_repair, "report only: write nothing to the disks");
  graphfs::AddRateOption(app, "--rate", req.rate,
                         "read at most this many bytes per second from all disks together (e.g. 100M), so that "
                         "jobs reading the same disks keep their bandwidth; default: as fast as the disks go");
  app.add_flag("-q,--quiet", quiet, "no progress line");
  app.add_flag("--offline", offline, "scrub in this process even when the graphs are mounted");
  app.add_option("path", req.paths,
                 "graph directory, directory of graphs (walked for graphs with .graphfs/disks.json), or one striped "
                 "file; all on one disk set")
      ->required();
  app.footer(
      "Repairs: a block whose bytes fail their checksum, or whose read fails, is rebuilt from the same block of its "
      "row's other units and written back when the rebuilt bytes match the checksum (repaired); when they equal "
      "what was read, the checksum was damaged and is rewritten (sumfix); a row whose blocks all match but whose "
      "parity does not match its data gets its parity rewritten from the data (parity). More bad units in a block "
      "than the file's parity cannot be repaired (left): the report names those file bytes, which read EIO through "
      "the mount. A missing disk is reported, and its units are not checked: graphfs-rebuild puts them on a new "
      "disk. A stale disk (back, but files were written while it was lost) is resynced: the rows their "
      "write-intent records mark are rewritten on it from the rest of their rows, then the records removed. "
      "A file whose row journal holds writes its killed writer did not finish is replayed first (as a "
      "read-write mount would; also with --no-repair), or refused when it cannot be written. "
      "When a graphfs mount serves the graphs (its source is PATH or holds it), the tool hands the scrub to the "
      "mount's daemon (MOUNTPOINT/.graphfs/disks) and shows its progress and report: the daemon scrubs the whole "
      "source, each row under the lock its own reads and writes take, and reads the checksums a repair rewrote "
      "again (with --no-repair or --disks, or --offline, the tool scrubs in its own process; a mount that read a "
      "row's checksums before such a run rewrote that row's parity may then refuse reads that need that parity "
      "until it is mounted again). "
      "Exit status: 0 when nothing is wrong any more (everything found was repaired); 1 when damage is left "
      "(unrepairable blocks, damage found with --no-repair, a missing disk, or a disk still stale); 2 when nothing could be scrubbed "
      "(bad arguments, no striped graph, no file with checksums, more disks missing than the parity) or a repair "
      "could not be written.");
  graphfs::AddManPageFlag(app);  // --help-man: the manual page (packaging/)
  // --help exits 0; anything CLI11 refuses (a bad size among it) is a usage error, status 2 as the
  // footer says.
  if (auto status = graphfs::ParseCommandLine(app, argc, argv)) return *status;
  req.progress = !quiet;
  req.repair = !no_repair;
  if (!disks.empty()) req.disks = graphfs::SplitList(disks, ',');
  if (!offline && !no_repair && disks.empty()) {
    if (auto live = graphfs::FindLiveMount(req.paths.front())) {
      std::fprintf(stderr, "graphfs-scrub: %s is mounted at %s: its daemon scrubs it\n", live->source.c_str(),
                   live->mountpoint.c_str());
      auto task = graphfs::RunInDaemon(*live, "scrub " + std::to_string(req.rate) + "\n", req.progress, "graphfs-scrub");
      if (!task.ok()) {
        std::fprintf(stderr, "\ngraphfs-scrub: %s\n", task.error().message().c_str());
        return 2;
      }
      const auto& r = (*task)["report"];
      for (const auto& s : r["skipped"]) std::fprintf(stderr, "graphfs-scrub: skipped %s\n", s.get<std::string>().c_str());
      PrintHeader("file");
      for (const auto& f : r["files"]) {
        PrintCounts(f["path"].get<std::string>().c_str(), f.contains("damage") ? "damaged" : "ok",
                    graphfs::ScrubCountsFromJson(f["counts"]));
        if (f.contains("damage"))
          for (const auto& line : f["damage"]) std::printf("  damage left: %s\n", line.get<std::string>().c_str());
      }
      for (const auto& d : r["missing"])
        std::printf("\ndisk %u is missing: its units were not checked; graphfs-rebuild --disk %u --to NEW_DIR %s\n",
                    d.get<uint32_t>(), d.get<uint32_t>(), req.paths.front().c_str());
      for (const auto& line : r.value("resynced", nlohmann::json::array()))
        std::printf("resync: %s\n", line.get<std::string>().c_str());
      for (const auto& d : r.value("stale", nlohmann::json::array()))
        std::printf("\ndisk %u is still stale: files written while it was lost read it through parity\n",
                    d.get<uint32_t>());
      const graphfs::ScrubCounts t = graphfs::ScrubCountsFromJson(r["total"]);
      std::printf("\ngraphfs-scrub: through the mount at %s: %zu file(s), %s read: %lu checksum error(s), %lu read "
                  "error(s); repaired %lu block(s), %lu checksum(s), %lu parity unit(s); %lu block(s) left wrong\n",
                  live->mountpoint.c_str(), r["files"].size(), graphfs::FormatSize(t.bytes_read).c_str(),
                  t.checksum_errors, t.read_errors, t.repaired_blocks, t.sum_repairs, t.parity_rewrites,
                  t.unrepaired_blocks);
      return r.value("damage_left", false) ? 1 : 0;
    }
  }
  auto report = graphfs::Scrub(req);
  if (!report.ok()) {
    std::fprintf(stderr, "\ngraphfs-scrub: %s\n", report.error().message().c_str());
    return 2;
  }
  for (const auto& s : report->skipped) std::fprintf(stderr, "graphfs-scrub: skipped %s\n", s.c_str());
  for (const auto& s : report->replayed)
    std::fprintf(stderr, "graphfs-scrub: %s: replayed the writes its row journal held (its writer was killed)\n",
                 s.c_str());
  PrintHeader("file");
  for (const auto& f : report->files) {
    const std::string state = f.damage.empty() ? "ok" : "damaged";
    PrintCounts(f.path.c_str(), state, f.counts);
  }
  std::printf("\n");
  PrintHeader("disk");
  for (size_t d = 0; d < report->disks.size(); ++d) {
    const std::string label = std::to_string(d) + " " + report->disks[d].path;
    PrintCounts(label.c_str(), report->disks[d].state, report->disks[d].counts);
  }
  bool header = false;
  for (const auto& f : report->files)
    for (const auto& line : f.damage) {
      if (!header) std::printf("\ndamage left:\n");
      header = true;
      std::printf("  %s: %s\n", f.path.c_str(), line.c_str());
    }
  for (uint32_t d : report->missing)
    std::printf("\ndisk %u (%s) is missing: its units were not checked; graphfs-rebuild --disk %u --to NEW_DIR %s\n",
                d, report->disks[d].path.c_str(), d, req.paths.front().c_str());
  for (const std::string& line : report->resynced) std::printf("resync: %s\n", line.c_str());
  for (uint32_t d : report->stale)
    std::printf("\ndisk %u (%s) is still stale: files written while it was lost read it through parity\n", d,
                report->disks[d].path.c_str());
  const graphfs::ScrubCounts& t = report->total;
  std::printf("\ngraphfs-scrub: %zu file(s), %s read: %lu checksum error(s), %lu read error(s); repaired %lu "
              "block(s), %lu checksum(s), %lu parity unit(s); %s\n",
              report->files.size(), graphfs::FormatSize(t.bytes_read).c_str(), t.checksum_errors, t.read_errors,
              t.repaired_blocks, t.sum_repairs, t.parity_rewrites,
              t.unrepaired_blocks == 0
                  ? "no block left wrong"
                  : (std::to_string(t.unrepaired_blocks) + " block(s) left " +
                     (req.repair ? "unrepairable" : "unrepaired (--no-repair)"))
                        .c_str());
  return report->damage_left() ? 1 : 0;
}
