// Small POSIX I/O helpers with errors as values: whole-file reads, loops
// over short reads/writes, page-aligned buffers for O_DIRECT.
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "common/unique_fd.h"

namespace graphfs::grid {

Result<std::string> ReadWholeFile(const std::string& path);

// Opens a file that must be a regular file (a graph's input): a FIFO, device or
// directory in its place is refused with a message naming it, and never blocks
// the open (it is opened O_NONBLOCK, which is cleared again once it is known
// to be a regular file).
Result<UniqueFd> OpenRegularFile(const std::string& path, int flags = O_RDONLY);
// Size of a regular file; the same refusal of anything else (stat only).
Result<uint64_t> RegularFileSize(const std::string& path);
// Whole content of a regular file of at most `max_bytes` (a larger one is an
// error before anything is read: a swapped-in edge file must not fill memory).
Result<std::string> ReadRegularFile(const std::string& path, uint64_t max_bytes);
// Creates or truncates `path` and writes `data`.
Status WriteWholeFile(const std::string& path, const void* data, size_t bytes);

Result<UniqueFd> OpenFile(const std::string& path, int flags, mode_t mode = 0644);

// Opens read-only, with O_DIRECT when `direct` is set. Filesystems without
// O_DIRECT (tmpfs on older kernels) answer EINVAL; we then fall back to a
// buffered open, reported in *got_direct.
Result<UniqueFd> OpenForStreaming(const std::string& path, bool direct, bool* got_direct);

Result<uint64_t> FileSize(const std::string& path);

// Reads up to `length` bytes at `offset`, looping over short reads. Reads may
// run past EOF (GridGraph rounds lengths up to the I/O page): the result is
// then short. It is an error if the data ends before `expected_end` (the
// logical end of the file), i.e. a zero-byte read where bytes must exist.
Result<size_t> PreadUpTo(int fd, void* buffer, size_t length, uint64_t offset, uint64_t expected_end,
                         const std::string& what);

// Reads exactly `length` bytes or fails.
Status PreadExact(int fd, void* buffer, size_t length, uint64_t offset, const std::string& what);
Status PwriteAll(int fd, const void* buffer, size_t length, uint64_t offset, const std::string& what);
Status WriteAll(int fd, const void* buffer, size_t length, const std::string& what);

// Page-aligned heap buffer (O_DIRECT needs aligned memory).
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes);
  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(char* p) const;
  };
  std::unique_ptr<char, Free> data_;
  size_t size_ = 0;
};

}  // namespace graphfs::grid
