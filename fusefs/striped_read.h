// READ of a striped file: the caller's process found, the volume's read path asked
// (volume/volume.h: cache units pinned, read-ahead, small reads around the cache), and its
// pieces handed to the kernel without a copy.
#pragma once

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse_lowlevel.h>

#include <cstdint>

namespace graphfs {

struct FileHandle;

void ReadStriped(fuse_req_t req, FileHandle& h, size_t size, off_t offset);
// The process of a calling thread (FUSE tells the thread; the cache counts processes).
uint32_t ProcessOfThread(pid_t tid);

}  // namespace graphfs
