#include "volume/internal/packed_file.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "common/aligned_buffer.h"
#include "common/log.h"
#include "compress/unit_frame.h"
#include "volume/internal/frame_tier.h"

namespace graphfs::volume {

Result<std::shared_ptr<PackedFile>> PackedFile::Open(std::shared_ptr<StripedFile> stream, PackedCounters* counters) {
  const StripeManifest m = stream->manifest();
  auto dir = ReadPackedDirectory(*stream);
  if (!dir.ok()) return dir.error();
  const std::string what = "directory of compressed file " + m.file_id;
  std::vector<cache::ChunkLayout::Chunk> units;
  for (const PackedUnit& u : dir->units()) units.push_back({u.raw_offset, u.raw_length, 1.0});
  auto layout = cache::ChunkLayout::Create(std::move(units), m.size);
  if (!layout.ok()) return layout.error().Wrap(what);
  return std::shared_ptr<PackedFile>(new PackedFile(std::move(stream), std::move(*dir), *layout, counters));
}

void PackedFile::UseFrames(std::shared_ptr<FrameTier> frames, uint64_t key, uint64_t decoded_key) {
  frames_ = std::move(frames);
  frame_source_ = std::make_shared<FrameSource>(stream_);
  frames_key_ = key;
  decoded_key_ = decoded_key;
  frames_->Link(decoded_key, key, size());
}

cache::UnitRequest PackedFile::FrameRequest(size_t k) const {
  const PackedUnit& u = dir_.units()[k];
  cache::UnitRequest r;
  r.key = {frames_key_, k};
  r.offset = u.frame_offset;
  r.length = u.frame_length;
  r.file_units = dir_.units().size();
  r.source = frame_source_;
  return r;
}

Status PackedFile::DecodeUnit(size_t k, char* out, bool whole) {
  const PackedUnit& u = dir_.units()[k];
  if (frames_ != nullptr) {
    const FrameTier::DecodedFile kept{decoded_key_, whole ? size() : 0};
    return frames_->With(FrameRequest(k), kept,
                         [&](const char* frame, bool from_disk, bool checked) {
                           return DecodeFrame(k, frame, from_disk, checked, out);
                         });
  }
  // Whole 4 KiB pages from the frame's aligned start, so the read can go O_DIRECT.
  const uint64_t span = (static_cast<uint64_t>(u.frame_length) + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
  thread_local AlignedBuffer frame;
  if (frame.size() < span) frame = AlignedBuffer(span);
  if (!frame.ok()) return Error(ENOMEM, "no memory for a compressed unit of " + std::to_string(span) + " bytes");
  auto n = stream_->Read(u.frame_offset, span, frame.data());
  if (!n.ok()) return n.error();
  if (*n < u.frame_length) {
    return Error(EIO, "compressed unit " + std::to_string(k) + " of striped file " + stream_->manifest().file_id +
                          ": the packed stream ends inside its frame");
  }
  return DecodeFrame(k, frame.data(), /*from_disk=*/true, /*checked=*/false, out);
}

Error PackedFile::Damaged(size_t k, const Error& e) const {
  const PackedUnit& u = dir_.units()[k];
  counters_->checksum_errors.fetch_add(1, std::memory_order_relaxed);
  std::vector<uint32_t> on;
  for (const StripeExtent& x : stream_->map().Split(u.frame_offset, u.frame_length)) {
    if (std::find(on.begin(), on.end(), x.disk) == on.end()) on.push_back(x.disk);
  }
  std::string disks;
  for (uint32_t d : on) disks += (disks.empty() ? "" : ", ") + std::to_string(d);
  const Error out(EIO, "compressed unit " + std::to_string(k) + " (bytes " + std::to_string(u.raw_offset) + "+" +
                           std::to_string(u.raw_length) + ") of striped file " + stream_->manifest().file_id +
                           " on disk " + disks + ": " + e.message());
  LogError(out.message());
  return out;
}

namespace {

void AddNs(std::atomic<uint64_t>& to, std::chrono::steady_clock::time_point since) {
  to.fetch_add(static_cast<uint64_t>(
                   std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since).count()),
               std::memory_order_relaxed);
}

}  // namespace

Status PackedFile::DecodeFrame(size_t k, const char* frame, bool from_disk, bool checked, char* out) {
  const PackedUnit& u = dir_.units()[k];
  const auto start = std::chrono::steady_clock::now();
  Status decoded = compress::DecodeUnit(std::span<const char>(frame, u.frame_length),
                                        std::span<char>(out, u.raw_length), /*verify_checksum=*/!checked);
  AddNs(counters_->decode_ns, start);
  (from_disk ? counters_->frame_bytes : counters_->frame_bytes_from_memory)
      .fetch_add(u.frame_length, std::memory_order_relaxed);
  if (!decoded.ok()) return Damaged(k, decoded.error());
  counters_->units_decoded.fetch_add(1, std::memory_order_relaxed);
  counters_->bytes_decoded.fetch_add(u.raw_length, std::memory_order_relaxed);
  return Status::Ok();
}

Result<PackedFile::PiecesOutcome> PackedFile::DecodePieces(
    size_t k, std::span<const UnitPiece> pieces, const std::function<Status(size_t i, const char* bytes)>& deliver) {
  if (frames_ == nullptr || pieces.empty()) return PiecesOutcome::kFrameNotHeld;
  const PackedUnit& u = dir_.units()[k];
  const cache::UnitRequest r = FrameRequest(k);
  PiecesOutcome outcome = PiecesOutcome::kFrameNotHeld;
  bool damaged = false;
  auto held = frames_->WithHeld(r, [&](const char* frame, bool checked) -> Status {
    const std::span<const char> bytes(frame, u.frame_length);
    const auto start = std::chrono::steady_clock::now();
    auto layout = compress::ReadFrameLayout(bytes, /*verify_checksum=*/!checked);
    if (!layout.ok()) {
      damaged = true;
      return layout.error();
    }
    // The blocks the pieces lie in, ascending and distinct (the pieces are ascending).
    std::vector<size_t> blocks;
    for (const UnitPiece& p : pieces) {
      if (p.length == 0 || p.offset + p.length > u.raw_length)
        return Error(EINVAL, "a piece [" + std::to_string(p.offset) + ", +" + std::to_string(p.length) +
                                 ") of a unit of " + std::to_string(u.raw_length) + " bytes");
      auto [first, end] = layout->BlocksOf(p.offset, p.length);
      for (size_t b = std::max(first, blocks.empty() ? 0 : blocks.back() + 1); b < end; ++b) blocks.push_back(b);
    }
    if (2 * blocks.size() > layout->block_count()) {
      outcome = PiecesOutcome::kMostBlocks;
      return Status::Ok();
    }
    // Each stretch of consecutive blocks decoded into one scratch, back to back, so that a
    // piece lying across blocks is contiguous there too.
    thread_local std::vector<char> scratch;
    std::vector<uint64_t> at(layout->block_count(), 0);  // where a block's bytes start in the scratch
    uint64_t raw = 0, payload = 0;
    for (size_t b : blocks) {
      at[b] = raw;
      raw += layout->RawBytes(b);
      payload += layout->blocks[b].payload_bytes;
    }
    if (scratch.size() < raw) scratch.resize(raw);
    for (size_t i = 0; i < blocks.size();) {
      size_t j = i + 1;
      while (j < blocks.size() && blocks[j] == blocks[j - 1] + 1) ++j;
      const uint64_t from = at[blocks[i]], to = at[blocks[j - 1]] + layout->RawBytes(blocks[j - 1]);
      Status st = compress::DecodeBlocks(bytes, *layout, blocks[i], blocks[j - 1] + 1,
                                         std::span<char>(scratch.data() + from, to - from), /*verify_checksum=*/!checked);
      if (!st.ok()) {
        damaged = true;
        return st.error();
      }
      i = j;
    }
    AddNs(counters_->decode_ns, start);
    counters_->frame_bytes_from_memory.fetch_add(payload, std::memory_order_relaxed);
    counters_->bytes_decoded.fetch_add(raw, std::memory_order_relaxed);
    counters_->run_blocks_decoded.fetch_add(blocks.size(), std::memory_order_relaxed);
    counters_->run_block_bytes_decoded.fetch_add(raw, std::memory_order_relaxed);
    for (size_t i = 0; i < pieces.size(); ++i) {
      const size_t b = layout->BlocksOf(pieces[i].offset, pieces[i].length).first;
      GRAPHFS_RETURN_IF_ERROR(deliver(i, scratch.data() + at[b] + (pieces[i].offset - layout->RawOffset(b))));
    }
    outcome = PiecesOutcome::kDecoded;
    return Status::Ok();
  });
  if (!held.ok()) return damaged ? Damaged(k, held.error()) : held.error();
  return outcome;
}

Result<uint64_t> PackedFile::Read(uint64_t offset, uint64_t length, char* buf) {
  auto [first, end] = dir_.Overlapping(offset, length);
  uint64_t done = 0;
  std::string partial;
  for (size_t k = first; k < end; ++k) {
    const PackedUnit& u = dir_.units()[k];
    const uint64_t from = std::max(offset, u.raw_offset);
    const uint64_t to = std::min(offset + length, u.raw_offset + u.raw_length);
    if (from == u.raw_offset && to == u.raw_offset + u.raw_length) {
      GRAPHFS_RETURN_IF_ERROR(DecodeUnit(k, buf + (from - offset), /*whole=*/true));  // the whole unit: in place
    } else {
      partial.resize(u.raw_length);
      GRAPHFS_RETURN_IF_ERROR(DecodeUnit(k, partial.data(), /*whole=*/false));
      std::memcpy(buf + (from - offset), partial.data() + (from - u.raw_offset), to - from);
    }
    done += to - from;
  }
  return done;
}

void PackedFile::DiskShare(uint64_t offset, uint64_t length, std::vector<uint64_t>& per_disk) const {
  auto [first, end] = dir_.Overlapping(offset, length);
  for (size_t k = first; k < end; ++k) {
    const PackedUnit& u = dir_.units()[k];
    stream_->map().AddDiskShare(u.frame_offset, u.frame_length, per_disk);
  }
}

}  // namespace graphfs::volume
