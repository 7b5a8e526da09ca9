// A compressed striped file (graphfs-stripe --compress) as the volume reads it: its packed
// stream (a StripedFile of checksummed frames, striping/packed_directory.h) and the directory
// of its units. Every read decodes whole units — but an LP's few runs of a unit, which decode
// from the frame's blocks they lie in (frames of version 2: docs/block-frames.md): from the
// frame the frame tier holds (DecodePieces), else read alone from the disks once the frame's
// layout is known (ReadPieces); a frame whose checksum does not match is EIO
// for that read, a log line naming the file, the unit and its disks, and a counter in stats —
// never wrong bytes. Read-only: VolumeFile makes the file plain before its first write.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "cache/chunk_cache.h"
#include "cache/unit_layout.h"
#include "common/result.h"
#include "compress/unit_frame.h"
#include "striping/packed_directory.h"
#include "striping/striped_file.h"

namespace graphfs::volume {

class FrameTier;

// The volume's counters of compressed reads (stats: "compressed").
struct PackedCounters {
  std::atomic<uint64_t> units_decoded{0};
  std::atomic<uint64_t> frame_bytes{0};    // read from the disks
  std::atomic<uint64_t> frame_bytes_from_memory{0};  // decoded from frames the frame tier held
  std::atomic<uint64_t> bytes_decoded{0};  // what they decoded to
  std::atomic<uint64_t> decode_ns{0};      // in DecodeUnit (checksum and codec)
  std::atomic<uint64_t> checksum_errors{0};
  // Of the above, LPs' pieces (runs; whole chunks that take less than half a unit) decoded from
  // their frames' blocks alone (PackedFile::DecodePieces): the blocks, and the raw bytes they
  // decoded to (counted in bytes_decoded too).
  std::atomic<uint64_t> run_blocks_decoded{0};
  std::atomic<uint64_t> run_block_bytes_decoded{0};
  // Of those, the blocks read from the disks alone (PackedFile::ReadPieces: the frame was not in
  // memory), and the bytes the disks read for them (whole pages; counted in frame_bytes too).
  std::atomic<uint64_t> run_blocks_read{0};
  std::atomic<uint64_t> run_block_bytes_read{0};
  // Frames' headers and block tables read alone from the disks to learn where their blocks lie
  // before any whole read of the frame (PackedFile::ReadPieces), and the bytes read for them
  // (whole pages; counted in frame_bytes too).
  std::atomic<uint64_t> layouts_read{0};
  std::atomic<uint64_t> layout_bytes_read{0};
};

class PackedFile {
 public:
  // Reads the directory of `stream`'s packed stream (its manifest must have `packed`).
  static Result<std::shared_ptr<PackedFile>> Open(std::shared_ptr<StripedFile> stream, PackedCounters* counters);

  uint64_t size() const { return dir_.raw_size(); }  // the file's own size
  const PackedDirectory& directory() const { return dir_; }
  // One cache unit per compressed unit.
  std::shared_ptr<const cache::ChunkLayout> layout() const { return layout_; }
  // Up to `length` decoded bytes at `offset` into `buf`; fewer at the end of the file.
  Result<uint64_t> Read(uint64_t offset, uint64_t length, char* buf);
  // A run an LP wants of one unit: bytes [offset, offset + length) of the unit.
  struct UnitPiece {
    uint64_t offset = 0;
    uint64_t length = 0;
  };
  enum class PiecesOutcome {
    kDecoded,       // every piece delivered
    kFrameNotHeld,  // the frame tier does not hold the unit's frame now (or the file has none)
    kMostBlocks,    // the pieces lie in more than half of the frame's blocks (a v1 frame: its one)
  };
  // The pieces of unit k (ascending), decoded from only the blocks of its frame they lie in,
  // when the frame tier holds the frame (it is not read from the disks for this: the whole
  // unit's decode, which the cache may keep, is the way then) and they lie in at most half of
  // its blocks (else decoding the whole unit costs about as much, and the cache may keep it).
  // `deliver(i, bytes)` gets piece i's bytes, valid during the call. The blocks' checksums are
  // verified unless the whole frame was before; a damaged block is EIO naming the file, unit,
  // block and disks (logged and counted as DecodeFrame's), and the frame leaves the tier.
  Result<PiecesOutcome> DecodePieces(size_t k, std::span<const UnitPiece> pieces,
                                     const std::function<Status(size_t i, const char* bytes)>& deliver);
  // Pieces of several units read from the disks when the frame tier does not hold their frames:
  // of each unit only the blocks of its frame the pieces lie in, whole pages around them, all
  // the units' reads at once (path 3 of docs/block-frames.md) — not each frame whole for a few
  // runs. The layout of a frame (where its blocks lie) is learned from any read of the frame
  // whole, or else here: the headers and block tables of the units not known yet are read first,
  // all at once (a page or two each, once per unit and mount), so that a cold sparse pass reads
  // blocks, not whole frames. For a frame of one block (version 1), a table that does not
  // check, and where the pieces lie in more than half of its blocks, the entry is left (false in
  // the result) for the caller to read the unit whole — which the frame tier may keep.
  // `deliver(entry, i, bytes)` gets piece i of units[entry], valid during the call. Every block's
  // checksum is verified; a damaged block is EIO naming it (logged and counted as DecodeFrame's).
  // At most kPiecesReadBytes are read at once.
  struct UnitPieces {
    size_t unit = 0;
    std::vector<UnitPiece> pieces;  // ascending
  };
  static constexpr uint64_t kPiecesReadBytes = 8ull << 20;
  Result<std::vector<bool>> ReadPieces(std::span<const UnitPieces> units,
                                       const std::function<Status(size_t entry, size_t i, const char* bytes)>& deliver);
  // Adds to per_disk[d] the frame bytes on disk d of the units holding [offset, offset + length).
  void DiskShare(uint64_t offset, uint64_t length, std::vector<uint64_t>& per_disk) const;
  // Reads its frames through `frames` (the mount's frame tier, volume/internal/frame_tier.h) as file
  // `key` there, instead of from the disks at every decode; its decoded units are file
  // `decoded_key` in the cache. Before the first read.
  void UseFrames(std::shared_ptr<FrameTier> frames, uint64_t key, uint64_t decoded_key);

 private:
  PackedFile(std::shared_ptr<StripedFile> stream, PackedDirectory dir, std::shared_ptr<const cache::ChunkLayout> layout,
             PackedCounters* counters)
      : stream_(std::move(stream)),
        dir_(std::move(dir)),
        layout_(std::move(layout)),
        counters_(counters),
        layouts_(dir_.units().size()),
        layout_read_(dir_.units().size(), false) {}
  // Unit k decoded into `out` (its raw length): its frame from the frame tier, else the disks.
  // `whole`: `out` is the unit's whole buffer, which the cache keeps (a piece copied out of a
  // scratch decode is not: its frame is kept whatever the decoded units' room).
  Status DecodeUnit(size_t k, char* out, bool whole);
  // The frame tier's request for unit k's frame (frames_ set).
  cache::UnitRequest FrameRequest(size_t k) const;
  // Unit k decoded from its frame's bytes, checksum first (unless `checked`: verified before).
  Status DecodeFrame(size_t k, const char* frame, bool from_disk, bool checked, char* out);
  // The error of a frame that did not decode, logged with the disks it lies on, and counted.
  Error Damaged(size_t k, const Error& e) const;
  // Unit k's frame layout, learned from a frame of version 2 decoded whole or held (null: not
  // seen yet). ~1 KiB a 2 MiB unit of 12-byte records (32 blocks): a scale-22 column's 384
  // units keep 384 KiB.
  std::shared_ptr<const compress::FrameLayout> KnownLayout(size_t k) const;
  // From a frame decoded whole, or whose blocks were (its table verified by then, or while in
  // memory: `verify_checksum` false), or a prefix of the header and table alone (true).
  void Learn(size_t k, std::span<const char> frame, bool verify_checksum = false);
  // Reads from the disks the headers and block tables of those of `units` whose layout is not
  // known and was not read before, all at once, and learns them (ReadPieces' first step; an
  // error leaves them unknown).
  Status ReadLayouts(std::span<const UnitPieces> units);

  std::shared_ptr<StripedFile> stream_;
  std::shared_ptr<FrameTier> frames_;
  std::shared_ptr<cache::UnitSource> frame_source_;
  uint64_t frames_key_ = 0;
  uint64_t decoded_key_ = 0;
  PackedDirectory dir_;
  std::shared_ptr<const cache::ChunkLayout> layout_;
  PackedCounters* counters_;
  mutable std::mutex layouts_mu_;
  std::vector<std::shared_ptr<const compress::FrameLayout>> layouts_;  // by unit; null: not seen
  std::vector<bool> layout_read_;  // by unit: its header and table were read alone (ReadLayouts), known or not
};

}  // namespace graphfs::volume
