#include "grid/posix_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <new>

namespace graphfs::grid {

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

namespace {

Result<std::string> ReadToEnd(int fd, const std::string& path) {
  std::string data;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::FromErrno("read " + path);
    }
    if (n == 0) break;
    data.append(buffer, static_cast<size_t>(n));
  }
  return data;
}

// Empty for a regular file, else what it is instead.
std::string NotRegular(const struct stat& st) {
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "a device";
  return "not a regular file";
}

Error NotRegularError(const std::string& path, const struct stat& st, const std::string& what) {
  return Error(S_ISDIR(st.st_mode) ? EISDIR : EINVAL, path + ": is " + what + ", expected a regular file");
}

}  // namespace

Result<std::string> ReadWholeFile(const std::string& path) {
  auto fd = OpenFile(path, O_RDONLY);
  if (!fd.ok()) return fd.error();
  return ReadToEnd(fd->get(), path);
}

Result<UniqueFd> OpenRegularFile(const std::string& path, int flags) {
  auto fd = OpenFile(path, flags | O_NONBLOCK);
  if (!fd.ok()) return fd.error();
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return Error::FromErrno("stat " + path);
  if (std::string what = NotRegular(st); !what.empty()) return NotRegularError(path, st, what);
  if (!(flags & O_NONBLOCK)) {
    const int now = ::fcntl(fd->get(), F_GETFL);
    if (now < 0 || ::fcntl(fd->get(), F_SETFL, now & ~O_NONBLOCK) != 0) return Error::FromErrno("fcntl " + path);
  }
  return fd;
}

Result<uint64_t> RegularFileSize(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Error::FromErrno("stat " + path);
  if (std::string what = NotRegular(st); !what.empty()) return NotRegularError(path, st, what);
  return static_cast<uint64_t>(st.st_size);
}

Result<std::string> ReadRegularFile(const std::string& path, uint64_t max_bytes) {
  auto fd = OpenRegularFile(path, O_RDONLY);
  if (!fd.ok()) return fd.error();
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return Error::FromErrno("stat " + path);
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return Error(EINVAL, path + ": has " + std::to_string(st.st_size) + " bytes, expected at most " +
                             std::to_string(max_bytes));
  }
  return ReadToEnd(fd->get(), path);
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

}  // namespace graphfs::grid
