// Writing a file that replaces `path` only once it is complete: the bytes go to
// `path.partial-PID` (same directory, so the final rename is atomic) and Commit() renames
// it over `path`. A writer dropped before Commit() (an error on the way, a bad input
// found halfway) unlinks its partial file: `path` is never left half-written, and an
// older file there stays as it was.
#pragma once

#include <string>

#include "common/result.h"
#include "common/unique_fd.h"

namespace graphfs::engine {

class FileReplacement {
 public:
  // Creates the partial file (mode 0644 less the umask, as a plain create).
  static Result<FileReplacement> Create(const std::string& path);

  FileReplacement(FileReplacement&& other) noexcept;
  FileReplacement& operator=(FileReplacement&&) = delete;
  FileReplacement(const FileReplacement&) = delete;
  FileReplacement& operator=(const FileReplacement&) = delete;
  ~FileReplacement();

  int fd() const { return fd_.get(); }
  const std::string& partial_path() const { return partial_; }

  // Closes the partial file and renames it to the final path.
  Status Commit();

 private:
  FileReplacement(std::string path, std::string partial, UniqueFd fd);
  std::string path_;
  std::string partial_;  // empty once committed or moved from
  UniqueFd fd_;
};

}  // namespace graphfs::engine
