// Where an integrated-mode column stream gets its edges: logical partitions
// (LPs), files of edge records in the graph's format made of the chunks of
// `column` that hold active sources, handed out one at a time in an order the
// source chooses. graphfs's control directory is the real source
// (graphfs_partitions.h); tests plug in their own.
//
// The edges arrive in no particular order, and chunks hold edges of inactive
// sources too: EdgeStream filters them by the active set, as it filters the
// neighbouring blocks a rounded read pulls in.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "engines/core/bitmap.h"

namespace graphfs::engine {

struct LogicalPartition {
  bool end = false;   // the iteration has no LP left
  // The edges in memory (shared with other jobs, read-only), valid until Done(); or, when
  // there are none, `bytes` of them readable from `fd` with pread. (With AsksAhead(), both stay
  // valid through the Next() after the one that returned them, too.)
  std::vector<std::span<const char>> spans;
  int fd = -1;        // owned by the source, valid until Done()
  std::string path;   // for messages
  uint64_t bytes = 0;
  // A turn at the cores: the stream calls EndTurn() once its threads are done with this LP.
  bool turn = false;
};

class PartitionSource {
 public:
  virtual ~PartitionSource() = default;
  // Starts an iteration over the edges of `active` sources (null: every vertex).
  virtual Status SetActive(const Bitmap* active) = 0;
  // Blocks until the next LP is ready, or says the iteration is over.
  virtual Result<LogicalPartition> Next() = 0;
  // Done with the LPs Next() returned: their fds are closed.
  virtual Status Done() = 0;
  // Whether Next() may be called while the LP the last Next() returned is still being read:
  // that LP stays valid until the Next() after, Done() or SetActive(). The stream then asks for
  // LP k+1 while its threads process LP k, and the ask's round trip is off its critical path.
  virtual bool AsksAhead() const { return false; }
  // Done computing on an LP marked `turn`: the source may let another job compute (graphfs's
  // turns at the cores, `compute_slots=`). Safe while a Next() of AsksAhead() waits.
  virtual Status EndTurn() { return Status::Ok(); }
};

}  // namespace graphfs::engine
