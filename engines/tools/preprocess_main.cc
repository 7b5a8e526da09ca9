// preprocess -i EDGES -o DIR -v VERTICES -p PARTITIONS -t EDGE_TYPE [--sort-sources]
// (GridGraph's flags, plus --sort-sources.)
#include <CLI/CLI.hpp>
#include <cstdio>

#include "engines/core/preprocess.h"
#include "engines/tools/cli_util.h"

int main(int argc, char** argv) {
  graphfs::engine::PreprocessOptions options;
  CLI::App cli("preprocess: binary edge list -> GridGraph grid directory (meta, block-i-j, column, row, offsets)",
               "preprocess");
  cli.add_option("-i", options.input, "binary edge list (int32 src, int32 dst[, float32 w])")->required();
  cli.add_option("-o", options.output_dir, "output graph directory")->required();
  cli.add_option("-v", options.vertices, "number of vertices (ids must be < this)")->required();
  cli.add_option("-p", options.partitions, "partitions P (P*P blocks)")->required();
  cli.add_option("-t", options.edge_type, "edge type: 0 unweighted, 1 weighted")->capture_default_str();
  cli.add_flag("--sort-sources", options.sort_sources, "sort each block's edges by source vertex");
  cli.add_option("--threads", options.threads, "worker threads (default: one per core)");
  cli.add_flag("--progress", options.progress, "show progress on stderr");
  if (int rc = graphfs::engine::ParseCommandLine(cli, argc, argv); rc >= 0) return rc;
  auto stats = graphfs::engine::Preprocess(options);
  if (!stats.ok()) {
    std::fprintf(stderr, "preprocess: error: %s\n", stats.error().message().c_str());
    return 1;
  }
  const double rate = stats->seconds > 0 ? static_cast<double>(stats->edges) / stats->seconds : 0;
  std::printf("preprocess: %lu edges, %ld vertices, %ld partitions -> %s in %.2f s (%.3g edges/s)\n",
              static_cast<unsigned long>(stats->edges), static_cast<long>(options.vertices),
              static_cast<long>(options.partitions), options.output_dir.c_str(), stats->seconds, rate);
  return 0;
}
