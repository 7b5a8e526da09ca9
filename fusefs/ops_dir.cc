// Directories: opendir, readdir, releasedir, fsyncdir. The root lists the control directory.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "fusefs/control_dir.h"
#include "fusefs/file_handle.h"
#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

int LoadEntries(GraphFs& fs, DirHandle& d) {
  d.entries.clear();
  if (d.is_control) {
    d.entries.push_back({".", 1, DT_DIR});
    d.entries.push_back({"..", 1, DT_DIR});
    for (const char* name : ControlFileNames()) d.entries.push_back({name, 1, DT_REG});
    d.entries.push_back({"jobs", 1, DT_DIR});
    d.loaded = true;
    return 0;
  }
  if (d.jobs_inode != nullptr) {
    int err = fs.jobs.List(*d.jobs_inode, &d.entries);
    if (err != 0) return err;
    d.loaded = true;
    return 0;
  }
  // A fresh descriptor each time: rewinding a shared DIR* would race with other readers.
  int fd = ::openat(d.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    int e = errno;
    ::close(fd);
    return e;
  }
  errno = 0;
  while (struct dirent* e = ::readdir(dir)) {
    if (d.is_root && std::strcmp(e->d_name, kControlDirName) == 0) continue;  // shadowed
    d.entries.push_back({e->d_name, e->d_ino, e->d_type});
  }
  int err = errno;
  ::closedir(dir);
  if (err != 0) return err;
  if (d.is_root) d.entries.push_back({kControlDirName, 1, DT_DIR});
  d.loaded = true;
  return 0;
}

void Opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  GraphFs& fs = Fs(req);
  Inode& inode = GetInode(req, ino);
  auto d = std::make_unique<DirHandle>();
  if (inode.kind == Inode::Kind::kControlDir) {
    d->is_control = true;
  } else if (inode.kind == Inode::Kind::kJobsDir || inode.kind == Inode::Kind::kJobDir) {
    d->jobs_inode = &inode;
  } else if (inode.kind == Inode::Kind::kBacked) {
    d->fd.reset(::openat(inode.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!d->fd.valid()) return ReplyErr(req, errno);
    d->is_root = &inode == &fs.inodes.root();
  } else {
    return ReplyErr(req, ENOTDIR);
  }
  fi->cache_readdir = 0;
  fi->fh = fs.handles.Add(std::move(d));
  if (fuse_reply_open(req, fi) != 0) fs.handles.TakeDir(fi->fh);  // interrupted: never released
}

void Readdir(fuse_req_t req, fuse_ino_t, size_t size, off_t offset, fuse_file_info* fi) {
  DirHandle& d = *reinterpret_cast<DirHandle*>(fi->fh);
  if (offset == 0 || !d.loaded) {
    int err = LoadEntries(Fs(req), d);
    if (err != 0) return ReplyErr(req, err);
  }
  std::vector<char> buf(size);
  size_t used = 0;
  for (size_t i = static_cast<size_t>(offset); i < d.entries.size(); ++i) {
    const DirEntry& e = d.entries[i];
    struct stat st;
    std::memset(&st, 0, sizeof st);
    st.st_ino = e.ino;
    st.st_mode = static_cast<mode_t>(e.type) << 12;
    size_t n = fuse_add_direntry(req, buf.data() + used, size - used, e.name.c_str(), &st, static_cast<off_t>(i + 1));
    if (n > size - used) break;
    used += n;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void Releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  Fs(req).handles.TakeDir(fi->fh);
  fuse_reply_err(req, 0);
}

void Fsyncdir(fuse_req_t req, fuse_ino_t, int datasync, fuse_file_info* fi) {
  DirHandle& d = *reinterpret_cast<DirHandle*>(fi->fh);
  if (!d.fd.valid()) return (void)fuse_reply_err(req, 0);
  int res = datasync ? ::fdatasync(d.fd.get()) : ::fsync(d.fd.get());
  fuse_reply_err(req, res == 0 ? 0 : errno);
}

}  // namespace

void AddDirOps(fuse_lowlevel_ops& ops) {
  ops.opendir = Opendir;
  ops.readdir = Readdir;
  ops.releasedir = Releasedir;
  ops.fsyncdir = Fsyncdir;
}

}  // namespace graphfs
