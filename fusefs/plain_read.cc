// READ of an ordinary file the daemon serves (read_paths.h): one not in passthrough.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "fusefs/file_handle.h"
#include "fusefs/graphfs.h"
#include "fusefs/read_paths.h"

namespace graphfs {

void ReadPlain(fuse_req_t req, FileHandle& h, size_t size, off_t offset) {
  GraphFs& fs = Fs(req);
  fs.counters.plain_reads.fetch_add(1, std::memory_order_relaxed);
  const bool direct = h.direct.valid() && offset % kDirectAlign == 0 && size % kDirectAlign == 0;
  const int fd = direct ? h.direct.get() : h.fd.get();
  if (!direct) {
    // Large replies are spliced from the descriptor by libfuse. It would pread() the
    // descriptor itself for a reply under two pages, and again after a splice cut short
    // by EOF; those reads are done here instead, and the request is cut at EOF, so that
    // libfuse never touches the descriptor after this handler's last use of it.
    struct stat st;
    if (::fstat(fd, &st) != 0) return ReplyErr(req, errno);
    const uint64_t left = offset < st.st_size ? static_cast<uint64_t>(st.st_size - offset) : 0;
    size = static_cast<size_t>(std::min<uint64_t>(size, left));
  }
  if (direct || size < kSpliceMin) {
    AlignedBuffer& buf = ThreadBuffer(std::max<size_t>(size, 1));
    if (!buf.ok()) return ReplyErr(req, ENOMEM);
    ssize_t n = size == 0 ? 0 : ::pread(fd, buf.data(), size, offset);
    const int err = errno;
    h.MarkLastUse();
    if (n < 0) return ReplyErr(req, err);
    fs.counters.bytes_read.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    fs.counters.Delivered(ReadPath::kOrdinary, static_cast<uint64_t>(n));
    return (void)fuse_reply_buf(req, buf.data(), static_cast<size_t>(n));
  }
  fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
  buf.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
  buf.buf[0].fd = fd;
  buf.buf[0].pos = offset;
  h.MarkLastUse();
  fs.counters.bytes_read.fetch_add(size, std::memory_order_relaxed);
  fs.counters.Delivered(ReadPath::kOrdinary, size);
  return (void)fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

}  // namespace graphfs
