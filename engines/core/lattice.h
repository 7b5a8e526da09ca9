// A road-network-like graph: a W x H lattice (gen-grid). Vertex (x, y) has id y * W + x
// (row-major), so ids carry locality and BFS from a corner takes about W + H levels. Each
// lattice edge is kept with probability 1 - drop and written in both directions; `long_edges`
// random pairs are joined too (both directions; they make the graph small-world). Every
// vertex sits at its lattice point moved by up to a quarter in x and y (seeded), and an
// edge's weight is the distance between its ends: weights are lengths. Deterministic for a
// seed; generated row by row, so memory stays bounded.
#pragma once

#include <cstdint>
#include <string>

#include "common/random_seed.h"
#include "common/result.h"

namespace graphfs::engine {

struct LatticeOptions {
  uint64_t width = 0;
  uint64_t height = 0;
  double drop = 0.0;        // fraction of lattice edges left out, in [0, 1)
  uint64_t long_edges = 0;  // random long edges (each written in both directions)
  bool weighted = false;    // float weights = edge lengths (12-byte records)
  uint64_t seed = kDefaultSeed;
  std::string output;
};

struct LatticeStats {
  uint64_t vertices = 0;
  uint64_t edges = 0;  // directed records written
  double seconds = 0;
};

Result<LatticeStats> GenerateLattice(const LatticeOptions& options);

}  // namespace graphfs::engine
