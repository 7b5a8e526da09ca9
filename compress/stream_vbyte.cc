#include "compress/stream_vbyte.h"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace graphfs::compress {
namespace {

constexpr uint8_t kCodeBytes1234[4] = {1, 2, 3, 4};
constexpr uint8_t kCodeBytes0124[4] = {0, 1, 2, 4};

// Per control byte: the data bytes of its four values, and the pshufb mask that moves them
// into four uint32 lanes (0x80: a zero byte).
struct KeyTables {
  alignas(16) uint8_t shuffle[256][16];
  uint8_t length[256];
};

constexpr KeyTables MakeTables(const uint8_t (&code_bytes)[4]) {
  KeyTables t{};
  for (int key = 0; key < 256; ++key) {
    int pos = 0;
    for (int j = 0; j < 4; ++j) {
      const int len = code_bytes[(key >> (2 * j)) & 3];
      for (int b = 0; b < 4; ++b) t.shuffle[key][4 * j + b] = static_cast<uint8_t>(b < len ? pos + b : 0x80);
      pos += len;
    }
    t.length[key] = static_cast<uint8_t>(pos);
  }
  return t;
}

constexpr KeyTables kTables1234 = MakeTables(kCodeBytes1234);
constexpr KeyTables kTables0124 = MakeTables(kCodeBytes0124);

#if defined(__x86_64__)
// Groups of four values while 16 bytes can be loaded from the data; returns how many groups
// it decoded and advances *data past them.
__attribute__((target("ssse3"))) uint64_t DecodeGroupsSsse3(const uint8_t* keys, const uint8_t** data,
                                                             uint64_t groups, const KeyTables& t,
                                                             const uint8_t* end, uint32_t* out) {
  const uint8_t* d = *data;
  uint64_t g = 0;
  for (; g < groups && end - d >= 16; ++g) {
    const uint8_t key = keys[g];
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d));
    const __m128i mask = _mm_load_si128(reinterpret_cast<const __m128i*>(t.shuffle[key]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4 * g), _mm_shuffle_epi8(bytes, mask));
    d += t.length[key];
  }
  *data = d;
  return g;
}

// Set while static objects are constructed, which may be before libgcc's own CPU detection
// has run: hence the explicit __builtin_cpu_init.
const bool kHasSsse3 = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("ssse3") != 0;
}();
#endif

constexpr uint32_t kLowBytes[5] = {0, 0xff, 0xffff, 0xffffff, 0xffffffff};

}  // namespace

uint64_t StreamVByteBytes(const uint8_t* keys, uint64_t n, bool zero124) {
  const KeyTables& t = zero124 ? kTables0124 : kTables1234;
  const auto& code_bytes = zero124 ? kCodeBytes0124 : kCodeBytes1234;
  uint64_t data = 0;
  const uint64_t full = n / 4;
  for (uint64_t k = 0; k < full; ++k) data += t.length[keys[k]];
  for (uint64_t j = 0; j < n % 4; ++j) data += code_bytes[(keys[full] >> (2 * j)) & 3];
  return StreamVByteControlBytes(n) + data;
}

uint64_t StreamVByteDecode(const uint8_t* in, uint64_t n, bool zero124, const uint8_t* end, uint32_t* out) {
  const KeyTables& t = zero124 ? kTables0124 : kTables1234;
  const auto& code_bytes = zero124 ? kCodeBytes0124 : kCodeBytes1234;
  const uint8_t* keys = in;
  const uint8_t* data = in + StreamVByteControlBytes(n);
  uint64_t i = 0;
#if defined(__x86_64__)
  if (kHasSsse3) i = 4 * DecodeGroupsSsse3(keys, &data, n / 4, t, end, out);
#endif
  // The rest (all of it without SSSE3), value by value: a whole-word load and a mask while
  // 4 bytes remain before `end`.
  for (; i < n; ++i) {
    const uint8_t len = code_bytes[(keys[i / 4] >> (2 * (i % 4))) & 3];
    uint32_t v = 0;
    if (end - data >= 4) {
      std::memcpy(&v, data, 4);
      v &= kLowBytes[len];
    } else if (end - data >= len) {
      std::memcpy(&v, data, len);
    } else {
      return kStreamVByteOverrun;
    }
    out[i] = v;
    data += len;
  }
  return static_cast<uint64_t>(data - in);
}

}  // namespace graphfs::compress
