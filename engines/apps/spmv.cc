// Sparse matrix-vector product as GridGraph's spmv: x[i] = i, and
// y[target] += x[source] * weight over all edges.
#include <cstdio>

#include "engines/apps/app_common.h"
#include "engines/core/target_sums.h"

namespace graphfs::engine {

using grid::EdgeOrder;
using grid::EdgeType;
using grid::VertexId;

Result<AppResult> RunSpmv(const AppConfig& config) {
  auto context = AppContext::Open(config);
  if (!context.ok()) return context.error();
  AppContext& ctx = **context;
  GRAPHFS_RETURN_IF_ERROR(ctx.RefuseReentry(
      "spmv",
      "it is one product y = A^T x, not a relaxation"));
  if (ctx.layout().edge_type() != EdgeType::kWeighted) {
    return Error(EINVAL, config.graph_dir + " is unweighted (edge type 0); spmv needs edge type 1");
  }
  const uint64_t n = ctx.vertices();
  auto input_file = VertexArray<double>::Create(ctx.StatePath("spmv.input"), n);
  if (!input_file.ok()) return input_file.error();
  auto output_file = VertexArray<double>::Create(ctx.StatePath("spmv.output"), n);
  if (!output_file.ok()) return output_file.error();
  double* x = input_file->data();
  double* y = output_file->data();
  ctx.ForEachVertex<int>([&](VertexId v) {
    x[v] = static_cast<double>(v);
    y[v] = 0;
    return 0;
  });

  StreamOptions options = ctx.ColumnOptions(n * sizeof(double));
  TargetSums sums(y, ctx.layout().ranges(), ctx.stream().threads());  // no atomic add per edge
  auto streamed = ctx.stream().Stream<uint64_t>(options, WithPrefetch(
      [&](int worker, VertexId s, VertexId t, float w) -> uint64_t {
        sums.Add(worker, t, x[s] * static_cast<double>(w));
        return 0;
      },
      [&](int worker, VertexId t) { sums.Prefetch(worker, t); }));
  sums.FlushAll();
  if (!streamed.ok()) return streamed.error();
  GRAPHFS_RETURN_IF_ERROR(output_file->Sync());
  const double total = ctx.ForEachVertex<double>([&](VertexId v) { return y[v]; });

  char line[256];
  std::snprintf(line, sizeof(line), "spmv: sum of output %.6f over %lu vertices", total, static_cast<unsigned long>(n));
  return ctx.Finish(line, output_file->path(), 1);
}

}  // namespace graphfs::engine
