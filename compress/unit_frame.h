// The on-disk frame of one independently compressed unit: a fixed header, then the codec's
// payload. The header says everything needed to decode the unit (codec, level, record size,
// both lengths), so a unit read alone from any disk decodes without other metadata, and it
// carries a checksum over itself and the payload that is verified before a byte is
// decompressed: a flipped bit anywhere (bit rot, a torn write, a misdirected read) is EIO,
// never wrong bytes and never a decoder fed damaged input.
//
// Header (kUnitHeaderBytes = 32, little-endian):
//    0  4  magic "GFZU"
//    4  1  version (kUnitFrameVersion)
//    5  1  codec id (CodecId)
//    6  1  zstd level (0 for codecs without one)
//    7  1  record size
//    8  8  raw length (≤ kMaxUnitBytes)
//   16  8  payload length
//   24  8  checksum: XXH3-64 of the payload, seeded with XXH3-64 of bytes [0, 24)
//   32     payload
// A frame with codec none holds exactly the raw bytes; any other codec's payload is shorter
// than the raw bytes (EncodeUnit falls back to none otherwise), which the decoder checks too.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "common/result.h"
#include "compress/codec.h"

namespace graphfs::compress {

inline constexpr size_t kUnitHeaderBytes = 32;
inline constexpr uint8_t kUnitFrameVersion = 1;

struct UnitHeader {
  CodecSpec codec;  // id, level and record size as stored
  uint64_t raw_bytes = 0;
  uint64_t payload_bytes = 0;
  uint64_t checksum = 0;
  uint64_t frame_bytes() const { return kUnitHeaderBytes + payload_bytes; }
};

// Replaces *frame with the frame of `raw` compressed by `codec`. If the codec's payload is not
// smaller than `raw` (random bytes, a tiny unit), the frame stores `raw` with codec none
// instead: a unit never costs more than its raw bytes plus the header, and reading it back
// costs a copy, not a decode. EFBIG for more than kMaxUnitBytes; a codec's own failure as is.
Status EncodeUnit(Codec& codec, std::span<const char> raw, std::string* frame);

// Reads and checks the header at the start of `frame` (at least kUnitHeaderBytes): magic,
// version, a known codec with a valid level and record size, lengths within kMaxUnitBytes,
// and the payload length the codec allows (equal to the raw length for none, shorter
// otherwise). The checksum is not verified (that needs the payload): use it to learn how
// many bytes to read and to allocate, then DecodeUnit. EIO naming the field otherwise.
Result<UnitHeader> PeekUnitHeader(std::span<const char> frame);

// Decodes a whole frame (exactly frame_bytes() long) into `raw_out`, which must be exactly
// the raw length (EINVAL otherwise). Order: the header as PeekUnitHeader checks it, the
// frame's length, the checksum — each an Error(EIO, ...) that names what did not match —
// and only then the codec. Thread-safe: each thread keeps its own decoder per codec, so
// contexts are reused without locking. `verify_checksum` false skips the checksum, for a frame
// verified before and kept in memory since (the header and lengths are still checked).
Status DecodeUnit(std::span<const char> frame, std::span<char> raw_out, bool verify_checksum = true);

}  // namespace graphfs::compress
