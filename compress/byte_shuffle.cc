#include "compress/byte_shuffle.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace graphfs::compress {
namespace {

// Byte b of record i sits at i * r + b in records and at b * n + i in planes; kToPlanes says
// which way to copy. With the record size a constant (the edge formats' 8 and 12, and 4 for a
// lone field) the compiler unrolls the inner loop; other sizes take the loop with a variable r.
// Records [first, n) only.
template <bool kToPlanes, size_t R>
void Transpose(const char* in, size_t n, size_t r, char* out, size_t first = 0) {
  const size_t size = R != 0 ? R : r;
  for (size_t i = first; i < n; ++i) {
    for (size_t b = 0; b < size; ++b) {
      if constexpr (kToPlanes) {
        out[b * n + i] = in[i * size + b];
      } else {
        out[i * size + b] = in[b * n + i];
      }
    }
  }
}

#if defined(__SSE2__)
// Planes to records, 16 records a step, for the edge formats' record sizes (R = 4, 8, 12): the R
// planes' next 16 bytes are loaded (the missing planes up to 16 are zeros) and transposed as a
// 16 x 16 byte matrix by four rounds of unpacks — pairs of bytes, then of 2, 4 and 8 — into one
// register per record, whose first R bytes are stored. Why not the scalar loop: the compiler
// leaves it byte by byte for R = 12 (a load and a store per byte), and it was as much of the
// daemon's CPU as LZ4 itself when decoding shuffle-lz4 units (docs/memory-as-cache.md, twelfth
// part). SSE2 is in every x86-64, so no dispatch is needed.
template <size_t R>
size_t UnshuffleSse2(const char* in, size_t n, char* out) {
  static_assert(R == 4 || R == 8 || R == 12);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m128i a[16];
    for (size_t b = 0; b < 16; ++b)
      a[b] = b < R ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + b * n + i)) : _mm_setzero_si128();
    // Round 1: s1[2p + h] holds bytes 2p, 2p+1 of records 8h..8h+7.
    __m128i s1[16];
    for (size_t p = 0; p < 8; ++p) {
      s1[2 * p] = _mm_unpacklo_epi8(a[2 * p], a[2 * p + 1]);
      s1[2 * p + 1] = _mm_unpackhi_epi8(a[2 * p], a[2 * p + 1]);
    }
    // Round 2: s2[4q + g] holds bytes 4q..4q+3 of records 4g..4g+3.
    __m128i s2[16];
    for (size_t q = 0; q < 4; ++q) {
      for (size_t h = 0; h < 2; ++h) {
        s2[4 * q + 2 * h] = _mm_unpacklo_epi16(s1[2 * (2 * q) + h], s1[2 * (2 * q + 1) + h]);
        s2[4 * q + 2 * h + 1] = _mm_unpackhi_epi16(s1[2 * (2 * q) + h], s1[2 * (2 * q + 1) + h]);
      }
    }
    // Round 3: s3[8r + m] holds bytes 8r..8r+7 of records 2m, 2m+1.
    __m128i s3[16];
    for (size_t r = 0; r < 2; ++r) {
      for (size_t g = 0; g < 4; ++g) {
        s3[8 * r + 2 * g] = _mm_unpacklo_epi32(s2[4 * (2 * r) + g], s2[4 * (2 * r + 1) + g]);
        s3[8 * r + 2 * g + 1] = _mm_unpackhi_epi32(s2[4 * (2 * r) + g], s2[4 * (2 * r + 1) + g]);
      }
    }
    // Round 4: record 2m, then 2m+1, whole (bytes 0..15, of which the first R are its own).
    __m128i record[16];
    for (size_t m = 0; m < 8; ++m) {
      record[2 * m] = _mm_unpacklo_epi64(s3[m], s3[8 + m]);
      record[2 * m + 1] = _mm_unpackhi_epi64(s3[m], s3[8 + m]);
    }
    // 16-byte stores in record order, each one's extra bytes overwritten by the next record's;
    // the records whose 16 bytes would pass the step's end are stored to their own R bytes only.
    char* o = out + i * R;
    for (size_t k = 0; k < 16; ++k) {
      if (k * R + 16 <= 16 * R) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + k * R), record[k]);
      } else {
        char bytes[16];
        _mm_storeu_si128(reinterpret_cast<__m128i*>(bytes), record[k]);
        std::memcpy(o + k * R, bytes, R);
      }
    }
  }
  return i;  // records done; the caller does the rest
}
#endif

// A record size the edge formats use: unshuffled 16 records a step where the CPU allows.
template <bool kToPlanes, size_t R>
void TransposeFixed(const char* in, size_t n, char* out) {
  size_t first = 0;
#if defined(__SSE2__)
  if constexpr (!kToPlanes) first = UnshuffleSse2<R>(in, n, out);
#endif
  Transpose<kToPlanes, R>(in, n, R, out, first);
}

template <bool kToPlanes>
void TransposeAll(std::span<const char> in, size_t record_size, char* out) {
  const size_t n = record_size == 0 ? 0 : in.size() / record_size;
  switch (record_size) {
    case 4: TransposeFixed<kToPlanes, 4>(in.data(), n, out); break;
    case 8: TransposeFixed<kToPlanes, 8>(in.data(), n, out); break;
    case 12: TransposeFixed<kToPlanes, 12>(in.data(), n, out); break;
    default: Transpose<kToPlanes, 0>(in.data(), n, record_size, out); break;
  }
  const size_t body = n * record_size;  // the tail is copied as it is
  if (in.size() > body) std::memcpy(out + body, in.data() + body, in.size() - body);
}

}  // namespace

void ShuffleBytes(std::span<const char> in, size_t record_size, char* out) {
  TransposeAll<true>(in, record_size, out);
}

void UnshuffleBytes(std::span<const char> in, size_t record_size, char* out) {
  TransposeAll<false>(in, record_size, out);
}

}  // namespace graphfs::compress
