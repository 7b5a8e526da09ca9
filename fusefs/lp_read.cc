// READ of a job's view of a logical partition, `lp-SEQ` (read_paths.h): its pieces gathered
// straight from the LP's memory into the reply.
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/buffer_pool.h"
#include "fusefs/graphfs.h"
#include "fusefs/read_paths.h"

namespace graphfs {
namespace {
constexpr uint64_t kGatherIdleBytes = 4ull << 20;  // a few replies' worth (max_read is 1 MiB)
}  // namespace

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
    // From buffers libfuse's workers share: a fresh megabyte for every such read costs its page
    // faults, and one kept per worker (as first written) stayed resident in each of the dozens
    // libfuse starts, memory the mount's budget then took out of the frames.
    static BufferPool* gather = new BufferPool(kGatherIdleBytes);  // never destroyed: used until exit
    AlignedBuffer gathered = gather->Take(end - off);
    if (!gathered.ok()) return (void)fuse_reply_err(req, ENOMEM);
    char* at = gathered.data();
    for (const iovec& v : iov) at = static_cast<char*>(std::memcpy(at, v.iov_base, v.iov_len)) + v.iov_len;
    fuse_reply_buf(req, gathered.data(), static_cast<size_t>(at - gathered.data()));
    gather->Give(std::move(gathered));
    return;
  }
  fuse_reply_iov(req, iov.data(), static_cast<int>(iov.size()));
}

}  // namespace graphfs
