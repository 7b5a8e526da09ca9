// Direct access to a striped file's parts for the offline tools (graphfs-stripe,
// graphfs-unstripe): plain pread/pwrite on the part files, no I/O engine. The daemon reads
// through StripedFile instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "striping/disk_set.h"
#include "striping/stripe_map.h"

namespace graphfs {

// pwrite of all `len` bytes (retrying short writes and EINTR); `what` names it in errors.
Status WriteAll(int fd, const char* buf, uint64_t len, uint64_t offset, const std::string& what);
// pread of up to `len` bytes: fewer only at end of file.
Result<uint64_t> ReadFull(int fd, char* buf, uint64_t len, uint64_t offset, const std::string& what);

// Opens the part of file `id` on every disk of the set but those `lost` names (a file created with
// disks missing, its parts there lost from the start: file_creation.h), whose descriptors are left
// not open. Empty `lost`: every disk.
Result<std::vector<UniqueFd>> OpenParts(const DiskSet& disks, const std::string& id, int flags,
                                        const std::vector<bool>& lost = {});
// Removes the parts of file `id` and their sums files (those that exist).
void RemovePartsOf(const DiskSet& disks, const std::string& id);
// Reads [off, off+len) of a striped file straight from its parts into `buf`; bytes past
// the end of a part are a hole and read as zeros.
Status ReadFromParts(const DiskSet& disks, const StripeMap& map, const std::vector<UniqueFd>& parts, uint64_t off,
                     uint64_t len, char* buf);
// Writes `len` bytes at file offset `off` into the parts (each piece to its disk); a piece whose
// part is not open (lost from the start, OpenParts) is left out: parity stands for it.
Status WriteToParts(const DiskSet& disks, const StripeMap& map, const std::vector<UniqueFd>& parts, uint64_t off,
                    uint64_t len, const char* buf);

}  // namespace graphfs
