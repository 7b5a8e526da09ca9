// A graph's files on its disks, as the mount and the offline tools both see them: the disk set
// a graph directory's registry names, what a file keeps on the disks (a stub's parts, else its
// own bytes), and removing files with their parts when their last link goes — the mount's
// version reclaimer (volume/version_reclaim.h) and graphfs-update remove the same way
// (admin/graph_disks.h writes them). Here, below both, because it needs nothing but striping.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "striping/disk_set.h"
#include "striping/manifest.h"

namespace graphfs {

// The disk set `graph_dir`'s registry (`.graphfs/disks.json`) names, every disk checked; nullopt
// without a registry.
Result<std::optional<DiskSet>> RegisteredDiskSet(const std::string& graph_dir);

// The manifest of the stub at `path` when it is one (nullopt for anything else, also on errors
// reading it: callers use this for accounting and removal, where a non-stub is simply a file).
std::optional<StripeManifest> StubManifest(const std::string& path, const struct stat& st);
// The bytes a file keeps: a stub's parts (what they store), else its own size.
uint64_t StoredBytes(const std::string& path, const struct stat& st);
// The disk set of a graph's stubs for removing their parts, opened when first needed from the
// first of `registry_dirs` (graph directories) that has a registry.
class LazyDiskSet {
 public:
  explicit LazyDiskSet(std::vector<std::string> registry_dirs) : dirs_(std::move(registry_dirs)) {}
  Result<const DiskSet*> Get();

 private:
  std::vector<std::string> dirs_;
  std::optional<DiskSet> set_;
};
// Removes `path` (not a directory); when it is the last link of a stub, its parts first — so a
// kill in between leaves a stub whose parts are gone, which the next removal finishes, never
// parts no stub names. A stub whose disk set cannot be opened is kept and the error returned.
Status RemoveGraphFile(const std::string& path, LazyDiskSet& disks);
// Removes the directory `dir` and everything in it so (RemoveGraphFile for each file); a missing
// one is nothing to do.
Status RemoveGraphTree(const std::string& dir, LazyDiskSet& disks);

}  // namespace graphfs
