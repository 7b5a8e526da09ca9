// Putting a finished build in place as GRAPH/.graphfs/index, and cleaning up
// after builds that were killed. A build writes GRAPH/.graphfs/index.building-PID;
// InstallIndex swaps it with the index in one atomic rename (RENAME_EXCHANGE), so
// at every instant `index` is the old complete index or the new one. Where the
// filesystem cannot exchange, the old index is first moved to index.old-PID: a
// build killed between the two renames leaves no `index`, and the next run puts
// index.old-PID back (SweepDeadBuilds).
#pragma once

#include <string>

#include "common/result.h"

namespace graphfs::chunkindex {

// GRAPH/.graphfs/index.building-PID of this process.
std::string BuildDirPath(const std::string& graph_dir);

// Removes what builds that are no longer running left in GRAPH/.graphfs (their
// index.building-PID and index.old-PID directories), after restoring an
// index.old-PID as the index if there is no index. Directories of live
// processes are left alone (a build running in another process).
void SweepDeadBuilds(const std::string& graph_dir);

// Makes the database in `built` the index of the graph, atomically, and deletes
// the index it replaces.
Status InstallIndex(const std::string& graph_dir, const std::string& built);

}  // namespace graphfs::chunkindex
