// graphfs-update GRAPH [--add EDGES] [--delete EDGES] [--order auto|sorted|input] [--allow-missing]
//                [-o OUTPUT]
// Applies a batch of edge additions and deletions (binary edge lists in the graph's format; text
// lists convert with import-edges) to a plain grid graph, as `preprocess` would have written it
// from the updated edge list (grid/edge_batch.h): in place as GRAPH's next version (the old one
// kept as GRAPH@N), or into a new directory OUTPUT (engines/core/graph_update.h).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <string>

#include "volume/graph_update.h"

int main(int argc, char** argv) {
  using Order = graphfs::volume::UpdateOptions::Order;
  graphfs::volume::UpdateOptions options;
  CLI::App cli("graphfs-update: a batch of edge additions and deletions applied to a grid graph; the updated graph "
               "equals preprocess of the updated edge list (old edges minus deleted ones, then the added ones)",
               "graphfs-update");
  cli.add_option("graph", options.graph_dir, "the graph directory (preprocess's output)")->required();
  cli.add_option("--add", options.add_file, "edges to add (binary, the graph's record format)");
  cli.add_option("--delete", options.delete_file,
                 "edges to delete: each record removes one equal edge (source, target, weight bits), the first "
                 "in its block");
  cli.add_option("-o,--output", options.output_dir,
                 "write the updated graph to this new directory instead (GRAPH stays as it is)");
  const std::map<std::string, Order> orders = {{"auto", Order::kAuto}, {"sorted", Order::kSorted}, {"input", Order::kInput}};
  cli.add_option("--order", options.order,
                 "block order: sorted (preprocessed with --sort-sources), input, or auto (sorted if every touched "
                 "block is in source order)")
      ->transform(CLI::CheckedTransformer(orders, CLI::ignore_case));
  cli.add_flag("--allow-missing", options.allow_missing, "count deletions that match no edge instead of refusing");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e) == 0 ? 0 : 2;  // help: 0; a usage error: 2
  }
  if (options.add_file.empty() && options.delete_file.empty()) {
    std::fprintf(stderr, "graphfs-update: nothing to do: give --add and/or --delete\n");
    return 2;
  }
  auto st = graphfs::volume::UpdateGraph(options);
  if (!st.ok()) {
    std::fprintf(stderr, "graphfs-update: error: %s\n", st.error().message().c_str());
    return 1;
  }
  const std::string where = options.output_dir.empty()
                                ? options.graph_dir + " (version " + std::to_string(st->version) + "; the old one is " +
                                      st->old_version + ")"
                                : options.output_dir;
  std::printf("graphfs-update: +%lu -%lu edges (%lu deletions matched nothing) -> %lu edges in %s; %s blocks; "
              "%lu of %lu blocks touched (%lu bytes), %lu bytes written in %.2f s%s\n",
              static_cast<unsigned long>(st->added), static_cast<unsigned long>(st->deleted),
              static_cast<unsigned long>(st->missing), static_cast<unsigned long>(st->edges),
              where.c_str(), st->sorted ? "source-sorted" : "input-order",
              static_cast<unsigned long>(st->blocks_touched), static_cast<unsigned long>(st->blocks),
              static_cast<unsigned long>(st->touched_bytes), static_cast<unsigned long>(st->bytes_written), st->seconds,
              st->indexed ? ("; indexed in " + std::to_string(st->index_seconds) + " s (" +
                             std::to_string(st->index_ranges_reused) + " source ranges taken from the old index)")
                                .c_str()
                          : "");
  if (!st->left_behind.empty()) {
    std::string names;
    for (const std::string& n : st->left_behind) names += (names.empty() ? "" : " ") + n;
    std::printf("graphfs-update: not graph files, left with the old version in %s: %s\n", st->old_version.c_str(),
                names.c_str());
  }
  return 0;
}
