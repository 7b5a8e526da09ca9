#include "engines/core/replace_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <utility>

#include "grid/posix_io.h"

namespace graphfs::engine {

Result<FileReplacement> FileReplacement::Create(const std::string& path) {
  // The pid keeps two runs writing the same output from truncating each other's partial file.
  std::string partial = path + ".partial-" + std::to_string(::getpid());
  auto fd = grid::OpenFile(partial, O_WRONLY | O_CREAT | O_TRUNC);
  if (!fd.ok()) return fd.error();
  return FileReplacement(path, std::move(partial), std::move(*fd));
}

FileReplacement::FileReplacement(std::string path, std::string partial, UniqueFd fd)
    : path_(std::move(path)), partial_(std::move(partial)), fd_(std::move(fd)) {}

FileReplacement::FileReplacement(FileReplacement&& other) noexcept
    : path_(std::move(other.path_)), partial_(std::exchange(other.partial_, "")), fd_(std::move(other.fd_)) {}

FileReplacement::~FileReplacement() {
  if (partial_.empty()) return;
  fd_.reset();
  ::unlink(partial_.c_str());
}

Status FileReplacement::Commit() {
  if (::close(fd_.release()) != 0) return Error::FromErrno("close " + partial_);
  if (::rename(partial_.c_str(), path_.c_str()) != 0) return Error::FromErrno("rename " + partial_ + " -> " + path_);
  partial_.clear();
  return Status::Ok();
}

}  // namespace graphfs::engine
