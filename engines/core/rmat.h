// Graph500-style R-MAT (Kronecker) edge generator.
//
// Each edge picks one of four quadrants per level (probabilities a, b, c and
// 1-a-b-c) for `scale` levels. Edges are generated in fixed-size batches, and
// batch k draws from its own random stream seeded by (seed, k): the output
// depends on the seed only, never on the thread count. Vertex ids then go
// through a seeded bijection on [0, 2^scale) so hubs are spread out instead
// of sitting at the lowest ids; it needs no table, so memory stays bounded.
// Without it (`permute = false`) the ids keep R-MAT's own locality: hubs at low
// ids, and a vertex's neighbours sharing its high bits more often than not.
#pragma once

#include <cstdint>
#include <string>

#include "common/random_seed.h"
#include "common/result.h"

namespace graphfs::engine {

struct RmatOptions {
  int scale = 0;          // 2^scale vertices
  int edge_factor = 16;   // edges = edge_factor * 2^scale
  uint64_t seed = kDefaultSeed;
  bool weighted = false;  // float weights uniform in [0, 256)
  std::string output;
  int threads = 0;        // 0 = one per core
  bool permute = true;    // spread ids with VertexPermutation; false keeps R-MAT's locality
  double a = 0.57, b = 0.19, c = 0.19;
};

struct RmatStats {
  uint64_t vertices = 0;
  uint64_t edges = 0;
  double seconds = 0;
};

Result<RmatStats> GenerateRmat(const RmatOptions& options);

// Seeded bijection on `bits`-bit vertex ids.
class VertexPermutation {
 public:
  VertexPermutation(int bits, uint64_t seed);
  uint64_t operator()(uint64_t v) const;

 private:
  uint64_t mask_;
  int shift_;
  uint64_t mul_[3];
  uint64_t add_[3];
};

}  // namespace graphfs::engine
