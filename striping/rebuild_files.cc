#include "striping/rebuild_files.h"

#include <optional>
#include <set>

#include "striping/manifest.h"
#include "striping/striped_file.h"

namespace graphfs {

namespace {

Status CheckRebuildable(const StripedFileRef& f) {
  if (f.manifest.sum_block == 0 || f.manifest.layout.parity == 0)
    return Error(EINVAL, f.path + " has no parity (--parity 0): it cannot be rebuilt");
  return Status::Ok();
}

}  // namespace

Result<size_t> RefreshRebuildFiles(const std::vector<std::string>& paths, std::vector<StripedFileRef>& files,
                                   RebuildWatch& watch) {
  auto found = FindSetFiles(paths);
  if (!found.ok()) return found.error();
  std::set<std::string> now, known;
  for (const StripedFileRef& f : found->files) now.insert(f.manifest.file_id);
  for (const StripedFileRef& f : files) {
    known.insert(f.manifest.file_id);
    if (!now.count(f.manifest.file_id)) watch.Removed(f.manifest.file_id);
  }
  size_t added = 0;
  for (StripedFileRef& f : found->files) {
    if (known.count(f.manifest.file_id)) continue;
    GRAPHFS_RETURN_IF_ERROR(CheckRebuildable(f));
    files.push_back(std::move(f));
    ++added;
  }
  return added;
}

Result<size_t> TakeCreatedFiles(const DiskSet& live, RebuildWatch& watch, std::vector<StripedFileRef>& files) {
  std::set<std::string> known;
  for (const StripedFileRef& f : files) known.insert(f.manifest.file_id);
  size_t added = 0;
  for (RebuildWatch::CreatedFile& c : watch.TakeCreated()) {
    if (known.count(c.file_id) || watch.removed(c.file_id)) continue;
    std::optional<StripeManifest> m;
    for (const auto& open : live.OpenFiles())
      if (StripeManifest o = open->manifest(); o.file_id == c.file_id) m = std::move(o);
    if (!m) {
      auto stub = ReadManifest(c.path);
      if (stub.ok() && stub->has_value() && (*stub)->file_id == c.file_id) m = std::move(**stub);
    }
    // Removed since it was told? Then the watch says so by now (before its parts went).
    if (!m && watch.removed(c.file_id)) continue;
    if (!m)
      return Error(EIO, "striped file " + c.file_id + " created at " + c.path +
                            " while the rebuild ran is neither open nor named there any more");
    StripedFileRef ref{c.path, std::move(*m)};
    GRAPHFS_RETURN_IF_ERROR(CheckRebuildable(ref));
    known.insert(c.file_id);
    files.push_back(std::move(ref));
    ++added;
  }
  return added;
}

}  // namespace graphfs
