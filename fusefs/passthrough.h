// Which ordinary files the kernel reads and writes itself (FUSE passthrough, Linux >= 6.9):
// `-o passthrough=auto` (default) opens every ordinary file so whenever the kernel and the
// daemon's privileges allow; `off` keeps today's path through the daemon for all.
//
// The kernel's rules, which this class keeps: an inode's opens are all passthrough or all
// not at a time, and all its passthrough opens share one backing id; so the id is taken at
// the first passthrough open of an inode and given back at its last release. Striped files,
// the control directory and job files are never passthrough (the daemon makes their bytes).
//
// What passthrough costs: the daemon never sees those bytes. They are not counted in
// `requests.bytes_read` / `bytes_written`, never enter the chunk cache, and a fault injected
// on a disk does not reach them (ordinary files are not on the disk set anyway).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "fusefs/kernel_channel.h"

namespace graphfs {

struct Inode;

class Passthrough {
 public:
  // Before mounting: `enabled` is passthrough=auto; `source` the source directory.
  void Configure(bool enabled, const std::string& source);
  // What to ask of the kernel in the INIT reply.
  KernelChannel::Wants wants() const { return wants_; }
  // In libfuse's init callback (the kernel's offer is known, the reply not yet sent): logs
  // once why passthrough is not used, if it is not.
  void OnInit(const KernelChannel& channel);

  // An open of the ordinary file `inode` (descriptor `fd` of the backing file, open flags
  // `flags`): the backing id to open it with in passthrough, or 0 to serve it through the
  // daemon. Every call is paired with a Release of the same kind.
  int32_t Acquire(KernelChannel& channel, Inode& inode, int fd, int flags);
  void Release(KernelChannel& channel, Inode& inode, bool passthrough);

  // `.graphfs/stats`, "passthrough".
  void AddStats(const KernelChannel& channel, nlohmann::json& stats) const;

 private:
  // Opens served by the daemon although passthrough is on, by cause.
  enum Fallback { kSetid, kBusy, kDirectRefused, kBackingFailed, kFallbackCount };
  void LogOnce(const std::string& message);

  bool enabled_ = false;
  KernelChannel::Wants wants_;
  std::string off_reason_;  // why not, when not
  std::atomic<bool> backing_refused_{false};  // BACKING_OPEN said EPERM: off for the mount
  std::atomic<uint64_t> open_files_{0};    // open in passthrough now
  std::atomic<uint64_t> backing_ids_{0};   // backing ids held now (one per inode)
  std::atomic<uint64_t> opened_{0};        // opens in passthrough so far
  std::atomic<uint64_t> daemon_opens_{0};  // ordinary files opened through the daemon so far
  std::atomic<uint64_t> fallbacks_[kFallbackCount]{};
  std::mutex log_mu_;
  std::string logged_;  // messages logged once, newline-separated
};

}  // namespace graphfs
