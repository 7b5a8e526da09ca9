// graphfs-unstripe [--disks D0,D1,...] GRAPH_DIR|FILE
#include <CLI/CLI.hpp>
#include <cstdio>

#include "common/cli_manpage.h"
#include "common/cli_size.h"
#include "common/size_parse.h"
#include "striping/restripe.h"

int main(int argc, char** argv) {
  CLI::App app{"Brings the plain files of a striped graph directory back (resumable, crash-safe)."};
  graphfs::UnstripeRequest req;
  std::string disks;
  bool quiet = false;
  app.add_option("--disks", disks, "disk directories overriding the registered paths, comma-separated");
  app.add_flag("-q,--quiet", quiet, "no progress output");
  app.add_option("path", req.path, "graph directory (or one striped file in it)")->required();
  graphfs::AddManPageFlag(app);  // --help-man: the manual page (packaging/)
  // --help: 0; a usage error: 2 (common/cli_size.h).
  if (auto status = graphfs::ParseCommandLine(app, argc, argv)) return *status;
  req.progress = !quiet;
  if (!disks.empty()) req.disks = graphfs::SplitList(disks, ',');
  auto report = graphfs::UnstripeFiles(req);
  if (!report.ok()) {
    std::fprintf(stderr, "\ngraphfs-unstripe: %s\n", report.error().message().c_str());
    return 1;
  }
  for (const auto& s : report->skipped) std::fprintf(stderr, "graphfs-unstripe: skipped %s\n", s.c_str());
  for (const auto& n : report->notes) std::fprintf(stderr, "graphfs-unstripe: %s\n", n.c_str());
  std::printf("graphfs-unstripe: restored %zu file(s), %s\n", report->converted.size(),
              graphfs::FormatSize(report->bytes).c_str());
  return 0;
}
