// Crash safety of StripedVolumeFile::Unpack (a compressed file made plain at its first write): the
// plain copy's parts are written before the stub's manifest switches to them, and the old
// parts are removed after. A daemon killed in between leaves one of the two sets of parts
// named by no manifest. Before it creates the new parts, Unpack records both ids and the stub's
// path on the first present disk of the set — disk 0 unless it is missing —
// (`.graphfs-pending-unpack/NEW.json`, written atomically); it removes the record once the parts
// it no longer needs are gone. At the next mount the records left on every present disk are
// finished: the stub's manifest says which copy won, the other's parts go.
#pragma once

#include <functional>
#include <string>

#include "common/result.h"
#include "striping/disk_set.h"

namespace graphfs::volume {

inline constexpr const char* kPendingUnpackDir = ".graphfs-pending-unpack";

struct UnpackRecord {
  std::string old_id;  // the compressed file's parts
  std::string new_id;  // the plain copy's parts
  std::string stub;    // the stub's absolute path at the time; empty: unlinked (nothing keeps either)
};

// Writes the record durably (before any of new_id's parts exist).
Status WriteUnpackRecord(const DiskSet& disks, const UnpackRecord& record);
// Removes it (after the parts it no longer needs are gone).
void DropUnpackRecord(const DiskSet& disks, const std::string& new_id);

// What a mount does with each record left by a killed daemon.
struct UnpackOutcome {
  int finished = 0;  // the stub named one of the two: the other's parts removed, record dropped
  int kept = 0;      // the stub is elsewhere or names neither (renamed since, or replaced): both
                     // parts and the record stay, and the log says so (nothing is guessed away)
};
// `remove_parts(file_id)` deletes a file's parts on every disk.
UnpackOutcome FinishPendingUnpacks(const DiskSet& disks, const std::function<void(const std::string&)>& remove_parts);

}  // namespace graphfs::volume
