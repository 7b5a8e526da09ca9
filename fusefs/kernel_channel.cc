#include "fusefs/kernel_channel.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "common/log.h"

namespace graphfs {

namespace {

using namespace kernel_abi;

// The backing id the OPEN or CREATE reply of this thread carries (0: none).
// fuse_reply_open/_create send on the calling thread.
thread_local int32_t pending_backing_id = 0;

std::string Gather(const struct iovec* iov, int count) {
  std::string msg;
  for (int i = 0; i < count; ++i) msg.append(static_cast<const char*>(iov[i].iov_base), iov[i].iov_len);
  return msg;
}

ssize_t WriteWhole(int fd, const std::string& msg) {
  // One write(2): the kernel takes a reply only whole.
  return ::write(fd, msg.data(), msg.size());
}

}  // namespace

const char* kernel_abi::OpcodeName(uint32_t opcode) {
  static const char* const names[kOpcodeLimit] = {
      nullptr, "LOOKUP", "FORGET", "GETATTR", "SETATTR", "READLINK", "SYMLINK", nullptr, "MKNOD", "MKDIR",
      "UNLINK", "RMDIR", "RENAME", "LINK", "OPEN", "READ", "WRITE", "STATFS", "RELEASE", nullptr, "FSYNC",
      "SETXATTR", "GETXATTR", "LISTXATTR", "REMOVEXATTR", "FLUSH", "INIT", "OPENDIR", "READDIR", "RELEASEDIR",
      "FSYNCDIR", "GETLK", "SETLK", "SETLKW", "ACCESS", "CREATE", "INTERRUPT", "BMAP", "DESTROY", "IOCTL",
      "POLL", "NOTIFY_REPLY", "BATCH_FORGET", "FALLOCATE", "READDIRPLUS", "RENAME2", "LSEEK",
      "COPY_FILE_RANGE", "SETUPMAPPING", "REMOVEMAPPING", "SYNCFS", "TMPFILE", "STATX"};
  return opcode < kOpcodeLimit ? names[opcode] : nullptr;
}

Status KernelChannel::Attach(fuse_session* se, const Wants& wants) {
  wants_ = wants;
  fd_ = fuse_session_fd(se);
  if (fd_ < 0) return Error(EBADF, "the FUSE session has no descriptor");
  fuse_custom_io io;
  std::memset(&io, 0, sizeof io);
  io.read = ReadHook;
  io.writev = WritevHook;
  // Without a splice hook libfuse 3.14 stops splicing replies. Requests are read with
  // read(2) (graphfs does not ask for FUSE_CAP_SPLICE_READ), so every one passes ReadHook.
  io.splice_send = SpliceSendHook;
  if (int err = fuse_session_custom_io(se, &io, fd_); err != 0)
    return Error(-err, "cannot attach to the FUSE session's descriptor");
  return Status::Ok();
}

ssize_t KernelChannel::ReadHook(int fd, void* buf, size_t len, void* userdata) {
  const ssize_t n = ::read(fd, buf, len);
  if (n >= static_cast<ssize_t>(sizeof(InHeader))) ChannelOf(userdata).NoteRequest(buf, static_cast<size_t>(n));
  return n;
}

void KernelChannel::NoteRequest(const void* buf, size_t len) {
  InHeader h;
  std::memcpy(&h, buf, sizeof h);
  if (h.opcode < kOpcodeLimit) requests_[h.opcode].fetch_add(1, std::memory_order_relaxed);
  if (h.opcode != kInit || len < sizeof h + offsetof(InitIn, flags2) + sizeof(uint32_t)) return;
  InitIn in;
  std::memset(&in, 0, sizeof in);
  std::memcpy(&in, static_cast<const char*>(buf) + sizeof h, std::min(sizeof in, len - sizeof h));
  uint64_t offered = in.flags;
  if (offered & kInitExt) offered |= static_cast<uint64_t>(in.flags2) << 32;
  offered_.store(offered);
  kernel_minor_.store(in.minor);
  init_unique_.store(h.unique);  // its reply is amended (WritevHook)
}

void KernelChannel::AmendInitReply(std::string& msg) {
  OutHeader h;
  std::memcpy(&h, msg.data(), sizeof h);
  if (h.error != 0) return;
  constexpr size_t kNeeded = sizeof h + offsetof(InitOut, max_stack_depth) + sizeof(uint32_t);
  if (msg.size() < kNeeded) {
    LogError("the INIT reply is too short (" + std::to_string(msg.size()) + " bytes) to ask for passthrough");
    return;
  }
  InitOut out;
  std::memset(&out, 0, sizeof out);
  std::memcpy(&out, msg.data() + sizeof h, std::min(sizeof out, msg.size() - sizeof h));
  uint64_t agreed = out.flags;
  if (agreed & kInitExt) agreed |= static_cast<uint64_t>(out.flags2) << 32;
  const uint64_t offered = offered_.load();
  if (wants_.passthrough && (offered & kPassthrough)) {
    if (agreed & kWritebackCache) {
      LogError("passthrough: off, the mount uses the writeback cache, which the kernel does not allow with it");
    } else {
      agreed |= kPassthrough;
      out.max_stack_depth = wants_.max_stack_depth;
      passthrough_.store(true);
    }
  }
  if (wants_.killpriv_v2 && (offered & kHandleKillprivV2)) {
    agreed |= kHandleKillprivV2;
    killpriv_v2_.store(true);
  }
  if (agreed >> 32) agreed |= kInitExt;
  out.flags = static_cast<uint32_t>(agreed);
  out.flags2 = static_cast<uint32_t>(agreed >> 32);
  std::memcpy(msg.data() + sizeof h, &out, std::min(sizeof out, msg.size() - sizeof h));
}

ssize_t KernelChannel::WritevHook(int fd, struct iovec* iov, int count, void* userdata) {
  KernelChannel& self = ChannelOf(userdata);
  const uint64_t init = self.init_unique_.load(std::memory_order_relaxed);
  if (pending_backing_id == 0 && init == 0) return ::writev(fd, iov, count);
  std::string msg = Gather(iov, count);
  if (msg.size() < sizeof(OutHeader)) return ::writev(fd, iov, count);
  OutHeader h;
  std::memcpy(&h, msg.data(), sizeof h);
  if (init != 0 && h.unique == init) {
    self.AmendInitReply(msg);
    self.init_unique_.store(0);
    return WriteWhole(fd, msg);
  }
  if (pending_backing_id != 0 && h.error == 0 && msg.size() >= sizeof h + sizeof(OpenOut)) {
    // OPEN's reply is fuse_open_out; CREATE's is fuse_entry_out then fuse_open_out.
    OpenOut open;
    char* at = msg.data() + msg.size() - sizeof open;
    std::memcpy(&open, at, sizeof open);
    open.open_flags = (open.open_flags | kOpenPassthrough) & ~(kOpenKeepCache | kOpenDirectIo);
    open.backing_id = pending_backing_id;
    std::memcpy(at, &open, sizeof open);
    pending_backing_id = 0;
    return WriteWhole(fd, msg);
  }
  return WriteWhole(fd, msg);
}

ssize_t KernelChannel::SpliceSendHook(int fdin, off_t* offin, int fdout, off_t* offout, size_t len,
                                      unsigned int flags, void*) {
  return ::splice(fdin, offin, fdout, offout, len, flags);
}

Result<int32_t> KernelChannel::OpenBacking(int fd) {
  BackingMap map;
  std::memset(&map, 0, sizeof map);
  map.fd = fd;
  const int id = ::ioctl(fd_, kDevIocBackingOpen, &map);
  if (id < 0) return Error::FromErrno("FUSE_DEV_IOC_BACKING_OPEN");
  if (id == 0) return Error(EIO, "FUSE_DEV_IOC_BACKING_OPEN returned backing id 0");
  return static_cast<int32_t>(id);
}

void KernelChannel::CloseBacking(int32_t backing_id) {
  uint32_t id = static_cast<uint32_t>(backing_id);
  if (::ioctl(fd_, kDevIocBackingClose, &id) != 0 && errno != ENOTCONN)
    LogError("FUSE_DEV_IOC_BACKING_CLOSE of backing id " + std::to_string(backing_id) + ": " + std::strerror(errno));
}

KernelChannel::PassthroughReply::PassthroughReply(int32_t backing_id) { pending_backing_id = backing_id; }

KernelChannel::PassthroughReply::~PassthroughReply() { pending_backing_id = 0; }

std::vector<std::pair<std::string, uint64_t>> KernelChannel::RequestCounts() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (uint32_t op = 0; op < kOpcodeLimit; ++op) {
    const uint64_t n = requests_[op].load(std::memory_order_relaxed);
    if (n > 0) out.emplace_back(OpcodeName(op) ? OpcodeName(op) : "OPCODE_" + std::to_string(op), n);
  }
  return out;
}

}  // namespace graphfs
