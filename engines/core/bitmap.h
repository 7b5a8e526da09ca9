// Active-vertex set: one bit per vertex, set concurrently by edge workers.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace graphfs::engine {

class Bitmap {
 public:
  explicit Bitmap(size_t bits = 0) : bits_(bits), words_((bits + 63) / 64, 0) {}

  size_t bits() const { return bits_; }
  // Bit v is words()[v / 64] >> (v % 64) & 1; bits past bits() are clear.
  const uint64_t* words() const { return words_.data(); }
  void Clear() { std::fill(words_.begin(), words_.end(), 0); }
  void Fill() {
    std::fill(words_.begin(), words_.end(), ~uint64_t{0});
    if (bits_ % 64 != 0 && !words_.empty()) words_.back() = (uint64_t{1} << (bits_ % 64)) - 1;
  }

  bool Get(size_t i) const {
    uint64_t word = std::atomic_ref<const uint64_t>(words_[i >> 6]).load(std::memory_order_relaxed);
    return (word >> (i & 63)) & 1;
  }
  void Set(size_t i) {
    std::atomic_ref<uint64_t>(words_[i >> 6]).fetch_or(uint64_t{1} << (i & 63), std::memory_order_relaxed);
  }
  // Not thread-safe; for single-threaded setup.
  void SetUnsynchronized(size_t i) { words_[i >> 6] |= uint64_t{1} << (i & 63); }

  // Whether any bit in [begin, end) is set; lets the engine skip partitions.
  bool AnyInRange(size_t begin, size_t end) const {
    for (size_t i = begin; i < end;) {
      if ((i & 63) == 0 && i + 64 <= end) {
        if (words_[i >> 6] != 0) return true;
        i += 64;
      } else {
        if (Get(i)) return true;
        ++i;
      }
    }
    return false;
  }
  size_t Count() const {
    size_t n = 0;
    for (uint64_t w : words_) n += static_cast<size_t>(__builtin_popcountll(w));
    return n;
  }

 private:
  size_t bits_;
  std::vector<uint64_t> words_;
};

}  // namespace graphfs::engine
