// READ of a striped file (read_paths.h).
#include "fusefs/file_handle.h"
#include "fusefs/graphfs.h"
#include "fusefs/read_paths.h"

namespace graphfs {

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
