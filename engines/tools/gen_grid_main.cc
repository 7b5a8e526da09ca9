// gen-grid --width W --height H [--drop F] [--long-edges N] [--weighted] [--seed S] -o FILE
#include <CLI/CLI.hpp>
#include <cstdio>

#include "engines/core/lattice.h"
#include "engines/tools/cli_util.h"

int main(int argc, char** argv) {
  graphfs::engine::LatticeOptions options;
  CLI::App cli("gen-grid: a road-network-like W x H lattice (row-major ids, both directions of each kept edge, "
               "weights = lengths), binary int32 src,dst[,float w]",
               "gen-grid");
  cli.add_option("--width", options.width, "vertices per row")->required();
  cli.add_option("--height", options.height, "rows")->required();
  cli.add_option("--drop", options.drop, "fraction of lattice edges left out, in [0, 1)")->capture_default_str();
  cli.add_option("--long-edges", options.long_edges, "random long edges (make the graph small-world)")
      ->capture_default_str();
  cli.add_flag("--weighted", options.weighted, "add float weights = edge lengths (12-byte records)");
  cli.add_option("--seed", options.seed, "random seed; same seed, same file")->capture_default_str();
  cli.add_option("-o,--output", options.output, "output file")->required();
  if (int rc = graphfs::engine::ParseCommandLine(cli, argc, argv); rc >= 0) return rc;
  auto stats = graphfs::engine::GenerateLattice(options);
  if (!stats.ok()) {
    std::fprintf(stderr, "gen-grid: error: %s\n", stats.error().message().c_str());
    return 1;
  }
  std::printf("gen-grid: wrote %lu edges over %lu vertices (%lu x %lu, %s) to %s in %.2f s\n",
              static_cast<unsigned long>(stats->edges), static_cast<unsigned long>(stats->vertices),
              static_cast<unsigned long>(options.width), static_cast<unsigned long>(options.height),
              options.weighted ? "weighted" : "unweighted", options.output.c_str(), stats->seconds);
  return 0;
}
