// Fuzzes the decoding of compressed units (compress/unit_frame.h, compress/codec.h): frames
// read from disks that may be damaged, and — behind a checksum that matches, which a damaged
// frame almost never has — the codecs' own decoders, which must stay within bounds on any
// payload. Properties: a frame is decoded or refused with EIO; a frame that decodes re-encodes
// to one that decodes to the same bytes; any raw bytes round-trip through every codec, and a
// byte changed in the frame is EIO.
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
  // What decoded re-encodes with the header's codec and comes back the same.
  std::string again;
  auto codec = MakeCodec(header->codec);
  FUZZ_CHECK(EncodeUnit(*codec, raw, &again).ok(), "re-encoding with %s", header->codec.Name().c_str());
  std::vector<char> back(raw.size());
  FUZZ_CHECK(DecodeUnit(again, back).ok() && back == raw, "re-encoded %s unit does not decode to itself",
             header->codec.Name().c_str());
}

// A codec payload under a header with a matching checksum: reaches the decoder itself.
// PARAM: the spec (SpecFrom) and the raw length (PARAM / 42 % 65536).
void FuzzPayload(uint64_t param, const std::string& payload) {
  const CodecSpec spec = SpecFrom(param);
  const uint64_t raw_bytes = param / 42 % 65536;
  std::string frame(compress::kUnitHeaderBytes, '\0');
  std::memcpy(frame.data(), "GFZU", 4);
  frame[4] = static_cast<char>(compress::kUnitFrameVersion);
  frame[5] = static_cast<char>(spec.id);
  frame[6] = static_cast<char>(spec.level);
  frame[7] = static_cast<char>(spec.record_size);
  const uint64_t payload_bytes = payload.size();
  std::memcpy(frame.data() + 8, &raw_bytes, 8);
  std::memcpy(frame.data() + 16, &payload_bytes, 8);
  frame += payload;
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

}  // namespace
}  // namespace graphfs::fuzz

// Kinds: f a frame (FuzzFrame), p a codec payload (FuzzPayload), r raw bytes (FuzzRoundTrip).
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphfs::fuzz;
  const Frame f = ParseFrame(data, size);
  switch (f.kind) {
    case 'f': FuzzFrame(f.payload); break;
    case 'p': FuzzPayload(f.param, f.payload); break;
    case 'r': FuzzRoundTrip(f.param, f.payload); break;
    default: break;
  }
  return 0;
}
