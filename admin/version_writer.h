// Writing an updated graph's files (graph_update.cc's UpdateGraph drives it): untouched blocks
// linked or copied, touched blocks rebuilt (a sorted graph's spliced around their changed runs
// into extent maps over the old bytes and the version's delta piece), `column` and `row` as
// extent maps (or whole files), compaction when a version would keep too much alive. Not a
// public header.
#pragma once

#include <cstdint>
#include <string>

#include "admin/graph_disks.h"
#include "admin/graph_update.h"
#include "common/result.h"
#include "grid/edge_batch.h"
#include "grid/grid_layout.h"

namespace graphfs::admin {

// Writes the updated graph's files into `out`; the caller removes `out` if this fails. `link`:
// untouched blocks are hard links to the old ones (in place, the old version `old_version`),
// else copies. New striped bytes go to `disks` (null: a plain graph).
Status WriteUpdated(const grid::GridLayout& g, const grid::EdgeBatch& batch, const UpdateOptions& o,
                    const std::string& out, bool link, int64_t old_version, const GraphDisks* disks, UpdateStats& st);

}  // namespace graphfs::admin
