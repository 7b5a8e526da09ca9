// A logical partition (LP) and the views jobs get of it: the types the scheduler hands out
// (chunkindex/lp_scheduler.h) and the loaders fill, and the answer to a job's ask.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chunkindex/lp_memory.h"

namespace graphfs::chunkindex {

// Bytes of the file held in an LP: a whole chunk, or a run of one (vertex-granular LPs).
struct LpExtent {
  uint64_t chunk = 0;
  uint64_t file_offset = 0;
  uint64_t length = 0;
  uint64_t lp_offset = 0;
  bool whole = false;  // the whole chunk: the loader reads it through the cache
};

struct LogicalPartition {
  uint64_t seq = 0;               // 1, 2, ... per scheduler
  std::vector<LpExtent> extents;  // ascending file offset, packed: lp_offset = sum of the previous lengths
  // Where its bytes lie: blocks of the graph's shared memory (Options::memory) where there is
  // room, which jobs map and read without the daemon; else the heap. Filled by the loader.
  LpMemory memory;
  uint64_t size = 0;
  uint64_t chunks = 0;            // distinct chunks among the extents
  // What it holds in memory once loaded: its size, or more where runs stay in the blocks the
  // disks read them into, with the gaps between them, and the whole cached units it is partly
  // made of (pinned while it lives). The window counts this (a loading LP counts its size until
  // then).
  uint64_t footprint() const { return std::max(size, memory.bytes() + memory.pinned_bytes()); }
};

// A piece of a job's view of an LP: bytes of chunk `chunk` at `file_offset`, found at
// `lp_offset` in the LP's buffer.
struct ViewPiece {
  uint64_t chunk = 0;
  uint64_t file_offset = 0;
  uint64_t length = 0;
  uint64_t lp_offset = 0;
};

// An LP as one job sees it: the edges in it that job is to process — those of its own active
// sources in its chunks (whole chunks where the chunk's edges are not in source order or the
// job has every source of it active), of chunks not handed to it before this iteration. The
// LP also holds other jobs' edges (and chunks this job already had); processing those would
// count edges twice. The view packs the pieces one after another, in file order.
struct HeldLp {
  std::shared_ptr<const LogicalPartition> lp;  // null: none
  std::vector<ViewPiece> pieces;
  uint64_t view_bytes = 0;                     // sum of the pieces' lengths
  explicit operator bool() const { return lp != nullptr; }
  uint64_t bytes() const { return view_bytes; }  // size of the view
  // "CHUNK_ID FILE_OFFSET LENGTH VIEW_OFFSET\n" per piece of the view.
  std::string MapText() const;
};

// The answer to a job's ask for its next LP.
struct LpGrant {
  bool end = false;  // the iteration is over for this job
  HeldLp held;       // otherwise the LP to read, and which of its chunks are this job's
};

}  // namespace graphfs::chunkindex
