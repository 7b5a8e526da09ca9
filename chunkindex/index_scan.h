// The index build's scan (index_builder.cc's BuildIndex drives it): worker threads take source
// ranges of `row` one at a time and write each chunk's records — its summary, its sources and
// the degrees — or copy them from a previous version's index when the range's blocks are the
// same files; then the chunk lists. Not a public header.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "chunkindex/chunk_layout.h"
#include "chunkindex/index_db.h"
#include "chunkindex/progress.h"
#include "common/result.h"
#include "grid/grid_layout.h"

namespace graphfs::chunkindex {

// What a build takes from a previous version's index (BuildOptions::reuse_from).
struct Reuse {
  std::unique_ptr<IndexDb> db;
  ChunkPlan plan;               // the previous version's chunks
  std::vector<bool> ranges;     // per source range: blocks (i, *) are the same files
};

// Everything the workers share.
struct BuildState {
  const Reuse* reuse = nullptr;
  std::atomic<uint64_t> ranges_reused{0};
  const grid::GridLayout* layout = nullptr;
  const ChunkPlan* plan = nullptr;
  IndexDb* db = nullptr;
  ProgressBar* progress = nullptr;
  uint64_t read_bytes = 0;
  std::atomic<uint64_t> next_range{0};
  std::atomic<bool> failed{false};
  std::atomic<uint64_t> source_pairs{0};
  std::mutex mu;
  std::optional<Error> error;

  void Fail(const Error& e) {
    std::lock_guard<std::mutex> lock(mu);
    if (!error) error = e;
    failed = true;
  }
};

// Runs `threads` workers over every source range not reused; the first error goes to st.error.
void ScanRanges(BuildState& st, int threads);

// The file chunk lists (`F` records) of `plan`.
Status WriteFileChunks(IndexDb* db, const ChunkPlan& plan);
// In a shared database: the records the new plan has no more of — the chunks a block lost (their
// keys are per block), and the chunk lists' entries past their new ends.
Status DeleteStale(IndexDb* db, const ChunkPlan& then, const ChunkPlan& now);

}  // namespace graphfs::chunkindex
