// Vertex reordering (the `reorder` tool): relabels a binary edge list so that vertices
// used together get close ids, which is what makes grid blocks and vertex-state pages
// dense for an out-of-core engine. New id of old vertex v = perm[v].
//
// Orders:
//   bfs     breadth-first from the vertex of highest out-degree (ties: lowest id), edges
//           taken in both directions (a vertex reachable either way gets a close id);
//           when the traversal runs dry it goes on from the unvisited vertex of highest
//           out-degree (same ties), so every component is laid out in turn. Neighbours
//           are visited in input order. Deterministic for a file.
//   degree  decreasing out-degree, ties by old id.
//   random  a uniform permutation drawn from std::mt19937_64(seed) by Fisher-Yates, with
//           our own bounded draw (no std:: distribution), so a seed gives the same
//           permutation with every standard library.
//
// Memory: bfs keeps an undirected CSR in memory, built from two passes over the file
// (count, then fill): 4 B per direction of every edge that is not a self-loop, so 8 B
// per edge record, plus 8 B per vertex of offsets; with the per-vertex arrays (out-degree
// order for the restarts, the permutation and the BFS queue, 12 B) about 8 B x edges +
// 20 B x vertices at its peak (2.3 GiB for 16 M vertices and 268 M edges). degree needs
// 16 B per vertex (out-degrees, then the sort) and random 4 B per vertex; neither keeps
// edges. The relabelled edges are then streamed out in input order, a chunk at a time:
// the edge file itself is never held in memory.
//
// Checks: the input must be a regular file whose size is a whole number of records
// and whose ids are all in [0, vertices), else the error names the first bad edge.
// Both outputs are written under temporary names and renamed into place at the end
// (engines/core/replace_file.h): a bad input leaves no output and no half-written file.
//
// The permutation file: `vertices` little-endian int32 values, entry v = perm[v] = the
// new id of old vertex v (no header; its size says V). map_back.h reads it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/random_seed.h"
#include "common/result.h"

namespace graphfs::engine {

enum class VertexOrder { kBfs, kDegree, kRandom };

// "bfs", "degree", "random".
Result<VertexOrder> ParseVertexOrder(const std::string& name);

struct ReorderOptions {
  std::string input;
  std::string output;
  std::string permutation;  // "" = output + ".perm"
  uint64_t vertices = 0;    // ids must be < this
  bool weighted = false;    // 12-byte records (the weight is copied through)
  VertexOrder order = VertexOrder::kBfs;
  uint64_t seed = kDefaultSeed;  // random only
};

struct ReorderStats {
  uint64_t vertices = 0;
  uint64_t edges = 0;
  std::string permutation;      // where the permutation went
  int64_t bfs_root = -1;        // bfs: the first start (old id), which gets new id 0
  uint64_t bfs_starts = 0;      // bfs: traversals started (the first and every restart)
  uint64_t memory_bytes = 0;    // peak size of the in-memory arrays
  double seconds = 0;
};

Result<ReorderStats> Reorder(const ReorderOptions& options);

// A permutation read back from its file, checked to be one (every new id in [0, V),
// none given twice), with its inverse.
struct Permutation {
  std::vector<int32_t> new_of_old;  // the file
  std::vector<int32_t> old_of_new;
  uint64_t vertices() const { return new_of_old.size(); }
};

Result<Permutation> ReadPermutationFile(const std::string& path);

}  // namespace graphfs::engine
