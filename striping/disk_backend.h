// What striping calls a "disk": a backend that stores a striped file's unit-bearing files — its
// part on that disk, and (docs/parity.md) the part's checksums and journal — by name. A local
// directory today (local_disk_backend.h); a Ceph RADOS pool is meant to follow (issue 44 names it).
// Parity, checksums and repair sit above this interface, in striping, so nothing above
// striping learns which backend a unit came from.
//
// The daemon uses it for the sums files (parity_read.h) and the row journals (row_journal.h):
// StripedFile and part_io.h still open DISK/parts/ID themselves (docs/parity.md, "What changes", says how they
// move onto it).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "common/result.h"

namespace graphfs {

struct DiskFileOptions {
  bool writable = false;
  bool create = false;  // create the file when it does not exist (implies writable)
  // Also open a descriptor for O_DIRECT reads (native_direct_fd), where the backend has one.
  bool direct_reads = false;
};

// One unit-bearing file on one disk. Reads and writes of distinct ranges may run concurrently.
// Errors name the file (where()) and the operation: "read of /disks/2/parts/ID at 4096: ...".
class DiskFile {
 public:
  virtual ~DiskFile() = default;
  // Reads up to buf.size() bytes at `offset`; fewer only at the end of the file (0 past it).
  virtual Result<uint64_t> Read(uint64_t offset, std::span<char> buf) = 0;
  // Writes all of `data` at `offset`, extending the file if needed. EBADF when not writable.
  virtual Status Write(uint64_t offset, std::span<const char> data) = 0;
  // Makes the file's bytes and size durable.
  virtual Status Sync() = 0;
  virtual Result<uint64_t> Size() const = 0;
  virtual Status Truncate(uint64_t size) = 0;
  // The descriptors the I/O engine's io_uring workers use (buffered, and O_DIRECT for aligned
  // reads); -1 for a backend without descriptors (its I/O then goes through the calls above).
  virtual int native_fd() const { return -1; }
  virtual int native_direct_fd() const { return -1; }
  // Where the file is, for messages ("/disks/2/parts/ID").
  virtual const std::string& where() const = 0;
};

class DiskBackend {
 public:
  virtual ~DiskBackend() = default;
  // What the disk was opened from ("/disks/2"), for messages.
  virtual const std::string& name() const = 0;
  // Opens the file `file` (a plain name: not empty, no '/', not "." or "..": EINVAL otherwise).
  // ENOENT, naming it, when it does not exist and options.create is false.
  virtual Result<std::unique_ptr<DiskFile>> Open(const std::string& file, const DiskFileOptions& options) = 0;
  virtual Result<bool> Exists(const std::string& file) const = 0;
  // Removes the file; one that does not exist is no error (removal is retried after crashes).
  virtual Status Remove(const std::string& file) = 0;
  // Makes the creation and removal of files durable (a directory's fsync, for a local disk).
  virtual Status SyncNames() = 0;
};

// Checks a unit-bearing file's name as every backend must: EINVAL naming it otherwise.
Status CheckDiskFileName(const std::string& file);

// Opens the disk `spec` names: an absolute directory path, or "dir:PATH" (a local directory, whose
// files live in PATH/parts/). EINVAL for a relative path or an unknown "SCHEME:"; ENOENT or
// ENOTDIR, naming it, when the directory is not there.
Result<std::unique_ptr<DiskBackend>> OpenDiskBackend(const std::string& spec);

}  // namespace graphfs
