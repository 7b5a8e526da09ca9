// How the direct LP loader (VolumeCore::CopyRuns) reads the pieces of a striped file that are not
// in the cache: each piece split where the stripe units change disks, aligned out to the
// direct-I/O block, merged with its neighbours where the aligned spans touch, and packed into
// batches of bounded buffer size that each lie on ONE disk. The batches come out interleaved
// over the disks in proportion to each disk's share, so a fixed window of batches in flight
// always holds work for every disk that has some left, and the disks finish together: an LP
// loads in the time of its busiest disk, not in the time of whichever disk the file order
// happens to put in the window (a contiguous 128 MiB window of 64 MiB units feeds two disks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "striping/stripe_map.h"

namespace graphfs::volume {

// A range of the file to copy to `out_offset` of the destination.
struct CopyRange {
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t out_offset = 0;
};

struct RunSpan {
  uint64_t begin = 0, end = 0;  // aligned file range, read as one request
  uint64_t at = 0;              // where it lands in the batch's buffer (aligned)
};

struct RunBatch {
  uint32_t disk = 0;
  std::vector<RunSpan> spans;  // ascending, on `disk`
  size_t first = 0, last = 0;  // its pieces: RunBatchPlan::pieces[first, last), ascending
  uint64_t bytes = 0;          // buffer room
};

struct RunBatchPlan {
  std::vector<CopyRange> pieces;    // the input, cut at stripe units, grouped by batch
  std::vector<size_t> origin;       // per piece, the index of the input range it was cut from
  std::vector<RunBatch> batches;    // in submission order
  std::vector<uint64_t> disk_bytes; // per disk, the bytes its spans read
};

// `pieces` ascending by offset, not overlapping, inside [0, file_size). `align` a power of two
// that divides the stripe unit; `limit` (>= align) the most buffer room one batch may use.
RunBatchPlan PlanRunBatches(const std::vector<CopyRange>& pieces, const StripeMap& map, uint64_t file_size,
                            uint64_t align, uint64_t limit);

}  // namespace graphfs::volume
