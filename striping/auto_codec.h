// graphfs-stripe --compress auto's cost model: the time one pass of graph jobs over a file is
// estimated to take per raw byte, for a codec of a given ratio (frame bytes / raw bytes) and
// decode speed, so that the candidate with the smallest wins (restripe_compress.cc, ChooseCodec).
//
// Which codec is best depends on the memory the file will be read under, not on the file alone:
// svb decodes 3x faster than shuffle-zstd:1 and makes frames 1.36x larger on an R-MAT column.
// Where the frames mostly fit, every pass decodes the whole file from memory and the faster
// decoder wins (at scale 22, f = 1/2 of the sweep, shuffle-zstd:1 cost the daemon 20.6 s of
// decoding); where memory holds an eighth of the graph, most of a pass comes from the disks and
// the smaller frames win (f = 1/8: 18.4 GB read instead of 25.2 GB: docs/memory-as-cache.md,
// tenth part). So:
//
//   - memory unknown (0): a pass from the disks, max(disk, decode) — they overlap —, plus
//     `memory_passes` passes of decoding alone over frames the cache kept;
//   - memory known: the frames it holds, room = memory x kAutoFramesShareOfMemory, serve a share
//     h = min(1, room / (ratio x file bytes)) of each pass, the disks the rest:
//     pass = max((1 - h) x ratio / bandwidth, decode); and where the file's raw bytes fit in the
//     room, its decoded units are kept across passes (volume/internal/memory_budget.h,
//     DecodedFileFits): only the first pass costs, max(ratio / bandwidth, decode).
//
// decode = 1 / (the decode speed timed on one core x decode_cores). Measured while W1 ran at
// scale 22 on two cores, the daemon's decoders delivered 0.6-0.66 of the speed the tool times
// for shuffle-lz4 and shuffle-zstd:1 (nine decoding threads beside the jobs, the LP loaders and
// the I/O), so the default counts half a core: with it the model ranks the three codecs as the
// runs did at f = 1/8 (shuffle-lz4 57.1 s, shuffle-zstd:1 62.0 s, svb 68.5 s) and keeps svb at
// f = 1/2 (docs/memory-as-cache.md, tenth part).
//
// Raw bytes are the candidate of ratio 1 that costs no decoding (decode_bps 0).
#pragma once

#include <cstdint>

namespace graphfs {

// The share of a mount's memory budget that serves a pass from frames in memory. The frame tier's
// capacity is at most two thirds of the budget while jobs run (staging and the LP window take up
// to an eighth each, the graph's index its bytes, the decoded units at least an eighth of the
// rest: volume/internal/memory_budget.h) — 507 of 768 MiB at scale 22 with W1 running —, but what
// a pass finds there is less: fitted to the bytes W1 read from the disks at scale 22 with svb and
// with shuffle-zstd:1 (f = 1/8: 25.4 and 18.4 GB; f = 1/4: 21.5 and 13.3 GB), the share was
// 0.2-0.3 at f = 1/8 and 0.4 at f = 1/4, while at f = 1/2 the whole column's frames stayed
// (0.6). Half is the middle of what was measured (docs/memory-as-cache.md, tenth part).
inline constexpr double kAutoFramesShareOfMemory = 0.5;
// Cores the jobs leave for decoding, at the speed the tool times on one (above: why half).
inline constexpr double kAutoDecodeCores = 0.5;

struct AutoCostModel {
  double disk_bandwidth = 0;   // bytes/s of all the disks together; > 0
  double decode_cores = kAutoDecodeCores;
  double memory_passes = 4.0;  // passes over frames in memory per pass from the disks (memory 0)
  uint64_t memory = 0;         // the budget of the mount the file will be read under; 0: unknown
};

struct AutoCost {
  double from_memory = 0;  // h: the share of a pass the frames in memory serve
  double disk = 0;         // seconds per raw byte of a pass: the disks' part,
  double decode = 0;       //   the decoding (0 for raw bytes),
  double pass = 0;         //   and what the model charges for a pass (the sum to compare)
};

// `decode_bps` 0: raw bytes (nothing to decode; ratio should be 1).
AutoCost AutoPassCost(const AutoCostModel& model, double ratio, double decode_bps, uint64_t file_bytes);

}  // namespace graphfs
