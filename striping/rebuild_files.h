// Which files a rebuild run by the mount's daemon must do, as files come and go while it runs
// (rebuild.h; docs/parity.md, "Writes while the daemon rebuilds"): the daemon creates files with
// the disk missing (the plain copy of a compressed file's first write, file_creation.h) and
// removes others (unlinked, or replaced by such a copy). A file created is told to the rebuild's
// watch once named, a file removed before its parts go (RebuildWatch::Created, Removed); the
// files found before the watch existed are found again once it does (Refresh), so none falls in
// between. Used by rebuild.cc only.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "striping/disk_set.h"
#include "striping/rebuild_watch.h"
#include "striping/set_files.h"

namespace graphfs {

// Finds the set's files under `paths` again, now that `watch` is told of every file created or
// removed from here on: a file found now and not among `files` is appended (created meanwhile); one
// of `files` no longer found is told to the watch as removed. Returns how many were appended.
// EINVAL naming a new file without parity (it cannot be rebuilt).
Result<size_t> RefreshRebuildFiles(const std::vector<std::string>& paths, std::vector<StripedFileRef>& files,
                                   RebuildWatch& watch);

// The files told created since the last call that are not among `files` nor removed, appended to
// it with their manifests now (the open file's in `live`, else its stub's). Returns how many.
// EIO naming a file that is neither open nor named by its stub any more, and not removed.
Result<size_t> TakeCreatedFiles(const DiskSet& live, RebuildWatch& watch, std::vector<StripedFileRef>& files);

}  // namespace graphfs
