// The on-disk frame of one independently compressed unit: a fixed header, then the codec's
// payload. The header says everything needed to decode the unit (codec, level, record size,
// both lengths), so a unit read alone from any disk decodes without other metadata, and it
// carries a checksum that is verified before a byte is decompressed: a flipped bit anywhere
// (bit rot, a torn write, a misdirected read) is EIO, never wrong bytes and never a decoder fed
// damaged input.
//
// Header (kUnitHeaderBytes = 32, little-endian), both versions:
//    0  4  magic "GFZU"
//    4  1  version (1 or 2)
//    5  1  codec id (CodecId)
//    6  1  zstd level (0 for codecs without one)
//    7  1  record size
//    8  8  raw length (≤ kMaxUnitBytes)
//   16  8  payload length: every byte after the header
//   24  8  checksum, seeded with s = XXH3-64 of bytes [0, 24):
//          v1: XXH3-64 of the payload; v2: XXH3-64 of the block table
//   32     payload
//
// Version 1: the payload is the codec's output for the whole unit. A frame with codec none
// holds exactly the raw bytes; any other codec's payload is shorter than the raw bytes
// (EncodeUnit falls back to none otherwise), which the decoder checks too.
//
// Version 2 (docs/block-frames.md): the unit cut into blocks of B raw bytes (the last one
// shorter), each compressed alone, so that a reader that needs a few records decodes (and
// checks) only the blocks that hold them. The payload is a block table, then the blocks'
// payloads back to back in order:
//   32  4  B, the raw bytes of a block: a whole number of records, > 0
//   36  4  n, the number of blocks: ceil(raw length / B)
//   40     n entries of 16 bytes: u32 payload length, u32 flags (1: stored raw, else 0),
//          u64 checksum: XXH3-64 of the block's payload seeded with s + block index
//   40+16n the payloads
// A block the codec does not shrink is stored raw (flag 1, its payload is its raw bytes); a
// compressed block's payload is shorter than its raw bytes; a frame whose codec is none has
// every block stored raw. A version 1 frame reads as a frame of one block (its checksum is the
// block's, seeded with s + 0), so every function here takes both.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "compress/codec.h"

namespace graphfs::compress {

inline constexpr size_t kUnitHeaderBytes = 32;
inline constexpr uint8_t kUnitFrameV1 = 1;
inline constexpr uint8_t kUnitFrameV2 = 2;
inline constexpr uint8_t kUnitFrameVersion = kUnitFrameV2;  // the newest this build reads
inline constexpr size_t kBlockTableHeadBytes = 8;
inline constexpr size_t kBlockEntryBytes = 16;
// The raw bytes of a v2 frame's block, about: a block is a whole number of records
// (BlockBytesFor), so that every codec decodes a block alone (svb codes whole records).
inline constexpr uint32_t kDefaultBlockBytes = 64 << 10;

// The most whole `record_size`-byte records in `target` bytes, in bytes (at least one record):
// 65536 for 8-byte records, 65532 (5461 records) for 12-byte ones.
uint32_t BlockBytesFor(uint32_t record_size, uint32_t target = kDefaultBlockBytes);

struct UnitHeader {
  uint8_t version = kUnitFrameV1;
  CodecSpec codec;  // id, level and record size as stored
  uint64_t raw_bytes = 0;
  uint64_t payload_bytes = 0;
  uint64_t checksum = 0;
  uint64_t frame_bytes() const { return kUnitHeaderBytes + payload_bytes; }
};

// Replaces *frame with the frame of `raw` compressed by `codec`.
// `block_bytes` 0: a version 1 frame. If the codec's payload is not smaller than `raw` (random
// bytes, a tiny unit), the frame stores `raw` with codec none instead: a unit never costs more
// than its raw bytes plus the header, and reading it back costs a copy, not a decode.
// `block_bytes` > 0: a version 2 frame of blocks of that many raw bytes, which must be a whole
// number of the codec's records (EINVAL otherwise); each block the codec does not shrink is
// stored raw, and the frame's codec is none when no block shrank. It costs the table (8 + 16
// bytes a block) beyond the v1 frame.
// EFBIG for more than kMaxUnitBytes; a codec's own failure as is.
Status EncodeUnit(Codec& codec, std::span<const char> raw, std::string* frame, uint32_t block_bytes = 0);

// Reads and checks the header at the start of `frame` (at least kUnitHeaderBytes): magic,
// version, a known codec with a valid level and record size, lengths within kMaxUnitBytes,
// and (v1) the payload length the codec allows (equal to the raw length for none, shorter
// otherwise; v2: at least the table's head, at most the raw bytes with a table of one block a
// record). The checksum is not verified (that needs the payload or the table): use it to learn
// how many bytes to read and to allocate, then DecodeUnit. EIO naming the field otherwise.
Result<UnitHeader> PeekUnitHeader(std::span<const char> frame);

// Where a frame's blocks lie and what they hold. A v1 frame is one block (none if empty).
struct FrameLayout {
  UnitHeader header;
  uint64_t block_raw_bytes = 0;  // B (v1: the raw length)
  uint64_t seed = 0;             // s, XXH3-64 of the header's first 24 bytes
  struct Block {
    uint64_t frame_offset = 0;  // of its payload, from the frame's first byte
    uint32_t payload_bytes = 0;
    bool stored_raw = false;
    uint64_t checksum = 0;
  };
  std::vector<Block> blocks;

  size_t block_count() const { return blocks.size(); }
  uint64_t RawOffset(size_t b) const { return b * block_raw_bytes; }
  uint64_t RawBytes(size_t b) const;
  // The blocks [first, end) holding raw bytes [offset, offset + length) (length > 0, within the unit).
  std::pair<size_t, size_t> BlocksOf(uint64_t offset, uint64_t length) const;
  // The bytes of the frame before the first block's payload: header and table.
  uint64_t table_end() const;
};

// Reads the header (as PeekUnitHeader) and, for v2, the block table: `frame` must hold at least
// the header and the table (a whole frame does; so does a prefix of it). `verify_checksum`: the
// header's checksum over the table (v2; a v1 frame's checksum needs its payload, DecodeBlocks
// checks it). The table's entries are checked against the header (counts, lengths that add up
// to the payload length, stored-raw blocks exactly their raw length, compressed ones shorter,
// flags known). EIO naming what did not match.
Result<FrameLayout> ReadFrameLayout(std::span<const char> frame, bool verify_checksum = true);

// Decodes blocks [first, end) of the frame `layout` describes into `raw_out`, which must be
// exactly their raw bytes (EINVAL otherwise). `frame` is the frame from its first byte, at
// least up to the end of block end - 1's payload. Each block's checksum is verified (unless
// `verify_checksum` is false: blocks verified before and kept in memory since) before it is
// decoded; a mismatch or a codec's refusal is Error(EIO, ...) naming the block, and raw_out's
// contents are then unspecified. Thread-safe as DecodeUnit.
Status DecodeBlocks(std::span<const char> frame, const FrameLayout& layout, size_t first, size_t end,
                    std::span<char> raw_out, bool verify_checksum = true);
// The same from part of the frame: `bytes` are the frame's bytes from byte `at` on (at most the
// first block's payload offset; EINVAL otherwise), at least up to the end of block end - 1's
// payload — what a reader that fetched only those blocks from the disks holds (the layout it
// learned from an earlier read of the whole frame, or of its header and table).
Status DecodeBlocksAt(std::span<const char> bytes, uint64_t at, const FrameLayout& layout, size_t first, size_t end,
                      std::span<char> raw_out, bool verify_checksum = true);

// Decodes a whole frame (exactly frame_bytes() long) into `raw_out`, which must be exactly
// the raw length (EINVAL otherwise). Order: the header as PeekUnitHeader checks it, the
// frame's length, the checksum (v1: over the payload; v2: over the table, then each block's
// before it is decoded) — each an Error(EIO, ...) that names what did not match — and only
// then the codec. Thread-safe: each thread keeps its own decoder per codec, so contexts are
// reused without locking. `verify_checksum` false skips the checksums, for a frame verified
// before and kept in memory since (the header, table and lengths are still checked).
Status DecodeUnit(std::span<const char> frame, std::span<char> raw_out, bool verify_checksum = true);

}  // namespace graphfs::compress
