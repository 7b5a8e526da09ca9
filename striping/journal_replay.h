// The offline tools' side of the row journal (docs/parity.md, "Writes"): graphfs-scrub,
// graphfs-rebuild and graphfs-unstripe read a file's parts themselves, not through StripedFile,
// so a file whose writer (the mount) was killed and which was not opened writable since may hold
// journaled writes that are not (all) in place — rows whose parity disagrees with their data,
// which scrub would "repair" into a mix of old and new bytes and rebuild would rebuild wrong.
// Before reading such a file a tool brings it to its journaled state the way the mount does:
// it opens the file writable (StripedFile::Open replays the journal, syncs and moves its
// checkpoint), so there is one recovery, not one per reader.
#pragma once

#include <string>

#include "common/result.h"
#include "striping/disk_set.h"
#include "striping/manifest.h"

namespace graphfs {

// Replays the row journal of the file whose stub is `stub` (manifest `m`, striped over `disks`)
// when it holds an entry past its checkpoint, and returns the manifest as it is then (read again
// from the stub: a replayed write or truncate may have changed its size). Files without a
// journal — no sums, or compressed — and files whose journal is applied come back as given,
// with nothing opened for writing. A file that needs a replay which cannot be written (a stub
// or a part on a read-only filesystem, or not the caller's to write) is an error naming it and
// saying why: its rows must not be read before. `replayed`, when given, says whether it ran.
Result<StripeManifest> ReplayRowJournal(const DiskSet& disks, const std::string& stub, const StripeManifest& m,
                                        bool* replayed = nullptr);

}  // namespace graphfs
