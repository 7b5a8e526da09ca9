#include "engines/apps/app_main.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "common/size_parse.h"
#include "engines/apps/app_registry.h"
#include "engines/apps/apps.h"
#include "engines/tools/cli_util.h"

namespace graphfs::engine {

int AppMain(const char* app, int argc, char** argv) {
  const AppSpec* spec = FindApp(app);
  if (spec == nullptr) {  // a binary built for a name the registry does not have
    std::fprintf(stderr, "%s: error: no such app in engines/apps/app_registry.cc\n", app);
    return 2;
  }
  const char* name = spec->name;
  CLI::App cli(std::string(name) + ": GridGraph-style out-of-core " + name + " over a grid directory", name);
  AppConfig config;
  AppArgValue arg;
  cli.add_option("PATH", config.graph_dir, "graph directory made by preprocess")->required();
  switch (spec->arg.type) {
    case AppArgType::kInteger:
      cli.add_option(spec->arg.name, arg.integer, spec->arg.help)->required();
      break;
    case AppArgType::kPositiveNumber:
      cli.add_option(spec->arg.name, arg.number, spec->arg.help)->required();
      break;
    case AppArgType::kNone:
      break;
  }
  cli.add_option("MEM_GB", config.mem_gb, "memory budget in GiB; below the active edge bytes the "
                                          "edge files are read with O_DIRECT")
      ->capture_default_str();
  cli.add_option("--threads", config.threads, "reader threads (default: one per core)");
  cli.add_flag("--verbose", config.verbose, "print one line per iteration on stderr");
  // Offered to every app, so that the others can say why it does not apply to them.
  config.reentry = spec->default_reentry;
  const char* reentry_results[] = {" — not for this app", "; results are identical, iterations fewer on high-diameter graphs",
                                   "; results within the tolerance of EPSILON (see the engines README), iterations "
                                   "fewer on high-diameter graphs"};
  cli.add_option("--reentry", config.reentry,
                 std::string("apply each loaded buffer's edges again, from the vertices this iteration updated, "
                             "while that changes something, at most N times per buffer (CLIP's reentry; 0 = off)") +
                     reentry_results[static_cast<int>(spec->reentry)])
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  cli.add_flag("--diagonal-first", config.diagonal_first,
               "read the diagonal blocks (i, i) of each pass first (unmodified mode; with --reentry, updates "
               "inside a partition are made before the other blocks are read)");
  cli.add_option("--state-tag", config.state_tag,
                 "prefix of the vertex state and result files (TAG.bfs.level, ...), so instances of one app "
                 "can share a graph directory")
      ->check([](const std::string& tag) -> std::string {
        const bool ok = !tag.empty() && tag.size() <= 64 && std::all_of(tag.begin(), tag.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        });
        return ok ? "" : "TAG must be 1-64 of [A-Za-z0-9_-]";
      });
  auto* graphfs = cli.add_flag("--graphfs", config.graphfs,
                               "integrated mode: read graphfs's logical partitions of active chunks (the graph "
                               "must be on a graphfs mount and indexed)");
  std::string partition;
  cli.add_option("--graphfs-partition", partition,
                 "bytes per logical partition, suffixes K/M/G (default " + SizeText(config.partition_bytes) + ")")
      ->needs(graphfs);
  if (std::getenv("GRAPHFS_ENGINE_VERBOSE") != nullptr) config.verbose = true;
  if (int rc = graphfs::engine::ParseCommandLine(cli, argc, argv); rc >= 0) return rc;
  if (!partition.empty()) {
    auto bytes = ParseSize(partition);
    if (!bytes.ok() || *bytes == 0) {
      std::fprintf(stderr, "%s: error: --graphfs-partition: %s\n", name,
                   bytes.ok() ? "must be > 0" : bytes.error().message().c_str());
      return 2;
    }
    config.partition_bytes = *bytes;
  }

  Result<AppResult> result = spec->run(config, arg);
  if (!result.ok()) {
    std::fprintf(stderr, "%s: error: %s\n", name, result.error().message().c_str());
    return 1;
  }
  // Exactly one line on stdout in both modes: run-jobs and the tests take it as the result.
  std::printf("%s\n", result->line.c_str());
  if (config.verbose) {
    // Instances of one app are told apart by their state tag: "sssp[job2]: ...".
    const std::string label = config.state_tag.empty() ? name : std::string(name) + "[" + config.state_tag + "]";
    name = label.c_str();
    std::fprintf(stderr, "%s: streamed %" PRIu64 " edge bytes, %" PRIu64 " O_DIRECT streams, %" PRIu64
                         " edges read, %" PRIu64 " of active sources, %" PRIu64 " passes, %" PRIu64
                         " reentries, results in %s\n",
                 name, result->bytes_read, result->direct_streams, result->edges_read, result->edges_active,
                 result->passes, result->reentries, result->result_file.c_str());
    if (result->integrated) {
      std::fprintf(stderr, "%s: integrated mode: %" PRIu64 " logical partitions of at most %s, waited %.3f s\n",
                   name, result->partitions, FormatSize(config.partition_bytes).c_str(), result->wait_seconds);
    }
  }
  return 0;
}

}  // namespace graphfs::engine
