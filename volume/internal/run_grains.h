// What an LP's runs cost at the unit and at a finer grain: the cache units they lie in (for a
// compressed file, the frames read and decoded whole to copy them out) and the BLOCK-byte blocks
// they lie in (what frames cut into independently decodable blocks would read and decode).
// Counted by the LP loaders (GraphSchedule::Load) and shown in `.graphfs/stats` (schedulers →
// loader): the measurement behind docs/memory-as-cache.md's fourteenth part, on the jobs' real
// active sets rather than an offline guess.
#pragma once

#include <cstdint>
#include <span>

#include "cache/unit_layout.h"
#include "chunkindex/logical_partition.h"

namespace graphfs::volume {

inline constexpr uint64_t kRunGrainBlock = 64 << 10;

struct RunGrains {
  uint64_t units = 0;       // distinct units holding a byte of a run
  uint64_t unit_bytes = 0;  //   their bytes
  uint64_t blocks = 0;      // distinct blocks of `block` bytes holding a byte of a run
};

// Over the extents that are runs (not whole chunks) of an LP, in ascending file offset as an
// LP keeps them, of a file of `file_size` bytes cut into units by `layout`.
RunGrains CountRunGrains(const cache::UnitLayout& layout, uint64_t file_size,
                         std::span<const chunkindex::LpExtent> extents, uint64_t block = kRunGrainBlock);

}  // namespace graphfs::volume
