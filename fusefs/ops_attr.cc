// Attributes: getattr, setattr (mode, owner, size — a striped file's through the volume —,
// times), readlink, statfs.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <mutex>
#include <string>

#include "fusefs/file_handle.h"
#include "fusefs/graph_versions.h"
#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

void Getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  struct stat st;
  int err = StatInode(GetInode(req, ino), &st);
  if (err != 0) return ReplyErr(req, err);
  fuse_reply_attr(req, &st, Fs(req).timeout);
}

void Setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int valid, fuse_file_info* fi) {
  GraphFs& fs = Fs(req);
  Inode& inode = GetInode(req, ino);
  // Before anything is applied: a refused truncation changes nothing else either.
  if ((valid & FUSE_SET_ATTR_SIZE) && IsFrozenVersionFile(inode)) return ReplyErr(req, EROFS);
  if (inode.kind != Inode::Kind::kBacked) {
    // Control files accept the truncation that `echo > file` asks for, nothing else.
    if ((valid & ~(FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW | FUSE_SET_ATTR_CTIME)) != 0 ||
        inode.kind == Inode::Kind::kControlDir || inode.kind == Inode::Kind::kJobsDir ||
        inode.kind == Inode::Kind::kJobDir)
      return ReplyErr(req, EPERM);
    return Getattr(req, ino, fi);
  }
  FileHandle* fh = fi != nullptr ? reinterpret_cast<FileHandle*>(fi->fh) : nullptr;
  const int plain_fd = fh != nullptr && fh->kind == FileHandle::Kind::kPlain ? fh->fd.get() : -1;
  const std::string proc = ProcPath(inode.fd.get());
  int res = 0;
  if (valid & FUSE_SET_ATTR_MODE) {
    res = plain_fd >= 0 ? ::fchmod(plain_fd, attr->st_mode) : ::chmod(proc.c_str(), attr->st_mode);
    if (res != 0) return ReplyErr(req, errno);
  }
  if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
    uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : static_cast<uid_t>(-1);
    gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : static_cast<gid_t>(-1);
    if (::fchownat(inode.fd.get(), "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
      return ReplyErr(req, errno);
  }
  if (valid & FUSE_SET_ATTR_SIZE) {
    bool striped;
    {
      std::lock_guard<std::mutex> lock(inode.mu);
      striped = inode.stub.has_value();
    }
    if (striped) {
      auto f = OpenStriped(fs, inode);
      if (!f.ok()) {
        LogError("truncate: " + f.error().message());
        return ReplyErr(req, f.error().code());
      }
      Status s = (*f)->Truncate(static_cast<uint64_t>(attr->st_size));
      if (!s.ok()) {
        LogError("truncate: " + s.error().message());
        return ReplyErr(req, s.error().code());
      }
    } else {
      res = plain_fd >= 0 ? ::ftruncate(plain_fd, attr->st_size) : ::truncate(proc.c_str(), attr->st_size);
      if (res != 0) return ReplyErr(req, errno);
    }
    KillSetidBits(req, inode);
  }
  if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
    struct timespec tv[2];
    tv[0].tv_sec = tv[1].tv_sec = 0;
    tv[0].tv_nsec = tv[1].tv_nsec = UTIME_OMIT;
    if (valid & FUSE_SET_ATTR_ATIME_NOW) tv[0].tv_nsec = UTIME_NOW;
    else if (valid & FUSE_SET_ATTR_ATIME) tv[0] = attr->st_atim;
    if (valid & FUSE_SET_ATTR_MTIME_NOW) tv[1].tv_nsec = UTIME_NOW;
    else if (valid & FUSE_SET_ATTR_MTIME) tv[1] = attr->st_mtim;
    res = plain_fd >= 0 ? ::futimens(plain_fd, tv) : ::utimensat(AT_FDCWD, proc.c_str(), tv, 0);
    if (res != 0) return ReplyErr(req, errno);
  }
  Getattr(req, ino, fi);
}

void Readlink(fuse_req_t req, fuse_ino_t ino) {
  Inode& inode = GetInode(req, ino);
  if (inode.kind != Inode::Kind::kBacked) return ReplyErr(req, EINVAL);
  char buf[PATH_MAX + 1];
  ssize_t n = ::readlinkat(inode.fd.get(), "", buf, sizeof buf);
  if (n < 0) return ReplyErr(req, errno);
  if (n == sizeof buf) return ReplyErr(req, ENAMETOOLONG);
  buf[n] = '\0';
  fuse_reply_readlink(req, buf);
}

void Statfs(fuse_req_t req, fuse_ino_t) {
  struct statvfs st;
  if (::fstatvfs(Fs(req).inodes.root().fd.get(), &st) != 0) return ReplyErr(req, errno);
  fuse_reply_statfs(req, &st);
}

}  // namespace

void AddAttrOps(fuse_lowlevel_ops& ops) {
  ops.getattr = Getattr;
  ops.setattr = Setattr;
  ops.readlink = Readlink;
  ops.statfs = Statfs;
}

}  // namespace graphfs
