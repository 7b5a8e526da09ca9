// graphfs-update's core on a plain graph directory: a batch of edge additions and deletions
// (grid/edge_batch.h: the blocks come out as `preprocess` of the updated edge list would write
// them) applied to GRAPH, written
//  - as a complete graph directory OUTPUT (meta, offsets, every block, `column` and `row`;
//    untouched blocks copied), or
//  - in place, as GRAPH's next version: the new version is built in the hidden sibling
//    `.NAME.update/` (untouched blocks hard links to the current ones; `column`, `row` and, in a
//    sorted graph, each touched block extent maps (grid/graph_file.h) over the old version's
//    bytes and the rebuilt runs, so only changed bytes are written; anything else in GRAPH —
//    job results, notes — stays with the old version),
//    swapped with GRAPH in one renameat2(RENAME_EXCHANGE), and the old version renamed to
//    `NAME@N` (N from `GRAPH/.graphfs/version`, 0 when absent). A kill at any point leaves GRAPH
//    the old or the new version, complete: the next run finishes a swapped one (renames it to
//    `NAME@N`) or throws away an unswapped one before it starts. The points a kill can fall
//    between are named in update_crash_points.h, where tests stop a run (GRAPHFS_CRASH_AT).
// `meta` goes last (a directory with `meta` is complete); a refused batch changes nothing. When
// GRAPH has an up-to-date chunk index, the new graph gets one of the same chunk size before it
// is swapped in (only the touched block rows are scanned; the others' records are copied).
// Old versions are reclaimed per --keep (version_reclaim.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "volume/version_reclaim.h"

namespace graphfs::admin {

struct UpdateOptions {
  std::string graph_dir;
  std::string add_file, delete_file;  // binary edge lists in the graph's format ("" none)
  std::string output_dir;             // must not exist yet; empty: GRAPH's next version, in place
  // Block order: kAuto takes the graph as preprocessed with --sort-sources when every block
  // the batch touches is in source order.
  enum class Order { kAuto, kSorted, kInput } order = Order::kAuto;
  bool allow_missing = false;  // deletions matching no edge are counted, not refused
  // In place: hold the `keep` newest kept versions and reclaim the older ones nothing uses
  // (version_reclaim.h); remembered in GRAPH/.graphfs/keep. Unset: the remembered count, or
  // every version is held.
  std::optional<uint64_t> keep;
  // In place: when the new version would keep more than `compact_above` times a freshly
  // preprocessed graph's bytes (blocks, column and row) alive — old pieces only partly used —,
  // it is written compactly instead (one copy; the maps read it). `compact`: always.
  double compact_above = 4.0 / 3.0;
  bool compact = false;
};

struct UpdateStats {
  uint64_t edges = 0;  // in the new graph
  uint64_t added = 0, deleted = 0, missing = 0;
  uint64_t blocks = 0, blocks_touched = 0;
  uint64_t touched_bytes = 0;  // the touched blocks' new bytes
  uint64_t bytes_written = 0;  // everything written (blocks, maps or files, offsets, meta, the index)
  uint64_t map_extents = 0;    // in place: extents of the new `column` and `row` maps
  uint64_t delta_bytes = 0;    // in place, sorted: the rebuilt runs of the touched blocks (the
                               //   rest of each touched block is read from the old version)
  bool sorted = false;
  double seconds = 0;
  bool indexed = false;      // the new graph got a chunk index (the old one had a fresh one)
  double index_seconds = 0;
  uint64_t index_ranges_reused = 0;  // source ranges whose index records were copied, not rebuilt
  bool index_shared = false;         // the new index shares the old one's table files
  uint64_t version = 0;      // in place: the new version's number (the old one is NAME@version-1)
  std::string old_version;   // in place: where the old version is now
  std::vector<std::string> left_behind;  // in place: GRAPH's other entries (job results, notes),
                                         // which stay with the old version
  uint64_t referenced_bytes = 0;  // in place: what the new version's files keep alive on disk
  bool compacted = false;         // in place: written compactly (UpdateOptions::compact_above)
  std::optional<volume::ReclaimReport> reclaim;  // in place, with a keep count: what was reclaimed
  std::string reclaim_error;             // a reclaim that failed (the update itself stands)
};

Result<UpdateStats> UpdateGraph(const UpdateOptions& options);


// What an in-place run does first, alone: finishes the update a killed run left swapped in
// (renames the old version to NAME@N) or removes one it left unswapped. Returns what it did
// ("" if nothing was left).
Result<std::string> RecoverUpdate(const std::string& graph_dir);

}  // namespace graphfs::admin
