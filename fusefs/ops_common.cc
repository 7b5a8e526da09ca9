// Helpers every operation group uses: inode resolution, stat, lookup, credentials.
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <climits>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <unordered_map>

#include "fusefs/control_dir.h"
#include "fusefs/graphfs.h"

namespace graphfs {

GraphFs& Fs(fuse_req_t req) { return *static_cast<GraphFs*>(fuse_req_userdata(req)); }

Inode& GetInode(fuse_req_t req, fuse_ino_t ino) {
  if (ino == FUSE_ROOT_ID) return Fs(req).inodes.root();
  return *reinterpret_cast<Inode*>(ino);
}

std::string ProcPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

bool IsControlName(GraphFs& fs, Inode& dir, const char* name) {
  return &dir == &fs.inodes.root() && std::strcmp(name, kControlDirName) == 0;
}

uint32_t ProcessOfThread(pid_t tid) {
  static std::mutex mu;
  static std::unordered_map<pid_t, pid_t> tgid_of;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = tgid_of.find(tid);
    if (it != tgid_of.end()) return static_cast<uint32_t>(it->second);
  }
  pid_t tgid = tid;
  std::ifstream status("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Tgid:", 0) == 0) {
      tgid = static_cast<pid_t>(std::strtol(line.c_str() + 5, nullptr, 10));
      break;
    }
  }
  std::lock_guard<std::mutex> lock(mu);
  if (tgid_of.size() > 8192) tgid_of.clear();  // thread ids get reused: do not trust old ones forever
  tgid_of[tid] = tgid;
  return static_cast<uint32_t>(tgid);
}

KernelChannel& ChannelOf(void* userdata) { return static_cast<GraphFs*>(userdata)->channel; }

void KillSetidBits(fuse_req_t req, Inode& inode) {
  GraphFs& fs = Fs(req);
  if (!fs.channel.killpriv_v2() || inode.kind != Inode::Kind::kBacked) return;
  const fuse_ctx* ctx = fuse_req_ctx(req);
  if (ctx->uid == 0) return;  // the daemon takes root for CAP_FSETID, as Credentials do
  struct stat st;
  if (::fstatat(inode.fd.get(), "", &st, AT_EMPTY_PATH) != 0 || !S_ISREG(st.st_mode)) return;
  mode_t kill = st.st_mode & S_ISUID;
  // setattr_should_drop_sgid: with group execute always; without, unless the caller is in
  // the file's group.
  if (st.st_mode & S_ISGID) {
    bool in_group = ctx->gid == st.st_gid;
    if (!in_group && !(st.st_mode & S_IXGRP)) {
      const Credentials who = Credentials::Of(req);
      for (gid_t g : who.groups) in_group |= g == st.st_gid;
    }
    if ((st.st_mode & S_IXGRP) || !in_group) kill |= S_ISGID;
  }
  if (kill == 0) return;
  if (::chmod(ProcPath(inode.fd.get()).c_str(), st.st_mode & 07777 & ~kill) != 0)
    LogError("clearing setuid/setgid after a write: " + std::string(std::strerror(errno)));
}

void ReplyErr(fuse_req_t req, int err) {
  // ENOENT (lookups) and ENODATA (an absent extended attribute) are answers, not failures.
  if (err != 0 && err != ENOENT && err != ENODATA) Fs(req).counters.errors.fetch_add(1, std::memory_order_relaxed);
  fuse_reply_err(req, err);
}

int StatInode(Inode& inode, struct stat* st) {
  if (inode.kind != Inode::Kind::kBacked) {
    FillControlStat(inode, st);
    return 0;
  }
  if (::fstatat(inode.fd.get(), "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return errno;
  if (S_ISREG(st->st_mode)) {
    std::lock_guard<std::mutex> lock(inode.mu);
    if (inode.stub) {
      st->st_size = static_cast<off_t>(inode.striped ? inode.striped->size() : inode.stub->size());
      st->st_blocks = (st->st_size + 511) / 512;
    } else if (inode.mapped) {  // (set before the inode was shared)
      st->st_size = static_cast<off_t>(inode.mapped_size);
      st->st_blocks = (st->st_size + 511) / 512;
    }
  }
  return 0;
}

int DoLookup(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_entry_param* e) {
  GraphFs& fs = Fs(req);
  Inode& dir = GetInode(req, parent);
  std::memset(e, 0, sizeof *e);
  e->attr_timeout = fs.timeout;
  e->entry_timeout = fs.timeout;

  if (&dir == &fs.inodes.root() && std::strcmp(name, kControlDirName) == 0) {
    Inode& c = fs.inodes.control_dir();
    c.nlookup.fetch_add(1);
    e->ino = reinterpret_cast<fuse_ino_t>(&c);
    StatInode(c, &e->attr);
    return 0;
  }
  if (dir.kind == Inode::Kind::kControlDir && std::strcmp(name, "jobs") == 0) {
    Inode& j = fs.jobs.root();
    j.nlookup.fetch_add(1);
    e->ino = reinterpret_cast<fuse_ino_t>(&j);
    StatInode(j, &e->attr);
    return 0;
  }
  if (dir.kind == Inode::Kind::kJobsDir || dir.kind == Inode::Kind::kJobDir) {
    // Job state changes under the kernel's feet: nothing here is cached.
    e->attr_timeout = 0;
    e->entry_timeout = 0;
    Inode* found = nullptr;
    int err = fs.jobs.Lookup(dir, name, &found);
    if (err != 0) return err;
    e->ino = reinterpret_cast<fuse_ino_t>(found);
    StatInode(*found, &e->attr);
    return 0;
  }
  if (dir.kind == Inode::Kind::kControlDir) {
    Inode* f = fs.inodes.Control(name);
    if (f == nullptr) return ENOENT;
    f->nlookup.fetch_add(1);
    e->ino = reinterpret_cast<fuse_ino_t>(f);
    StatInode(*f, &e->attr);
    return 0;
  }
  if (dir.kind != Inode::Kind::kBacked) return ENOTDIR;

  UniqueFd fd(::openat(dir.fd.get(), name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return errno;
  struct stat st;
  if (::fstatat(fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return errno;
  auto fresh = std::make_unique<Inode>();
  fresh->dev = st.st_dev;
  fresh->ino = st.st_ino;
  auto stub = volume::StripedStub::Read(ProcPath(fd.get()), st, /*follow=*/true);
  if (!stub.ok()) {
    LogError(std::string("lookup of ") + name + ": " + stub.error().message());
    return EIO;
  }
  fresh->stub = std::move(*stub);
  if (!fresh->stub) {
    auto map_size = volume::ExtentMapSize(ProcPath(fd.get()), st);
    if (!map_size.ok()) {
      LogError(std::string("lookup of ") + name + ": " + map_size.error().message());
      return EIO;
    }
    if (*map_size) {
      fresh->mapped = true;
      fresh->mapped_size = **map_size;
    }
  }
  fresh->fd = std::move(fd);
  Inode& inode = fs.inodes.Intern(std::move(fresh));
  e->ino = reinterpret_cast<fuse_ino_t>(&inode);
  return StatInode(inode, &e->attr);
}

std::string BackingPath(const Inode& inode) {
  char path[PATH_MAX];
  const ssize_t n = ::readlink(ProcPath(inode.fd.get()).c_str(), path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : "";
}

Result<std::shared_ptr<volume::VolumeFile>> OpenStriped(GraphFs& fs, Inode& inode) {
  std::lock_guard<std::mutex> lock(inode.mu);
  if (inode.striped) {
    fs.volume->RefreshLayout(*inode.striped, BackingPath(inode));
    return inode.striped;
  }
  if (!inode.stub) return Error(EINVAL, "not a striped file");
  if (!fs.volume->has_disks())
    return Error(EIO, "striped file " + inode.stub->file_id() +
                          " found, but no disk set is registered under the source directory");
  UniqueFd stub(::open(ProcPath(inode.fd.get()).c_str(), O_RDONLY | O_CLOEXEC));
  if (!stub.valid()) return Error::FromErrno("open stub of striped file " + inode.stub->file_id());
  auto f = fs.volume->OpenStriped(std::move(stub), *inode.stub, BackingPath(inode));
  if (!f.ok()) return f.error();
  inode.striped = *f;
  // The first open replays the file's row journal (a write or truncate a crash cut short), which
  // may change the size that lookups and getattrs gave the kernel from the manifest. Its cached
  // attributes are dropped before this request's reply: a read after it would otherwise stop at
  // the old size, and a later stat show bytes that no one wrote since.
  if (inode.striped->size() != inode.stub->size() && fs.session != nullptr)
    fuse_lowlevel_notify_inval_inode(fs.session, reinterpret_cast<fuse_ino_t>(&inode), -1, 0);
  return inode.striped;
}

Result<std::shared_ptr<const volume::MappedFile>> OpenMapped(GraphFs& fs, Inode& inode) {
  std::lock_guard<std::mutex> lock(inode.mu);
  if (auto open = inode.graph_file.lock()) return open;
  if (!inode.mapped) return Error(EINVAL, "not an extent map");
  // Its pieces are named relative to its directory: the backing path, not /proc/self/fd.
  auto open = volume::MappedFile::Open(*fs.volume, BackingPath(inode));
  if (!open.ok()) return open.error();
  if ((*open)->size() != inode.mapped_size)
    return Error(EIO, (*open)->path() + ": its extent map changed since lookup");
  inode.graph_file = *open;
  return *open;
}

AlignedBuffer& ThreadBuffer(size_t size) {
  thread_local AlignedBuffer buf;
  if (buf.size() < size) buf = AlignedBuffer((size + kDirectAlign - 1) / kDirectAlign * kDirectAlign);
  return buf;
}

Credentials Credentials::Of(fuse_req_t req) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  Credentials c;
  c.uid = ctx->uid;
  c.gid = ctx->gid;
  if (c.uid == 0 && c.gid == 0) return c;
  gid_t groups[256];
  int n = fuse_req_getgroups(req, 256, groups);
  if (n > 0 && n <= 256) c.groups.assign(groups, groups + n);
  return c;
}

CallerCredentials::CallerCredentials(const Credentials& who) {
  if (who.uid == 0 && who.gid == 0) return;
  // Direct system calls: they change the calling thread only (glibc's wrappers change all).
  ::syscall(SYS_setgroups, who.groups.size(), who.groups.data());
  ::syscall(SYS_setfsgid, who.gid);
  ::syscall(SYS_setfsuid, who.uid);
  switched_ = true;
}

CallerCredentials::~CallerCredentials() {
  if (!switched_) return;
  ::syscall(SYS_setfsuid, 0);
  ::syscall(SYS_setfsgid, 0);
  ::syscall(SYS_setgroups, 0, nullptr);
}

}  // namespace graphfs
