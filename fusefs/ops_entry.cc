// Names and the inodes' lifetime: lookup (negative entries cached too), forget, and the striped
// files whose parts go with their inode. Attributes are in ops_attr.cc, names made in
// ops_create.cc, names removed or replaced in ops_remove.cc.
#include <memory>
#include <optional>
#include <vector>

#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

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

}  // namespace

void AddEntryOps(fuse_lowlevel_ops& ops) {
  ops.lookup = Lookup;
  ops.forget = Forget;
  ops.forget_multi = ForgetMulti;
}

}  // namespace graphfs
