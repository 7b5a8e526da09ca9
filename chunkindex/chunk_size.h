// Chunk size from the LLC formula (GraphSO): the largest |C| with
//   |C|·N + (|C|·N / |G|)·Nv·|V| + s <= |LLC|
// N cores working on one chunk each, |G| bytes of the partition file an engine
// streams, Nv vertices with |V| bytes of value each (the vertex values the N
// chunks touch, proportionally), s bytes reserved for everything else.
// We reserve s = |LLC| / 8. The result is rounded down to a multiple of the
// edge size and raised to a floor of 64 KiB (a chunk smaller than that costs
// more in per-chunk bookkeeping and I/O requests than it saves).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"

namespace graphfs::chunkindex {

inline constexpr uint64_t kVertexValueBytes = 8;
inline constexpr uint64_t kMinChunkBytes = 64 << 10;

struct MachineCache {
  uint64_t llc_bytes = 0;
  int cores = 0;
  std::string llc_source;  // where llc_bytes came from ("sysfs index3 (L3)", ...)
};

// LLC size (highest data/unified level of cpu0 in sysfs, else sysconf, else
// 8 MiB) and the online core count.
MachineCache ProbeMachine(const std::string& sysfs_cpu0 = "/sys/devices/system/cpu/cpu0");

// "32768K" -> 33554432. Accepts a plain number, K, M, G suffixes.
Result<uint64_t> ParseCacheSize(const std::string& text);

struct ChunkSizeInputs {
  uint64_t llc_bytes = 0;
  int cores = 1;
  uint64_t graph_bytes = 0;  // one partition file (|G|)
  uint64_t vertices = 0;
  uint64_t vertex_value_bytes = kVertexValueBytes;
  uint64_t edge_size = 8;
};

struct ChunkSizeChoice {
  uint64_t bytes = 0;          // the chunk size used
  uint64_t formula_bytes = 0;  // what the formula gave before rounding and floor
  uint64_t reserved = 0;       // s
  bool floored = false;        // raised to kMinChunkBytes
  bool overridden = false;     // --chunk-size
  std::string explanation;     // one human-readable paragraph with the numbers
};

// The formula, rounding and floor.
ChunkSizeChoice ChooseChunkSize(const ChunkSizeInputs& in);
// A user-given size, rounded down to a multiple of the edge size (at least one edge).
ChunkSizeChoice OverrideChunkSize(uint64_t requested, uint64_t edge_size);

}  // namespace graphfs::chunkindex
