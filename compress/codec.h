// Codecs for the independently compressed units of partition files (issue 18): one policy
// behind one interface, chosen by name through a factory, one file per codec
// (none_codec.cc, zstd_codec.cc, lz4_codec.cc, shuffle_codec.cc, svb_codec.cc, and
// chain_codec.cc, which puts a filter in front of zstd or LZ4).
//
// A codec turns any byte string into a payload and back; it knows nothing of files, disks or
// frames (unit_frame.h adds the header and the checksum). It is told the size of the records
// the bytes hold (grid/edge.h: 8 = int32 source, int32 target; 12 = + float32 weight) because
// the shuffle and the graph codec work field by field. Any length round-trips — 0, and
// lengths that are not a multiple of the record size (the trailing bytes are kept raw) — so
// a unit cut anywhere still decodes to its exact bytes.
//
// Threads: a Codec object keeps its compression contexts and scratch buffers between calls
// (allocating them per unit would cost more than decoding a small unit), so it is NOT
// thread-safe: use one object per thread. DecodeUnit (unit_frame.h) keeps one decoder per
// codec and thread by itself and may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace graphfs::compress {

// Stored on disk in every unit frame: never renumber, only append.
enum class CodecId : uint8_t {
  kNone = 0,         // the bytes as they are
  kZstd = 1,         // zstd at a level
  kLz4 = 2,          // LZ4 block format, default acceleration
  kShuffleZstd = 3,  // byte shuffle of the records' fields, then zstd
  kShuffleLz4 = 4,   // byte shuffle, then LZ4
  kSvb = 5,          // edge columns: zigzag deltas in StreamVByte, other fields raw
  kSvbZstd = 6,      // svb with byte-shuffled weights, then zstd
};
inline constexpr int kCodecCount = 7;

// Largest unit a codec takes (and a frame may declare): chunks and stripe units are MiBs, and
// StreamVByte and LZ4 count in 32-bit integers.
inline constexpr uint64_t kMaxUnitBytes = uint64_t{1} << 30;

struct CodecSpec {
  CodecId id = CodecId::kNone;
  // Level of the zstd stage (zstd, shuffle-zstd, svb-zstd): 1..22; 0 for codecs without one.
  int level = 0;
  // Bytes per record the data holds: 8 or 12 for edge files (svb needs one of these), any
  // 1..255 for the others (1: no structure).
  uint32_t record_size = 8;

  // "zstd:3", "lz4", "svb-zstd:1": what ParseCodecSpec reads back.
  std::string Name() const;
  bool operator==(const CodecSpec&) const = default;
};

// The name of a codec without its level ("shuffle-zstd"); "?" for an id out of range.
std::string_view CodecIdName(CodecId id);
// Codec names ParseCodecSpec knows, in id order.
const std::vector<std::string_view>& CodecNames();
// Whether the codec has a zstd stage (takes a level).
bool CodecHasLevel(CodecId id);
// zstd's own default, used when a name with a zstd stage comes without a level.
inline constexpr int kDefaultZstdLevel = 3;

// "none", "zstd", "zstd:3", "lz4", "shuffle-zstd:1", "shuffle-lz4", "svb", "svb-zstd:2", for
// data of `record_size`-byte records. EINVAL with a message naming what is wrong: an unknown
// name (the known ones listed), a level for a codec without one, a level out of range or not a
// number, a record size the codec cannot take.
Result<CodecSpec> ParseCodecSpec(std::string_view text, uint32_t record_size);
// The same checks on a spec built by hand (or read from a frame header).
Status ValidateCodecSpec(const CodecSpec& spec);

class Codec {
 public:
  virtual ~Codec() = default;
  Codec(const Codec&) = delete;
  Codec& operator=(const Codec&) = delete;

  const CodecSpec& spec() const { return spec_; }
  std::string name() const { return spec_.Name(); }

  // Appends the compressed form of `raw` to *out (appending lets a frame write its header
  // first and the payload behind it without a copy). `raw` may be any length up to
  // kMaxUnitBytes; the payload may be larger than `raw` (incompressible data): the unit frame
  // then stores the raw bytes instead.
  virtual Status Compress(std::span<const char> raw, std::string* out) = 0;

  // Decodes `compressed` into exactly raw_out.size() bytes (the caller knows the raw length:
  // the frame stores it). Damaged or foreign input is an Error(EIO, ...) and never reads or
  // writes outside the two spans; raw_out's contents are then unspecified.
  virtual Status Decompress(std::span<const char> compressed, std::span<char> raw_out) = 0;

  // The most bytes Compress appends for `raw_bytes` of input.
  virtual size_t MaxCompressedSize(size_t raw_bytes) const = 0;

 protected:
  explicit Codec(const CodecSpec& spec) : spec_(spec) {}

 private:
  CodecSpec spec_;
};

// A codec for `spec` (validated first: EINVAL as ParseCodecSpec). Costs allocations (zstd
// contexts): create once per thread, reuse for every unit.
Result<std::unique_ptr<Codec>> NewCodec(const CodecSpec& spec);

}  // namespace graphfs::compress
