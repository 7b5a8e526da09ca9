// graphfs-update GRAPH [--add EDGES] [--delete EDGES] [--order auto|sorted|input] [--allow-missing]
//                [--keep N] [--compact] [--compact-above X] [-o OUTPUT]
// graphfs-update GRAPH --reclaim [--keep N]      reclaim kept versions beyond the N newest
// graphfs-update GRAPH --versions                GRAPH's versions, their disk space and users
// Applies a batch of edge additions and deletions (binary edge lists in the graph's format; text
// lists convert with import-edges) to a plain grid graph, as `preprocess` would have written it
// from the updated edge list (grid/edge_batch.h): in place as GRAPH's next version (the old one
// kept as GRAPH@N), or into a new directory OUTPUT (admin/graph_update.h).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <string>

#include "admin/graph_update.h"
#include "admin/update_crash_points.h"
#include "common/cli_manpage.h"
#include "common/cli_size.h"
#include "volume/version_reclaim.h"

namespace {

using graphfs::volume::ReclaimReport;

void PrintReclaim(const ReclaimReport& r) {
  for (const std::string& v : r.reclaimed) std::printf("graphfs-update: reclaimed %s\n", v.c_str());
  for (const std::string& v : r.results_left)
    std::printf("graphfs-update: %s: its other files (job results) stay there; it is no longer a graph\n", v.c_str());
  for (const std::string& v : r.in_use)
    std::printf("graphfs-update: kept until its users leave (the mount reclaims it then): %s\n", v.c_str());
  if (!r.reclaimed.empty())
    std::printf("graphfs-update: %lu bytes freed\n", static_cast<unsigned long>(r.bytes_freed));
}

int ListVersions(const std::string& graph) {
  auto list = graphfs::volume::ListVersions(graph, /*with_users=*/true);
  if (!list.ok()) {
    std::fprintf(stderr, "graphfs-update: error: %s\n", list.error().message().c_str());
    return 1;
  }
  std::printf("%-8s %-7s %14s %16s  %s\n", "version", "held", "bytes", "frees (own)", "path, users");
  for (const auto& v : *list) {
    std::string users;
    for (const std::string& u : v.users) users += " " + u;
    std::printf("%-8lld %-7s %14lu %16lu  %s%s%s\n", static_cast<long long>(v.number),
                v.current ? "current" : (v.held ? "yes" : "no"), static_cast<unsigned long>(v.bytes),
                static_cast<unsigned long>(v.exclusive_bytes), v.path.c_str(), users.empty() ? "" : ";", users.c_str());
  }
  return 0;
}

int Reclaim(const std::string& graph, std::optional<uint64_t> keep) {
  auto remembered = graphfs::volume::KeepOf(graph);
  if (!remembered.ok()) {
    std::fprintf(stderr, "graphfs-update: error: %s\n", remembered.error().message().c_str());
    return 1;
  }
  if (!keep) keep = *remembered;
  if (!keep) {
    std::fprintf(stderr, "graphfs-update: --reclaim needs --keep N (no count was given before for %s)\n", graph.c_str());
    return 2;
  }
  if (!*remembered || **remembered != *keep) {
    graphfs::Status s = graphfs::volume::WriteKeep(graph, *keep);
    if (!s.ok()) {
      std::fprintf(stderr, "graphfs-update: error: %s\n", s.error().message().c_str());
      return 1;
    }
  }
  auto r = graphfs::volume::ReclaimVersions(graph, *keep);
  if (!r.ok()) {
    std::fprintf(stderr, "graphfs-update: error: %s\n", r.error().message().c_str());
    return 1;
  }
  PrintReclaim(*r);
  if (r->reclaimed.empty() && r->in_use.empty()) std::printf("graphfs-update: nothing to reclaim\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using Order = graphfs::admin::UpdateOptions::Order;
  graphfs::admin::UpdateOptions options;
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
  uint64_t keep = 0;
  auto* keep_option = cli.add_option("--keep", keep,
                                     "hold the N newest kept versions (GRAPH@N); older ones are reclaimed once no "
                                     "open file, job or process uses them. Remembered for later updates; without it "
                                     "every version is kept");
  cli.add_flag("--compact", options.compact,
               "write the new version compactly (one copy of the graph) whatever pieces it could share");
  cli.add_option("--compact-above", options.compact_above,
                 "write it compactly when it would keep more than this many times a fresh graph's bytes alive "
                 "(old pieces only partly used)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  bool reclaim = false, versions = false;
  cli.add_flag("--reclaim", reclaim, "only reclaim (with --keep, or the count remembered), no batch");
  cli.add_flag("--versions", versions, "only list GRAPH's versions: number, disk space, what reclaiming frees, users");
  graphfs::AddManPageFlag(cli);  // --help-man: the manual page (packaging/)
  // --help: 0; a usage error: 2 (common/cli_size.h).
  if (auto status = graphfs::ParseCommandLine(cli, argc, argv)) return *status;
  if (keep_option->count() > 0) options.keep = keep;
  // Tests stop the run at a named point of its sequence (admin/update_crash_points.h); a name
  // it does not have is a usage error, not a run that never stops.
  if (auto status = graphfs::ArmCrashPointOrUsageError("graphfs-update", graphfs::admin::kUpdateCrashPoints))
    return *status;
  if (versions) return ListVersions(options.graph_dir);
  if (reclaim) return Reclaim(options.graph_dir, options.keep);
  if (options.add_file.empty() && options.delete_file.empty()) {
    std::fprintf(stderr, "graphfs-update: nothing to do: give --add and/or --delete\n");
    return 2;
  }
  auto st = graphfs::admin::UpdateGraph(options);
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
                             std::to_string(st->index_ranges_reused) + " source ranges taken from the old index" +
                             (st->index_shared ? ", its files shared" : "") + ")")
                                .c_str()
                          : "");
  if (options.output_dir.empty())
    std::printf("graphfs-update: the new version keeps %lu bytes alive%s\n",
                static_cast<unsigned long>(st->referenced_bytes),
                st->compacted ? " (written compactly: old pieces were only partly used)" : "");
  if (st->reclaim) PrintReclaim(*st->reclaim);
  if (!st->reclaim_error.empty())
    std::fprintf(stderr, "graphfs-update: warning: the update stands, but reclaiming old versions failed: %s\n",
                 st->reclaim_error.c_str());
  if (!st->left_behind.empty()) {
    std::string names;
    for (const std::string& n : st->left_behind) names += (names.empty() ? "" : " ") + n;
    std::printf("graphfs-update: not graph files, left with the old version in %s: %s\n", st->old_version.c_str(),
                names.c_str());
  }
  return 0;
}
