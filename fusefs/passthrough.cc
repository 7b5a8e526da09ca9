#include "fusefs/passthrough.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "common/log.h"
#include "common/unique_fd.h"
#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

bool HasCapSysAdmin() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  return data[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32));
}

// Filesystems that stack on others (their superblock's stacking depth is 1): backing
// files on them need the FUSE mount to allow a depth of 2.
bool IsStackedFilesystem(const std::string& path) {
  constexpr long kOverlayfsMagic = 0x794c7630;
  constexpr long kEcryptfsMagic = 0xf15f;
  struct statfs s;
  if (::statfs(path.c_str(), &s) != 0) return false;
  return s.f_type == kOverlayfsMagic || s.f_type == kEcryptfsMagic;
}

}  // namespace

void Passthrough::Configure(bool enabled, const std::string& source) {
  enabled_ = enabled;
  wants_.passthrough = enabled;
  // The daemon clears setuid/setgid itself (KillSetidBits in fusefs/ops_common.cc), so the
  // kernel does not ask for security.capability before every write.
  wants_.killpriv_v2 = true;
  wants_.max_stack_depth = IsStackedFilesystem(source) ? kernel_abi::kMaxStackDepth : 1;
  if (enabled && !HasCapSysAdmin()) {
    wants_.passthrough = false;
    off_reason_ = "the daemon lacks CAP_SYS_ADMIN, which the kernel requires to open backing files (mount as root)";
  }
}

void Passthrough::OnInit(const KernelChannel& channel) {
  if (!enabled_) {
    off_reason_ = "passthrough=off";
    return;
  }
  if (off_reason_.empty() && !channel.kernel_offers_passthrough())
    off_reason_ = "the kernel does not offer FUSE passthrough (it needs Linux 6.9 or later built with "
                  "CONFIG_FUSE_PASSTHROUGH; protocol 7." + std::to_string(channel.kernel_minor()) + " here)";
  if (!off_reason_.empty()) LogError("passthrough: off, " + off_reason_ + "; ordinary files are served by the daemon");
}

void Passthrough::LogOnce(const std::string& message) {
  std::lock_guard<std::mutex> lock(log_mu_);
  if (logged_.find(message + "\n") != std::string::npos) return;
  logged_ += message + "\n";
  LogError(message);
}

int32_t Passthrough::Acquire(KernelChannel& channel, Inode& inode, int fd, int flags) {
  std::lock_guard<std::mutex> lock(inode.mu);
  auto through_daemon = [&](int cause) {
    if (cause < kFallbackCount) fallbacks_[cause].fetch_add(1, std::memory_order_relaxed);
    ++inode.daemon_opens;
    daemon_opens_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  };
  if (!enabled_ || !channel.passthrough() || backing_refused_.load()) return through_daemon(kFallbackCount);
  // The kernel fails a passthrough open of an inode that has opens in the page-cache mode.
  if (inode.daemon_opens > 0) return through_daemon(kBusy);
  if (inode.backing_id > 0) {
    ++inode.passthrough_opens;
    open_files_.fetch_add(1, std::memory_order_relaxed);
    opened_.fetch_add(1, std::memory_order_relaxed);
    return inode.backing_id;
  }
  // Writes in passthrough never reach the daemon, which clears setuid/setgid bits on writes
  // by other users (HANDLE_KILLPRIV_V2): such files stay on the daemon's path.
  struct stat st;
  if (::fstat(fd, &st) != 0 || (st.st_mode & (S_ISUID | S_ISGID))) return through_daemon(kSetid);
  if (flags & O_DIRECT) {
    // The kernel opens the backing file with the caller's flags; a filesystem without
    // O_DIRECT would fail the open. Such files stay on the daemon's path.
    UniqueFd probe(::open(ProcPath(fd).c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
    if (!probe.valid() && errno == EINVAL) return through_daemon(kDirectRefused);
  }
  auto id = channel.OpenBacking(fd);
  if (!id.ok()) {
    if (id.error().code() == EPERM) {
      backing_refused_.store(true);
      LogOnce("passthrough: off for this mount, the kernel refused a backing file (" + id.error().message() +
              "; it needs CAP_SYS_ADMIN); ordinary files are served by the daemon");
    } else {
      LogOnce("passthrough: a backing file was refused (" + id.error().message() +
              (id.error().code() == ELOOP ? ", the file lies on a stacked filesystem" : "") +
              "); such files are served by the daemon");
    }
    return through_daemon(kBackingFailed);
  }
  inode.backing_id = *id;
  inode.passthrough_opens = 1;
  backing_ids_.fetch_add(1, std::memory_order_relaxed);
  open_files_.fetch_add(1, std::memory_order_relaxed);
  opened_.fetch_add(1, std::memory_order_relaxed);
  return *id;
}

void Passthrough::Release(KernelChannel& channel, Inode& inode, bool passthrough) {
  std::lock_guard<std::mutex> lock(inode.mu);
  if (!passthrough) {
    if (inode.daemon_opens > 0) --inode.daemon_opens;
    return;
  }
  if (inode.passthrough_opens > 0 && --inode.passthrough_opens == 0) {
    channel.CloseBacking(inode.backing_id);
    inode.backing_id = 0;
    backing_ids_.fetch_sub(1, std::memory_order_relaxed);
  }
  // Last, so that stats showing no open file also show its backing id closed.
  open_files_.fetch_sub(1, std::memory_order_seq_cst);
}

void Passthrough::AddStats(const KernelChannel& channel, nlohmann::json& stats) const {
  const bool active = enabled_ && channel.passthrough() && !backing_refused_.load();
  nlohmann::json j = {
      {"mode", enabled_ ? "auto" : "off"},
      {"active", active},
      {"open_files", open_files_.load()},
      {"backing_ids", backing_ids_.load()},
      {"opened", opened_.load()},
      {"daemon_opens", daemon_opens_.load()},
      {"fallbacks",
       {{"setid", fallbacks_[kSetid].load()},
        {"busy", fallbacks_[kBusy].load()},
        {"direct_refused", fallbacks_[kDirectRefused].load()},
        {"backing_failed", fallbacks_[kBackingFailed].load()}}},
      {"bytes_counted", false},
      {"note",
       "the kernel reads, writes and maps files open in passthrough itself: their bytes are not in "
       "requests.bytes_read or requests.bytes_written, and not in the cache"}};
  if (!active) j["off_because"] = backing_refused_.load() ? "the kernel refused backing files (EPERM)" : off_reason_;
  stats["passthrough"] = std::move(j);
}

}  // namespace graphfs
