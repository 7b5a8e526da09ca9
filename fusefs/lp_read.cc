// READ of a job's view of a logical partition, `lp-SEQ` (read_paths.h): its pieces gathered
// straight from the LP's memory into the reply.
#include <algorithm>
#include <string>
#include <vector>

#include "fusefs/graphfs.h"
#include "fusefs/read_paths.h"

namespace graphfs {

void ReadLp(fuse_req_t req, const volume::LpView& view, size_t size, uint64_t off) {
  // The job's view, packed: gather its pieces straight from the LP's memory. A view of
  // runs may have more pieces in one read than a reply can carry as an iovec (the kernel
  // takes at most UIO_MAXIOV): those are copied into one buffer.
  std::vector<iovec> iov;
  view.Gather(off, size, &iov);
  if (iov.empty()) return (void)fuse_reply_buf(req, nullptr, 0);
  const uint64_t end = std::min<uint64_t>(off + size, view.bytes());
  Fs(req).counters.Delivered(ReadPath::kLp, end - off);
  constexpr size_t kMaxPieces = 256;
  if (iov.size() > kMaxPieces) {
    // Kept per FUSE thread: a fresh megabyte for every such read costs its page faults.
    thread_local std::string gathered;
    gathered.clear();
    gathered.reserve(end - off);
    for (const iovec& v : iov) gathered.append(static_cast<const char*>(v.iov_base), v.iov_len);
    return (void)fuse_reply_buf(req, gathered.data(), gathered.size());
  }
  fuse_reply_iov(req, iov.data(), static_cast<int>(iov.size()));
}

}  // namespace graphfs
