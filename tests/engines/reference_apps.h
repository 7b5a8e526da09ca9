// In-memory references of the apps whose results other tests check too (apps_test
// checks every app against them; reorder_test checks results mapped back through a
// permutation): plain adjacency lists, sequential.
#pragma once

#include <cstdint>
#include <deque>
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

}  // namespace graphfs::engine::testing
