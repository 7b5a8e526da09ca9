// The file and directory handles the kernel holds on this mount.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "fusefs/file_handle.h"

namespace graphfs {

// Owns every handle given to the kernel (as `fi->fh`) until its RELEASE / RELEASEDIR.
//
// The kernel does not always send one: when the last file of a lazily unmounted mount is
// closed, its RELEASE is queued in the background and the connection ends before the
// daemon reads it; an open whose reply found the request gone never reaches the caller.
// The daemon releases such handles itself at unmount (TakeAll), so a striped file's size
// still reaches its manifest, jobs' leases go, and nothing leaks. Requests on a handle do
// not come here: they use `fi->fh` directly, as the kernel guarantees it is live.
class OpenHandles {
 public:
  uint64_t Add(std::unique_ptr<FileHandle> h);
  uint64_t Add(std::unique_ptr<DirHandle> d);
  // The handle `fh` (from Add) leaves the table; nullptr if it is not there.
  std::unique_ptr<FileHandle> TakeFile(uint64_t fh);
  std::unique_ptr<DirHandle> TakeDir(uint64_t fh);

  struct Left {
    std::vector<std::unique_ptr<FileHandle>> files;
    std::vector<std::unique_ptr<DirHandle>> dirs;
  };
  // Every handle still held (unmount).
  Left TakeAll();

  // How many the kernel holds now (`.graphfs/stats`: a descriptor count to compare with).
  size_t files() const;
  size_t dirs() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, std::unique_ptr<FileHandle>> files_;
  std::unordered_map<uint64_t, std::unique_ptr<DirHandle>> dirs_;
};

}  // namespace graphfs
