#include "striping/local_disk_backend.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/unique_fd.h"
#include "striping/part_io.h"

namespace graphfs {

namespace {

class LocalDiskFile : public DiskFile {
 public:
  LocalDiskFile(std::string path, UniqueFd fd, UniqueFd direct, bool writable)
      : path_(std::move(path)), fd_(std::move(fd)), direct_(std::move(direct)), writable_(writable) {}

  Result<uint64_t> Read(uint64_t offset, std::span<char> buf) override {
    return ReadFull(fd_.get(), buf.data(), buf.size(), offset, What("read", offset));
  }
  Status Write(uint64_t offset, std::span<const char> data) override {
    if (!writable_) return Error(EBADF, What("write", offset) + ": opened read-only");
    return WriteAll(fd_.get(), data.data(), data.size(), offset, What("write", offset));
  }
  Status Sync() override {
    if (::fsync(fd_.get()) != 0) return Error::FromErrno("fsync of " + path_);
    return Status::Ok();
  }
  Result<uint64_t> Size() const override {
    struct stat st;
    if (::fstat(fd_.get(), &st) != 0) return Error::FromErrno("stat of " + path_);
    return static_cast<uint64_t>(st.st_size);
  }
  Status Truncate(uint64_t size) override {
    if (!writable_) return Error(EBADF, "truncate of " + path_ + ": opened read-only");
    if (::ftruncate(fd_.get(), static_cast<off_t>(size)) != 0)
      return Error::FromErrno("truncate of " + path_ + " to " + std::to_string(size));
    return Status::Ok();
  }
  int native_fd() const override { return fd_.get(); }
  int native_direct_fd() const override { return direct_.get(); }
  const std::string& where() const override { return path_; }

 private:
  std::string What(const char* op, uint64_t offset) const {
    return std::string(op) + " of " + path_ + " at " + std::to_string(offset);
  }
  std::string path_;
  UniqueFd fd_;
  UniqueFd direct_;
  bool writable_;
};

Status SyncDirectory(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return Error::FromErrno("open directory " + dir);
  if (::fsync(fd.get()) != 0) return Error::FromErrno("fsync of directory " + dir);
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<LocalDiskBackend>> LocalDiskBackend::Open(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return Error::FromErrno("disk directory " + dir);
  if (!S_ISDIR(st.st_mode)) return Error(ENOTDIR, "disk directory " + dir + ": Not a directory");
  return std::unique_ptr<LocalDiskBackend>(new LocalDiskBackend(dir));
}

Result<std::unique_ptr<DiskFile>> LocalDiskBackend::Open(const std::string& file, const DiskFileOptions& options) {
  GRAPHFS_RETURN_IF_ERROR(CheckDiskFileName(file));
  const bool writable = options.writable || options.create;
  if (options.create && ::mkdir(parts_.c_str(), 0700) != 0 && errno != EEXIST)
    return Error::FromErrno("create " + parts_);
  const std::string path = PathOf(file);
  int flags = (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW;
  if (options.create) flags |= O_CREAT;
  UniqueFd fd(::open(path.c_str(), flags, 0600));
  if (!fd.valid()) return Error::FromErrno("open " + path);
  UniqueFd direct;
  if (options.direct_reads) {
    direct.reset(::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC | O_NOFOLLOW));
    // Filesystems without O_DIRECT (tmpfs) refuse it with EINVAL: reads stay buffered.
    if (!direct.valid() && errno != EINVAL) return Error::FromErrno("open " + path + " for O_DIRECT reads");
  }
  return std::unique_ptr<DiskFile>(new LocalDiskFile(path, std::move(fd), std::move(direct), writable));
}

Result<bool> LocalDiskBackend::Exists(const std::string& file) const {
  GRAPHFS_RETURN_IF_ERROR(CheckDiskFileName(file));
  struct stat st;
  if (::lstat(PathOf(file).c_str(), &st) == 0) return true;
  if (errno == ENOENT) return false;
  return Error::FromErrno("stat of " + PathOf(file));
}

Status LocalDiskBackend::Remove(const std::string& file) {
  GRAPHFS_RETURN_IF_ERROR(CheckDiskFileName(file));
  if (::unlink(PathOf(file).c_str()) != 0 && errno != ENOENT) return Error::FromErrno("remove " + PathOf(file));
  return Status::Ok();
}

Status LocalDiskBackend::SyncNames() {
  // DIR/parts/ holds the files' names; DIR holds parts/ itself, made at the first create.
  struct stat st;
  if (::stat(parts_.c_str(), &st) == 0) GRAPHFS_RETURN_IF_ERROR(SyncDirectory(parts_));
  return SyncDirectory(dir_);
}

}  // namespace graphfs
