// Fuzzes the decoding of compressed units (compress/unit_frame.h, compress/codec.h): frames
// read from disks that may be damaged, and — behind a checksum that matches, which a damaged
// frame almost never has — the codecs' own decoders, which must stay within bounds on any
// payload. Frames of both versions (v2: cut into blocks, each checksummed). Properties: a frame
// is decoded or refused with EIO; a frame that decodes re-encodes (in its version and block
// size) to one that decodes to the same bytes, and each of its blocks decodes alone to the
// unit's slice; any raw bytes round-trip through every codec in either version, a block range
// decodes to the slice, and a byte changed in the frame is EIO.
// Input: a Frame (fuzz_check.h); kinds at the bottom.
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compress/codec.h"
#include "compress/unit_frame.h"
#include "tests/compress/reseal.h"
#include "tests/fuzz/fuzz_check.h"

namespace graphfs::fuzz {
namespace {

using compress::CodecSpec;
using compress::DecodeUnit;
using compress::EncodeUnit;

// Units up to this size: the inputs are small (max_len), and a header may claim 1 GiB.
constexpr uint64_t kMaxRaw = 1 << 20;

// PARAM picks a codec spec: id = PARAM % 7, level 1..3 where it has one, record size 8 or 12.
CodecSpec SpecFrom(uint64_t param) {
  CodecSpec spec;
  spec.id = static_cast<compress::CodecId>(param % compress::kCodecCount);
  spec.level = compress::CodecHasLevel(spec.id) ? 1 + static_cast<int>(param / 7 % 3) : 0;
  spec.record_size = param / 21 % 2 == 0 ? 8 : 12;
  return spec;
}

std::unique_ptr<compress::Codec> MakeCodec(const CodecSpec& spec) {
  auto codec = compress::NewCodec(spec);
  FUZZ_CHECK(codec.ok(), "NewCodec(%s): %s", spec.Name().c_str(), codec.error().message().c_str());
  return std::move(codec.value());
}

// A frame from disk: decoded, or refused with EIO before or inside the codec.
void FuzzFrame(const std::string& frame) {
  auto header = compress::PeekUnitHeader(frame);
  if (!header.ok()) {
    CheckRefusal(header.error(), EIO);
    return;
  }
  if (header->raw_bytes > kMaxRaw) return;
  std::vector<char> raw(header->raw_bytes);
  Status st = DecodeUnit(frame, raw);
  if (!st.ok()) {
    CheckRefusal(st.error(), EIO);
    return;
  }
  FUZZ_CHECK(frame.size() == header->frame_bytes(), "decoded a frame of %zu bytes, header says %llu", frame.size(),
             static_cast<unsigned long long>(header->frame_bytes()));
  // Each block alone decodes to the unit's slice.
  auto layout = compress::ReadFrameLayout(frame);
  FUZZ_CHECK(layout.ok(), "a frame that decoded has no layout: %s", layout.error().message().c_str());
  for (size_t b = 0; b < layout->block_count(); ++b) {
    std::vector<char> part(layout->RawBytes(b));
    FUZZ_CHECK(compress::DecodeBlocks(frame, *layout, b, b + 1, part).ok(), "block %zu alone", b);
    FUZZ_CHECK(part.empty() || std::memcmp(part.data(), raw.data() + layout->RawOffset(b), part.size()) == 0,
               "block %zu alone differs from the unit's slice", b);
  }
  // What decoded re-encodes with the header's codec (and blocks) and comes back the same.
  std::string again;
  auto codec = MakeCodec(header->codec);
  const uint32_t block_bytes =
      header->version == compress::kUnitFrameV2 ? static_cast<uint32_t>(layout->block_raw_bytes) : 0;
  FUZZ_CHECK(EncodeUnit(*codec, raw, &again, block_bytes).ok(), "re-encoding with %s", header->codec.Name().c_str());
  std::vector<char> back(raw.size());
  FUZZ_CHECK(DecodeUnit(again, back).ok() && back == raw, "re-encoded %s unit does not decode to itself",
             header->codec.Name().c_str());
}

// A frame header of `version` for `spec` and `raw_bytes`, followed by `payload` as it is; the
// caller seals it (testing::Reseal, ResealBlocks) so that it reaches what lies past the checksums.
std::string ForgedFrame(uint8_t version, const CodecSpec& spec, uint64_t raw_bytes, const std::string& payload) {
  std::string frame(compress::kUnitHeaderBytes, '\0');
  std::memcpy(frame.data(), "GFZU", 4);
  frame[4] = static_cast<char>(version);
  frame[5] = static_cast<char>(spec.id);
  frame[6] = static_cast<char>(spec.level);
  frame[7] = static_cast<char>(spec.record_size);
  const uint64_t payload_bytes = payload.size();
  std::memcpy(frame.data() + 8, &raw_bytes, 8);
  std::memcpy(frame.data() + 16, &payload_bytes, 8);
  return frame + payload;
}

// A codec payload under a header with a matching checksum: reaches the decoder itself.
// PARAM: the spec (SpecFrom) and the raw length (PARAM / 42 % 65536).
void FuzzPayload(uint64_t param, const std::string& payload) {
  const CodecSpec spec = SpecFrom(param);
  const uint64_t raw_bytes = param / 42 % 65536;
  std::string frame = ForgedFrame(compress::kUnitFrameV1, spec, raw_bytes, payload);
  testing::Reseal(&frame);
  std::vector<char> raw(raw_bytes);
  Status st = DecodeUnit(frame, raw);
  if (!st.ok()) CheckRefusal(st.error(), EIO);
}

// Raw bytes through a codec and a frame and back; then one byte of the frame changed.
// PARAM: the spec (SpecFrom) and the position to change (PARAM / 42).
void FuzzRoundTrip(uint64_t param, const std::string& raw) {
  const CodecSpec spec = SpecFrom(param);
  auto codec = MakeCodec(spec);
  std::string frame;
  Status st = EncodeUnit(*codec, raw, &frame);
  FUZZ_CHECK(st.ok(), "%s: %s", spec.Name().c_str(), st.error().message().c_str());
  std::vector<char> back(raw.size());
  st = DecodeUnit(frame, back);
  FUZZ_CHECK(st.ok(), "%s frame of %zu bytes: %s", spec.Name().c_str(), raw.size(), st.error().message().c_str());
  FUZZ_CHECK(std::string_view(back.data(), back.size()) == raw, "%s: decoded bytes differ", spec.Name().c_str());
  const size_t at = param / 42 % frame.size();
  frame[at] = static_cast<char>(frame[at] ^ (1 + param % 255));
  st = DecodeUnit(frame, back);
  FUZZ_CHECK(!st.ok(), "%s: byte %zu of the frame changed, and it still decoded", spec.Name().c_str(), at);
  CheckRefusal(st.error(), EIO);
}

// Raw bytes through a v2 frame of small blocks and back, whole and a range of blocks; then one
// byte of the frame changed: EIO from the unit, and from any range holding it.
// PARAM: the spec (SpecFrom), the block size in records (1 + PARAM / 42 % 64), the position to
// change (PARAM / 2688).
void FuzzBlocks(uint64_t param, const std::string& raw) {
  const CodecSpec spec = SpecFrom(param);
  auto codec = MakeCodec(spec);
  const uint32_t block_bytes = static_cast<uint32_t>((1 + param / 42 % 64) * spec.record_size);
  std::string frame;
  Status st = EncodeUnit(*codec, raw, &frame, block_bytes);
  FUZZ_CHECK(st.ok(), "%s in blocks of %u: %s", spec.Name().c_str(), block_bytes, st.error().message().c_str());
  std::vector<char> back(raw.size());
  st = DecodeUnit(frame, back);
  FUZZ_CHECK(st.ok() && std::string_view(back.data(), back.size()) == raw, "%s v2 frame of %zu bytes",
             spec.Name().c_str(), raw.size());
  auto layout = compress::ReadFrameLayout(frame);
  FUZZ_CHECK(layout.ok(), "%s: %s", spec.Name().c_str(), layout.error().message().c_str());
  const size_t n = layout->block_count();
  if (n > 0) {
    const size_t first = param / 7 % n, end = first + 1 + param / 11 % (n - first);
    const uint64_t from = layout->RawOffset(first), to = layout->RawOffset(end - 1) + layout->RawBytes(end - 1);
    std::vector<char> part(to - from);
    FUZZ_CHECK(compress::DecodeBlocks(frame, *layout, first, end, part).ok() &&
                   std::string_view(part.data(), part.size()) == std::string_view(raw).substr(from, to - from),
               "%s blocks [%zu, %zu) differ from the unit's slice", spec.Name().c_str(), first, end);
  }
  const size_t at = param / 2688 % frame.size();
  frame[at] = static_cast<char>(frame[at] ^ (1 + param % 255));
  st = DecodeUnit(frame, back);
  FUZZ_CHECK(!st.ok(), "%s: byte %zu of the v2 frame changed, and it still decoded", spec.Name().c_str(), at);
  CheckRefusal(st.error(), EIO);
  if (at >= layout->table_end()) {  // in a block's payload: that block alone is refused too
    size_t b = 0;
    while (b + 1 < n && layout->blocks[b + 1].frame_offset <= at) ++b;
    std::vector<char> part(layout->RawBytes(b));
    st = compress::DecodeBlocks(frame, *layout, b, b + 1, part);
    FUZZ_CHECK(!st.ok(), "%s: block %zu changed, and it still decoded alone", spec.Name().c_str(), b);
    CheckRefusal(st.error(), EIO);
  }
}

// A v2 frame's table and payloads under a header with matching checksums (a forged or buggy
// table): reaches the table's checks and the codecs. PARAM: the spec (SpecFrom) and the raw
// length (PARAM / 42 % 65536). The payload is the table and the blocks.
void FuzzTable(uint64_t param, const std::string& payload) {
  const CodecSpec spec = SpecFrom(param);
  const uint64_t raw_bytes = param / 42 % 65536;
  std::string frame = ForgedFrame(compress::kUnitFrameV2, spec, raw_bytes, payload);
  if (frame.size() >= compress::kUnitHeaderBytes + compress::kBlockTableHeadBytes) testing::ResealBlocks(&frame);
  std::vector<char> raw(raw_bytes);
  Status st = DecodeUnit(frame, raw);
  if (!st.ok()) CheckRefusal(st.error(), EIO);
}

}  // namespace
}  // namespace graphfs::fuzz

// Kinds: f a frame (FuzzFrame), p a codec payload (FuzzPayload), r raw bytes (FuzzRoundTrip),
// b raw bytes through blocks (FuzzBlocks), t a v2 table and blocks (FuzzTable).
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphfs::fuzz;
  const Frame f = ParseFrame(data, size);
  switch (f.kind) {
    case 'f': FuzzFrame(f.payload); break;
    case 'p': FuzzPayload(f.param, f.payload); break;
    case 'r': FuzzRoundTrip(f.param, f.payload); break;
    case 'b': FuzzBlocks(f.param, f.payload); break;
    case 't': FuzzTable(f.param, f.payload); break;
    default: break;
  }
  return 0;
}
