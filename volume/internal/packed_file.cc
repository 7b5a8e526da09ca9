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

// Stream offsets to whole pages, as O_DIRECT reads of the packed stream need them.
uint64_t PageDown(uint64_t v) { return v / kDirectAlign * kDirectAlign; }
uint64_t PageUp(uint64_t v) { return (v + kDirectAlign - 1) / kDirectAlign * kDirectAlign; }

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
  Learn(k, std::span<const char>(frame, u.frame_length));
  counters_->units_decoded.fetch_add(1, std::memory_order_relaxed);
  counters_->bytes_decoded.fetch_add(u.raw_length, std::memory_order_relaxed);
  return Status::Ok();
}

std::shared_ptr<const compress::FrameLayout> PackedFile::KnownLayout(size_t k) const {
  std::lock_guard<std::mutex> lock(layouts_mu_);
  return k < layouts_.size() ? layouts_[k] : nullptr;
}

void PackedFile::Learn(size_t k, std::span<const char> frame, bool verify_checksum) {
  if (k >= layouts_.size() || frame.size() < compress::kUnitHeaderBytes || frame[4] != compress::kUnitFrameV2) return;
  {
    std::lock_guard<std::mutex> lock(layouts_mu_);
    if (layouts_[k] != nullptr) return;
  }
  auto layout = compress::ReadFrameLayout(frame, verify_checksum);
  if (!layout.ok() || layout->block_count() < 2) return;
  auto known = std::make_shared<const compress::FrameLayout>(std::move(*layout));
  std::lock_guard<std::mutex> lock(layouts_mu_);
  if (layouts_[k] == nullptr) layouts_[k] = std::move(known);
}

namespace {

// The blocks of `layout` that `pieces` (ascending) lie in, ascending and distinct.
Result<std::vector<size_t>> BlocksOfPieces(const compress::FrameLayout& layout,
                                           std::span<const PackedFile::UnitPiece> pieces, uint64_t raw_length) {
  std::vector<size_t> blocks;
  for (const PackedFile::UnitPiece& p : pieces) {
    if (p.length == 0 || p.offset + p.length > raw_length)
      return Error(EINVAL, "a piece [" + std::to_string(p.offset) + ", +" + std::to_string(p.length) +
                               ") of a unit of " + std::to_string(raw_length) + " bytes");
    auto [first, end] = layout.BlocksOf(p.offset, p.length);
    for (size_t b = std::max(first, blocks.empty() ? 0 : blocks.back() + 1); b < end; ++b) blocks.push_back(b);
  }
  return blocks;
}

// Decodes `blocks` (ascending) of a unit's frame, each stretch of consecutive ones into one
// scratch, and delivers `pieces` (which lie in them) from it. `stretch(first)`: the frame's bytes
// holding the stretch that starts at block `first`, and their offset in the frame. Adds the raw
// bytes decoded to *raw. A block that fails is an error with *damaged set.
Status DecodeStretches(
    const compress::FrameLayout& layout, std::span<const size_t> blocks, std::span<const PackedFile::UnitPiece> pieces,
    bool verify, const std::function<std::pair<std::span<const char>, uint64_t>(size_t first)>& stretch,
    const std::function<Status(size_t i, const char* bytes)>& deliver, uint64_t* raw, bool* damaged) {
  // Each stretch of consecutive blocks decoded into one scratch, back to back, so that a piece
  // lying across blocks is contiguous there too.
  thread_local std::vector<char> scratch;
  std::vector<uint64_t> at(layout.block_count(), 0);  // where a block's bytes start in the scratch
  uint64_t total = 0;
  for (size_t b : blocks) {
    at[b] = total;
    total += layout.RawBytes(b);
  }
  if (scratch.size() < total) scratch.resize(total);
  for (size_t i = 0; i < blocks.size();) {
    size_t j = i + 1;
    while (j < blocks.size() && blocks[j] == blocks[j - 1] + 1) ++j;
    const uint64_t from = at[blocks[i]], to = at[blocks[j - 1]] + layout.RawBytes(blocks[j - 1]);
    const auto [bytes, bytes_at] = stretch(blocks[i]);
    Status st = compress::DecodeBlocksAt(bytes, bytes_at, layout, blocks[i], blocks[j - 1] + 1,
                                         std::span<char>(scratch.data() + from, to - from), verify);
    if (!st.ok()) {
      *damaged = true;
      return st.error();
    }
    i = j;
  }
  *raw += total;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const size_t b = layout.BlocksOf(pieces[i].offset, pieces[i].length).first;
    GRAPHFS_RETURN_IF_ERROR(deliver(i, scratch.data() + at[b] + (pieces[i].offset - layout.RawOffset(b))));
  }
  return Status::Ok();
}

}  // namespace

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
    auto blocks = BlocksOfPieces(*layout, pieces, u.raw_length);
    if (!blocks.ok()) return blocks.error();
    if (2 * blocks->size() > layout->block_count()) {
      outcome = PiecesOutcome::kMostBlocks;
      return Status::Ok();
    }
    uint64_t payload = 0, raw = 0;
    for (size_t b : *blocks) payload += layout->blocks[b].payload_bytes;
    GRAPHFS_RETURN_IF_ERROR(DecodeStretches(
        *layout, *blocks, pieces, /*verify=*/!checked,
        [&](size_t) { return std::make_pair(bytes, uint64_t{0}); }, deliver, &raw, &damaged));
    Learn(k, bytes);
    AddNs(counters_->decode_ns, start);
    counters_->frame_bytes_from_memory.fetch_add(payload, std::memory_order_relaxed);
    counters_->bytes_decoded.fetch_add(raw, std::memory_order_relaxed);
    counters_->run_blocks_decoded.fetch_add(blocks->size(), std::memory_order_relaxed);
    counters_->run_block_bytes_decoded.fetch_add(raw, std::memory_order_relaxed);
    outcome = PiecesOutcome::kDecoded;
    return Status::Ok();
  });
  if (!held.ok()) return damaged ? Damaged(k, held.error()) : held.error();
  return outcome;
}

Status PackedFile::ReadLayouts(std::span<const UnitPieces> units) {
  // A frame's header and table: 32 + 8 + 16 bytes a block, read as if its blocks were no larger
  // than 32 KiB (graphfs-stripe cuts them at about 64 KiB: a 2 MiB unit's table is 552 bytes,
  // one or two pages). A table longer than that (smaller blocks) is left to a whole read.
  constexpr uint64_t kSmallestBlockGuess = 32 << 10;
  const uint64_t stream_size = stream_->size();
  struct Head {
    size_t unit = 0;
    uint64_t offset = 0, length = 0, buf_at = 0;  // the pages read, in the stream and in the buffer
  };
  std::vector<Head> heads;
  uint64_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(layouts_mu_);
    for (const UnitPieces& e : units) {
      if (e.pieces.empty() || e.unit >= dir_.units().size() || layouts_[e.unit] != nullptr || layout_read_[e.unit]) continue;
      const PackedUnit& u = dir_.units()[e.unit];
      const uint64_t table = compress::kUnitHeaderBytes + compress::kBlockTableHeadBytes +
                             compress::kBlockEntryBytes * ((u.raw_length + kSmallestBlockGuess - 1) / kSmallestBlockGuess);
      const uint64_t from = PageDown(u.frame_offset);
      const uint64_t to = std::min(PageUp(u.frame_offset + std::min<uint64_t>(u.frame_length, table)), PageUp(stream_size));
      if (to <= from) continue;
      layout_read_[e.unit] = true;  // once, known or not: a whole read learns it otherwise
      heads.push_back({e.unit, from, to - from, bytes});
      bytes += to - from;
    }
  }
  if (heads.empty()) return Status::Ok();
  AlignedBuffer buf(bytes);
  if (!buf.ok()) return Error(ENOMEM, "no memory for " + std::to_string(bytes) + " bytes of frames' block tables");
  std::vector<StripedFile::ReadRequest> requests;
  for (const Head& h : heads) requests.push_back({h.offset, std::min(h.offset + h.length, stream_size) - h.offset, buf.data() + h.buf_at});
  GRAPHFS_RETURN_IF_ERROR(stream_->ReadMany(requests));
  counters_->frame_bytes.fetch_add(bytes, std::memory_order_relaxed);
  counters_->layout_bytes_read.fetch_add(bytes, std::memory_order_relaxed);
  counters_->layouts_read.fetch_add(heads.size(), std::memory_order_relaxed);
  for (const Head& h : heads) {
    const PackedUnit& u = dir_.units()[h.unit];
    const uint64_t skip = u.frame_offset - h.offset;
    const uint64_t have = std::min<uint64_t>(std::min(h.offset + h.length, stream_size) - u.frame_offset, u.frame_length);
    // Verified here (the header's checksum covers the table): a table that does not check is
    // not learned, and the whole read that follows reports the damage (EIO, logged, counted).
    // A v1 frame, or a table longer than was read, is not learned either.
    Learn(h.unit, std::span<const char>(buf.data() + h.buf_at + skip, have), /*verify_checksum=*/true);
  }
  return Status::Ok();
}

Result<std::vector<bool>> PackedFile::ReadPieces(
    std::span<const UnitPieces> units, const std::function<Status(size_t entry, size_t i, const char* bytes)>& deliver) {
  std::vector<bool> done(units.size(), false);
  // A table read that failed (a disk's error) leaves the layouts unknown: those units are read
  // whole below, whose read reports the error where it belongs, or survives it (parity).
  (void)ReadLayouts(units);
  // Per entry taken: its layout, its blocks, and the reads (file ranges in whole pages) that
  // hold them — stretches of blocks less than kGapBytes apart share one read (a request saved
  // costs more than the gap's bytes on a disk that seeks).
  constexpr uint64_t kGapBytes = 64 << 10;
  struct Read {
    uint64_t offset = 0, length = 0, buf_at = 0;  // in the stream, and where it lands in the buffer
  };
  struct Taken {
    size_t entry = 0;
    std::shared_ptr<const compress::FrameLayout> layout;
    std::vector<size_t> blocks;
    std::vector<Read> reads;
  };
  const uint64_t stream_size = stream_->size();
  size_t next = 0;
  while (next < units.size()) {
    // One batch: entries in order until their reads would pass kPiecesReadBytes.
    std::vector<Taken> batch;
    uint64_t bytes = 0;
    for (; next < units.size(); ++next) {
      const UnitPieces& e = units[next];
      if (e.pieces.empty() || e.unit >= dir_.units().size()) continue;
      const PackedUnit& u = dir_.units()[e.unit];
      std::shared_ptr<const compress::FrameLayout> layout = KnownLayout(e.unit);
      if (layout == nullptr) continue;
      auto blocks = BlocksOfPieces(*layout, e.pieces, u.raw_length);
      if (!blocks.ok()) return blocks.error();
      if (2 * blocks->size() > layout->block_count()) continue;
      Taken t{next, layout, std::move(*blocks), {}};
      uint64_t need = 0;
      for (size_t b : t.blocks) {
        const compress::FrameLayout::Block& block = layout->blocks[b];
        const uint64_t from = PageDown(u.frame_offset + block.frame_offset);
        const uint64_t to = std::min(PageUp(u.frame_offset + block.frame_offset + block.payload_bytes), PageUp(stream_size));
        if (!t.reads.empty() && from <= t.reads.back().offset + t.reads.back().length + kGapBytes) {
          Read& last = t.reads.back();
          const uint64_t end = std::max(last.offset + last.length, to);
          need += end - (last.offset + last.length);
          last.length = end - last.offset;
        } else {
          t.reads.push_back({from, to - from, 0});
          need += to - from;
        }
      }
      if (!batch.empty() && bytes + need > kPiecesReadBytes) break;
      for (Read& r : t.reads) {
        r.buf_at = bytes;
        bytes += r.length;
      }
      batch.push_back(std::move(t));
    }
    if (batch.empty()) break;
    AlignedBuffer buf(bytes);
    if (!buf.ok()) return Error(ENOMEM, "no memory for " + std::to_string(bytes) + " bytes of runs' blocks");
    std::vector<StripedFile::ReadRequest> requests;
    for (const Taken& t : batch) {
      for (const Read& r : t.reads) {
        // The stream's last page may be short: the read stops at its end.
        const uint64_t length = std::min(r.offset + r.length, stream_size) - r.offset;
        requests.push_back({r.offset, length, buf.data() + r.buf_at});
      }
    }
    GRAPHFS_RETURN_IF_ERROR(stream_->ReadMany(requests));
    counters_->frame_bytes.fetch_add(bytes, std::memory_order_relaxed);
    counters_->run_block_bytes_read.fetch_add(bytes, std::memory_order_relaxed);
    for (const Taken& t : batch) {
      const UnitPieces& e = units[t.entry];
      const PackedUnit& u = dir_.units()[e.unit];
      const auto start = std::chrono::steady_clock::now();
      // The frame's bytes a read holds: from the frame's first byte it covers on.
      auto stretch = [&](size_t first) {
        const uint64_t wanted = u.frame_offset + t.layout->blocks[first].frame_offset;
        const Read* r = &t.reads.front();
        for (const Read& x : t.reads)
          if (x.offset <= wanted) r = &x;
        const uint64_t from = std::max(r->offset, u.frame_offset);
        const uint64_t to = std::min(r->offset + r->length, u.frame_offset + u.frame_length);
        return std::make_pair(std::span<const char>(buf.data() + r->buf_at + (from - r->offset), to - from),
                              from - u.frame_offset);
      };
      uint64_t raw = 0;
      bool damaged = false;
      Status st = DecodeStretches(
          *t.layout, t.blocks, e.pieces, /*verify=*/true, stretch,
          [&](size_t i, const char* from) { return deliver(t.entry, i, from); }, &raw, &damaged);
      if (!st.ok()) return damaged ? Damaged(e.unit, st.error()) : st.error();
      AddNs(counters_->decode_ns, start);
      counters_->bytes_decoded.fetch_add(raw, std::memory_order_relaxed);
      counters_->run_blocks_decoded.fetch_add(t.blocks.size(), std::memory_order_relaxed);
      counters_->run_block_bytes_decoded.fetch_add(raw, std::memory_order_relaxed);
      counters_->run_blocks_read.fetch_add(t.blocks.size(), std::memory_order_relaxed);
      done[t.entry] = true;
    }
  }
  return done;
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
