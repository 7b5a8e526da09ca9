// Extended attributes, passed through. graphfs's own (user.graphfs.*) are neither shown
// nor settable: they are what makes a stub a striped file.
#include <sys/xattr.h>

#include <cstring>
#include <vector>

#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

bool Reserved(const char* name) { return volume::IsReservedXattr(name); }

// xattr calls go through /proc/self/fd/N: O_PATH descriptors do not take f*xattr calls.
// Symlinks (whose proc path would lead to their target) have no user xattrs on Linux.
bool Backed(Inode& inode, fuse_req_t req) {
  if (inode.kind != Inode::Kind::kBacked) {
    fuse_reply_err(req, ENOTSUP);
    return false;
  }
  return true;
}

void Getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  Inode& inode = GetInode(req, ino);
  if (!Backed(inode, req)) return;
  if (Reserved(name)) return ReplyErr(req, ENODATA);
  const std::string path = ProcPath(inode.fd.get());
  if (size == 0) {
    ssize_t n = ::getxattr(path.c_str(), name, nullptr, 0);
    if (n < 0) return ReplyErr(req, errno);
    return (void)fuse_reply_xattr(req, static_cast<size_t>(n));
  }
  std::vector<char> buf(size);
  ssize_t n = ::getxattr(path.c_str(), name, buf.data(), size);
  if (n < 0) return ReplyErr(req, errno);
  fuse_reply_buf(req, buf.data(), static_cast<size_t>(n));
}

void Listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  Inode& inode = GetInode(req, ino);
  if (!Backed(inode, req)) return;
  const std::string path = ProcPath(inode.fd.get());
  ssize_t n = ::listxattr(path.c_str(), nullptr, 0);
  if (n < 0) return ReplyErr(req, errno);
  std::vector<char> raw(static_cast<size_t>(n) + 1);
  n = ::listxattr(path.c_str(), raw.data(), raw.size());
  if (n < 0) return ReplyErr(req, errno);
  std::vector<char> shown;
  for (ssize_t i = 0; i < n;) {
    const char* name = raw.data() + i;
    size_t len = std::strlen(name) + 1;
    if (!Reserved(name)) shown.insert(shown.end(), name, name + len);
    i += static_cast<ssize_t>(len);
  }
  if (size == 0) return (void)fuse_reply_xattr(req, shown.size());
  if (shown.size() > size) return ReplyErr(req, ERANGE);
  fuse_reply_buf(req, shown.data(), shown.size());
}

void Setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size, int flags) {
  Inode& inode = GetInode(req, ino);
  if (!Backed(inode, req)) return;
  if (Reserved(name)) return ReplyErr(req, EPERM);
  if (::setxattr(ProcPath(inode.fd.get()).c_str(), name, value, size, flags) != 0) return ReplyErr(req, errno);
  fuse_reply_err(req, 0);
}

void Removexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  Inode& inode = GetInode(req, ino);
  if (!Backed(inode, req)) return;
  if (Reserved(name)) return ReplyErr(req, EPERM);
  if (::removexattr(ProcPath(inode.fd.get()).c_str(), name) != 0) return ReplyErr(req, errno);
  fuse_reply_err(req, 0);
}

}  // namespace

void AddXattrOps(fuse_lowlevel_ops& ops) {
  ops.getxattr = Getxattr;
  ops.listxattr = Listxattr;
  ops.setxattr = Setxattr;
  ops.removexattr = Removexattr;
}

}  // namespace graphfs
