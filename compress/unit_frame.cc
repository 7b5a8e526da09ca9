#include "compress/unit_frame.h"

#include <xxhash.h>

#include <cstring>
#include <memory>
#include <vector>

#include "compress/codec_impl.h"

namespace graphfs::compress {
namespace {

constexpr char kMagic[4] = {'G', 'F', 'Z', 'U'};
constexpr size_t kHashedHeaderBytes = 24;  // the header before the checksum field

// XXH3-64 of the payload, seeded with XXH3-64 of the header's first 24 bytes: one pass over
// the payload, and a change in any header field changes the seed and with it the sum.
uint64_t Checksum(const char* header, std::span<const char> payload) {
  return XXH3_64bits_withSeed(DataOrEmpty(payload), payload.size(), XXH3_64bits(header, kHashedHeaderBytes));
}

Error Damaged(const std::string& what) { return Error(EIO, "damaged unit frame: " + what); }

// The decoders this thread has made, one per spec met: a file's units share one spec, so a
// handful. The oldest goes beyond kMaxThreadDecoders, so that frames of ever new specs cannot
// pile up contexts.
constexpr size_t kMaxThreadDecoders = 16;

Result<Codec*> ThreadDecoder(const CodecSpec& spec) {
  thread_local std::vector<std::unique_ptr<Codec>> decoders;
  for (const auto& c : decoders) {
    if (c->spec() == spec) return c.get();
  }
  auto codec = NewCodec(spec);
  if (!codec.ok()) return codec.error();
  if (decoders.size() == kMaxThreadDecoders) decoders.erase(decoders.begin());
  decoders.push_back(std::move(codec.value()));
  return decoders.back().get();
}

}  // namespace

Status EncodeUnit(Codec& codec, std::span<const char> raw, std::string* frame) {
  if (raw.size() > kMaxUnitBytes) {
    return Error(EFBIG, "unit of " + std::to_string(raw.size()) + " bytes: at most " + std::to_string(kMaxUnitBytes));
  }
  frame->assign(kUnitHeaderBytes, '\0');
  CodecSpec stored = codec.spec();
  GRAPHFS_RETURN_IF_ERROR(codec.Compress(raw, frame));
  if (frame->size() - kUnitHeaderBytes >= raw.size()) {
    // Compression did not shrink the unit: keep the raw bytes (a copy to read back, no decode).
    frame->resize(kUnitHeaderBytes);
    frame->append(raw.data(), raw.size());
    stored.id = CodecId::kNone;
    stored.level = 0;
  }
  char* h = frame->data();
  std::memcpy(h, kMagic, 4);
  h[4] = static_cast<char>(kUnitFrameVersion);
  h[5] = static_cast<char>(stored.id);
  h[6] = static_cast<char>(stored.level);
  h[7] = static_cast<char>(stored.record_size);
  PutU64(h + 8, raw.size());
  PutU64(h + 16, frame->size() - kUnitHeaderBytes);
  PutU64(h + 24, Checksum(h, std::span<const char>(*frame).subspan(kUnitHeaderBytes)));
  return Status::Ok();
}

Result<UnitHeader> PeekUnitHeader(std::span<const char> frame) {
  if (frame.size() < kUnitHeaderBytes) {
    return Damaged(std::to_string(frame.size()) + " bytes, shorter than the " + std::to_string(kUnitHeaderBytes) +
                   "-byte header");
  }
  const char* h = frame.data();
  if (std::memcmp(h, kMagic, 4) != 0) return Damaged("bad magic (not a compressed unit)");
  if (static_cast<uint8_t>(h[4]) != kUnitFrameVersion) {
    return Damaged("version " + std::to_string(static_cast<uint8_t>(h[4])) + ", this build reads " +
                   std::to_string(kUnitFrameVersion));
  }
  UnitHeader header;
  header.codec.id = static_cast<CodecId>(static_cast<uint8_t>(h[5]));
  header.codec.level = static_cast<uint8_t>(h[6]);
  header.codec.record_size = static_cast<uint8_t>(h[7]);
  header.raw_bytes = GetU64(h + 8);
  header.payload_bytes = GetU64(h + 16);
  header.checksum = GetU64(h + 24);
  Status valid = ValidateCodecSpec(header.codec);
  if (!valid.ok()) return Damaged(valid.error().message());
  if (header.raw_bytes > kMaxUnitBytes) {
    return Damaged("raw length " + std::to_string(header.raw_bytes) + " is more than a unit holds");
  }
  if (header.codec.id == CodecId::kNone ? header.payload_bytes != header.raw_bytes
                                        : header.payload_bytes >= header.raw_bytes) {
    return Damaged("payload length " + std::to_string(header.payload_bytes) + " for " +
                   std::to_string(header.raw_bytes) + " raw bytes with codec " + header.codec.Name());
  }
  return header;
}

Status DecodeUnit(std::span<const char> frame, std::span<char> raw_out, bool verify_checksum) {
  auto header = PeekUnitHeader(frame);
  if (!header.ok()) return header.error();
  if (frame.size() != header->frame_bytes()) {
    return Damaged(std::to_string(frame.size()) + " bytes, its header says " + std::to_string(header->frame_bytes()) +
                   (frame.size() < header->frame_bytes() ? " (truncated)" : ""));
  }
  const std::span<const char> payload = frame.subspan(kUnitHeaderBytes);
  if (verify_checksum && Checksum(frame.data(), payload) != header->checksum)
    return Damaged("checksum mismatch (header or payload changed)");
  if (raw_out.size() != header->raw_bytes) {
    return Error(EINVAL, "unit of " + std::to_string(header->raw_bytes) + " bytes decoded into a buffer of " +
                             std::to_string(raw_out.size()));
  }
  auto codec = ThreadDecoder(header->codec);
  if (!codec.ok()) return codec.error();
  Status st = (*codec)->Decompress(payload, raw_out);
  if (!st.ok()) return st.error().Wrap("unit frame");
  return Status::Ok();
}

}  // namespace graphfs::compress
