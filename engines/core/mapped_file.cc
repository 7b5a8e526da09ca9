#include "engines/core/mapped_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>

#include "grid/posix_io.h"

namespace graphfs::engine {

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Release();  // not this->~MappedFile(): that would also end path_'s life before it is assigned
    path_ = std::move(other.path_);
    lock_fd_ = std::exchange(other.lock_fd_, -1);
    fd_ = std::exchange(other.fd_, -1);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { Release(); }

void MappedFile::Release() {
  if (data_ != nullptr) ::munmap(data_, std::max<size_t>(bytes_, 1));
  if (fd_ >= 0) ::close(fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock, after the mapping is gone
  data_ = nullptr;
  fd_ = -1;
  lock_fd_ = -1;
}

namespace {

// Takes the file for this process: no other live MappedFile has it.
Status LockExclusive(int fd, const std::string& path) {
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) {
      return Error(EBUSY, path + " is in use by another process (another instance of this app on the same graph? "
                                 "give each its own --state-tag)");
    }
    return Error::FromErrno("flock " + path);
  }
  return Status::Ok();
}

// Filesystems that report no sizes (f_blocks 0) are not judged.
Status CheckFreeSpace(int fd, const std::string& path, size_t bytes) {
  struct statvfs st;
  if (::fstatvfs(fd, &st) != 0) return Error::FromErrno("statvfs " + path);
  const uint64_t free_bytes = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  if (st.f_blocks != 0 && bytes > free_bytes) {
    return Error(ENOSPC, path + ": vertex state needs " + std::to_string(bytes) + " bytes, its filesystem has " +
                             std::to_string(free_bytes) + " free (is the vertex count in meta right?)");
  }
  return Status::Ok();
}

}  // namespace

Result<MappedFile> MappedFile::Create(const std::string& path, size_t bytes) {
  MappedFile file;
  file.path_ = path;
  file.bytes_ = bytes;
  {
    // Not O_TRUNC: the file may be another process's live mapping until the lock says it is ours.
    auto fd = grid::OpenRegularFile(path, O_WRONLY | O_CREAT);
    if (!fd.ok()) return fd.error().Wrap("creating vertex state");
    GRAPHFS_RETURN_IF_ERROR(LockExclusive(fd->get(), path));
    if (::ftruncate(fd->get(), 0) != 0) return Error::FromErrno("truncate " + path);
    Status room = CheckFreeSpace(fd->get(), path, bytes);
    if (!room.ok()) {
      ::unlink(path.c_str());  // empty now, and ours: leave nothing behind
      return room.error();
    }
    if (::truncate(path.c_str(), static_cast<off_t>(bytes)) != 0) return Error::FromErrno("truncate " + path);
    // Written out (not left sparse) so later page faults do not allocate
    // blocks on the fly; 4 KiB at a time like GridGraph.
    static const char zeros[4096] = {};
    for (size_t done = 0; done < bytes;) {
      size_t n = std::min(bytes - done, sizeof(zeros));
      Status wrote = grid::WriteAll(fd->get(), zeros, n, path);
      if (!wrote.ok()) {
        ::unlink(path.c_str());  // a partial file (e.g. the disk filled meanwhile) frees its space
        return wrote.error();
      }
      done += n;
    }
    file.lock_fd_ = fd->release();
  }
  file.fd_ = ::open(path.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
  if (file.fd_ < 0 && errno == EINVAL) file.fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (file.fd_ < 0) return Error::FromErrno("open " + path);
  // A zero-length mapping is invalid; map one page so data() stays valid.
  void* p = ::mmap(nullptr, std::max<size_t>(bytes, 1), PROT_READ | PROT_WRITE, MAP_SHARED, file.fd_, 0);
  if (p == MAP_FAILED) return Error::FromErrno("mmap " + path);
  file.data_ = p;
  return file;
}

Status MappedFile::Sync() {
  if (data_ == nullptr || bytes_ == 0) return Status::Ok();
  if (::msync(data_, bytes_, MS_SYNC) != 0) return Error::FromErrno("msync " + path_);
  return Status::Ok();
}

}  // namespace graphfs::engine
