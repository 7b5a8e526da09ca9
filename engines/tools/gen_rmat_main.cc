// gen-rmat --scale S [--edge-factor 16] [--seed N] [--weighted] [--no-permute] -o FILE
#include <CLI/CLI.hpp>
#include <cstdio>

#include "engines/core/rmat.h"
#include "engines/tools/cli_util.h"

int main(int argc, char** argv) {
  graphfs::engine::RmatOptions options;
  CLI::App cli("gen-rmat: Graph500 R-MAT edge list (a=0.57 b=0.19 c=0.19), binary int32 src,dst[,float w]",
               "gen-rmat");
  cli.add_option("--scale", options.scale, "2^scale vertices")->required();
  cli.add_option("--edge-factor", options.edge_factor, "edges per vertex")->capture_default_str();
  cli.add_option("--seed", options.seed, "random seed; same seed, same file")->capture_default_str();
  cli.add_flag("--weighted", options.weighted, "add float weights uniform in [0, 256) (12-byte records)");
  cli.add_option("-o,--output", options.output, "output file")->required();
  cli.add_option("--threads", options.threads, "worker threads (default: one per core)");
  bool no_permute = false;
  cli.add_flag("--no-permute", no_permute,
               "keep R-MAT's own ids (hubs at low ids, locality in the ids) instead of spreading them");
  if (int rc = graphfs::engine::ParseCommandLine(cli, argc, argv); rc >= 0) return rc;
  options.permute = !no_permute;
  auto stats = graphfs::engine::GenerateRmat(options);
  if (!stats.ok()) {
    std::fprintf(stderr, "gen-rmat: error: %s\n", stats.error().message().c_str());
    return 1;
  }
  std::printf("gen-rmat: wrote %lu edges over %lu vertices (scale %d, %s) to %s in %.2f s\n",
              static_cast<unsigned long>(stats->edges), static_cast<unsigned long>(stats->vertices), options.scale,
              options.weighted ? "weighted" : "unweighted", options.output.c_str(), stats->seconds);
  return 0;
}
