// Per-vertex state kept in a file inside the graph directory, the way
// GridGraph's BigVector does it: create+truncate, truncate(path) to size,
// fill with 4 KiB writes, open O_RDWR (O_DIRECT when the filesystem allows),
// mmap(MAP_SHARED), msync at the end. This access pattern is part of what the
// graphfs mount must support, so the engine keeps it deliberately.
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
  static Result<MappedFile> Create(const std::string& path, size_t bytes);

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }
  Status Sync();  // msync(MS_SYNC): results reach the file, not just memory

 private:
  std::string path_;
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
