// A 4 KiB-aligned heap buffer: O_DIRECT reads need aligned memory, and the cache's units
// are loaded with them. Shared by striping/ (the disks' reads) and cache/ (its units).
#pragma once

#include <cstddef>
#include <cstdint>

namespace graphfs {

inline constexpr uint64_t kDirectAlign = 4096;

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size);  // 4 KiB aligned; empty (ok() false) if memory ran out
  AlignedBuffer(AlignedBuffer&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; o.size_ = 0; }
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept;
  ~AlignedBuffer();
  char* data() { return data_; }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  bool ok() const { return data_ != nullptr; }

 private:
  void Release();
  char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace graphfs
