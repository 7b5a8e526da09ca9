// Changing an open file's bytes: WRITE and FALLOCATE. Ordinary files not in passthrough are
// written through their descriptor (fd-backed buffers, no copy in the daemon); striped files
// through the volume (volume::VolumeFile, which drops their cached units); job and control files
// take what is written as commands; extent maps are read-only.
#include <fcntl.h>

#include <string>

#include "fusefs/control_dir.h"
#include "fusefs/file_handle.h"
#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

void WriteBuf(fuse_req_t req, fuse_ino_t, fuse_bufvec* in, off_t offset, fuse_file_info* fi) {
  GraphFs& fs = Fs(req);
  FileHandle& h = FileHandleOf(fi);
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

void Fallocate(fuse_req_t req, fuse_ino_t, int mode, off_t offset, off_t length, fuse_file_info* fi) {
  FileHandle& h = FileHandleOf(fi);
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

void AddWriteOps(fuse_lowlevel_ops& ops) {
  ops.write_buf = WriteBuf;
  ops.fallocate = Fallocate;
}

}  // namespace graphfs
