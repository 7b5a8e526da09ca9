// Byte encodings of the index records: LEB128 varints, big-endian keys, and a
// bounds-checked reader that never reads past its input (damaged records
// decode to an error, not a crash).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace graphfs::chunkindex {

inline void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// The bytes PutVarint writes for `v`.
inline size_t VarintLength(uint64_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}

inline void PutBigEndian64(std::string* out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>((v >> shift) & 0xff));
}

inline void PutBytes(std::string* out, std::string_view bytes) {
  PutVarint(out, bytes.size());
  out->append(bytes);
}

inline uint64_t GetBigEndian64(const char* p) {
  uint64_t v = 0;
  for (int k = 0; k < 8; ++k) v = (v << 8) | static_cast<uint8_t>(p[k]);
  return v;
}

// Reads varints and strings from a byte range; once anything is out of
// bounds or malformed, ok() is false and every further read returns 0.
class Decoder {
 public:
  explicit Decoder(std::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}

  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) return Fail();
      uint8_t byte = static_cast<uint8_t>(*p_++);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return ok_ ? v : 0;
    }
    return Fail();
  }
  uint32_t Varint32() {
    uint64_t v = Varint();
    if (v > UINT32_MAX) return static_cast<uint32_t>(Fail());
    return static_cast<uint32_t>(v);
  }
  std::string_view Bytes() {
    uint64_t n = Varint();
    if (!ok_ || n > static_cast<uint64_t>(end_ - p_)) {
      Fail();
      return {};
    }
    std::string_view s(p_, n);
    p_ += n;
    return s;
  }
  bool ok() const { return ok_; }
  bool done() const { return p_ == end_; }
  // ok and nothing left over.
  bool finished() const { return ok_ && p_ == end_; }

 private:
  uint64_t Fail() {
    ok_ = false;
    p_ = end_;
    return 0;
  }
  const char* p_;
  const char* end_;
  bool ok_ = true;
};

}  // namespace graphfs::chunkindex
