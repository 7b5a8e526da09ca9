// Single-source shortest paths by frontier Bellman-Ford: each iteration
// relaxes the out-edges of vertices whose distance dropped in the previous
// one. Distances are float32 like the weights, so results are exact and
// match Dijkstra on the same float sums. Weights must be >= 0.
#include <cmath>
#include <cstdio>
#include <limits>

#include "engines/apps/app_common.h"
#include "engines/core/bitmap.h"

namespace graphfs::engine {

using grid::EdgeOrder;
using grid::EdgeType;
using grid::VertexId;

Result<AppResult> RunSssp(const AppConfig& config, int64_t start) {
  auto context = AppContext::Open(config);
  if (!context.ok()) return context.error();
  AppContext& ctx = **context;
  if (ctx.layout().edge_type() != EdgeType::kWeighted) {
    return Error(EINVAL, config.graph_dir + " is unweighted (edge type 0); sssp needs edge type 1");
  }
  const uint64_t n = ctx.vertices();
  if (start < 0 || static_cast<uint64_t>(start) >= n) return ctx.StartOutOfRange(start);

  auto dist_file = VertexArray<float>::Create(ctx.StatePath("sssp.distance"), n);
  if (!dist_file.ok()) return dist_file.error();
  float* dist = dist_file->data();
  const float inf = std::numeric_limits<float>::infinity();
  ctx.ForEachVertex<int>([&](VertexId v) {
    dist[v] = inf;
    return 0;
  });
  dist[start] = 0;

  Bitmap active_in(n), active_out(n);
  active_out.SetUnsynchronized(static_cast<size_t>(start));
  uint64_t active = 1;
  uint64_t iterations = 0;
  std::atomic<bool> negative_weights{false};
  StreamOptions options = ctx.ColumnOptions(n * sizeof(float), &active_out);
  while (active != 0) {
    // Weights are >= 0 (checked below), so a shortest path has < n edges.
    if (iterations > n) return Error(EINVAL, "no convergence after " + std::to_string(iterations) + " iterations");
    ++iterations;
    std::swap(active_in, active_out);
    active_out.Clear();
    options.active = &active_in;
    auto relaxed = ctx.stream().Stream<uint64_t>(options, WithPrefetch(
        [&](VertexId s, VertexId t, float w) -> uint64_t {
          if (!(w >= 0)) {  // negative or NaN: Bellman-Ford would not settle
            negative_weights.store(true, std::memory_order_relaxed);
            return 0;
          }
          const float candidate = AtomicLoad(dist[s]) + w;
          if (candidate < AtomicLoad(dist[t]) && WriteMin(dist[t], candidate)) {
            active_out.Set(t);
            return 1;
          }
          return 0;
        },
        [&](int, VertexId t) { __builtin_prefetch(&dist[t], 1); }));
    if (!relaxed.ok()) return relaxed.error();
    if (negative_weights.load()) {
      return Error(EINVAL, config.graph_dir + " has negative or NaN edge weights; sssp needs weights >= 0");
    }
    active = *relaxed;
    ctx.Progress("sssp", iterations, active);
  }
  GRAPHFS_RETURN_IF_ERROR(dist_file->Sync());
  const uint64_t reached = ctx.ForEachVertex<uint64_t>([&](VertexId v) -> uint64_t { return dist[v] < inf; });
  float farthest = 0;
  for (uint64_t v = 0; v < n; ++v) {
    if (dist[v] < inf && dist[v] > farthest) farthest = dist[v];
  }

  char line[256];
  std::snprintf(line, sizeof(line), "sssp: reached %lu of %lu vertices from %ld, max distance %.6g, %lu iterations",
                static_cast<unsigned long>(reached), static_cast<unsigned long>(n), static_cast<long>(start),
                static_cast<double>(farthest), static_cast<unsigned long>(iterations));
  return ctx.Finish(line, dist_file->path(), iterations);
}

}  // namespace graphfs::engine
