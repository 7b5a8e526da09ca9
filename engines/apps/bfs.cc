// Level-synchronous BFS: each iteration streams the edges of the frontier's
// partitions; a target's level is claimed once, with a CAS.
#include <cstdio>

#include "engines/apps/app_common.h"
#include "engines/core/bitmap.h"

namespace graphfs::engine {

using grid::EdgeOrder;
using grid::VertexId;

Result<AppResult> RunBfs(const AppConfig& config, int64_t start) {
  auto context = AppContext::Open(config);
  if (!context.ok()) return context.error();
  AppContext& ctx = **context;
  const uint64_t n = ctx.vertices();
  if (start < 0 || static_cast<uint64_t>(start) >= n) return ctx.StartOutOfRange(start);

  auto level_file = VertexArray<int32_t>::Create(ctx.StatePath("bfs.level"), n);
  if (!level_file.ok()) return level_file.error();
  int32_t* level = level_file->data();
  ctx.ForEachVertex<int>([&](VertexId v) {
    level[v] = -1;
    return 0;
  });
  level[start] = 0;

  Bitmap frontier(n), next(n);
  next.SetUnsynchronized(static_cast<size_t>(start));
  uint64_t active = 1;
  int32_t depth = 0;
  StreamOptions options;
  options.order = EdgeOrder::kColumn;
  options.vertex_state_bytes = n * sizeof(int32_t);
  while (active != 0) {
    std::swap(frontier, next);
    next.Clear();
    options.active = &frontier;
    const int32_t new_level = depth + 1;
    auto found = ctx.stream().Stream<uint64_t>(options, [&](VertexId, VertexId t, float) -> uint64_t {
      if (AtomicLoad(level[t]) != -1) return 0;
      int32_t expected = -1;
      if (!std::atomic_ref<int32_t>(level[t]).compare_exchange_strong(expected, new_level)) return 0;
      next.Set(t);
      return 1;
    });
    if (!found.ok()) return found.error();
    active = *found;
    if (active != 0) depth = new_level;
    ctx.Progress("bfs", static_cast<uint64_t>(new_level), active);
  }
  GRAPHFS_RETURN_IF_ERROR(level_file->Sync());
  const uint64_t discovered = ctx.ForEachVertex<uint64_t>([&](VertexId v) -> uint64_t { return level[v] >= 0; });

  char line[256];
  std::snprintf(line, sizeof(line), "bfs: discovered %lu of %lu vertices from %ld, depth %d",
                static_cast<unsigned long>(discovered), static_cast<unsigned long>(n), static_cast<long>(start), depth);
  return ctx.Finish(line, level_file->path(), static_cast<uint64_t>(depth) + 1);
}

}  // namespace graphfs::engine
