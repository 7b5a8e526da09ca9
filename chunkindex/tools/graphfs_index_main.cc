// graphfs-index GRAPH_DIR [--chunk-size SIZE] [--threads N] [--force] [--check]
// Builds (or checks) the chunk index of a GridGraph-format graph directory in
// GRAPH_DIR/.graphfs/index. Exit status: 0 ok (also: already up to date),
// 1 error or stale/damaged index (--check), 2 usage.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "chunkindex/chunk_index.h"
#include "chunkindex/index_builder.h"
#include "chunkindex/index_db.h"
#include "common/cli_manpage.h"
#include "common/cli_size.h"
#include "common/size_parse.h"

int main(int argc, char** argv) {
  CLI::App app{"Builds the chunk index (RocksDB) of a GridGraph-format graph directory, or checks it."};
  std::string graph, chunk_size;
  int threads = 0;
  bool force = false, check = false, quiet = false, progress = false;
  app.add_option("graph", graph, "graph directory (meta, column, row, ...)")->required();
  app.add_option("--chunk-size", chunk_size, "chunk size (e.g. 4M); default: from the LLC formula");
  app.add_option("--threads", threads, "worker threads (default: one per core, at most one per partition)");
  app.add_flag("--force", force, "rebuild even if the index is up to date");
  app.add_flag("--check", check, "only check the existing index against the graph (exit 1 if stale or damaged)");
  app.add_flag("--progress", progress, "progress bar on stderr even when it is not a terminal");
  app.add_flag("-q,--quiet", quiet, "no progress bar");
  graphfs::AddManPageFlag(app);  // --help-man: the manual page (packaging/)
  // --help: 0; a usage error: 2 (common/cli_size.h).
  if (auto status = graphfs::ParseCommandLine(app, argc, argv)) return *status;
  if (threads < 0) {
    std::fprintf(stderr, "graphfs-index: --threads must be >= 0\n");
    return 2;
  }
  while (graph.size() > 1 && graph.back() == '/') graph.pop_back();

  if (check) {
    graphfs::Status s = graphfs::chunkindex::CheckIndex(graph);
    if (!s.ok()) {
      std::fprintf(stderr, "graphfs-index: %s\n", s.error().message().c_str());
      return 1;
    }
    auto table = graphfs::chunkindex::ChunkTable::Open(graph);
    if (!table.ok()) {
      std::fprintf(stderr, "graphfs-index: %s\n", table.error().message().c_str());
      return 1;
    }
    std::printf("graphfs-index: index of %s is up to date and intact: %zu chunks per file, chunk size %s\n",
                graph.c_str(), table->chunks(graphfs::chunkindex::ChunkFile::kColumn).size(),
                graphfs::FormatSize(table->chunk_size()).c_str());
    return 0;
  }

  graphfs::chunkindex::BuildOptions options;
  options.graph_dir = graph;
  options.threads = threads;
  options.force = force;
  options.progress = !quiet && (progress || ::isatty(2));
  options.log = [](const std::string& line) {
    std::printf("graphfs-index: %s\n", line.c_str());
    std::fflush(stdout);
  };
  if (!chunk_size.empty()) {
    auto c = graphfs::ParseSize(chunk_size);
    if (!c.ok()) {
      std::fprintf(stderr, "graphfs-index: --chunk-size: %s\n", c.error().message().c_str());
      return 2;
    }
    options.chunk_size = *c;
  }
  auto report = graphfs::chunkindex::BuildIndex(options);
  if (!report.ok()) {
    std::fprintf(stderr, "graphfs-index: %s\n", report.error().message().c_str());
    return 1;
  }
  if (!report->rebuilt) {
    std::printf("graphfs-index: %s (checked in %.3f s)\n", report->reason.c_str(), report->seconds);
    return 0;
  }
  const double pct = report->graph_bytes == 0 ? 0.0 : 100.0 * static_cast<double>(report->index_bytes) /
                                                          static_cast<double>(report->graph_bytes);
  std::printf("graphfs-index: indexed %s: %llu chunks per file (column, row), %llu (chunk, source) pairs, "
              "%d thread(s), %s read\n",
              graph.c_str(), static_cast<unsigned long long>(report->chunks),
              static_cast<unsigned long long>(report->source_pairs), report->threads,
              graphfs::FormatSize(report->bytes_read).c_str());
  std::printf("graphfs-index: build time %.3f s (streaming pass %.3f s, database flush+compaction %.3f s); index size %s (%.2f%% of the graph's %s: column + row + blocks) in %s\n",
              report->seconds, report->scan_seconds, report->finish_seconds, graphfs::FormatSize(report->index_bytes).c_str(), pct,
              graphfs::FormatSize(report->graph_bytes).c_str(), graphfs::chunkindex::IndexPath(graph).c_str());
  return 0;
}
