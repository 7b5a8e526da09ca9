// PageRank by pushing residuals (delta PageRank). Every vertex starts with
// residual 0.15; a vertex is active while its residual exceeds EPSILON. An
// iteration moves each active vertex's residual into its rank and pushes
// 0.85 * residual / out-degree to its out-neighbours' residuals, streaming
// only the partitions that still hold active vertices: the active set, and
// the I/O, shrink as ranks converge. The fixpoint is GridGraph's PageRank
// (0.15 + 0.85 * sum of in-neighbour rank / out-degree); the final rank adds
// the residual left below EPSILON.
#include <cstdio>

#include "engines/apps/app_common.h"
#include "engines/core/bitmap.h"

namespace graphfs::engine {

using grid::EdgeOrder;
using grid::VertexId;

namespace {
constexpr uint64_t kMaxIterations = 100000;
}

Result<AppResult> RunPageRankDelta(const AppConfig& config, double epsilon) {
  if (!(epsilon > 0)) return Error(EINVAL, "EPSILON must be > 0");
  auto context = AppContext::Open(config);
  if (!context.ok()) return context.error();
  AppContext& ctx = **context;
  GRAPHFS_RETURN_IF_ERROR(ctx.RefuseReentry(
      "pagerank-delta",
      "a vertex's residual must be pushed along all of its out-edges at once, and a loaded "
      "block holds only some of them (its other blocks would miss the push); reentry would need "
      "a pushed amount per edge"));
  const uint64_t n = ctx.vertices();

  auto degree_file = ComputeOutDegrees(ctx, "pagerank-delta.degree");
  if (!degree_file.ok()) return degree_file.error();
  auto rank_file = VertexArray<double>::Create(ctx.StatePath("pagerank-delta.rank"), n);
  if (!rank_file.ok()) return rank_file.error();
  auto residual_file = VertexArray<double>::Create(ctx.StatePath("pagerank-delta.residual"), n);
  if (!residual_file.ok()) return residual_file.error();
  auto push_file = VertexArray<double>::Create(ctx.StatePath("pagerank-delta.push"), n);
  if (!push_file.ok()) return push_file.error();
  const uint32_t* degree = degree_file->data();
  double* rank = rank_file->data();
  double* residual = residual_file->data();
  double* push = push_file->data();  // what an active vertex sends along each out-edge

  Bitmap active_in(n), active_out(n);
  uint64_t active = ctx.ForEachVertex<uint64_t>([&](VertexId v) -> uint64_t {
    rank[v] = 0;
    residual[v] = 0.15;
    return 0.15 > epsilon;
  });
  if (active != 0) active_out.Fill();

  StreamOptions options = ctx.ColumnOptions(n * sizeof(double));
  uint64_t iterations = 0;
  while (active != 0) {
    if (iterations == kMaxIterations) {
      return Error(EINVAL, "no convergence after " + std::to_string(iterations) + " iterations");
    }
    ++iterations;
    std::swap(active_in, active_out);
    active_out.Clear();
    ctx.ForEachVertex<int>([&](VertexId v) {
      if (active_in.Get(v)) {
        push[v] = degree[v] != 0 ? 0.85 * residual[v] / degree[v] : 0.0;
        rank[v] += residual[v];
        residual[v] = 0;
      }
      return 0;
    });
    options.active = &active_in;
    auto streamed = ctx.stream().Stream<uint64_t>(options, [&](VertexId s, VertexId t, float) -> uint64_t {
      AtomicAdd(residual[t], push[s]);
      return 0;
    });
    if (!streamed.ok()) return streamed.error();
    active = ctx.ForEachVertex<uint64_t>([&](VertexId v) -> uint64_t {
      if (residual[v] > epsilon) {
        active_out.Set(v);
        return 1;
      }
      return 0;
    });
    ctx.Progress("pagerank-delta", iterations, active);
  }
  const double total = ctx.ForEachVertex<double>([&](VertexId v) {
    rank[v] += residual[v];
    return rank[v];
  });
  GRAPHFS_RETURN_IF_ERROR(rank_file->Sync());

  char line[256];
  std::snprintf(line, sizeof(line), "pagerank-delta: sum of ranks %.6f over %lu vertices after %lu iterations (epsilon %g)",
                total, static_cast<unsigned long>(n), static_cast<unsigned long>(iterations), epsilon);
  return ctx.Finish(line, rank_file->path(), iterations);
}

}  // namespace graphfs::engine
