// Decoding of the StreamVByte format (Lemire et al.; libstreamvbyte's streamvbyte_encode and
// streamvbyte_encode_0124 write it, and svb_codec.cc uses them). The decoder is here rather
// than the library's because Debian 12's libstreamvbyte 0.4.1 is built without its SIMD code
// and without optimisation: its streamvbyte_decode ran at 82–200 M values/s on this machine,
// this one at several times that (compress/README.md has the numbers). Tests check both
// decoders against each other.
//
// A stream of n values: ceil(n / 4) control bytes, four 2-bit codes each (value i in bits
// 2(i%4)..2(i%4)+1 of byte i/4), then the values' data bytes, little-endian, in order. Codes
// mean 1, 2, 3, 4 data bytes, or 0, 1, 2, 4 in the 0-1-2-4 variant (a zero costs no byte).
#pragma once

#include <cstddef>
#include <cstdint>

namespace graphfs::compress {

inline uint64_t StreamVByteControlBytes(uint64_t n) { return (n + 3) / 4; }

// The exact length of a stream of `n` values whose control bytes (StreamVByteControlBytes(n)
// of them, which the caller made sure are there) start at `keys`: how many bytes decoding it
// consumes.
uint64_t StreamVByteBytes(const uint8_t* keys, uint64_t n, bool zero124);

// What StreamVByteDecode returns when the control bytes announce data past `end`.
inline constexpr uint64_t kStreamVByteOverrun = UINT64_MAX;

// Decodes the `n` values of the stream at `in` into out[0, n) and returns the bytes it consumed
// (StreamVByteBytes): a caller that knows the stream's stored length compares the two, so the
// control bytes are not walked twice. The control bytes must lie before `end`; the data is read
// up to `end` and no further: data announced past it stops the decoding with
// kStreamVByteOverrun (out's values are then unspecified). (The SIMD path loads 16 bytes per
// group of four values, so it runs while 16 bytes remain before `end`, and the rest is decoded
// one value at a time.)
uint64_t StreamVByteDecode(const uint8_t* in, uint64_t n, bool zero124, const uint8_t* end, uint32_t* out);

}  // namespace graphfs::compress
