// The graph apps, as library calls (the binaries are thin mains over these;
// app_registry.cc declares each app's name, argument, result file and call).
// Every app opens a grid directory, streams its edges out-of-core the
// GridGraph way (engines/core/edge_stream.h), keeps vertex state in files in
// the graph directory, and returns a one-line summary.
//
// Results written to the graph directory, one value per vertex:
//   bfs             bfs.level            int32, BFS depth from START, -1 unreachable
//   wcc             wcc.label            int32, min id of a vertex reaching it along edges
//   sssp            sssp.distance        float32, shortest distance from START, +inf unreachable
//   pagerank        pagerank.rank        float64, GridGraph's PageRank (0.15 + 0.85 * sum)
//   pagerank-delta  pagerank-delta.rank  float64, same fixpoint, computed by pushing residuals
//   spmv            spmv.output          float64, y = A^T x with x[i] = i (GridGraph's spmv)
//   wcc-uf          wcc-uf.label         int32, as wcc's on a symmetric graph: the smallest id of the
//                                        vertex's weakly connected component (one union-find pass)

//
// Integrated mode (AppConfig::graphfs): the graph is on a graphfs mount and
// indexed; every iteration's edges come from graphfs's logical partitions of
// active chunks (engines/graphfs_client.hpp) instead of `column`. Results are
// the same as in the unmodified mode (the edge functions do not depend on
// the order in which edges arrive).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/result.h"
#include "engines/graphfs_client.hpp"

namespace graphfs::grid {
class GridLayout;
}

namespace graphfs::engine {

class PartitionSource;

// The relaxation apps' --reentry when none is given (BENCHMARKS.md, issue 17: faster on every
// graph family unmodified; 5 is where the grid's passes stop falling).
inline constexpr int kDefaultReentry = 5;
// pagerank-delta's: off. It re-enters along diagonal edges only, and on R-MAT (15% of the edges
// in diagonal blocks) that made more, smaller pushes: 52 -> 67 passes; the grid (all but a few
// edges diagonal) gains 1.6-1.9x integrated with --reentry 5 (BENCHMARKS.md, issue 17).
inline constexpr int kDefaultPageRankDeltaReentry = 0;
// In integrated mode a job with reentry asks for whole chunks from this iteration on: whole
// chunks are what reentry follows, but they cost bytes a sparse frontier does not need, and
// only high-diameter graphs (the grid: ~2000 iterations) gain — R-MAT's jobs end in 5-20.
inline constexpr uint64_t kReentryWholeChunksAfter = 32;

// Makes the logical-partition source of integrated mode for an opened graph.
using PartitionSourceFactory =
    std::function<Result<std::unique_ptr<PartitionSource>>(const grid::GridLayout& layout, uint64_t partition_bytes)>;

// MEM_GB unless given, written once: AppConfig, the apps' --help (from the field) and run-jobs.
inline constexpr double kDefaultMemGb = 8;

struct AppConfig {
  std::string graph_dir;
  double mem_gb = kDefaultMemGb;  // GridGraph's MEM budget: O_DIRECT and source windows
  int threads = 0;       // 0 = one per core
  bool verbose = false;
  std::string state_tag;  // prefix of the vertex state files ("" = none): see AppContext::StatePath
  // Loaded-data reentry (bfs, sssp, wcc, pagerank-delta): apply each loaded buffer's edges
  // again, from the vertices this iteration updated, while that changes something — at most
  // this many times per buffer (0: off, the library's default; the binaries' default is
  // kDefaultReentry). Results are identical (pagerank-delta: within its tolerance,
  // pagerank_delta.cc); iterations (passes) fewer on high-diameter graphs.
  int reentry = 0;
  bool diagonal_first = false;  // unmodified column streams: diagonal blocks (i, i) first
  bool graphfs = false;  // integrated mode: column streams read graphfs's logical partitions
  uint64_t partition_bytes = graphfs_client::Job::kDefaultPartitionBytes;  // integrated mode: bytes per LP
  // Integrated mode's source; empty = a job in the graph's graphfs mount.
  // Tests (and embedders) plug in their own.
  PartitionSourceFactory partition_source;
};

struct AppResult {
  std::string line;         // the one-line summary
  std::string result_file;  // path of the per-vertex result
  uint64_t iterations = 0;
  uint64_t passes = 0;      // streams over the graph's edges (an iteration's, and pagerank's degree pass)
  uint64_t reentries = 0;   // buffers processed again (AppConfig::reentry)
  double seconds = 0;
  uint64_t bytes_read = 0;  // edge bytes streamed
  uint64_t direct_streams = 0;
  uint64_t edges_read = 0;    // edge records examined
  uint64_t edges_active = 0;  // of those, records of active sources (the useful ones)
  bool integrated = false;
  uint64_t partitions = 0;    // integrated mode: logical partitions read
  double wait_seconds = 0;    // integrated mode: time waiting for them
};

Result<AppResult> RunBfs(const AppConfig& config, int64_t start);
Result<AppResult> RunWcc(const AppConfig& config);
Result<AppResult> RunSssp(const AppConfig& config, int64_t start);
Result<AppResult> RunPageRank(const AppConfig& config, int64_t iterations);
Result<AppResult> RunPageRankDelta(const AppConfig& config, double epsilon);
Result<AppResult> RunSpmv(const AppConfig& config);
Result<AppResult> RunWccUnionFind(const AppConfig& config);

}  // namespace graphfs::engine
