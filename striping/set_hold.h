// Who works on a disk set's disks: a mount's daemon, or an offline whole-set tool — never both
// (docs/parity.md, "graphfs-rebuild"). A daemon writes files with a disk lost and marks their
// rows in the write-intent records (stale_rows.h); `graphfs-rebuild --offline` beside it would
// miss the rows written after it passed them and then clear the records the mount still needs.
// So the daemon holds a shared flock(2) on each present disk's directory for as long as it serves
// the set, and the offline rebuild takes an exclusive one, without waiting, for its whole run:
// the rebuild is refused while a daemon serves the set, and a mount is refused while an offline
// rebuild runs. Locks on the directories themselves, not on a file in them: no new file on the
// disks, and a directory's inode never changes (the identity file and the registries are
// replaced by rename). The kernel drops the locks with the process, so a killed holder leaves
// nothing behind.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "striping/disk_set.h"

namespace graphfs {

class SetHold {
 public:
  SetHold() = default;
  SetHold(SetHold&&) = default;
  SetHold& operator=(SetHold&&) = default;

  // The daemon's: a shared lock on every disk of `set` that is there. EBUSY naming the disk when
  // an offline rebuild holds one.
  static Result<SetHold> Serve(const DiskSet& set);
  // Adds a disk that came into the set (a rebuilt disk switched in).
  Status ServeDisk(const std::string& dir);
  // An offline tool's (`tool` names it in the messages): an exclusive lock on every disk of `set`
  // that is there. EBUSY naming the disk and the processes holding it when a daemon serves it (or
  // another offline run holds it).
  static Result<SetHold> Exclusive(const DiskSet& set, const std::string& tool);

 private:
  std::vector<UniqueFd> dirs_;
};

// The processes holding a flock(2) on `path` (from /proc/locks), for the messages: "pid 123
// (graphfs)", comma-separated; empty when none can be told (/proc/locks names the process that
// took the lock, and a daemon that forked into the background took it before the fork).
std::string LockHolders(const std::string& path);

}  // namespace graphfs
