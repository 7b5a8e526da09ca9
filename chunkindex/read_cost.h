// HUS-Graph's I/O cost model, per chunk: read only the runs of a chunk that hold active
// sources' edges, or the whole chunk — whichever the disks serve faster.
//
//   cost of reading B bytes in R requests   R · seconds_per_request + B / bytes_per_second
//
// HUS-Graph decides per interval between row-oriented selective loading (|A|·M / T_rr) and
// column-oriented streaming (|V|/P · M / T_sr); here the choice is per chunk, with the two
// disk parameters measured by `graphfs-calibrate` (striping/calibrate.h): a gap between two
// runs is read through when that costs less than one more request, and the chunk is read
// whole when that costs less than its runs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace graphfs::chunkindex {

// A byte range relative to the start of a chunk.
struct ByteRun {
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t end() const { return offset + length; }
  bool operator==(const ByteRun&) const = default;
};

struct ReadCost {
  double bytes_per_second = 100e6;     // sequential read throughput of one disk (HUS-Graph's T_sr)
  double seconds_per_request = 100e-6;  // what a request costs beyond its bytes: seek, rotation, submission
  uint64_t align = 4096;               // direct reads cover whole blocks of this size
  // Runs are read instead of the whole chunk only when they cost at most this share of it: a
  // whole chunk enters the shared cache and serves the other readers and later iterations,
  // runs do not, so a saving of a few percent is not worth losing that.
  double partial_share = 0.9;

  double Seconds(uint64_t bytes, uint64_t requests) const {
    return static_cast<double>(requests) * seconds_per_request + static_cast<double>(bytes) / bytes_per_second;
  }
  // Gaps up to this many bytes are cheaper to read through than to skip with another request.
  uint64_t GapWorthReading() const { return static_cast<uint64_t>(seconds_per_request * bytes_per_second); }
};

struct ChunkReadPlan {
  bool whole = false;
  std::vector<ByteRun> extents;  // what to read (whole: one extent, the chunk); ascending, disjoint
  uint64_t bytes = 0;            // sum of the extents' lengths: what the LP holds
  uint64_t disk_bytes = 0;       // what the disks move (extents widened to `align`)
  double seconds = 0;            // the model's cost of the plan
  double whole_seconds = 0;      //   and of reading the whole chunk
};

// The plan for one chunk (whole when its runs would cost more than partial_share of it) of `chunk_length` bytes at file offset `chunk_offset` (for the
// alignment) of which `runs` (ascending, disjoint) are wanted.
//
// A compressed chunk (`stored_length` > 0: the bytes of its frame on the disks) is read whole
// and decoded whatever part of it is wanted, so the runs save no disk time: both plans cost
// its frame, and the runs are kept when they hold at most partial_share of its bytes (a
// smaller LP: less to copy and for the jobs to scan).
ChunkReadPlan PlanChunkRead(uint64_t chunk_offset, uint64_t chunk_length, std::span<const ByteRun> runs,
                            const ReadCost& cost, uint64_t stored_length = 0);

}  // namespace graphfs::chunkindex
