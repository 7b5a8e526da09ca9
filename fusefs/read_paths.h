// READ's paths, one file each, chosen by the handle's kind in ops_read.cc (which also counts
// each path's CPU): an ordinary file the daemon serves (plain_read.cc), a striped file
// (striped_read.cc) and a graph version's extent map (mapped_read.cc). A job's files are read in
// jobs_files.cc, the control files' snapshots in ops_read.cc.
#pragma once

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse_lowlevel.h>

namespace graphfs {

struct FileHandle;

// An ordinary file not in passthrough: spliced from its descriptor (no copy in the daemon), or
// read into a buffer of ours when it is small or opened with O_DIRECT.
void ReadPlain(fuse_req_t req, FileHandle& h, size_t size, off_t offset);
// A striped file: the volume's read path asked (volume/volume.h: cache units pinned, read-ahead,
// small reads around the cache), and its pieces handed to the kernel without a copy.
void ReadStriped(fuse_req_t req, FileHandle& h, size_t size, off_t offset);
// An extent map: its plain pieces spliced from their descriptors, its striped pieces read
// through the volume; one reply of several buffers when a read spans pieces.
void ReadMapped(fuse_req_t req, FileHandle& h, size_t size, off_t offset);

}  // namespace graphfs
