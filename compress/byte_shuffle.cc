#include "compress/byte_shuffle.h"

#include <cstring>

namespace graphfs::compress {
namespace {

// Byte b of record i sits at i * r + b in records and at b * n + i in planes; kToPlanes says
// which way to copy. With the record size a constant (the edge formats' 8 and 12, and 4 for a
// lone field) the compiler unrolls the inner loop; other sizes take the loop with a variable r.
template <bool kToPlanes, size_t R>
void Transpose(const char* in, size_t n, size_t r, char* out) {
  const size_t size = R != 0 ? R : r;
  for (size_t i = 0; i < n; ++i) {
    for (size_t b = 0; b < size; ++b) {
      if constexpr (kToPlanes) {
        out[b * n + i] = in[i * size + b];
      } else {
        out[i * size + b] = in[b * n + i];
      }
    }
  }
}

template <bool kToPlanes>
void TransposeAll(std::span<const char> in, size_t record_size, char* out) {
  const size_t n = record_size == 0 ? 0 : in.size() / record_size;
  switch (record_size) {
    case 4: Transpose<kToPlanes, 4>(in.data(), n, 4, out); break;
    case 8: Transpose<kToPlanes, 8>(in.data(), n, 8, out); break;
    case 12: Transpose<kToPlanes, 12>(in.data(), n, 12, out); break;
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
