// The PartitionSource of integrated mode: a job in graphfs's control directory
// (engines/graphfs_client.hpp), registered once per app run on the graph's
// mount and removed when this object goes.
#pragma once

#include <cstdint>
#include <memory>

#include "common/result.h"
#include "engines/core/partition_source.h"
#include "grid/grid_layout.h"

namespace graphfs::engine {

// Registers the job on layout.dir() (which must be on a graphfs mount and
// indexed) with LPs of `partition_bytes`, and checks that graphfs sees the
// same vertex count as `meta`. `whole_chunks_after` (0: never): from that many iterations on,
// the LPs hold the whole chunks with an active source, not only the active sources' edges (an
// app that re-enters loaded edges, on a graph whose diameter has shown itself).
Result<std::unique_ptr<PartitionSource>> OpenGraphfsPartitions(const grid::GridLayout& layout,
                                                               uint64_t partition_bytes,
                                                               uint64_t whole_chunks_after = 0);

}  // namespace graphfs::engine
