// Names and attributes: lookup, forget, getattr/setattr, create nodes, links, unlink, rename, statfs.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstring>

#include "fusefs/control_dir.h"
#include "fusefs/file_handle.h"
#include "fusefs/graph_versions.h"
#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

bool IsControlName(GraphFs& fs, Inode& dir, const char* name) {
  return &dir == &fs.inodes.root() && std::strcmp(name, kControlDirName) == 0;
}

void DisposeInode(GraphFs& fs, std::unique_ptr<Inode> gone) {
  if (!gone) return;
  std::shared_ptr<volume::VolumeFile> striped;
  std::optional<volume::StripedStub> stub;
  bool remove = false;
  {
    std::lock_guard<std::mutex> lock(gone->mu);
    striped = std::move(gone->striped);
    // An open file's manifest may have changed since lookup (a compressed file made plain by
    // its first write): its parts are the current ones.
    stub = striped ? std::optional<volume::StripedStub>(striped->stub()) : gone->stub;
    remove = gone->remove_parts;
  }
  striped.reset();  // flushes the manifest
  if (remove && stub) fs.volume->RemoveParts(*stub);
}

}  // namespace

size_t DisposeUnlinkedAtUnmount(GraphFs& fs) {
  std::vector<std::unique_ptr<Inode>> gone = fs.inodes.TakeUnlinked();
  const size_t n = gone.size();
  for (auto& inode : gone) DisposeInode(fs, std::move(inode));
  return n;
}

namespace {

// Job directories and files are owned by the jobs tree; everything else by the inode table.
void ForgetOne(GraphFs& fs, Inode& inode, uint64_t nlookup) {
  if (inode.kind == Inode::Kind::kJobDir || inode.kind == Inode::Kind::kJobFile) return fs.jobs.Forget(inode, nlookup);
  DisposeInode(fs, fs.inodes.Forget(inode, nlookup));
}

void Forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  ForgetOne(Fs(req), GetInode(req, ino), nlookup);
  fuse_reply_none(req);
}

void ForgetMulti(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  GraphFs& fs = Fs(req);
  for (size_t i = 0; i < count; ++i) ForgetOne(fs, GetInode(req, forgets[i].ino), forgets[i].nlookup);
  fuse_reply_none(req);
}

void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  fuse_entry_param e;
  int err = DoLookup(req, parent, name, &e);
  if (err == ENOENT) {
    // Negative entries are cached like positive ones.
    e.ino = 0;
    e.entry_timeout = Fs(req).timeout;
    fuse_reply_entry(req, &e);
  } else if (err != 0) {
    ReplyErr(req, err);
  } else {
    fuse_reply_entry(req, &e);
  }
}

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

void MakeNode(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev, const char* link) {
  GraphFs& fs = Fs(req);
  Inode& dir = GetInode(req, parent);
  if (dir.kind != Inode::Kind::kBacked) return ReplyErr(req, EPERM);
  if (IsControlName(fs, dir, name)) return ReplyErr(req, EEXIST);
  if (IsKeptVersionGraphEntry(dir, name)) return ReplyErr(req, EROFS);
  int res;
  {
    CallerCredentials as_caller(req);
    if (link != nullptr) res = ::symlinkat(link, dir.fd.get(), name);
    else if (S_ISDIR(mode)) res = ::mkdirat(dir.fd.get(), name, mode);
    else res = ::mknodat(dir.fd.get(), name, mode, rdev);
    if (res != 0) res = errno;
  }
  if (res != 0) return ReplyErr(req, res);
  fuse_entry_param e;
  int err = DoLookup(req, parent, name, &e);
  if (err != 0) return ReplyErr(req, err);
  fuse_reply_entry(req, &e);
}

void Mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  MakeNode(req, parent, name, mode, rdev, nullptr);
}
void Mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  GraphFs& fs = Fs(req);
  Inode& dir = GetInode(req, parent);
  if (dir.kind == Inode::Kind::kJobsDir) {  // registers a job
    const fuse_ctx* ctx = fuse_req_ctx(req);
    Inode* job = nullptr;
    int err = fs.jobs.Mkdir(dir, name, ctx->uid, ctx->gid, &job);
    if (err != 0) return ReplyErr(req, err);
    fuse_entry_param e;
    std::memset(&e, 0, sizeof e);
    e.ino = reinterpret_cast<fuse_ino_t>(job);
    StatInode(*job, &e.attr);
    return (void)fuse_reply_entry(req, &e);
  }
  MakeNode(req, parent, name, S_IFDIR | mode, 0, nullptr);
}
void Symlink(fuse_req_t req, const char* link, fuse_ino_t parent, const char* name) {
  MakeNode(req, parent, name, S_IFLNK, 0, link);
}

void Link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname) {
  GraphFs& fs = Fs(req);
  Inode& inode = GetInode(req, ino);
  Inode& dir = GetInode(req, newparent);
  if (inode.kind != Inode::Kind::kBacked || dir.kind != Inode::Kind::kBacked) return ReplyErr(req, EPERM);
  if (IsControlName(fs, dir, newname)) return ReplyErr(req, EEXIST);
  if (IsKeptVersionGraphEntry(dir, newname)) return ReplyErr(req, EROFS);
  if (::linkat(AT_FDCWD, ProcPath(inode.fd.get()).c_str(), dir.fd.get(), newname, AT_SYMLINK_FOLLOW) != 0)
    return ReplyErr(req, errno);
  fuse_entry_param e;
  int err = DoLookup(req, newparent, newname, &e);
  if (err != 0) return ReplyErr(req, err);
  fuse_reply_entry(req, &e);
}

// A striped file whose last name goes away takes its parts with it once nobody holds it.
struct DoomedStripedFile {
  std::optional<volume::StripedStub> stub;
  Inode* inode = nullptr;
};

DoomedStripedFile InspectVictim(GraphFs& fs, Inode& dir, const char* name) {
  DoomedStripedFile v;
  struct stat st;
  if (::fstatat(dir.fd.get(), name, &st, AT_SYMLINK_NOFOLLOW) != 0) return v;
  if (st.st_nlink > 1) return v;
  auto stub = volume::StripedStub::Read(ProcPath(dir.fd.get()) + "/" + name, st);
  if (!stub.ok() || !stub->has_value()) return v;
  v.stub = std::move(*stub);
  v.inode = fs.inodes.Find(st.st_dev, st.st_ino);
  return v;
}

void Bury(GraphFs& fs, const DoomedStripedFile& v) {
  if (!v.stub) return;
  if (v.inode != nullptr) {
    std::lock_guard<std::mutex> lock(v.inode->mu);
    v.inode->remove_parts = true;  // the kernel still holds it; parts go at forget
  } else {
    fs.volume->RemoveParts(*v.stub);
  }
}

void Unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  GraphFs& fs = Fs(req);
  Inode& dir = GetInode(req, parent);
  if (dir.kind != Inode::Kind::kBacked || IsControlName(fs, dir, name)) return ReplyErr(req, EPERM);
  DoomedStripedFile victim = InspectVictim(fs, dir, name);
  if (::unlinkat(dir.fd.get(), name, 0) != 0) return ReplyErr(req, errno);
  Bury(fs, victim);
  fuse_reply_err(req, 0);
}

void Rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  GraphFs& fs = Fs(req);
  Inode& dir = GetInode(req, parent);
  if (dir.kind == Inode::Kind::kJobsDir) return ReplyErr(req, fs.jobs.Rmdir(dir, name, fuse_req_ctx(req)->uid));
  if (dir.kind != Inode::Kind::kBacked || IsControlName(fs, dir, name)) return ReplyErr(req, EPERM);
  if (::unlinkat(dir.fd.get(), name, AT_REMOVEDIR) != 0) return ReplyErr(req, errno);
  fuse_reply_err(req, 0);
}

void Rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent, const char* newname,
            unsigned int flags) {
  GraphFs& fs = Fs(req);
  Inode& from = GetInode(req, parent);
  Inode& to = GetInode(req, newparent);
  if (from.kind != Inode::Kind::kBacked || to.kind != Inode::Kind::kBacked) return ReplyErr(req, EPERM);
  if (IsControlName(fs, from, name) || IsControlName(fs, to, newname)) return ReplyErr(req, EPERM);
  if (IsKeptVersionGraphEntry(to, newname) || ((flags & RENAME_EXCHANGE) && IsKeptVersionGraphEntry(from, name)))
    return ReplyErr(req, EROFS);
  DoomedStripedFile victim;
  if (!(flags & RENAME_EXCHANGE)) victim = InspectVictim(fs, to, newname);
  if (::renameat2(from.fd.get(), name, to.fd.get(), newname, flags) != 0) return ReplyErr(req, errno);
  // Renaming a name onto itself (or a hard link of itself) replaces nothing.
  struct stat st;
  if (victim.stub && ::fstatat(to.fd.get(), newname, &st, AT_SYMLINK_NOFOLLOW) == 0 && victim.inode != nullptr &&
      st.st_ino == victim.inode->ino && st.st_dev == victim.inode->dev)
    victim = {};
  Bury(fs, victim);
  fuse_reply_err(req, 0);
}

void Statfs(fuse_req_t req, fuse_ino_t) {
  struct statvfs st;
  if (::fstatvfs(Fs(req).inodes.root().fd.get(), &st) != 0) return ReplyErr(req, errno);
  fuse_reply_statfs(req, &st);
}

}  // namespace

void AddEntryOps(fuse_lowlevel_ops& ops) {
  ops.lookup = Lookup;
  ops.forget = Forget;
  ops.forget_multi = ForgetMulti;
  ops.getattr = Getattr;
  ops.setattr = Setattr;
  ops.readlink = Readlink;
  ops.mknod = Mknod;
  ops.mkdir = Mkdir;
  ops.symlink = Symlink;
  ops.link = Link;
  ops.unlink = Unlink;
  ops.rmdir = Rmdir;
  ops.rename = Rename;
  ops.statfs = Statfs;
}

}  // namespace graphfs
