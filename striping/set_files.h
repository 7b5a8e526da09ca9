// The striped files a tool that works on a whole disk set must visit (graphfs-scrub,
// graphfs-rebuild): every stub under a graph directory or a directory of graphs — its own
// files, and those its graph versions keep under .graphfs/ (pieces, older versions) — each once.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "striping/disk_set.h"
#include "striping/manifest.h"

namespace graphfs {

struct StripedFileRef {
  std::string path;  // one of its names
  StripeManifest manifest;
};

// Every stub at or under `root` (a file, or a directory walked recursively, hidden directories
// included, symbolic links not followed), once per file id (graph versions share unchanged
// files as hard links), sorted by path. A damaged manifest is an error naming the file: a
// tool that must visit every file cannot skip one.
Result<std::vector<StripedFileRef>> FindStripedFiles(const std::string& root);

// What a set-wide tool was pointed at: the graph directories (with a registry) at or under each
// of `paths` — or, for a path that is a file, its own graph directory and that file alone —, their
// disk set's registry (the smallest parity of them), and the striped files of that set there.
struct SetFiles {
  std::vector<std::string> graph_dirs;
  DiskRegistry registry;
  std::vector<StripedFileRef> files;
};
// EINVAL naming the path when one holds no striped graph (no .graphfs/disks.json at or under it)
// or when the graphs are striped over different sets ("run the tool once per set").
Result<SetFiles> FindSetFiles(const std::vector<std::string>& paths);

// The disk set such a tool reads: with `live` (the mount's daemon runs it), the mount's own set —
// its row locks, its sums epoch —, which must be the set of the graphs found (EINVAL naming both
// otherwise); without, the set `registry` names, opened (DiskSet::Open's errors).
Status CheckMountSet(const DiskSet& live, const DiskRegistry& registry);
Result<DiskSet> OpenTaskSet(const DiskSet* live, const DiskRegistry& registry);

}  // namespace graphfs
