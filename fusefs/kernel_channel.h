// The daemon's side of /dev/fuse, below libfuse: graphfs reads requests and writes replies
// itself (libfuse's custom I/O hooks, fuse_session_custom_io), so that it can
//  - count every request the kernel sends, by opcode (`.graphfs/stats`, "kernel_requests");
//  - negotiate what libfuse 3.14 cannot: FUSE passthrough (protocol 7.40, Linux >= 6.9)
//    and HANDLE_KILLPRIV_V2, by amending the INIT reply;
//  - hand an OPEN or CREATE reply a backing file (FOPEN_PASSTHROUGH and its id), after
//    which the kernel reads, writes and maps that open file without the daemon.
// Replies libfuse splices (large reads) go through the splice hook unchanged; INIT, OPEN
// and CREATE replies are never spliced.
#pragma once

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse_lowlevel.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "fusefs/kernel_abi.h"

namespace graphfs {

class KernelChannel {
 public:
  struct Wants {
    bool passthrough = false;      // ask for FUSE passthrough if the kernel offers it
    uint32_t max_stack_depth = 1;  // of backing files' filesystems (1: not stacked; 2: overlayfs)
    bool killpriv_v2 = false;      // the daemon clears setuid/setgid on write and truncate
  };

  // Puts the hooks between libfuse and the session's descriptor; after fuse_session_mount,
  // before the loop. The hooks find the channel from the session's userdata through
  // ChannelOf (below).
  Status Attach(fuse_session* se, const Wants& wants);

  // What INIT offered and what the reply agreed to (known once INIT is answered).
  bool kernel_offers_passthrough() const { return offered_.load() & kernel_abi::kPassthrough; }
  bool passthrough() const { return passthrough_.load(); }
  bool killpriv_v2() const { return killpriv_v2_.load(); }
  uint32_t kernel_minor() const { return kernel_minor_.load(); }

  // FUSE_DEV_IOC_BACKING_OPEN / _CLOSE on the session's descriptor: a backing id (> 0)
  // for an open descriptor of a backing file, and its release.
  Result<int32_t> OpenBacking(int fd);
  void CloseBacking(int32_t backing_id);

  // The OPEN or CREATE reply this thread sends while the object lives is amended to open
  // the file in passthrough with `backing_id` (0: left as it is). Whether the kernel took
  // the reply is what fuse_reply_open/_create return.
  class PassthroughReply {
   public:
    explicit PassthroughReply(int32_t backing_id);
    ~PassthroughReply();
  };

  // Requests received so far, by opcode name, in opcode order (opcodes seen only).
  std::vector<std::pair<std::string, uint64_t>> RequestCounts() const;

 private:
  static ssize_t ReadHook(int fd, void* buf, size_t len, void* userdata);
  static ssize_t WritevHook(int fd, struct iovec* iov, int count, void* userdata);
  static ssize_t SpliceSendHook(int fdin, off_t* offin, int fdout, off_t* offout, size_t len, unsigned int flags,
                                void* userdata);
  void NoteRequest(const void* buf, size_t len);
  // Amends the INIT reply in `msg` (the whole message).
  void AmendInitReply(std::string& msg);

  int fd_ = -1;
  Wants wants_;
  std::array<std::atomic<uint64_t>, kernel_abi::kOpcodeLimit> requests_{};
  std::atomic<uint64_t> offered_{0};        // INIT flags the kernel offered (64 bits)
  std::atomic<uint64_t> init_unique_{0};    // INIT's request id, until its reply is amended
  std::atomic<uint32_t> kernel_minor_{0};
  std::atomic<bool> passthrough_{false};
  std::atomic<bool> killpriv_v2_{false};
};

// The channel of the session whose userdata this is (defined by the daemon: the session's
// userdata is its GraphFs).
KernelChannel& ChannelOf(void* userdata);

}  // namespace graphfs
