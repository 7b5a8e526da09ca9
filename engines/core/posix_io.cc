#include "engines/core/posix_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <new>

namespace graphfs::engine {

Result<UniqueFd> OpenFile(const std::string& path, int flags, mode_t mode) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0) return Error::FromErrno("open " + path);
  return UniqueFd(fd);
}

Result<UniqueFd> OpenForStreaming(const std::string& path, bool direct, bool* got_direct) {
  *got_direct = false;
  if (direct) {
    int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd >= 0) {
      *got_direct = true;
      return UniqueFd(fd);
    }
    if (errno != EINVAL) return Error::FromErrno("open " + path + " (O_DIRECT)");
  }
  return OpenFile(path, O_RDONLY);
}

Result<std::string> ReadWholeFile(const std::string& path) {
  auto fd = OpenFile(path, O_RDONLY);
  if (!fd.ok()) return fd.error();
  std::string data;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd->get(), buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::FromErrno("read " + path);
    }
    if (n == 0) break;
    data.append(buffer, static_cast<size_t>(n));
  }
  return data;
}

Status WriteWholeFile(const std::string& path, const void* data, size_t bytes) {
  auto fd = OpenFile(path, O_WRONLY | O_CREAT | O_TRUNC);
  if (!fd.ok()) return fd.error();
  GRAPHFS_RETURN_IF_ERROR(WriteAll(fd->get(), data, bytes, path));
  if (::close(fd->release()) != 0) return Error::FromErrno("close " + path);
  return Status::Ok();
}

Result<uint64_t> FileSize(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Error::FromErrno("stat " + path);
  return static_cast<uint64_t>(st.st_size);
}

Result<size_t> PreadUpTo(int fd, void* buffer, size_t length, uint64_t offset, uint64_t expected_end,
                         const std::string& what) {
  size_t got = 0;
  const uint64_t must_have = expected_end > offset ? std::min<uint64_t>(length, expected_end - offset) : 0;
  while (got < length) {
    ssize_t n = ::pread(fd, static_cast<char*>(buffer) + got, length - got, static_cast<off_t>(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::FromErrno("pread " + what + " at " + std::to_string(offset + got));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
    if (got >= must_have && offset + got >= expected_end) break;  // reached the logical end
  }
  if (got < must_have) {
    return Error(EIO, what + ": data ends at byte " + std::to_string(offset + got) + ", expected at least " +
                          std::to_string(expected_end) + " (file truncated?)");
  }
  return got;
}

Status PreadExact(int fd, void* buffer, size_t length, uint64_t offset, const std::string& what) {
  auto got = PreadUpTo(fd, buffer, length, offset, offset + length, what);
  if (!got.ok()) return got.error();
  return Status::Ok();
}

Status PwriteAll(int fd, const void* buffer, size_t length, uint64_t offset, const std::string& what) {
  size_t done = 0;
  while (done < length) {
    ssize_t n = ::pwrite(fd, static_cast<const char*>(buffer) + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::FromErrno("pwrite " + what);
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status WriteAll(int fd, const void* buffer, size_t length, const std::string& what) {
  size_t done = 0;
  while (done < length) {
    ssize_t n = ::write(fd, static_cast<const char*>(buffer) + done, length - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::FromErrno("write " + what);
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

void AlignedBuffer::Free::operator()(char* p) const { std::free(p); }

AlignedBuffer::AlignedBuffer(size_t bytes) : size_(bytes) {
  void* p = nullptr;
  if (::posix_memalign(&p, 4096, bytes == 0 ? 4096 : bytes) != 0) throw std::bad_alloc();
  data_.reset(static_cast<char*>(p));
}

}  // namespace graphfs::engine
