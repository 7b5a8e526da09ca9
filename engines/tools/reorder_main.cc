// reorder -i EDGES -o OUT --vertices V --order bfs|degree|random [--weighted] [--seed S] [--permutation FILE]
// reorder --map-back --permutation FILE --type int32|float32|float64 [--labels] -i RESULT -o OUT
// reorder --map-vertex OLD --permutation FILE
// (engines/core/reorder.h and map_back.h say what each does.) Exit status: 0 ok, 1 error, 2 usage.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "engines/core/map_back.h"
#include "engines/core/reorder.h"
#include "engines/tools/cli_util.h"

namespace {

int Fail(const graphfs::Error& error) {
  std::fprintf(stderr, "reorder: error: %s\n", error.message().c_str());
  return 1;
}

int Usage(const char* message) {
  std::fprintf(stderr, "reorder: error: %s\nRun with --help for more information.\n", message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  graphfs::engine::ReorderOptions options;
  std::string order, type;
  bool map_back = false, labels = false;
  int64_t map_vertex = -1;
  CLI::App cli("reorder: relabel the vertices of a binary edge list for locality (bfs, degree or random order), "
               "writing the permutation (V little-endian int32, perm[old] = new); or map results back to the old ids",
               "reorder");
  auto* input = cli.add_option("-i,--input", options.input, "edge list, or with --map-back the result in new ids");
  auto* output = cli.add_option("-o,--output", options.output, "relabelled edge list, or the result in old ids");
  auto* vertices = cli.add_option("--vertices", options.vertices, "number of vertices (ids must be < this)");
  auto* order_option =
      cli.add_option("--order", order, "bfs, degree or random")->check(CLI::IsMember({"bfs", "degree", "random"}));
  auto* weighted = cli.add_flag("--weighted", options.weighted, "12-byte records (int32 src, int32 dst, float32 w)");
  auto* seed = cli.add_option("--seed", options.seed, "seed of --order random")->capture_default_str();
  auto* permutation = cli.add_option("--permutation", options.permutation,
                                     "permutation file (written; default OUT.perm), read by --map-back/--map-vertex");
  auto* back = cli.add_flag("--map-back", map_back, "map a per-vertex result file from new ids to old ids");
  auto* type_option = cli.add_option("--type", type, "--map-back: value type, int32, float32 or float64")
                          ->check(CLI::IsMember({"int32", "float32", "float64"}));
  auto* labels_flag =
      cli.add_flag("--labels", labels, "--map-back: the values are vertex ids (e.g. wcc.label), mapped too");
  auto* vertex = cli.add_option("--map-vertex", map_vertex, "print the new id of old vertex OLD (e.g. a bfs START)");
  back->needs(permutation, type_option, input, output)->excludes(vertices, order_option, weighted, seed, vertex);
  type_option->needs(back);
  labels_flag->needs(back);
  vertex->needs(permutation)->excludes(input, output, vertices, order_option, weighted, seed);
  if (int rc = graphfs::engine::ParseCommandLine(cli, argc, argv); rc >= 0) return rc;

  if (*vertex) {
    auto id = graphfs::engine::MapVertex(options.permutation, map_vertex);
    if (!id.ok()) return Fail(id.error());
    std::printf("%d\n", *id);
    return 0;
  }
  if (map_back) {
    graphfs::engine::MapBackOptions m;
    m.permutation = options.permutation;
    m.input = options.input;
    m.output = options.output;
    m.type = *graphfs::engine::ParseResultType(type);  // IsMember checked it
    m.labels = labels;
    auto mapped = graphfs::engine::MapBack(m);
    if (!mapped.ok()) return Fail(mapped.error());
    std::printf("reorder: mapped %lu %s values%s back to the old ids: %s\n", static_cast<unsigned long>(*mapped),
                type.c_str(), labels ? " (vertex ids, mapped too)" : "", options.output.c_str());
    return 0;
  }
  if (!*input || !*output || !*vertices || !*order_option) {
    return Usage("relabelling needs -i, -o, --vertices and --order (or --map-back, or --map-vertex)");
  }
  options.order = *graphfs::engine::ParseVertexOrder(order);
  auto stats = graphfs::engine::Reorder(options);
  if (!stats.ok()) return Fail(stats.error());
  std::string how = order;
  if (options.order == graphfs::engine::VertexOrder::kBfs) {
    how += " from vertex " + std::to_string(stats->bfs_root) + ", " + std::to_string(stats->bfs_starts) +
           (stats->bfs_starts == 1 ? " start" : " starts");
  } else if (options.order == graphfs::engine::VertexOrder::kRandom) {
    how += ", seed " + std::to_string(options.seed);
  }
  std::printf("reorder: relabelled %lu edges over %lu vertices (%s) to %s, permutation %s, %.1f MiB of arrays, "
              "in %.2f s\n",
              static_cast<unsigned long>(stats->edges), static_cast<unsigned long>(stats->vertices), how.c_str(),
              options.output.c_str(), stats->permutation.c_str(),
              static_cast<double>(stats->memory_bytes) / (1 << 20), stats->seconds);
  return 0;
}
