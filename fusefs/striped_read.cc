#include "fusefs/striped_read.h"

#include <fstream>
#include <mutex>
#include <string>
#include <unordered_map>

#include "fusefs/file_handle.h"
#include "fusefs/graphfs.h"

namespace graphfs {

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

void ReadStriped(fuse_req_t req, FileHandle& h, size_t size, off_t offset) {
  GraphFs& fs = Fs(req);
  volume::VolumeFile& f = *h.striped;
  const uint64_t off = static_cast<uint64_t>(offset);
  if (off >= f.size() || size == 0) return (void)fuse_reply_buf(req, nullptr, 0);
  fs.counters.striped_reads.fetch_add(1, std::memory_order_relaxed);
  auto got = fs.volume->Read(f, h.streams, off, size, ProcessOfThread(fuse_req_ctx(req)->pid), ThreadBuffer(size));
  if (!got.ok()) {
    LogError(got.error().message());
    return ReplyErr(req, got.error().code());
  }
  fs.counters.bytes_read.fetch_add(got->bytes(), std::memory_order_relaxed);
  fs.counters.Delivered(ReadPath::kStriped, got->bytes());
  const std::vector<iovec>& pieces = got->pieces();
  fuse_reply_iov(req, pieces.data(), static_cast<int>(pieces.size()));
  // `got` unpins its cache units after the reply has been written.
}

}  // namespace graphfs
