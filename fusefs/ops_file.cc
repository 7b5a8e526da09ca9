// Open files: create, open, read, write, flush, release, fsync, fallocate.
//
// Ordinary files are opened in FUSE passthrough where the kernel allows (fusefs/passthrough.h):
// the kernel then reads, writes and maps them without the daemon. Otherwise they are served
// here with fd-backed replies (splice, no copy in the daemon). Striped files are served by
// the volume (volume/read_path.cc, fusefs/striped_read.cc); extent maps (a graph version's
// `column` and `row`) from their pieces.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "common/clock.h"
#include "fusefs/control_dir.h"
#include "fusefs/file_handle.h"
#include "fusefs/graph_versions.h"
#include "fusefs/graphfs.h"
#include "fusefs/kernel_readahead.h"
#include "fusefs/striped_read.h"

namespace graphfs {

namespace {

// The backing file must never see O_DIRECT: the kernel hands us unaligned buffers, and
// the caller's O_DIRECT is honoured by the kernel side of FUSE already.
int BackingFlags(int flags) { return flags & ~(O_NOFOLLOW | O_DIRECT | O_CREAT | O_EXCL | O_NOCTTY); }

FileHandle& Handle(fuse_file_info* fi) { return *reinterpret_cast<FileHandle*>(fi->fh); }

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

// libfuse replies with less than two pages by copying, not by splicing.
constexpr size_t kSpliceMin = 2 * 4096;

bool IsStriped(Inode& inode) {
  std::lock_guard<std::mutex> lock(inode.mu);
  return inode.stub.has_value();
}

// An extent map's bytes: ranges of plain pieces spliced from their descriptors (no copy in the
// daemon), ranges of striped pieces (a striped graph's version) read through the volume — its
// cache units pinned until the reply is written; a read that spans pieces is one reply of
// several buffers. Small reads of plain pieces are copied.
void ReadMapped(fuse_req_t req, FileHandle& h, size_t size, off_t offset) {
  GraphFs& fs = Fs(req);
  const std::shared_ptr<const volume::MappedFile> file = h.mapped;
  const std::vector<volume::MappedFile::Piece> pieces = file->Pieces(static_cast<uint64_t>(offset), size);
  uint64_t total = 0;
  bool striped = false;
  for (const auto& p : pieces) {
    total += p.length;
    striped |= p.striped != nullptr;
  }
  fs.counters.bytes_read.fetch_add(total, std::memory_order_relaxed);
  fs.counters.Delivered(ReadPath::kMapped, total);
  if (!pieces.empty() && (total >= kSpliceMin || striped)) {
    std::vector<fuse_buf> bufs;
    std::vector<volume::PinnedRead> pinned;  // unpinned after the reply
    pinned.reserve(pieces.size());
    std::vector<AlignedBuffer> scratch;      // one per striped range beyond the first
    scratch.reserve(pieces.size());
    const uint32_t pid = ProcessOfThread(fuse_req_ctx(req)->pid);
    for (const auto& p : pieces) {
      if (p.striped == nullptr) {
        fuse_buf b{};
        b.size = p.length;
        b.flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
        b.fd = p.fd;
        b.pos = static_cast<off_t>(p.offset);
        bufs.push_back(b);
        continue;
      }
      const size_t aligned = (p.length + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
      AlignedBuffer& buffer = pinned.empty() ? ThreadBuffer(p.length) : scratch.emplace_back(aligned);
      auto got = fs.volume->Read(*p.striped, h.streams, p.offset, p.length, pid, buffer);
      if (!got.ok()) {
        LogError("read " + file->path() + ": " + got.error().message());
        return ReplyErr(req, got.error().code());
      }
      if (got->bytes() != p.length) {
        LogError("read " + file->path() + ": a piece ended early");
        return ReplyErr(req, EIO);
      }
      pinned.push_back(std::move(*got));
      for (const iovec& v : pinned.back().pieces()) {
        fuse_buf b{};
        b.size = v.iov_len;
        b.mem = v.iov_base;
        bufs.push_back(b);
      }
    }
    // fuse_bufvec ends in a one-element array; the others follow it in the same allocation.
    std::vector<char> storage(sizeof(fuse_bufvec) + (bufs.size() - 1) * sizeof(fuse_buf));
    auto* buf = new (storage.data()) fuse_bufvec(FUSE_BUFVEC_INIT(0));
    buf->count = bufs.size();
    for (size_t k = 0; k < bufs.size(); ++k) buf->buf[k] = bufs[k];
    h.MarkLastUse();
    return (void)fuse_reply_data(req, buf, FUSE_BUF_SPLICE_MOVE);
  }
  AlignedBuffer& buf = ThreadBuffer(std::max<uint64_t>(total, 1));
  if (!buf.ok()) return ReplyErr(req, ENOMEM);
  auto n = file->Read(buf.data(), total, static_cast<uint64_t>(offset));
  h.MarkLastUse();
  if (!n.ok()) {
    LogError("read: " + n.error().message());
    return ReplyErr(req, n.error().code());
  }
  fuse_reply_buf(req, buf.data(), static_cast<size_t>(*n));
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

// Adds the thread's CPU from here to the end of the scope to a read path's counter.
class ReadCpu {
 public:
  ReadCpu(MountCounters& counters, FileHandle::Kind kind) : counters_(counters), start_(ThreadCpuNs()) {
    switch (kind) {
      case FileHandle::Kind::kJob: path_ = static_cast<int>(ReadPath::kLp); break;
      case FileHandle::Kind::kStriped: path_ = static_cast<int>(ReadPath::kStriped); break;
      case FileHandle::Kind::kMapped: path_ = static_cast<int>(ReadPath::kMapped); break;
      case FileHandle::Kind::kPlain: path_ = static_cast<int>(ReadPath::kOrdinary); break;
      default: path_ = -1;
    }
  }
  ~ReadCpu() {
    if (path_ >= 0) counters_.path_cpu_ns[path_].fetch_add(static_cast<uint64_t>(ThreadCpuNs() - start_), std::memory_order_relaxed);
  }
  ReadCpu(const ReadCpu&) = delete;
  ReadCpu& operator=(const ReadCpu&) = delete;

 private:
  MountCounters& counters_;
  int64_t start_;
  int path_ = -1;
};

void Read(fuse_req_t req, fuse_ino_t, size_t size, off_t offset, fuse_file_info* fi) {
  GraphFs& fs = Fs(req);
  FileHandle& h = Handle(fi);
  ReadCpu cpu(fs.counters, h.kind);
  switch (h.kind) {
    case FileHandle::Kind::kStriped:
      return ReadStriped(req, h, size, offset);
    case FileHandle::Kind::kMapped:
      return ReadMapped(req, h, size, offset);
    // The reply must not point into the handle: once the kernel has the reply, the reader
    // may close the file, and RELEASE frees the handle on another thread while this one is
    // still returning from writev (TSan sees that as a race). A job file's handle is shared
    // for the call; a control file's bytes are copied (they are small).
    case FileHandle::Kind::kJob: {
      const std::shared_ptr<JobFileHandle> job = h.job;
      return fs.jobs.Read(req, job, size, offset);
    }
    case FileHandle::Kind::kControl: {
      const uint64_t off = std::min<uint64_t>(static_cast<uint64_t>(offset), h.content.size());
      const std::string part = h.content.substr(off, std::min<uint64_t>(size, h.content.size() - off));
      return (void)fuse_reply_buf(req, part.data(), part.size());
    }
    case FileHandle::Kind::kPlain: {
      fs.counters.plain_reads.fetch_add(1, std::memory_order_relaxed);
      const bool direct = h.direct.valid() && offset % kDirectAlign == 0 && size % kDirectAlign == 0;
      const int fd = direct ? h.direct.get() : h.fd.get();
      if (!direct) {
        // Large replies are spliced from the descriptor by libfuse. It would pread() the
        // descriptor itself for a reply under two pages, and again after a splice cut short
        // by EOF; those reads are done here instead, and the request is cut at EOF, so that
        // libfuse never touches the descriptor after this handler's last use of it.
        struct stat st;
        if (::fstat(fd, &st) != 0) return ReplyErr(req, errno);
        const uint64_t left = offset < st.st_size ? static_cast<uint64_t>(st.st_size - offset) : 0;
        size = static_cast<size_t>(std::min<uint64_t>(size, left));
      }
      if (direct || size < kSpliceMin) {
        AlignedBuffer& buf = ThreadBuffer(std::max<size_t>(size, 1));
        if (!buf.ok()) return ReplyErr(req, ENOMEM);
        ssize_t n = size == 0 ? 0 : ::pread(fd, buf.data(), size, offset);
        const int err = errno;
        h.MarkLastUse();
        if (n < 0) return ReplyErr(req, err);
        fs.counters.bytes_read.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
        fs.counters.Delivered(ReadPath::kOrdinary, static_cast<uint64_t>(n));
        return (void)fuse_reply_buf(req, buf.data(), static_cast<size_t>(n));
      }
      fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
      buf.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
      buf.buf[0].fd = fd;
      buf.buf[0].pos = offset;
      h.MarkLastUse();
      fs.counters.bytes_read.fetch_add(size, std::memory_order_relaxed);
      fs.counters.Delivered(ReadPath::kOrdinary, size);
      return (void)fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
    }
  }
}

void WriteBuf(fuse_req_t req, fuse_ino_t, fuse_bufvec* in, off_t offset, fuse_file_info* fi) {
  GraphFs& fs = Fs(req);
  FileHandle& h = Handle(fi);
  const size_t size = fuse_buf_size(in);
  if (h.kind == FileHandle::Kind::kPlain) {
    fs.counters.plain_writes.fetch_add(1, std::memory_order_relaxed);
    fuse_bufvec out = FUSE_BUFVEC_INIT(size);
    out.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    out.buf[0].fd = h.fd.get();
    out.buf[0].pos = offset;
    ssize_t n = fuse_buf_copy(&out, in, static_cast<fuse_buf_copy_flags>(0));
    if (n < 0) return ReplyErr(req, static_cast<int>(-n));
    KillSetidBits(req, *h.inode);
    fs.counters.bytes_written.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    return (void)fuse_reply_write(req, static_cast<size_t>(n));
  }
  // Striped and control files need the bytes in memory.
  const char* data;
  std::string joined;
  if (in->count == 1 && !(in->buf[0].flags & FUSE_BUF_IS_FD)) {
    data = static_cast<const char*>(in->buf[0].mem);
  } else {
    joined.resize(size);
    fuse_bufvec mem = FUSE_BUFVEC_INIT(size);
    mem.buf[0].mem = joined.data();
    ssize_t n = fuse_buf_copy(&mem, in, static_cast<fuse_buf_copy_flags>(0));
    if (n < 0) return ReplyErr(req, static_cast<int>(-n));
    joined.resize(static_cast<size_t>(n));
    data = joined.data();
  }
  if (h.kind == FileHandle::Kind::kJob) {
    Status s = fs.jobs.Write(*h.job, data, size, offset);
    if (!s.ok()) return ReplyErr(req, s.error().code());
    return (void)fuse_reply_write(req, size);
  }
  if (h.kind == FileHandle::Kind::kControl) {
    Status s = WriteControlFile(fs, *h.inode, std::string(data, size), fuse_req_ctx(req)->uid);
    if (!s.ok()) return ReplyErr(req, s.error().code());
    return (void)fuse_reply_write(req, size);
  }
  if (h.kind == FileHandle::Kind::kMapped) return ReplyErr(req, EROFS);
  fs.counters.striped_writes.fetch_add(1, std::memory_order_relaxed);
  // The file drops its cached units before and after (volume/volume.h).
  auto n = h.striped->Write(static_cast<uint64_t>(offset), data, size);
  if (!n.ok()) {
    LogError(n.error().message());
    return ReplyErr(req, n.error().code());
  }
  KillSetidBits(req, *h.inode);
  fs.counters.bytes_written.fetch_add(*n, std::memory_order_relaxed);
  fuse_reply_write(req, *n);
}

void Flush(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  FileHandle& h = Handle(fi);
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
  FileHandle& h = Handle(fi);
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

void Fallocate(fuse_req_t req, fuse_ino_t, int mode, off_t offset, off_t length, fuse_file_info* fi) {
  FileHandle& h = Handle(fi);
  if (offset < 0 || length <= 0) return ReplyErr(req, EINVAL);
  if (h.kind == FileHandle::Kind::kPlain) {
    if (::fallocate(h.fd.get(), mode, offset, length) != 0) return ReplyErr(req, errno);
    KillSetidBits(req, *h.inode);  // as vfs_fallocate's file_modified would for the caller
    return (void)fuse_reply_err(req, 0);
  }
  if (h.kind != FileHandle::Kind::kStriped || (mode & ~FALLOC_FL_KEEP_SIZE) != 0) return ReplyErr(req, EOPNOTSUPP);
  // Striped files are sparse by nature; reserving space means growing the size.
  const uint64_t end = static_cast<uint64_t>(offset) + static_cast<uint64_t>(length);
  if (!(mode & FALLOC_FL_KEEP_SIZE) && end > h.striped->size()) {
    Status s = h.striped->Truncate(end);
    if (!s.ok()) return ReplyErr(req, s.error().code());
  }
  fuse_reply_err(req, 0);
}

}  // namespace

size_t ReleaseLeftHandles(GraphFs& fs) {
  OpenHandles::Left left = fs.handles.TakeAll();
  for (auto& h : left.files) ReleaseHandle(fs, std::move(h));
  return left.files.size() + left.dirs.size();
}

void AddFileOps(fuse_lowlevel_ops& ops) {
  ops.open = Open;
  ops.create = Create;
  ops.read = Read;
  ops.write_buf = WriteBuf;
  ops.flush = Flush;
  ops.release = Release;
  ops.fsync = Fsync;
  ops.fallocate = Fallocate;
}

}  // namespace graphfs
