// The grid preprocessor: binary edge list -> GridGraph grid directory.
//
// Two streaming passes, so memory stays bounded whatever the input size:
//  1. scatter: worker threads each take a 24 MiB chunk of the input, validate
//     and bucket its edges by block, then append the buckets to per-block
//     files through buffered writers, in chunk order (so every block holds
//     its edges in input order and the output is deterministic);
//  2. concatenate: every block is read once and written at its offset into
//     both `column` and `row` (optionally sorted by source first).
// `meta` is written last: a directory with `meta` is complete. Pass 1 writes
// into a staging directory inside the output directory, and a graph already
// there is replaced only after it: a bad input (an id out of range) leaves it
// intact.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace graphfs::engine {

struct PreprocessOptions {
  std::string input;
  std::string output_dir;
  int64_t vertices = 0;
  int64_t partitions = 0;
  int edge_type = 0;          // 0 unweighted (8 B records), 1 weighted (12 B)
  bool sort_sources = false;  // sort each block by source (stable); needs RAM for the largest block
  int threads = 0;            // 0 = one per core
  uint64_t block_buffer_bytes = 256ull << 20;  // all per-block write buffers together
  bool progress = false;      // progress lines on stderr
};

struct PreprocessStats {
  uint64_t edges = 0;
  double seconds = 0;
};

Result<PreprocessStats> Preprocess(const PreprocessOptions& options);

}  // namespace graphfs::engine
