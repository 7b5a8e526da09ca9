// PageRank by pushing residuals (delta PageRank). Every vertex starts with
// residual 0.15; a vertex is active while its residual exceeds EPSILON. An
// iteration moves each active vertex's residual into its rank and pushes
// 0.85 * residual / out-degree to its out-neighbours' residuals, streaming
// only the partitions that still hold active vertices: the active set, and
// the I/O, shrink as ranks converge. The fixpoint is GridGraph's PageRank
// (0.15 + 0.85 * sum of in-neighbour rank / out-degree); the final rank adds
// the residual left below EPSILON.
//
// Loaded-data reentry (--reentry N): a push must give all of a vertex's
// out-edges the same amount, and a loaded buffer holds only some of them. So
// a vertex re-enters only along its diagonal edges (those inside its own
// partition, blocks (i, i)), only in a buffer that holds all of them (counted
// against its diagonal out-degree), and only when that share of its push,
// residual * diagonal / degree, exceeds EPSILON. It then moves its residual
// into its rank, pushes along those edges at once, and owes the same amount
// per edge to its other edges (`ahead`). The debt is paid the next time the
// vertex is active (`owed`: fixed during a stream, so every other edge gets
// the same). A vertex is active while what it still has to push exceeds
// EPSILON: its residual plus its debt counted as the residual it came from
// (debt * non-diagonal degree / 0.85).
//
// Tolerance: residual pushing keeps rank + (I - 0.85 P)^-1 (what is still to
// be pushed) = the fixpoint, with or without reentry, and both stop when
// every vertex has at most EPSILON left to push. What is left is at most V *
// EPSILON in all, so each result is within 0.85 / 0.15 * V * EPSILON (L1) of
// the fixpoint (the final rank adds the residual; an unpaid debt is at most
// 1 / 0.15 of itself away, and counts 0.85 of its residual). Only the order
// of pushes differs, so the result is not identical to --reentry 0's, but
// within twice that bound of it (tests/engines/reentry_test.cc).
#include <atomic>
#include <cstdio>
#include <vector>

#include "engines/apps/app_common.h"
#include "engines/core/bitmap.h"
#include "engines/core/target_sums.h"

namespace graphfs::engine {

using grid::EdgeOrder;
using grid::VertexId;

namespace {
constexpr uint64_t kMaxIterations = 100000;

// The vertex state reentry works on (see the top of the file).
struct DeltaState {
  double epsilon = 0;
  grid::PartitionRange ranges{1, 1};
  const uint32_t* degree = nullptr;
  const uint32_t* diagonal = nullptr;  // out-edges inside the vertex's partition
  double* rank = nullptr;
  double* residual = nullptr;
  double* ahead = nullptr;  // what the diagonal edges got ahead of the others this iteration
  bool SamePartition(VertexId s, VertexId t) const { return ranges.PartitionOf(s) == ranges.PartitionOf(t); }
};

// Re-enters the buffers one reader thread loads. A vertex re-enters in a buffer that holds all
// its diagonal edges, so in at most one buffer of a stream: its rank and `ahead` are written
// by that thread alone while the stream runs.
class BufferReentry {
 public:
  BufferReentry(const DeltaState& state, uint64_t vertices) : state_(state), slot_(vertices, 0) {}

  // Round `round` over the loaded `edges`; false when nothing re-entered (no more rounds).
  bool Again(const LoadedEdges& edges, int round) {
    if (round == 0 && !FindSources(edges)) return false;
    bool pushed = false;
    for (size_t k = 0; k < sources_.size(); ++k) {
      const VertexId s = sources_[k];
      amount_[k] = 0;
      // Only when the share of the push that can be made now (along its diagonal edges) is
      // itself more than epsilon: pushing sooner what is barely above it only makes more,
      // smaller pushes (measured: permuted and reordered R-MAT ran more iterations).
      if (AtomicLoad(state_.residual[s]) * state_.diagonal[s] <= state_.epsilon * state_.degree[s]) continue;
      // Other threads may add to the residual meanwhile: take it atomically.
      const double taken = std::atomic_ref<double>(state_.residual[s]).exchange(0.0, std::memory_order_relaxed);
      state_.rank[s] += taken;
      amount_[k] = 0.85 * taken / state_.degree[s];
      state_.ahead[s] += amount_[k];
      pushed = true;
    }
    if (!pushed) return false;
    for (const DiagonalEdge& e : edges_) {
      const double amount = amount_[e.source];
      if (amount != 0) AtomicAdd(state_.residual[e.target], amount);
    }
    return true;
  }

 private:
  struct DiagonalEdge {
    uint32_t source;  // index in sources_ (a vertex id while FindSources runs)
    VertexId target;
  };
  // The buffer's sources that have all their diagonal edges in it (sources_), and those edges
  // (edges_), so that rounds read only what they push along.
  bool FindSources(const LoadedEdges& edges) {
    sources_.clear();
    edges_.clear();
    // Every diagonal edge, its source's id in DiagonalEdge::source for now; slot_[s] counts them.
    grid::VertexRange partition{0, 0};  // the last source's; buffers mostly lie in one block row
    edges.ForEach([&](VertexId s, VertexId t, float) {
      if (s - partition.begin >= partition.end - partition.begin) {
        partition = state_.ranges.Range(state_.ranges.PartitionOf(s));
      }
      if (t - partition.begin >= partition.end - partition.begin) return;
      if (slot_[s]++ == 0) seen_.push_back(s);
      edges_.push_back({s, t});
    });
    // slot_[s] becomes s's index in sources_ + 1, or 0 if some diagonal edge of s is elsewhere.
    for (VertexId s : seen_) {
      if (slot_[s] == state_.diagonal[s]) {
        sources_.push_back(s);
        slot_[s] = static_cast<uint32_t>(sources_.size());
      } else {
        slot_[s] = 0;
      }
    }
    size_t kept = 0;
    for (const DiagonalEdge& e : edges_) {
      if (slot_[e.source] != 0) edges_[kept++] = {slot_[e.source] - 1, e.target};
    }
    edges_.resize(kept);
    for (VertexId s : seen_) slot_[s] = 0;
    seen_.clear();
    amount_.assign(sources_.size(), 0.0);
    return !sources_.empty();
  }

  const DeltaState& state_;
  std::vector<uint32_t> slot_;
  std::vector<VertexId> seen_, sources_;
  std::vector<DiagonalEdge> edges_;
  std::vector<double> amount_;  // per source: pushed along each diagonal edge this round
};
}  // namespace

Result<AppResult> RunPageRankDelta(const AppConfig& config, double epsilon) {
  if (!(epsilon > 0)) return Error(EINVAL, "EPSILON must be > 0");
  auto context = AppContext::Open(config);
  if (!context.ok()) return context.error();
  AppContext& ctx = **context;
  const uint64_t n = ctx.vertices();

  const int reentry = config.reentry;
  VertexArray<uint32_t> diagonal_file;
  auto degree_file = ComputeOutDegrees(ctx, "pagerank-delta.degree", reentry > 0 ? &diagonal_file : nullptr,
                                       "pagerank-delta.diagonal");
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
  // Reentry: `ahead` (DeltaState) and `owed`, what a vertex's non-diagonal edges get on top of
  // its push in this iteration (the last one's `ahead`).
  VertexArray<double> ahead_file, owed_file;
  double* owed = nullptr;
  DeltaState state;
  std::vector<BufferReentry> reentries;
  if (reentry > 0) {
    auto ahead_created = VertexArray<double>::Create(ctx.StatePath("pagerank-delta.ahead"), n);
    if (!ahead_created.ok()) return ahead_created.error();
    ahead_file = std::move(*ahead_created);
    auto owed_created = VertexArray<double>::Create(ctx.StatePath("pagerank-delta.owed"), n);
    if (!owed_created.ok()) return owed_created.error();
    owed_file = std::move(*owed_created);
    owed = owed_file.data();
    state = DeltaState{epsilon, ctx.layout().ranges(), degree, diagonal_file.data(), rank, residual, ahead_file.data()};
    for (int t = 0; t < ctx.stream().threads(); ++t) reentries.emplace_back(state, n);
  }
  double* ahead = state.ahead;

  Bitmap active_in(n), active_out(n);
  uint64_t active = ctx.ForEachVertex<uint64_t>([&](VertexId v) -> uint64_t {
    rank[v] = 0;
    residual[v] = 0.15;
    return 0.15 > epsilon;
  });
  if (active != 0) active_out.Fill();

  StreamOptions options = ctx.ColumnOptions(n * sizeof(double));
  options.reentry = reentry;  // re-entered by BufferReentry, not StreamOptions::reentry_active
  // The pushes go through each worker's window of the target partition (TargetSums), not an
  // atomic add per edge.
  TargetSums sums(residual, ctx.layout().ranges(), ctx.stream().threads());
  uint64_t iterations = 0;
  while (active != 0) {
    if (iterations == kMaxIterations) {
      return Error(EINVAL, "no convergence after " + std::to_string(iterations) + " iterations");
    }
    ++iterations;
    std::swap(active_in, active_out);
    active_out.Clear();
    ctx.ForEachVertex<int>([&](VertexId v) {
      if (!active_in.Get(v)) {
        push[v] = 0;
        if (owed != nullptr) owed[v] = 0;  // what it owes waits in `ahead` until it is active
        return 0;
      }
      push[v] = degree[v] != 0 ? 0.85 * residual[v] / degree[v] : 0.0;
      rank[v] += residual[v];
      residual[v] = 0;
      if (owed != nullptr) {
        owed[v] = ahead[v];
        ahead[v] = 0;
      }
      return 0;
    });
    options.active = &active_in;
    auto push_edge = WithPrefetch(
        [&](int worker, VertexId s, VertexId t, float) -> uint64_t {
          double amount = push[s];
          if (owed != nullptr && owed[s] != 0 && !state.SamePartition(s, t)) amount += owed[s];
          if (amount != 0) sums.Add(worker, t, amount);
          return 0;
        },
        [&](int worker, VertexId t) { sums.Prefetch(worker, t); });
    // Reentry reads the residuals the buffer's own edges just added to: the worker's window is
    // flushed first.
    auto streamed = reentry == 0 ? ctx.stream().Stream<uint64_t>(options, push_edge)
                                 : ctx.stream().Stream<uint64_t>(options, push_edge,
                                                                 [&](int worker, const LoadedEdges& edges, int round) {
                                                                   if (round == 0) sums.Flush(worker);
                                                                   return reentries[static_cast<size_t>(worker)].Again(edges, round);
                                                                 });
    sums.FlushAll();
    if (!streamed.ok()) return streamed.error();
    active = ctx.ForEachVertex<uint64_t>([&](VertexId v) -> uint64_t {
      // Active while what it has still to push exceeds epsilon: its residual, and with
      // reentry what its non-diagonal edges are owed (as the residual it was taken from).
      double pending = residual[v];
      if (ahead != nullptr && ahead[v] != 0) pending += ahead[v] * (degree[v] - state.diagonal[v]) / 0.85;
      if (pending > epsilon) {
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
