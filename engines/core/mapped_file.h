// Per-vertex state kept in a file inside the graph directory, the way
// GridGraph's BigVector does it: create+truncate, truncate(path) to size,
// fill with 4 KiB writes, open O_RDWR (O_DIRECT when the filesystem allows),
// mmap(MAP_SHARED), msync at the end. This access pattern is part of what the
// graphfs mount must support, so the engine keeps it deliberately.
//
// Two additions keep a mapping from going bad under us: the file is held with
// an exclusive flock for the object's life (a second process creating the same
// file would truncate it, and every access to the vanished pages would raise
// SIGBUS in the first), and the space it needs is checked before writing (a
// huge vertex count in meta must not fill the disk).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "common/result.h"

namespace graphfs::engine {

class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept { *this = std::move(other); }
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // Creates (or replaces) `path` with `bytes` zero bytes and maps it shared.
  // EBUSY if another process holds it (another instance of the same app on the
  // same graph), ENOSPC if its filesystem has less than `bytes` free.
  static Result<MappedFile> Create(const std::string& path, size_t bytes);

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }
  Status Sync();  // msync(MS_SYNC): results reach the file, not just memory

 private:
  void Release();  // unmaps and closes; the object is then empty

  std::string path_;
  int lock_fd_ = -1;  // holds the flock
  int fd_ = -1;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Typed view of a MappedFile: one T per vertex.
template <typename T>
class VertexArray {
 public:
  VertexArray() = default;
  static Result<VertexArray> Create(const std::string& path, size_t length) {
    auto file = MappedFile::Create(path, length * sizeof(T));
    if (!file.ok()) return file.error();
    VertexArray array;
    array.file_ = std::move(*file);
    array.length_ = length;
    return array;
  }

  T* data() { return static_cast<T*>(file_.data()); }
  const T* data() const { return static_cast<const T*>(file_.data()); }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  size_t size() const { return length_; }
  Status Sync() { return file_.Sync(); }
  const std::string& path() const { return file_.path(); }

 private:
  MappedFile file_;
  size_t length_ = 0;
};

}  // namespace graphfs::engine
