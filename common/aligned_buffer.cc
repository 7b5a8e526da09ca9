#include "common/aligned_buffer.h"

#include <sys/mman.h>

#include <cstdlib>

namespace graphfs {

namespace {
// Buffers this large are mapped directly: malloc would keep freed ones in its arenas, and
// the daemon's memory would grow past its read-ahead budget instead of going back.
constexpr size_t kMapThreshold = 64 << 10;
}  // namespace

AlignedBuffer::AlignedBuffer(size_t size) : size_(size) {
  if (size == 0) return;
  if (size >= kMapThreshold) {
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    data_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  } else {
    void* p = nullptr;
    data_ = ::posix_memalign(&p, kDirectAlign, size) == 0 ? static_cast<char*>(p) : nullptr;
  }
  if (data_ == nullptr) size_ = 0;
}

void AlignedBuffer::Release() {
  if (data_ == nullptr) return;
  if (size_ >= kMapThreshold) ::munmap(data_, size_);
  else std::free(data_);
  data_ = nullptr;
  size_ = 0;
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& o) noexcept {
  if (this != &o) {
    Release();
    data_ = o.data_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

AlignedBuffer::~AlignedBuffer() { Release(); }

}  // namespace graphfs
