// The cache's request for one unit of a striped file (read_path.cc and lp_copies.cc build them
// alike). Not a public header.
#pragma once

#include <cstdint>
#include <memory>

#include "cache/chunk_cache.h"
#include "volume/internal/striped_source.h"

namespace graphfs::volume {

// The cache's request for unit `u` of `src`, a file of `file_size` bytes cut by `layout`, as
// it was at `generation` (read before the size).
inline cache::UnitRequest RequestFor(const std::shared_ptr<StripedSource>& src, const cache::UnitLayout& layout,
                              uint64_t generation, uint64_t file_size, const cache::UnitExtent& u) {
  cache::UnitRequest r;
  r.generation = generation;
  r.file_units = layout.Count(file_size);
  r.key = {src->key(), u.index};
  r.offset = u.offset;
  r.length = u.length;
  r.weight = u.weight;
  r.source = src;
  r.arena = src->arena();
  return r;
}

}  // namespace graphfs::volume
