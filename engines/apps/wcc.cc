// Connected components by min-label propagation along edge direction, as in
// GridGraph's wcc: label[v] ends as the smallest id of a vertex from which v
// is reachable (for symmetric inputs: the weakly connected components).
#include <cstdio>

#include "engines/apps/app_common.h"
#include "engines/core/bitmap.h"

namespace graphfs::engine {

using grid::EdgeOrder;
using grid::VertexId;

Result<AppResult> RunWcc(const AppConfig& config) {
  auto context = AppContext::Open(config);
  if (!context.ok()) return context.error();
  AppContext& ctx = **context;
  const uint64_t n = ctx.vertices();

  auto label_file = VertexArray<int32_t>::Create(ctx.StatePath("wcc.label"), n);
  if (!label_file.ok()) return label_file.error();
  int32_t* label = label_file->data();
  ctx.ForEachVertex<int>([&](VertexId v) {
    label[v] = static_cast<int32_t>(v);
    return 0;
  });

  Bitmap active_in(n), active_out(n);
  active_out.Fill();
  uint64_t active = n;
  uint64_t iterations = 0;
  StreamOptions options = ctx.ColumnOptions(n * sizeof(int32_t), &active_out);
  while (active != 0) {
    ++iterations;
    std::swap(active_in, active_out);
    active_out.Clear();
    options.active = &active_in;
    auto changed = ctx.stream().Stream<uint64_t>(options, WithPrefetch(
        [&](VertexId s, VertexId t, float) -> uint64_t {
          const int32_t candidate = AtomicLoad(label[s]);
          if (candidate < AtomicLoad(label[t]) && WriteMin(label[t], candidate)) {
            active_out.Set(t);
            return 1;
          }
          return 0;
        },
        [&](int, VertexId t) { __builtin_prefetch(&label[t], 1); }));
    if (!changed.ok()) return changed.error();
    active = *changed;
    ctx.Progress("wcc", iterations, active);
  }
  GRAPHFS_RETURN_IF_ERROR(label_file->Sync());
  // A label is in use exactly when its own vertex keeps it.
  const uint64_t components =
      ctx.ForEachVertex<uint64_t>([&](VertexId v) -> uint64_t { return label[v] == static_cast<int32_t>(v); });

  char line[256];
  std::snprintf(line, sizeof(line), "wcc: %lu components among %lu vertices after %lu iterations",
                static_cast<unsigned long>(components), static_cast<unsigned long>(n),
                static_cast<unsigned long>(iterations));
  return ctx.Finish(line, label_file->path(), iterations);
}

}  // namespace graphfs::engine
