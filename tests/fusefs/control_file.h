// What the parity mount tests do through the mount's own files: a file read with O_DIRECT (the
// kernel's page cache keeps nothing that would hide what the daemon serves now), and a line
// written to a control file (`.graphfs/disks`) in one write(2).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace graphfs::testing {

// The whole file read with O_DIRECT; "error: ..." when a read fails.
inline std::string ReadDirect(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT);
  if (fd < 0) return std::string("error: open: ") + std::strerror(errno);
  constexpr size_t kChunk = 1 << 20;
  void* buf = nullptr;
  if (::posix_memalign(&buf, 4096, kChunk) != 0) {
    ::close(fd);
    return "error: memory";
  }
  std::string out;
  while (true) {
    const ssize_t n = ::read(fd, buf, kChunk);
    if (n < 0) {
      out = std::string("error: read: ") + std::strerror(errno);
      break;
    }
    if (n == 0) break;
    out.append(static_cast<const char*>(buf), static_cast<size_t>(n));
  }
  ::free(buf);
  ::close(fd);
  return out;
}

// Writes `line` to the control file in one write(2); 0 or the errno it failed with.
inline int WriteControl(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) return errno;
  const ssize_t n = ::write(fd, line.data(), line.size());
  const int err = n < 0 ? errno : 0;
  ::close(fd);
  return err;
}

}  // namespace graphfs::testing
