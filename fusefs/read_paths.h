// READ's paths, one file each, chosen by the handle's kind in ops_read.cc (which also counts
// each path's CPU): an ordinary file the daemon serves (plain_read.cc), a striped file
// (striped_read.cc), a graph version's extent map (mapped_read.cc) and a job's view of a logical
// partition (lp_read.cc, chosen among a job's files in jobs_files.cc). A job's other files are
// read in jobs_files.cc and jobs_next.cc, the control files' snapshots in ops_read.cc.
#pragma once

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse_lowlevel.h>

#include <cstdint>

namespace graphfs {

namespace volume {
class LpView;
}  // namespace volume

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
// A job's view of an LP (`lp-SEQ`): its pieces gathered straight from the LP's memory (shared
// with every job that holds it), copied into one buffer only when there are more than a reply
// carries.
void ReadLp(fuse_req_t req, const volume::LpView& view, size_t size, uint64_t offset);

}  // namespace graphfs
