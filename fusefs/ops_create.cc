// Names made: mknod, mkdir (under .graphfs/jobs/: registers a job), symlink, link — as the
// caller, never over the control directory's name or in a kept version's graph.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "fusefs/graph_versions.h"
#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

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

}  // namespace

void AddCreateOps(fuse_lowlevel_ops& ops) {
  ops.mknod = Mknod;
  ops.mkdir = Mkdir;
  ops.symlink = Symlink;
  ops.link = Link;
}

}  // namespace graphfs
