// The few pieces of the kernel's FUSE protocol (include/uapi/linux/fuse.h) that graphfs
// reads or writes itself, below libfuse: the message headers, INIT, OPEN's reply, and the
// passthrough ioctls of protocol 7.40 (Linux 6.9), which Debian 12's headers and libfuse
// 3.14 do not have. Defined here, in our own namespace, so that nothing clashes with
// libfuse's or the system's copies; the sizes are checked against the ABI.
#pragma once

#include <sys/ioctl.h>

#include <cstdint>

namespace graphfs::kernel_abi {

// Opcodes graphfs looks at or names in stats (enum fuse_opcode).
enum Opcode : uint32_t {
  kLookup = 1, kForget = 2, kGetattr = 3, kSetattr = 4, kReadlink = 5, kSymlink = 6, kMknod = 8,
  kMkdir = 9, kUnlink = 10, kRmdir = 11, kRename = 12, kLink = 13, kOpen = 14, kRead = 15,
  kWrite = 16, kStatfs = 17, kRelease = 18, kFsync = 20, kSetxattr = 21, kGetxattr = 22,
  kListxattr = 23, kRemovexattr = 24, kFlush = 25, kInit = 26, kOpendir = 27, kReaddir = 28,
  kReleasedir = 29, kFsyncdir = 30, kGetlk = 31, kSetlk = 32, kSetlkw = 33, kAccess = 34,
  kCreate = 35, kInterrupt = 36, kBmap = 37, kDestroy = 38, kIoctl = 39, kPoll = 40,
  kNotifyReply = 41, kBatchForget = 42, kFallocate = 43, kReaddirplus = 44, kRename2 = 45,
  kLseek = 46, kCopyFileRange = 47, kSetupmapping = 48, kRemovemapping = 49, kSyncfs = 50,
  kTmpfile = 51, kStatx = 52,
};
constexpr uint32_t kOpcodeLimit = 53;  // counters are kept for opcodes below this
const char* OpcodeName(uint32_t opcode);  // "READ", ...; nullptr if unknown

struct InHeader {
  uint32_t len;
  uint32_t opcode;
  uint64_t unique;
  uint64_t nodeid;
  uint32_t uid;
  uint32_t gid;
  uint32_t pid;
  uint16_t total_extlen;
  uint16_t padding;
};
static_assert(sizeof(InHeader) == 40);

struct OutHeader {
  uint32_t len;
  int32_t error;
  uint64_t unique;
};
static_assert(sizeof(OutHeader) == 16);

struct InitIn {
  uint32_t major;
  uint32_t minor;
  uint32_t max_readahead;
  uint32_t flags;
  uint32_t flags2;  // only with kInitExt in flags
  uint32_t unused[11];
};
static_assert(sizeof(InitIn) == 64);

struct InitOut {
  uint32_t major;
  uint32_t minor;
  uint32_t max_readahead;
  uint32_t flags;
  uint16_t max_background;
  uint16_t congestion_threshold;
  uint32_t max_write;
  uint32_t time_gran;
  uint16_t max_pages;
  uint16_t map_alignment;
  uint32_t flags2;           // read by the kernel only with kInitExt in flags
  uint32_t max_stack_depth;  // 7.40; libfuse 3.14's unused[0]
  uint32_t unused[6];
};
static_assert(sizeof(InitOut) == 64);

struct OpenOut {
  uint64_t fh;
  uint32_t open_flags;
  int32_t backing_id;  // 7.40, with kOpenPassthrough; libfuse 3.14's padding
};
static_assert(sizeof(OpenOut) == 16);

// INIT flags (64 bits: flags | flags2 << 32).
constexpr uint64_t kWritebackCache = 1ull << 16;
constexpr uint64_t kHandleKillprivV2 = 1ull << 28;
constexpr uint64_t kInitExt = 1ull << 30;
constexpr uint64_t kPassthrough = 1ull << 37;

// fuse_open_out.open_flags
constexpr uint32_t kOpenDirectIo = 1u << 0;
constexpr uint32_t kOpenKeepCache = 1u << 1;
constexpr uint32_t kOpenPassthrough = 1u << 7;

// The kernel allows at most this stacking depth (FILESYSTEM_MAX_STACK_DEPTH).
constexpr uint32_t kMaxStackDepth = 2;

struct BackingMap {
  int32_t fd;
  uint32_t flags;
  uint64_t padding;
};
static_assert(sizeof(BackingMap) == 16);

constexpr unsigned long kDevIocMagic = 229;
constexpr unsigned long kDevIocBackingOpen = _IOW(kDevIocMagic, 1, BackingMap);
constexpr unsigned long kDevIocBackingClose = _IOW(kDevIocMagic, 2, uint32_t);

}  // namespace graphfs::kernel_abi
