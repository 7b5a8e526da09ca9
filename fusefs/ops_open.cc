// A file's life as the kernel sees it: CREATE, OPEN, FLUSH, FSYNC, RELEASE — and the handles
// the kernel never released, at unmount.
//
// Ordinary files are opened in FUSE passthrough where the kernel allows (fusefs/passthrough.h):
// the kernel then reads, writes and maps them without the daemon. Otherwise they are served by
// the daemon with fd-backed replies (splice, no copy). Striped files are opened through the
// volume, extent maps (a graph version's `column` and `row`) with their pieces, and the control
// and job files are generated; how each is read is read_paths.h's.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "fusefs/control_dir.h"
#include "fusefs/file_handle.h"
#include "fusefs/graph_versions.h"
#include "fusefs/graphfs.h"
#include "fusefs/kernel_readahead.h"

namespace graphfs {

namespace {

// The backing file must never see O_DIRECT: the kernel hands us unaligned buffers, and
// the caller's O_DIRECT is honoured by the kernel side of FUSE already.
int BackingFlags(int flags) { return flags & ~(O_NOFOLLOW | O_DIRECT | O_CREAT | O_EXCL | O_NOCTTY); }

// What RELEASE does, also for the handles the kernel never released (ReleaseLeftHandles).
void ReleaseHandle(GraphFs& fs, std::unique_ptr<FileHandle> h) {
  if (h->route_counted) fs.passthrough.Release(fs.channel, *h->inode, h->passthrough);
  if (h->kind == FileHandle::Kind::kJob) fs.jobs.Release(fs, *h->job);
  if (h->kind == FileHandle::Kind::kStriped) {
    Status s = h->striped->Flush();
    if (!s.ok()) LogError("release: " + s.error().message());
  }
  h->AfterLastUse();  // see file_handle.h
  // The last user of a graph version marked for reclaiming may just have gone.
  if (h->inode != nullptr && h->inode->kind == Inode::Kind::kBacked)
    fs.volume->reclaimer().Nudge(BackingPath(*h->inode));
}

// Hands `h` to the kernel (in passthrough if it has a backing id). If the open was
// interrupted meanwhile, the kernel never gets the handle and will not release it: it is
// released here.
void ReplyOpen(fuse_req_t req, fuse_file_info* fi, std::unique_ptr<FileHandle> h, int32_t backing_id = 0) {
  GraphFs& fs = Fs(req);
  fi->fh = fs.handles.Add(std::move(h));
  KernelChannel::PassthroughReply amend(backing_id);
  if (fuse_reply_open(req, fi) != 0) ReleaseHandle(fs, fs.handles.TakeFile(fi->fh));
}

// An ordinary file's route: passthrough (the backing id to reply with) or the daemon (0).
int32_t ChooseRoute(GraphFs& fs, Inode& inode, FileHandle& h, fuse_file_info* fi) {
  const int32_t backing_id = fs.passthrough.Acquire(fs.channel, inode, h.fd.get(), fi->flags);
  h.route_counted = true;
  h.passthrough = backing_id > 0;
  if (h.passthrough) {
    // The kernel refuses keep_cache with passthrough (its pages are the backing file's).
    fi->keep_cache = 0;
    fi->direct_io = 0;
  }
  return backing_id;
}

bool IsStriped(Inode& inode) {
  std::lock_guard<std::mutex> lock(inode.mu);
  return inode.stub.has_value();
}

void OpenBacked(fuse_req_t req, Inode& inode, fuse_file_info* fi, std::unique_ptr<FileHandle> h) {
  GraphFs& fs = Fs(req);
  h->inode = &inode;
  if (IsStriped(inode)) {
    auto f = OpenStriped(fs, inode);
    if (!f.ok()) {
      LogError("open: " + f.error().message());
      return ReplyErr(req, f.error().code());
    }
    // The kernel hands O_TRUNC to open (atomic_o_trunc) and takes the file as empty from
    // here: a striped file has no backing descriptor that the flag would cut, so cut it here.
    if ((fi->flags & O_TRUNC) && (fi->flags & O_ACCMODE) != O_RDONLY) {
      if (Status cut = (*f)->Truncate(0); !cut.ok()) {
        LogError("open: " + cut.error().message());
        return ReplyErr(req, cut.error().code());
      }
    }
    h->kind = FileHandle::Kind::kStriped;
    h->striped = *f;
    h->fd.reset();
    // All changes to a striped file pass through this daemon, so the kernel may keep
    // its cached pages across opens.
    fi->keep_cache = 1;
  } else if (inode.mapped) {
    auto f = OpenMapped(fs, inode);
    if (!f.ok()) {
      LogError("open: " + f.error().message());
      return ReplyErr(req, f.error().code());
    }
    h->kind = FileHandle::Kind::kMapped;
    h->mapped = *f;  // its pieces stay open while a handle holds them
    h->fd.reset();
    fi->keep_cache = 1;  // a map never changes: a new version is a new file
  } else {
    if (!h->fd.valid()) {
      h->fd.reset(::open(ProcPath(inode.fd.get()).c_str(), BackingFlags(fi->flags) | O_CLOEXEC));
      if (!h->fd.valid()) return ReplyErr(req, errno);
    }
    // Engines reopen their partition files every iteration; dropping the kernel's cached
    // pages at each open would re-read the graph through the daemon every time. Changes
    // made behind the mount's back are still noticed: with FUSE_CAP_AUTO_INVAL_DATA the
    // kernel drops the pages when it sees the file's mtime or size change (at most
    // `timeout` seconds late). timeout=0 turns caching across opens off.
    fi->keep_cache = fs.timeout > 0 ? 1 : 0;
    if (const int32_t backing_id = ChooseRoute(fs, inode, *h, fi); backing_id > 0)
      return ReplyOpen(req, fi, std::move(h), backing_id);
  }
  if (h->kind == FileHandle::Kind::kPlain && (fi->flags & O_DIRECT) && (fi->flags & O_ACCMODE) != O_WRONLY) {
    // The caller bypasses the page cache; so do we, for the aligned reads that O_DIRECT
    // callers make, into buffers of our own. (Not all filesystems take O_DIRECT: then
    // every read goes through the buffered descriptor.)
    h->direct.reset(::open(ProcPath(inode.fd.get()).c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
  }
  ReplyOpen(req, fi, std::move(h));
}

void Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  GraphFs& fs = Fs(req);
  ApplyKernelReadAheadOnce(fs);
  Inode& inode = GetInode(req, ino);
  auto h = std::make_unique<FileHandle>();
  if (inode.kind == Inode::Kind::kControlFile) {
    auto content = OpenControlFile(fs, inode, fi->flags, fuse_req_ctx(req)->uid);
    if (!content.ok()) return ReplyErr(req, content.error().code());
    h->kind = FileHandle::Kind::kControl;
    h->inode = &inode;
    h->content = std::move(*content);
    fi->direct_io = 1;  // the content is generated; its size is not known in advance
    return ReplyOpen(req, fi, std::move(h));
  }
  if (inode.kind == Inode::Kind::kJobFile) {
    auto job = fs.jobs.Open(fs, inode, fi->flags, Credentials::Of(req));
    if (!job.ok()) return ReplyErr(req, job.error().code());
    h->kind = FileHandle::Kind::kJob;
    h->inode = &inode;
    h->job = std::move(*job);
    fi->nonseekable = 0;
    if (h->job->memory) {
      // `memory`: the graph's LP memory, which the kernel reads and maps itself (passthrough),
      // or nothing: served through the daemon it could not be mapped, and a job's fallback
      // is to read lp-SEQ.
      const int32_t backing_id = fs.passthrough.Acquire(fs.channel, inode, h->job->memory->fd(), O_RDONLY);
      if (backing_id <= 0) {
        fs.passthrough.Release(fs.channel, inode, false);
        fs.jobs.Release(fs, *h->job);
        return ReplyErr(req, EOPNOTSUPP);
      }
      h->route_counted = h->passthrough = true;
      fi->direct_io = 0;
      fi->keep_cache = 0;
      return ReplyOpen(req, fi, std::move(h), backing_id);
    }
    fi->direct_io = 1;  // generated or scheduled content: every read reaches the daemon
    return ReplyOpen(req, fi, std::move(h));
  }
  if (inode.kind != Inode::Kind::kBacked) return ReplyErr(req, EISDIR);
  if (((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) && IsFrozenVersionFile(inode)) {
    LogError("open for writing refused: a file of a kept graph version, or shared between versions (graphfs-update "
             "changes graphs)");
    return ReplyErr(req, EROFS);
  }
  OpenBacked(req, inode, fi, std::move(h));
}

void Create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi) {
  GraphFs& fs = Fs(req);
  ApplyKernelReadAheadOnce(fs);
  Inode& dir = GetInode(req, parent);
  if (dir.kind != Inode::Kind::kBacked) return ReplyErr(req, EPERM);
  if (&dir == &fs.inodes.root() && std::strcmp(name, kControlDirName) == 0) return ReplyErr(req, EEXIST);
  if (IsKeptVersionGraphEntry(dir, name) || IsFrozenVersionEntry(dir, name)) return ReplyErr(req, EROFS);
  auto h = std::make_unique<FileHandle>();
  {
    CallerCredentials as_caller(req);
    h->fd.reset(::openat(dir.fd.get(), name, ((fi->flags | O_CREAT) & ~(O_NOFOLLOW | O_DIRECT)) | O_CLOEXEC, mode));
    if (!h->fd.valid()) return ReplyErr(req, errno);
  }
  fuse_entry_param e;
  int err = DoLookup(req, parent, name, &e);
  if (err != 0) return ReplyErr(req, err);
  Inode& inode = GetInode(req, e.ino);
  h->inode = &inode;
  const int32_t backing_id = ChooseRoute(fs, inode, *h, fi);
  fi->fh = fs.handles.Add(std::move(h));
  KernelChannel::PassthroughReply amend(backing_id);
  if (fuse_reply_create(req, &e, fi) != 0) ReleaseHandle(fs, fs.handles.TakeFile(fi->fh));
}

void Flush(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  FileHandle& h = FileHandleOf(fi);
  int err = 0;
  if (h.kind == FileHandle::Kind::kPlain) {
    // close() of a duplicate reports delayed write errors like close() of the original.
    if (::close(::dup(h.fd.get())) != 0) err = errno;
  } else if (h.kind == FileHandle::Kind::kStriped) {
    Status s = h.striped->Flush();
    if (!s.ok()) err = s.error().code();
  } else if (h.kind == FileHandle::Kind::kJob) {
    // Job files take effect at close; close() reports a bad active set or graph.
    Status s = Fs(req).jobs.Flush(Fs(req), *h.job);
    if (!s.ok()) err = s.error().code();
  }
  fuse_reply_err(req, err);
}

void Release(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  GraphFs& fs = Fs(req);
  std::unique_ptr<FileHandle> h = fs.handles.TakeFile(fi->fh);
  if (h != nullptr) ReleaseHandle(fs, std::move(h));
  fuse_reply_err(req, 0);
}

void Fsync(fuse_req_t req, fuse_ino_t, int datasync, fuse_file_info* fi) {
  FileHandle& h = FileHandleOf(fi);
  int err = 0;
  if (h.kind == FileHandle::Kind::kPlain) {
    if ((datasync ? ::fdatasync(h.fd.get()) : ::fsync(h.fd.get())) != 0) err = errno;
  } else if (h.kind == FileHandle::Kind::kStriped) {
    Status s = h.striped->Sync();
    if (!s.ok()) {
      LogError("fsync: " + s.error().message());
      err = s.error().code();
    }
  }
  fuse_reply_err(req, err);
}

}  // namespace

size_t ReleaseLeftHandles(GraphFs& fs) {
  OpenHandles::Left left = fs.handles.TakeAll();
  for (auto& h : left.files) ReleaseHandle(fs, std::move(h));
  return left.files.size() + left.dirs.size();
}

void AddOpenOps(fuse_lowlevel_ops& ops) {
  ops.open = Open;
  ops.create = Create;
  ops.flush = Flush;
  ops.fsync = Fsync;
  ops.release = Release;
}

}  // namespace graphfs
