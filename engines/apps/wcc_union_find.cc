// Weakly connected components in one pass over the edges (CLIP §3.2, beyond-neighbourhood
// access): with the vertex data in memory, each edge (s, t) unites the sets of s and t in a
// union-find forest whose roots are the smallest ids — a root is only ever linked under a
// smaller root, so a component's root is its smallest vertex. Finding compresses paths by
// halving. Unions run on every reader thread at once, lock-free: a link is a compare-and-swap
// of a root's parent from itself, retried from the new roots when another thread linked first.
// The parent array is the result file itself (4 B per vertex, mmap'd like the other apps'
// state); afterwards every entry is its root. On a symmetric graph (both directions of every
// edge) the labels equal wcc's min-label propagation; on a directed graph wcc follows edge
// directions only, and the two differ where direction matters (wcc-uf ignores it).
#include <cstdio>

#include "engines/apps/app_common.h"

namespace graphfs::engine {

using grid::VertexId;

namespace {

// The root of v's set; each step points v at its grandparent (path halving), which keeps
// every parent an ancestor however threads interleave.
uint32_t Find(uint32_t* parent, uint32_t v) {
  for (;;) {
    uint32_t p = AtomicLoad(parent[v]);
    if (p == v) return v;
    const uint32_t gp = AtomicLoad(parent[p]);
    if (gp != p) std::atomic_ref<uint32_t>(parent[v]).compare_exchange_weak(p, gp, std::memory_order_relaxed);
    v = gp;
  }
}

void Unite(uint32_t* parent, uint32_t a, uint32_t b) {
  for (;;) {
    uint32_t ra = Find(parent, a), rb = Find(parent, b);
    if (ra == rb) return;
    if (ra < rb) std::swap(ra, rb);  // the larger root goes under the smaller
    uint32_t expected = ra;
    if (std::atomic_ref<uint32_t>(parent[ra]).compare_exchange_strong(expected, rb, std::memory_order_relaxed)) return;
    // ra stopped being a root meanwhile: try again from the current roots.
  }
}

}  // namespace

Result<AppResult> RunWccUnionFind(const AppConfig& config) {
  auto context = AppContext::Open(config);
  if (!context.ok()) return context.error();
  AppContext& ctx = **context;
  GRAPHFS_RETURN_IF_ERROR(ctx.RefuseReentry("wcc-uf", "it reads every edge exactly once"));
  const uint64_t n = ctx.vertices();

  auto label_file = VertexArray<int32_t>::Create(ctx.StatePath("wcc-uf.label"), n);
  if (!label_file.ok()) return label_file.error();
  uint32_t* parent = reinterpret_cast<uint32_t*>(label_file->data());  // ids < 2^31
  ctx.ForEachVertex<int>([&](VertexId v) {
    parent[v] = static_cast<uint32_t>(v);
    return 0;
  });

  StreamOptions options = ctx.ColumnOptions(n * sizeof(int32_t));  // every vertex active
  auto streamed = ctx.stream().Stream<uint64_t>(options, [&](VertexId s, VertexId t, float) -> uint64_t {
    Unite(parent, static_cast<uint32_t>(s), static_cast<uint32_t>(t));
    return 0;
  });
  if (!streamed.ok()) return streamed.error();
  ctx.Progress("wcc-uf", 1, n);
  // Every vertex points at its root, the smallest id of its component.
  const uint64_t components = ctx.ForEachVertex<uint64_t>([&](VertexId v) -> uint64_t {
    const uint32_t root = Find(parent, static_cast<uint32_t>(v));
    std::atomic_ref<uint32_t>(parent[v]).store(root, std::memory_order_relaxed);
    return root == static_cast<uint32_t>(v);
  });
  GRAPHFS_RETURN_IF_ERROR(label_file->Sync());

  char line[256];
  std::snprintf(line, sizeof(line), "wcc-uf: %lu components among %lu vertices, union-find in one pass",
                static_cast<unsigned long>(components), static_cast<unsigned long>(n));
  return ctx.Finish(line, label_file->path(), 1);
}

}  // namespace graphfs::engine
