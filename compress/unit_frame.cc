#include "compress/unit_frame.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "compress/codec_impl.h"

namespace graphfs::compress {
namespace {

constexpr char kMagic[4] = {'G', 'F', 'Z', 'U'};
constexpr size_t kHashedHeaderBytes = 24;  // the header before the checksum field
constexpr uint32_t kStoredRaw = 1;          // a block's flag

// s: XXH3-64 of the header's first 24 bytes. Every checksum of the frame is seeded with it, so
// a change in any header field changes every sum.
uint64_t HeaderSeed(const char* header) { return XXH3_64bits(header, kHashedHeaderBytes); }

uint64_t Hash(std::span<const char> bytes, uint64_t seed) {
  return XXH3_64bits_withSeed(DataOrEmpty(bytes), bytes.size(), seed);
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

void PutHeader(char* h, uint8_t version, const CodecSpec& stored, uint64_t raw_bytes, uint64_t payload_bytes) {
  std::memcpy(h, kMagic, 4);
  h[4] = static_cast<char>(version);
  h[5] = static_cast<char>(stored.id);
  h[6] = static_cast<char>(stored.level);
  h[7] = static_cast<char>(stored.record_size);
  PutU64(h + 8, raw_bytes);
  PutU64(h + 16, payload_bytes);
}

Status EncodeV1(Codec& codec, std::span<const char> raw, std::string* frame) {
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
  PutHeader(h, kUnitFrameV1, stored, raw.size(), frame->size() - kUnitHeaderBytes);
  PutU64(h + 24, Hash(std::span<const char>(*frame).subspan(kUnitHeaderBytes), HeaderSeed(h)));
  return Status::Ok();
}

Status EncodeV2(Codec& codec, std::span<const char> raw, std::string* frame, uint32_t block_bytes) {
  CodecSpec stored = codec.spec();
  if (block_bytes % stored.record_size != 0) {
    return Error(EINVAL, "blocks of " + std::to_string(block_bytes) + " bytes: not a whole number of " +
                             std::to_string(stored.record_size) + "-byte records");
  }
  const uint64_t n = (raw.size() + block_bytes - 1) / block_bytes;
  const size_t table = kUnitHeaderBytes + kBlockTableHeadBytes + n * kBlockEntryBytes;
  frame->assign(table, '\0');
  bool any_compressed = false;
  for (uint64_t b = 0; b < n; ++b) {
    const auto block = raw.subspan(b * block_bytes, std::min<uint64_t>(block_bytes, raw.size() - b * block_bytes));
    const size_t start = frame->size();
    GRAPHFS_RETURN_IF_ERROR(codec.Compress(block, frame));
    uint32_t flags = 0;
    if (frame->size() - start >= block.size()) {  // not shrunk: stored raw, a copy to read back
      frame->resize(start);
      frame->append(block.data(), block.size());
      flags = kStoredRaw;
    } else {
      any_compressed = true;
    }
    char* e = frame->data() + kUnitHeaderBytes + kBlockTableHeadBytes + b * kBlockEntryBytes;
    const uint32_t length = static_cast<uint32_t>(frame->size() - start);
    std::memcpy(e, &length, 4);
    std::memcpy(e + 4, &flags, 4);
  }
  if (!any_compressed) {
    stored.id = CodecId::kNone;
    stored.level = 0;
  }
  char* h = frame->data();
  PutHeader(h, kUnitFrameV2, stored, raw.size(), frame->size() - kUnitHeaderBytes);
  const uint32_t n32 = static_cast<uint32_t>(n);
  std::memcpy(h + kUnitHeaderBytes, &block_bytes, 4);
  std::memcpy(h + kUnitHeaderBytes + 4, &n32, 4);
  // The blocks' sums (they need the final header's seed), then the header's over the table.
  const uint64_t seed = HeaderSeed(h);
  size_t at = table;
  for (uint64_t b = 0; b < n; ++b) {
    char* e = h + kUnitHeaderBytes + kBlockTableHeadBytes + b * kBlockEntryBytes;
    const uint32_t length = GetU32(e);
    PutU64(e + 8, Hash(std::span<const char>(h + at, length), seed + b));
    at += length;
  }
  PutU64(h + 24, Hash(std::span<const char>(h + kUnitHeaderBytes, table - kUnitHeaderBytes), seed));
  return Status::Ok();
}

std::string BlockName(const FrameLayout& layout, size_t b) {
  return "block " + std::to_string(b) + " of " + std::to_string(layout.block_count()) + " (raw bytes " +
         std::to_string(layout.RawOffset(b)) + "+" + std::to_string(layout.RawBytes(b)) + ")";
}

}  // namespace

uint32_t BlockBytesFor(uint32_t record_size, uint32_t target) {
  if (record_size == 0) return target;
  return std::max<uint32_t>(1, target / record_size) * record_size;
}

Status EncodeUnit(Codec& codec, std::span<const char> raw, std::string* frame, uint32_t block_bytes) {
  if (raw.size() > kMaxUnitBytes) {
    return Error(EFBIG, "unit of " + std::to_string(raw.size()) + " bytes: at most " + std::to_string(kMaxUnitBytes));
  }
  return block_bytes == 0 ? EncodeV1(codec, raw, frame) : EncodeV2(codec, raw, frame, block_bytes);
}

Result<UnitHeader> PeekUnitHeader(std::span<const char> frame) {
  if (frame.size() < kUnitHeaderBytes) {
    return Damaged(std::to_string(frame.size()) + " bytes, shorter than the " + std::to_string(kUnitHeaderBytes) +
                   "-byte header");
  }
  const char* h = frame.data();
  if (std::memcmp(h, kMagic, 4) != 0) return Damaged("bad magic (not a compressed unit)");
  UnitHeader header;
  header.version = static_cast<uint8_t>(h[4]);
  if (header.version != kUnitFrameV1 && header.version != kUnitFrameV2) {
    return Damaged("version " + std::to_string(header.version) + ", this build reads 1 and 2");
  }
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
  const bool bad_payload =
      header.version == kUnitFrameV1
          ? (header.codec.id == CodecId::kNone ? header.payload_bytes != header.raw_bytes
                                               : header.payload_bytes >= header.raw_bytes)
          // v2: the table's head, at most a block a record, at most every block stored raw.
          : header.payload_bytes < kBlockTableHeadBytes ||
                header.payload_bytes > kBlockTableHeadBytes +
                                           (header.raw_bytes / header.codec.record_size + 1) * kBlockEntryBytes +
                                           header.raw_bytes;
  if (bad_payload) {
    return Damaged("payload length " + std::to_string(header.payload_bytes) + " for " +
                   std::to_string(header.raw_bytes) + " raw bytes with codec " + header.codec.Name() + " (version " +
                   std::to_string(header.version) + ")");
  }
  return header;
}

uint64_t FrameLayout::RawBytes(size_t b) const {
  return std::min(block_raw_bytes, header.raw_bytes - RawOffset(b));
}

std::pair<size_t, size_t> FrameLayout::BlocksOf(uint64_t offset, uint64_t length) const {
  if (length == 0 || block_raw_bytes == 0) return {0, 0};
  return {static_cast<size_t>(offset / block_raw_bytes),
          static_cast<size_t>((offset + length - 1) / block_raw_bytes + 1)};
}

uint64_t FrameLayout::table_end() const {
  return blocks.empty() ? header.frame_bytes() : blocks.front().frame_offset;
}

Result<FrameLayout> ReadFrameLayout(std::span<const char> frame, bool verify_checksum) {
  auto header = PeekUnitHeader(frame);
  if (!header.ok()) return header.error();
  FrameLayout layout;
  layout.header = *header;
  layout.seed = HeaderSeed(frame.data());
  if (header->version == kUnitFrameV1) {
    // One block, even an empty one: its checksum is the only one that covers the header.
    layout.block_raw_bytes = header->raw_bytes;
    layout.blocks.push_back({kUnitHeaderBytes, static_cast<uint32_t>(header->payload_bytes),
                             header->codec.id == CodecId::kNone, header->checksum});
    return layout;
  }
  if (frame.size() < kUnitHeaderBytes + kBlockTableHeadBytes) {
    return Damaged(std::to_string(frame.size()) + " bytes, shorter than the header and the block table's head");
  }
  const char* t = frame.data() + kUnitHeaderBytes;
  const uint32_t block_bytes = GetU32(t);
  const uint64_t n = GetU32(t + 4);
  if (block_bytes == 0 || block_bytes % header->codec.record_size != 0) {
    return Damaged("blocks of " + std::to_string(block_bytes) + " bytes with " +
                   std::to_string(header->codec.record_size) + "-byte records");
  }
  if (n != (header->raw_bytes + block_bytes - 1) / block_bytes) {
    return Damaged(std::to_string(n) + " blocks of " + std::to_string(block_bytes) + " bytes for " +
                   std::to_string(header->raw_bytes) + " raw bytes");
  }
  const uint64_t table_end = kUnitHeaderBytes + kBlockTableHeadBytes + n * kBlockEntryBytes;
  if (table_end > header->frame_bytes()) {
    return Damaged("a table of " + std::to_string(n) + " blocks does not fit a payload of " +
                   std::to_string(header->payload_bytes) + " bytes");
  }
  if (frame.size() < table_end) {
    return Damaged(std::to_string(frame.size()) + " bytes, shorter than the header and the block table (" +
                   std::to_string(table_end) + ")");
  }
  if (verify_checksum &&
      Hash(frame.subspan(kUnitHeaderBytes, table_end - kUnitHeaderBytes), layout.seed) != header->checksum) {
    return Damaged("checksum mismatch (header or block table changed)");
  }
  layout.block_raw_bytes = block_bytes;
  layout.blocks.resize(n);
  uint64_t at = table_end;
  for (size_t b = 0; b < n; ++b) {
    const char* e = t + kBlockTableHeadBytes + b * kBlockEntryBytes;
    FrameLayout::Block& block = layout.blocks[b];
    const uint32_t flags = GetU32(e + 4);
    block.frame_offset = at;
    block.payload_bytes = GetU32(e);
    block.stored_raw = flags == kStoredRaw;
    block.checksum = GetU64(e + 8);
    const uint64_t raw = layout.RawBytes(b);
    const bool bad = flags > kStoredRaw ||
                     (block.stored_raw ? block.payload_bytes != raw
                                       : header->codec.id == CodecId::kNone || block.payload_bytes >= raw);
    if (bad) {
      return Damaged(BlockName(layout, b) + ": payload length " + std::to_string(block.payload_bytes) + ", flags " +
                     std::to_string(flags) + " with codec " + header->codec.Name());
    }
    at += block.payload_bytes;
  }
  if (at != header->frame_bytes()) {
    return Damaged("the blocks' payloads end at byte " + std::to_string(at) + ", the header says " +
                   std::to_string(header->frame_bytes()));
  }
  return layout;
}

Status DecodeBlocks(std::span<const char> frame, const FrameLayout& layout, size_t first, size_t end,
                    std::span<char> raw_out, bool verify_checksum) {
  return DecodeBlocksAt(frame, 0, layout, first, end, raw_out, verify_checksum);
}

Status DecodeBlocksAt(std::span<const char> bytes, uint64_t at, const FrameLayout& layout, size_t first, size_t end,
                      std::span<char> raw_out, bool verify_checksum) {
  if (first > end || end > layout.block_count()) {
    return Error(EINVAL, "blocks [" + std::to_string(first) + ", " + std::to_string(end) + ") of a frame of " +
                             std::to_string(layout.block_count()));
  }
  const uint64_t raw_from = layout.RawOffset(first);
  const uint64_t raw_to = end == first ? raw_from : layout.RawOffset(end - 1) + layout.RawBytes(end - 1);
  if (raw_out.size() != raw_to - raw_from) {
    return Error(EINVAL, "blocks [" + std::to_string(first) + ", " + std::to_string(end) + ") of " +
                             std::to_string(raw_to - raw_from) + " raw bytes decoded into a buffer of " +
                             std::to_string(raw_out.size()));
  }
  if (end > first) {
    if (layout.blocks[first].frame_offset < at) {
      return Error(EINVAL, "frame bytes from byte " + std::to_string(at) + " hold no " + BlockName(layout, first) +
                               ", which starts at byte " + std::to_string(layout.blocks[first].frame_offset));
    }
    const FrameLayout::Block& last = layout.blocks[end - 1];
    if (at + bytes.size() < last.frame_offset + last.payload_bytes) {
      return Damaged(std::to_string(bytes.size()) + " bytes from byte " + std::to_string(at) + ", " +
                     BlockName(layout, end - 1) + " ends at byte " +
                     std::to_string(last.frame_offset + last.payload_bytes) + " (truncated)");
    }
  }
  Codec* codec = nullptr;
  for (size_t b = first; b < end; ++b) {
    const FrameLayout::Block& block = layout.blocks[b];
    const auto payload = bytes.subspan(block.frame_offset - at, block.payload_bytes);
    const auto out = raw_out.subspan(layout.RawOffset(b) - raw_from, layout.RawBytes(b));
    if (verify_checksum && Hash(payload, layout.seed + b) != block.checksum) {
      return Damaged(BlockName(layout, b) + ": checksum mismatch (" +
                     (layout.header.version == kUnitFrameV1 ? "header or payload" : "block payload") + " changed)");
    }
    if (block.stored_raw) {
      if (!out.empty()) std::memcpy(out.data(), payload.data(), out.size());  // an empty v1 unit: no pointers
      continue;
    }
    if (codec == nullptr) {
      auto made = ThreadDecoder(layout.header.codec);
      if (!made.ok()) return made.error();
      codec = *made;
    }
    Status st = codec->Decompress(payload, out);
    if (!st.ok()) {
      return st.error().Wrap(layout.header.version == kUnitFrameV1 ? "unit frame" : "unit frame, " + BlockName(layout, b));
    }
  }
  return Status::Ok();
}

Status DecodeUnit(std::span<const char> frame, std::span<char> raw_out, bool verify_checksum) {
  auto header = PeekUnitHeader(frame);
  if (!header.ok()) return header.error();
  if (frame.size() != header->frame_bytes()) {
    return Damaged(std::to_string(frame.size()) + " bytes, its header says " + std::to_string(header->frame_bytes()) +
                   (frame.size() < header->frame_bytes() ? " (truncated)" : ""));
  }
  auto layout = ReadFrameLayout(frame, verify_checksum);
  if (!layout.ok()) return layout.error();
  if (raw_out.size() != header->raw_bytes) {
    // A damaged header is EIO, not the caller's mistake: a v2 header was checked with the table
    // above; a v1 header's checksum is its payload's.
    const FrameLayout::Block& only = layout->blocks.front();
    if (verify_checksum && header->version == kUnitFrameV1 &&
        Hash(frame.subspan(only.frame_offset, only.payload_bytes), layout->seed) != only.checksum) {
      return Damaged("checksum mismatch (header or payload changed)");
    }
    return Error(EINVAL, "unit of " + std::to_string(header->raw_bytes) + " bytes decoded into a buffer of " +
                             std::to_string(raw_out.size()));
  }
  return DecodeBlocks(frame, *layout, 0, layout->block_count(), raw_out, verify_checksum);
}

}  // namespace graphfs::compress
