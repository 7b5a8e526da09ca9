// Names removed or replaced: unlink, rmdir (under .graphfs/jobs/: removes a job), rename. A
// striped file whose last name goes takes its parts on the disks with it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <optional>

#include "fusefs/graph_versions.h"
#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

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

}  // namespace

void AddRemoveOps(fuse_lowlevel_ops& ops) {
  ops.unlink = Unlink;
  ops.rmdir = Rmdir;
  ops.rename = Rename;
}

}  // namespace graphfs
