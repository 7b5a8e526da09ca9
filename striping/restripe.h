// Converting a graph directory's large files to striped files and back.
//
// Both directions are crash-safe and resumable: the original bytes are removed only after
// the new copy is durable and verified (XXH3 of every byte), and a pending record in
// GRAPH/.graphfs/ lets a rerun continue, or clean up, whatever a killed run left.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "striping/auto_codec.h"

namespace graphfs {

// StripeRequest::compress: each file gets the codec that delivers a sample of its units fastest
// (restripe_compress.cc, ChooseCodec) — or stays raw when no codec is estimated to deliver
// faster than the disks read raw bytes (graphfs-stripe's default).
inline constexpr const char* kAutoCodec = "auto";

struct StripeRequest {
  std::string path;                 // a graph directory, or one file in it
  std::vector<std::string> disks;   // disk directories, in order
  uint64_t unit = 16ull << 20;
  // The stripe unit of each file to stripe, from its name and size (graphfs-stripe without
  // --unit: ChooseStripeUnit, stripe_unit.h); null: `unit` for every file. A file that a killed
  // run left half-done (a pending record of the same source) keeps the unit that run recorded,
  // whatever this says now: its durable bytes are laid out in it. (An explicit `unit` that
  // differs from the record's starts the file over.)
  std::function<uint64_t(const std::string& name, uint64_t size)> unit_for;
  uint64_t min_size = 64ull << 20;  // smaller files stay plain
  bool progress = true;             // progress lines on stderr
  uint64_t checkpoint = 1ull << 30; // copied bytes between durable progress records
  // Compress while striping (issue 18): each unit of a file compressed on its own with this
  // codec ("zstd:1", "svb", ...: compress/codec.h) into a checksummed frame of the file's
  // packed stream (packed_directory.h). Empty: the bytes as they are. With a codec, files
  // striped already are compressed in place; compressed ones are left alone.
  // Parity (issue 44, docs/parity.md): K parity units per row of each file striped afresh — of
  // its raw bytes, or of its packed stream when it is compressed — and the XXH3 of every block
  // of `sum_block` bytes of every unit in the disks' sums files (manifest version 2). 0: neither,
  // the layout of before. Files striped already keep their layout, unless `compress` rewrites
  // them (their new packed stream gets this parity) or `change_parity` is set.
  uint32_t parity = 0;
  // Raw files striped already over the set with another K are copied into a layout with this
  // `parity` (in their own unit, raw: docs/parity.md, "The default K"), verified (every byte's
  // XXH3, and every block's sum and row's parity), then switched to in one fsetxattr + fsync;
  // resumable through GRAPH/.graphfs/pending-parity/. Compressed files are left as they are.
  // graphfs-stripe sets it when --parity is given.
  bool change_parity = false;
  uint64_t sum_block = 64 * 1024;  // a power of two from 4 KiB that divides the unit
  std::string compress;                // or kAutoCodec: chosen per file, on a sample of its units
  uint32_t record_size = 1;            // bytes per record of the files (8 or 12: a graph's edges)
  uint64_t compress_unit = 2ull << 20; // fixed units (rounded down to whole records) where
                                       // unit_cuts gives none
  // Raw bytes per block of a frame (compress/unit_frame.h, frame version 2: each block
  // compressed and checksummed alone, so that a reader of a few records decodes only their
  // blocks — docs/block-frames.md), rounded down to whole records; 0: version 1 frames, one
  // block per unit.
  uint64_t compress_block = 64 << 10;
  // Where a file's units end, ascending offsets in (0, size] — its graph's index chunks;
  // null or empty: fixed units.
  std::function<std::vector<uint64_t>(const std::string& name, uint64_t size)> unit_cuts;
  // kAutoCodec weighs each candidate's frames against its decoding on this machine: the time to
  // deliver a byte is estimated as max(ratio / auto_disk_bandwidth, 1 / (decode speed x
  // auto_decode_cores)) — the disks and the decoding overlap — and the smallest wins.
  // auto_disk_bandwidth: bytes/s of all the disks together; 0: the sum of graphfs-calibrate's
  // records on the disks, and with none of those the smallest frames win (the disks are taken
  // for the limit). auto_decode_cores: the CPU the readers leave for decoding. When even the best
  // candidate is estimated slower than raw bytes, the file is striped raw (a file striped already
  // is left as it is), and `skipped` says why.
  // auto_memory_passes: the passes the jobs make over a file's frames in memory (the cache's frame
  // tier) for each one from the disks — each costs the decoding alone, so it weighs decode speed
  // against the frames' size: with 0 the smallest frames the disks deliver fastest win (a file
  // read once), with more a faster decoder (svb rather than shuffle-zstd:1 for R-MAT graphs).
  // auto_memory: the memory budget of the mount the graph will be read under (0: unknown, and
  // auto_memory_passes stands for it): the frames it can hold serve that share of every pass, and
  // a file whose raw bytes fit is decoded once (striping/auto_codec.h) — with little memory the
  // smallest frames win, with much the fastest decoder.
  double auto_disk_bandwidth = 0;
  double auto_decode_cores = kAutoDecodeCores;
  double auto_memory_passes = 4.0;
  uint64_t auto_memory = 0;
};

struct ConvertReport {
  std::vector<std::string> converted;
  std::vector<uint64_t> units;  // the stripe unit of each converted file (StripeFiles; same order)
  std::vector<std::string> skipped;  // with the reason, "name: why"
  std::vector<std::string> notes;    // "name: what" (e.g. `auto` kept it raw)
  uint64_t bytes = 0;   // the converted files' own bytes
  uint64_t stored = 0;  // what they take on the disks (their packed streams, if compressed)
};

Result<ConvertReport> StripeFiles(const StripeRequest& request);

struct UnstripeRequest {
  std::string path;                // a graph directory, or one striped file in it
  std::vector<std::string> disks;  // overrides the registered disk paths (same order); empty: registry
  bool progress = true;
};

Result<ConvertReport> UnstripeFiles(const UnstripeRequest& request);

}  // namespace graphfs
