// BFS as a relaxation: each iteration streams the edges of the vertices whose level dropped
// in the previous one and lowers level[t] to level[s] + 1 with an atomic write-min. Without
// reentry that is level-synchronous BFS (every level set in iteration k is k); with reentry
// (AppConfig::reentry) a loaded buffer is applied again from the vertices this iteration
// reached, so a level can be set too high first and lowered later — the fixpoint, the BFS
// levels, is the same either way. Levels are int32 with -1 for unreached, compared as
// uint32 so that -1 is the largest.
#include <algorithm>
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
  // Signed and unsigned views of one object may alias; as uint32, unreached (-1) is the largest.
  uint32_t* level = reinterpret_cast<uint32_t*>(level_file->data());
  constexpr uint32_t kUnreached = static_cast<uint32_t>(-1);
  ctx.ForEachVertex<int>([&](VertexId v) {
    level[v] = kUnreached;
    return 0;
  });
  level[start] = 0;

  Bitmap frontier(n), next(n);
  next.SetUnsynchronized(static_cast<size_t>(start));
  uint64_t active = 1;
  uint64_t iterations = 0;
  StreamOptions options = ctx.ColumnOptions(n * sizeof(int32_t), &next);
  while (active != 0) {
    ++iterations;
    std::swap(frontier, next);
    next.Clear();
    options.active = &frontier;
    auto found = ctx.stream().Stream<uint64_t>(options, WithPrefetch(
        [&](VertexId s, VertexId t, float) -> uint64_t {
          const uint32_t candidate = AtomicLoad(level[s]) + 1;  // s is reached: at most n - 1 + 1
          if (candidate < AtomicLoad(level[t]) && WriteMin(level[t], candidate)) {
            next.Set(t);
            return 1;
          }
          return 0;
        },
        [&](int, VertexId t) { __builtin_prefetch(&level[t], 1); }));
    if (!found.ok()) return found.error();
    active = *found;
    ctx.Progress("bfs", iterations, active);
  }
  GRAPHFS_RETURN_IF_ERROR(level_file->Sync());
  const uint64_t discovered = ctx.ForEachVertex<uint64_t>([&](VertexId v) -> uint64_t { return level[v] != kUnreached; });
  int32_t depth = 0;
  for (uint64_t v = 0; v < n; ++v) {
    if (level[v] != kUnreached) depth = std::max(depth, static_cast<int32_t>(level[v]));
  }

  char line[256];
  std::snprintf(line, sizeof(line), "bfs: discovered %lu of %lu vertices from %ld, depth %d",
                static_cast<unsigned long>(discovered), static_cast<unsigned long>(n), static_cast<long>(start), depth);
  return ctx.Finish(line, level_file->path(), iterations);
}

}  // namespace graphfs::engine
