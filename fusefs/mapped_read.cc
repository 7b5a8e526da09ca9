// READ of a graph version's extent map (read_paths.h).
#include <algorithm>
#include <new>
#include <vector>

#include "fusefs/file_handle.h"
#include "fusefs/graphfs.h"
#include "fusefs/read_paths.h"

namespace graphfs {

// An extent map's bytes: ranges of plain pieces spliced from their descriptors (no copy in the
// daemon), ranges of striped pieces (a striped graph's version) read through the volume — its
// cache units pinned until the reply is written; a read that spans pieces is one reply of
// several buffers. Small reads of plain pieces are copied.
void ReadMapped(fuse_req_t req, FileHandle& h, size_t size, off_t offset) {
  GraphFs& fs = Fs(req);
  const std::shared_ptr<const volume::MappedFile> file = h.mapped;
  const std::vector<volume::MappedFile::Piece> pieces = file->Pieces(static_cast<uint64_t>(offset), size);
  uint64_t total = 0;
  bool striped = false;
  for (const auto& p : pieces) {
    total += p.length;
    striped |= p.striped != nullptr;
  }
  fs.counters.bytes_read.fetch_add(total, std::memory_order_relaxed);
  fs.counters.Delivered(ReadPath::kMapped, total);
  if (!pieces.empty() && (total >= kSpliceMin || striped)) {
    std::vector<fuse_buf> bufs;
    std::vector<volume::PinnedRead> pinned;  // unpinned after the reply
    pinned.reserve(pieces.size());
    std::vector<AlignedBuffer> scratch;      // one per striped range beyond the first
    scratch.reserve(pieces.size());
    const uint32_t pid = ProcessOfThread(fuse_req_ctx(req)->pid);
    for (const auto& p : pieces) {
      if (p.striped == nullptr) {
        fuse_buf b{};
        b.size = p.length;
        b.flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
        b.fd = p.fd;
        b.pos = static_cast<off_t>(p.offset);
        bufs.push_back(b);
        continue;
      }
      const size_t aligned = (p.length + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
      AlignedBuffer& buffer = pinned.empty() ? ThreadBuffer(p.length) : scratch.emplace_back(aligned);
      auto got = fs.volume->Read(*p.striped, h.streams, p.offset, p.length, pid, buffer);
      if (!got.ok()) {
        LogError("read " + file->path() + ": " + got.error().message());
        return ReplyErr(req, got.error().code());
      }
      if (got->bytes() != p.length) {
        LogError("read " + file->path() + ": a piece ended early");
        return ReplyErr(req, EIO);
      }
      pinned.push_back(std::move(*got));
      for (const iovec& v : pinned.back().pieces()) {
        fuse_buf b{};
        b.size = v.iov_len;
        b.mem = v.iov_base;
        bufs.push_back(b);
      }
    }
    // fuse_bufvec ends in a one-element array; the others follow it in the same allocation.
    std::vector<char> storage(sizeof(fuse_bufvec) + (bufs.size() - 1) * sizeof(fuse_buf));
    auto* buf = new (storage.data()) fuse_bufvec(FUSE_BUFVEC_INIT(0));
    buf->count = bufs.size();
    for (size_t k = 0; k < bufs.size(); ++k) buf->buf[k] = bufs[k];
    h.MarkLastUse();
    return (void)fuse_reply_data(req, buf, FUSE_BUF_SPLICE_MOVE);
  }
  AlignedBuffer& buf = ThreadBuffer(std::max<uint64_t>(total, 1));
  if (!buf.ok()) return ReplyErr(req, ENOMEM);
  auto n = file->Read(buf.data(), total, static_cast<uint64_t>(offset));
  h.MarkLastUse();
  if (!n.ok()) {
    LogError("read: " + n.error().message());
    return ReplyErr(req, n.error().code());
  }
  fuse_reply_buf(req, buf.data(), static_cast<size_t>(*n));
}

}  // namespace graphfs
