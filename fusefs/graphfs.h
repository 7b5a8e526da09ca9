// State of one mount, shared by every operation group.
#pragma once

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse_lowlevel.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "common/log.h"
#include "fusefs/credentials.h"
#include "fusefs/jobs_dir.h"
#include "fusefs/inode_table.h"
#include "fusefs/kernel_channel.h"
#include "fusefs/memory_peak.h"
#include "fusefs/mount_options.h"
#include "fusefs/open_handles.h"
#include "fusefs/passthrough.h"
#include "volume/volume.h"

namespace graphfs {

// Where a READ the daemon answers goes: a job's logical partition, a striped file, a graph
// version's extent map, an ordinary file (the kernel serves passthrough files without us).
enum class ReadPath { kLp, kStriped, kMapped, kOrdinary };
inline constexpr int kReadPaths = 4;

struct MountCounters {
  std::atomic<uint64_t> striped_reads{0};
  std::atomic<uint64_t> striped_writes{0};
  std::atomic<uint64_t> plain_reads{0};   // READs of ordinary files the daemon served
  std::atomic<uint64_t> plain_writes{0};
  std::atomic<uint64_t> bytes_read{0};      // replied to readers, all files the daemon serves
  std::atomic<uint64_t> bytes_written{0};   // accepted from writers, all files the daemon serves
  std::atomic<uint64_t> errors{0};
  // Per ReadPath: bytes replied, and the READ handlers' thread CPU — the reply's copy into the
  // reader included (the kernel makes it in the daemon's writev) — for CPU per delivered byte.
  std::atomic<uint64_t> path_bytes[kReadPaths] = {};
  std::atomic<uint64_t> path_cpu_ns[kReadPaths] = {};
  void Delivered(ReadPath path, uint64_t bytes) {
    path_bytes[static_cast<int>(path)].fetch_add(bytes, std::memory_order_relaxed);
  }
};

struct GraphFs {
  MountOptions options;
  std::string source;  // absolute
  std::string mountpoint;  // absolute
  InodeTable inodes;
  // What SOURCE serves: disks, I/O, cache, chunk indexes, logical-partition schedules.
  // After the inodes, so it goes first (their open striped files outlive it as objects).
  std::unique_ptr<volume::Volume> volume;
  MountCounters counters;
  JobsDir jobs;              // .graphfs/jobs/: after the volume, goes first
  KernelChannel channel;     // requests and replies below libfuse (counters, INIT, OPEN)
  Passthrough passthrough;   // which ordinary files the kernel serves itself
  OpenHandles handles;       // after what handles refer to (inodes, files, jobs): goes first
  MemoryPeak memory_peak;    // stats.memory.at_peak; stopped before the volume
  fuse_session* session = nullptr;
  std::once_flag kernel_readahead_set;  // see kernel_readahead.h
  double timeout = 1.0;  // attribute and entry cache timeout (seconds)
};

GraphFs& Fs(fuse_req_t req);

// Operation tables, one family per file (ops_*.cc), as mergerfs has one file per operation:
// lookup and forget (ops_entry.cc), attributes (ops_attr.cc), names made (ops_create.cc) and
// removed or replaced (ops_remove.cc), directories, open/release, read, write, xattrs.
void AddEntryOps(fuse_lowlevel_ops& ops);
void AddAttrOps(fuse_lowlevel_ops& ops);
void AddCreateOps(fuse_lowlevel_ops& ops);
void AddRemoveOps(fuse_lowlevel_ops& ops);
void AddDirOps(fuse_lowlevel_ops& ops);
void AddOpenOps(fuse_lowlevel_ops& ops);
void AddReadOps(fuse_lowlevel_ops& ops);
void AddWriteOps(fuse_lowlevel_ops& ops);
void AddXattrOps(fuse_lowlevel_ops& ops);
// At unmount: releases the handles the kernel never sent RELEASE for (open_handles.h), as
// RELEASE would. Returns how many there were.
size_t ReleaseLeftHandles(GraphFs& fs);
// At unmount, after ReleaseLeftHandles: removes the parts of striped files whose last name was
// unlinked while the kernel still held their inode (it sends no FORGET once the connection is
// gone, and the parts would stay on the disks). Returns how many files.
size_t DisposeUnlinkedAtUnmount(GraphFs& fs);

// Shared helpers (ops_common.cc).
Inode& GetInode(fuse_req_t req, fuse_ino_t ino);
std::string ProcPath(int fd);
// Whether `name` in `dir` is the control directory's (.graphfs at the mount root), which no
// operation may make, link over, remove or rename.
bool IsControlName(GraphFs& fs, Inode& dir, const char* name);
// Where the inode's file is in the source directory now (it may have been renamed); "" if unknown.
std::string BackingPath(const Inode& inode);
// Stats `inode` and fixes up what graphfs presents differently (striped and mapped sizes).
int StatInode(Inode& inode, struct stat* st);
// Looks `name` up in `parent`, registering the inode; fills `e`. Returns 0 or an errno.
int DoLookup(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_entry_param* e);
// The striped file behind an inode, opened on first use (its cache units looked at again
// at every call).
Result<std::shared_ptr<volume::VolumeFile>> OpenStriped(GraphFs& fs, Inode& inode);
// The extent map behind an inode (Inode::mapped), its pieces opened on first use.
Result<std::shared_ptr<const volume::MappedFile>> OpenMapped(GraphFs& fs, Inode& inode);
void ReplyErr(fuse_req_t req, int err);
// After a write or truncate of `inode` by the caller of `req`: with HANDLE_KILLPRIV_V2 the
// kernel leaves it to the daemon to clear setuid (and setgid, as the VFS would) when the
// caller is not root.
void KillSetidBits(fuse_req_t req, Inode& inode);
// A 4 KiB-aligned buffer of at least `size` bytes owned by the calling thread.
AlignedBuffer& ThreadBuffer(size_t size);
// The handle an open file's requests carry (OpenHandles gave it to the kernel at OPEN).
inline FileHandle& FileHandleOf(fuse_file_info* fi) { return *reinterpret_cast<FileHandle*>(fi->fh); }
// The process of a calling thread (FUSE tells the thread; the cache counts processes).
uint32_t ProcessOfThread(pid_t tid);
// libfuse replies with less than two pages by copying, not by splicing.
inline constexpr size_t kSpliceMin = 2 * 4096;

}  // namespace graphfs
