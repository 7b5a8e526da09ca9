#include "striping/rebuild_in_place.h"

#include <filesystem>
#include <system_error>

#include "striping/disk_backend.h"
#include "striping/stripe_map.h"
#include "striping/unit_sums.h"

namespace graphfs {

Result<uint64_t> CheckRebuiltInPlace(const SetFiles& found, DiskRegistry registry, uint32_t disk, const std::string& to) {
  const std::string is_disk =
      to + " is disk " + std::to_string(disk) + " of set " + registry.set_id + " already (its identity says so)";
  // A registry that names another path for the disk was not switched: the directory is not where
  // every graph reads the disk.
  for (const std::string& g : found.graph_dirs) {
    auto r = ReadRegistry(g);
    if (!r.ok()) return r.error();
    std::error_code ec;  // a path that cannot be resolved is not `to`
    if (disk >= r->disks.size() || std::filesystem::weakly_canonical(r->disks[disk], ec).string() != to)
      return Error(EEXIST, is_disk + ", but " + g + "/" + kRegistryDir + "/" + kRegistryFile + " names " +
                               (disk < r->disks.size() ? r->disks[disk] : std::string("no path")) +
                               " for it: nothing to rebuild, and no registry switched");
  }
  registry.disks[disk] = to;
  auto set = DiskSet::Open(registry);
  if (!set.ok()) return set.error();
  if (set->state(disk) == DiskState::kStale)
    return Error(EEXIST, is_disk + ", but it missed writes while it was lost (write-intent records name it): "
                                   "graphfs-scrub resyncs it");
  auto backend = OpenDiskBackend(to);
  if (!backend.ok()) return backend.error();
  uint64_t with_part = 0;
  for (const StripedFileRef& f : found.files) {
    auto map = StripeMap::Create(f.manifest.layout);
    if (!map.ok()) return map.error().Wrap(f.path);
    const uint64_t share = map->PartSize(disk, f.manifest.stored_size());
    if (share == 0) continue;
    ++with_part;
    auto part = (*backend)->Open(f.manifest.file_id, {});
    auto size = part.ok() ? (*part)->Size() : Result<uint64_t>(part.error());
    auto sums = UnitSums::Open(**backend, SumsHeaderOf(f.manifest, disk), /*writable=*/false);
    std::string wrong;
    if (!size.ok()) wrong = "part: " + size.error().message();
    else if (*size < share) wrong = "part of " + std::to_string(*size) + " bytes, its share is " + std::to_string(share);
    else if (!sums.ok()) wrong = "sums: " + sums.error().message();
    if (!wrong.empty())
      return Error(EEXIST, is_disk + ", but it does not hold " + f.path + " whole (" + wrong +
                               "): graphfs-scrub reports the damage; rebuild onto a new, empty directory to replace it");
  }
  return with_part;
}

}  // namespace graphfs
