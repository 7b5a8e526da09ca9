// import-edges -i INPUT -o EDGES [--format snap|mtx] [--weighted] [--default-weight W]
// (engines/core/edge_import.h and matrix_market.h say what each format reads.)
// Exit status: 0 ok, 1 error (a bad input names its line and leaves no output), 2 usage.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "engines/core/edge_import.h"
#include "engines/tools/cli_util.h"

int main(int argc, char** argv) {
  graphfs::engine::ImportOptions options;
  // --format's default: ImportOptions::format, by its name.
  std::string format = options.format == graphfs::engine::ImportFormat::kMatrixMarket ? "mtx" : "snap";
  CLI::App cli("import-edges: SNAP/KONECT text or Matrix Market edge list -> binary edge list for preprocess",
               "import-edges");
  cli.add_option("-i,--input", options.input, "edge list to read ('-' for stdin)")->required();
  cli.add_option("-o,--output", options.output, "binary output (written whole or not at all)")->required();
  cli.add_option("--format", format,
                 "snap: SNAP/KONECT text, 'SOURCE TARGET [WEIGHT]' per line, 0-based ids as they are, '#'/'%' "
                 "comments; mtx: Matrix Market coordinate (.mtx), 1-based indices made 0-based")
      ->check(CLI::IsMember({"snap", "mtx"}))
      ->capture_default_str();
  cli.add_flag("--weighted", options.weighted,
               "write weighted 12-byte records: the third column (snap), the value (mtx integer/real)");
  cli.add_option("--default-weight", options.default_weight,
                 "weight of edges without one (snap lines of two columns, mtx pattern matrices)")
      ->capture_default_str();
  cli.footer(
      "Matrix Market (--format mtx), as scipy.io.mmread reads it: '%%MatrixMarket matrix coordinate FIELD "
      "SYMMETRY', FIELD pattern, integer or real, SYMMETRY general or symmetric (one triangle stored: an entry off "
      "the diagonal gives both directions, one on it a single self-loop); entry 'ROW COL [VALUE]' is the edge "
      "ROW-1 -> COL-1. The size line 'ROWS COLS NNZ' is checked (indices in range, exactly NNZ entries); the "
      "vertex count is max(ROWS, COLS), also for a rectangular matrix. Refused with the reason: array format, "
      "complex, skew-symmetric, hermitian.\n"
      "A bad input is refused with FILE:LINE and the reason, exit status 1, and no output file (an older one "
      "stays as it was). The last line printed gives the -v and -t to preprocess with.");
  if (int rc = graphfs::engine::ParseCommandLine(cli, argc, argv); rc >= 0) return rc;
  options.format = format == "mtx" ? graphfs::engine::ImportFormat::kMatrixMarket : graphfs::engine::ImportFormat::kSnap;
  auto stats = graphfs::engine::ImportEdges(options);
  if (!stats.ok()) {
    std::fprintf(stderr, "import-edges: error: %s\n", stats.error().message().c_str());
    return 1;
  }
  const auto count = [](uint64_t n) { return static_cast<unsigned long long>(n); };
  if (options.format == graphfs::engine::ImportFormat::kMatrixMarket) {
    std::printf("import-edges: %llu edges from %llu matrix entries (%llu lines)", count(stats->edges),
                count(stats->entries), count(stats->lines));
  } else {
    std::printf("import-edges: %llu edges from %llu lines", count(stats->edges), count(stats->lines));
  }
  std::printf(", max vertex id %lld; preprocess with -v %llu -t %d\n",
              stats->edges == 0 ? -1LL : static_cast<long long>(stats->max_vertex), count(stats->vertices),
              options.weighted ? 1 : 0);
  return 0;
}
