#include "engines/core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include "engines/core/posix_io.h"

namespace graphfs::engine {

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    this->~MappedFile();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, std::max<size_t>(bytes_, 1));
  if (fd_ >= 0) ::close(fd_);
  data_ = nullptr;
  fd_ = -1;
}

Result<MappedFile> MappedFile::Create(const std::string& path, size_t bytes) {
  {
    auto fd = OpenFile(path, O_WRONLY | O_CREAT | O_TRUNC);
    if (!fd.ok()) return fd.error().Wrap("creating vertex state");
    if (::truncate(path.c_str(), static_cast<off_t>(bytes)) != 0) return Error::FromErrno("truncate " + path);
    // Written out (not left sparse) so later page faults do not allocate
    // blocks on the fly; 4 KiB at a time like GridGraph.
    static const char zeros[4096] = {};
    for (size_t done = 0; done < bytes;) {
      size_t n = std::min(bytes - done, sizeof(zeros));
      GRAPHFS_RETURN_IF_ERROR(WriteAll(fd->get(), zeros, n, path));
      done += n;
    }
  }
  MappedFile file;
  file.path_ = path;
  file.bytes_ = bytes;
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
