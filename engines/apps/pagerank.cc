// Classic PageRank as GridGraph computes it: every vertex starts with rank 1,
// each iteration streams all edges, rank = 0.15 + 0.85 * sum of in-neighbour
// rank / out-degree (ranks sum to about V, not 1). State is float64 so the
// result does not depend on the order of the concurrent additions.
#include <cstdio>

#include "engines/apps/app_common.h"
#include "engines/core/target_sums.h"

namespace graphfs::engine {

using grid::EdgeOrder;
using grid::VertexId;

Result<AppResult> RunPageRank(const AppConfig& config, int64_t iterations) {
  if (iterations < 1) return Error(EINVAL, "ITERATIONS must be >= 1, got " + std::to_string(iterations));
  auto context = AppContext::Open(config);
  if (!context.ok()) return context.error();
  AppContext& ctx = **context;
  GRAPHFS_RETURN_IF_ERROR(ctx.RefuseReentry(
      "pagerank",
      "it sums every in-neighbour once per iteration (a Jacobi step), so applying loaded edges "
      "again would count them twice"));
  const uint64_t n = ctx.vertices();

  auto degree_file = ComputeOutDegrees(ctx, "pagerank.degree");
  if (!degree_file.ok()) return degree_file.error();
  auto rank_file = VertexArray<double>::Create(ctx.StatePath("pagerank.rank"), n);
  if (!rank_file.ok()) return rank_file.error();
  auto sum_file = VertexArray<double>::Create(ctx.StatePath("pagerank.sum"), n);
  if (!sum_file.ok()) return sum_file.error();
  const uint32_t* degree = degree_file->data();
  double* rank = rank_file->data();  // between iterations: rank / out-degree
  double* sum = sum_file->data();
  ctx.ForEachVertex<int>([&](VertexId v) {
    rank[v] = degree[v] != 0 ? 1.0 / degree[v] : 0.0;
    return 0;
  });

  StreamOptions options = ctx.ColumnOptions(n * sizeof(double));
  // The adds go through each worker's window of the target partition (TargetSums), not an
  // atomic add per edge: half of the iterations' CPU time.
  TargetSums sums(sum, ctx.layout().ranges(), ctx.stream().threads());
  double total = 0;
  for (int64_t iter = 0; iter < iterations; ++iter) {
    auto streamed = ctx.stream().Stream<uint64_t>(options, WithPrefetch(
        [&](int worker, VertexId s, VertexId t, float) -> uint64_t {
          sums.Add(worker, t, rank[s]);
          return 0;
        },
        [&](int worker, VertexId t) { sums.Prefetch(worker, t); }));
    sums.FlushAll();
    if (!streamed.ok()) return streamed.error();
    const bool last = iter + 1 == iterations;
    total = ctx.ForEachVertex<double>([&](VertexId v) {
      const double r = 0.15 + 0.85 * sum[v];
      sum[v] = 0;
      rank[v] = last ? r : (degree[v] != 0 ? r / degree[v] : 0.0);
      return r;
    });
    ctx.Progress("pagerank", static_cast<uint64_t>(iter + 1), n);
  }
  GRAPHFS_RETURN_IF_ERROR(rank_file->Sync());

  char line[256];
  std::snprintf(line, sizeof(line), "pagerank: sum of ranks %.6f over %lu vertices after %ld iterations", total,
                static_cast<unsigned long>(n), static_cast<long>(iterations));
  return ctx.Finish(line, rank_file->path(), static_cast<uint64_t>(iterations));
}

}  // namespace graphfs::engine
