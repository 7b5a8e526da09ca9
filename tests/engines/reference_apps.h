// In-memory references of the apps whose results other tests check too (apps_test
// checks every app against them; reorder_test checks results mapped back through a
// permutation): plain adjacency lists, sequential.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <vector>

#include "engine_test_util.h"

namespace graphfs::engine::testing {

inline std::vector<std::vector<const TestEdge*>> OutEdges(const TestGraph& g) {
  std::vector<std::vector<const TestEdge*>> out(g.vertices);
  for (const TestEdge& e : g.edges) out[e.source].push_back(&e);
  return out;
}

inline std::vector<int32_t> ReferenceBfs(const TestGraph& g, uint32_t start) {
  auto out = OutEdges(g);
  std::vector<int32_t> level(g.vertices, -1);
  std::deque<uint32_t> queue = {start};
  level[start] = 0;
  while (!queue.empty()) {
    uint32_t u = queue.front();
    queue.pop_front();
    for (const TestEdge* e : out[u]) {
      if (level[e->target] == -1) {
        level[e->target] = level[u] + 1;
        queue.push_back(e->target);
      }
    }
  }
  return level;
}

// label[v] = smallest u from which v is reachable: search from each u in
// increasing order, claiming only unlabelled vertices.
inline std::vector<int32_t> ReferenceLabels(const TestGraph& g) {
  auto out = OutEdges(g);
  std::vector<int32_t> label(g.vertices, -1);
  for (uint32_t u = 0; u < g.vertices; ++u) {
    if (label[u] != -1) continue;
    std::vector<uint32_t> stack = {u};
    label[u] = static_cast<int32_t>(u);
    while (!stack.empty()) {
      uint32_t x = stack.back();
      stack.pop_back();
      for (const TestEdge* e : out[x]) {
        if (label[e->target] == -1) {
          label[e->target] = static_cast<int32_t>(u);
          stack.push_back(e->target);
        }
      }
    }
  }
  return label;
}

inline std::vector<float> ReferenceDijkstra(const TestGraph& g, uint32_t start) {
  auto out = OutEdges(g);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> dist(g.vertices, inf);
  using Item = std::pair<float, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> queue;
  dist[start] = 0;
  queue.push({0.0f, start});
  while (!queue.empty()) {
    auto [d, u] = queue.top();
    queue.pop();
    if (d > dist[u]) continue;
    for (const TestEdge* e : out[u]) {
      float nd = dist[u] + e->weight;
      if (nd < dist[e->target]) {
        dist[e->target] = nd;
        queue.push({nd, e->target});
      }
    }
  }
  return dist;
}

// The weakly connected components (edge directions ignored): label = the smallest id of the
// component.
inline std::vector<int32_t> ReferenceWeakComponents(const TestGraph& g) {
  std::vector<uint32_t> parent(g.vertices);
  for (uint32_t v = 0; v < g.vertices; ++v) parent[v] = v;
  auto find = [&](uint32_t v) {
    while (parent[v] != v) v = parent[v];
    return v;
  };
  for (const TestEdge& e : g.edges) {
    uint32_t a = find(static_cast<uint32_t>(e.source)), b = find(static_cast<uint32_t>(e.target));
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
  std::vector<int32_t> label(g.vertices);
  for (uint32_t v = 0; v < g.vertices; ++v) label[v] = static_cast<int32_t>(find(v));
  return label;
}

inline std::vector<uint32_t> Degrees(const TestGraph& g) {
  std::vector<uint32_t> degree(g.vertices, 0);
  for (const TestEdge& e : g.edges) ++degree[e.source];
  return degree;
}

// GridGraph's PageRank fixpoint (0.15 + 0.85 * sum of in-neighbour rank / out-degree; dangling
// vertices lose their share), iterated to convergence.
inline std::vector<double> ConvergedPageRank(const TestGraph& g) {
  auto degree = Degrees(g);
  std::vector<double> rank(g.vertices, 1.0);
  for (int it = 0; it < 10000; ++it) {
    std::vector<double> sum(g.vertices, 0.0);
    for (const TestEdge& e : g.edges) sum[e.target] += rank[e.source] / degree[e.source];
    double change = 0;
    for (uint32_t v = 0; v < g.vertices; ++v) {
      double r = 0.15 + 0.85 * sum[v];
      change = std::max(change, std::fabs(r - rank[v]));
      rank[v] = r;
    }
    if (change < 1e-14) break;
  }
  return rank;
}

// Synchronous residual pushing, the algorithm pagerank-delta documents.
inline std::vector<double> ReferencePageRankDelta(const TestGraph& g, double epsilon) {
  auto degree = Degrees(g);
  std::vector<double> rank(g.vertices, 0.0), residual(g.vertices, 0.15);
  std::vector<bool> active(g.vertices, 0.15 > epsilon);
  while (std::find(active.begin(), active.end(), true) != active.end()) {
    std::vector<double> push(g.vertices, 0.0);
    for (uint32_t v = 0; v < g.vertices; ++v) {
      if (!active[v]) continue;
      push[v] = degree[v] ? 0.85 * residual[v] / degree[v] : 0.0;
      rank[v] += residual[v];
      residual[v] = 0;
    }
    for (const TestEdge& e : g.edges) {
      if (active[e.source]) residual[e.target] += push[e.source];
    }
    for (uint32_t v = 0; v < g.vertices; ++v) active[v] = residual[v] > epsilon;
  }
  for (uint32_t v = 0; v < g.vertices; ++v) rank[v] += residual[v];
  return rank;
}

}  // namespace graphfs::engine::testing
