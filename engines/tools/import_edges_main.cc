// import-edges -i TEXT -o EDGES [--weighted] [--default-weight W]
#include <CLI/CLI.hpp>
#include <cstdio>

#include "engines/core/edge_import.h"
#include "engines/tools/cli_util.h"

int main(int argc, char** argv) {
  graphfs::engine::ImportOptions options;
  CLI::App cli("import-edges: SNAP/KONECT text edge list -> binary edge list for preprocess", "import-edges");
  cli.add_option("-i,--input", options.input, "text edge list ('-' for stdin)")->required();
  cli.add_option("-o,--output", options.output, "binary output")->required();
  cli.add_flag("--weighted", options.weighted, "write weighted 12-byte records from the third column");
  cli.add_option("--default-weight", options.default_weight, "weight for lines without one")->capture_default_str();
  if (int rc = graphfs::engine::ParseCommandLine(cli, argc, argv); rc >= 0) return rc;
  auto stats = graphfs::engine::ImportEdges(options);
  if (!stats.ok()) {
    std::fprintf(stderr, "import-edges: error: %s\n", stats.error().message().c_str());
    return 1;
  }
  const unsigned long vertices = stats->edges == 0 ? 0 : static_cast<unsigned long>(stats->max_vertex) + 1;
  std::printf("import-edges: %lu edges from %lu lines, max vertex id %ld; preprocess with -v %lu -t %d\n",
              static_cast<unsigned long>(stats->edges), static_cast<unsigned long>(stats->lines),
              stats->edges == 0 ? -1L : static_cast<long>(stats->max_vertex), vertices, options.weighted ? 1 : 0);
  return 0;
}
