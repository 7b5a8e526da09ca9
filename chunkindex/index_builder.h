// Building the chunk index of a graph directory (what graphfs-index runs).
//
// One streaming pass over `row`: row holds the blocks of source range i
// together, so a worker thread takes a whole source range (blocks (i, 0..P-1)),
// streams it with large preads, and counts, per chunk, the out-edges of each
// source; the vertex degrees of range i are final when the range is done. The
// chunks of `column` hold the same bytes (the same blocks in another order):
// they are mapped onto the row chunks (content ids), and a sample of blocks is
// compared between the two files to make sure. Memory per worker: one read
// buffer, one counter per vertex of a range, and the encoded summaries of one
// range until they are written (one RocksDB WriteBatch per range).
//
// The database is built in GRAPH/.graphfs/index.building-PID and swapped with
// GRAPH/.graphfs/index when complete (chunkindex/index_install.h), so an
// interrupted build leaves the old index (or none, if there was none), never a
// half-written one; the next run, even one with nothing to build, removes what
// it left.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "chunkindex/chunk_size.h"
#include "grid/graph_file.h"
#include "common/result.h"

namespace graphfs::chunkindex {

struct BuildOptions {
  std::string graph_dir;
  std::optional<uint64_t> chunk_size;  // --chunk-size; else the LLC formula
  int threads = 0;                     // 0: min(cores, partitions)
  bool force = false;                  // rebuild even if up to date
  bool progress = false;               // progress bar on stderr
  uint64_t read_bytes = 64ull << 20;   // size of one pread
  std::function<void(const std::string&)> log;  // informational lines (may be empty)
  // A previous version of the same graph with an up-to-date index of the same chunk size
  // (graphfs-update): a source range whose blocks (i, 0..P-1) are the same files in both
  // directories (hard links: same inodes) takes its records — chunk summaries, sources, degrees
  // — from that index instead of being scanned. Anything that does not match is scanned.
  std::string reuse_from;
  // Reads the graph's striped files through their parts (graphfs-update on a striped graph;
  // null: ordinary files and extent maps over them). Must outlive the build.
  const grid::StubFiles* stubs = nullptr;
};

struct BuildReport {
  bool rebuilt = false;
  std::string reason;  // why it was (re)built, or why nothing was done
  ChunkSizeChoice chunk_size;
  MachineCache machine;
  double seconds = 0;
  double scan_seconds = 0;    // the streaming pass (read, count, encode, write batches)
  double finish_seconds = 0;  // flush + compaction of the database, renames
  uint64_t index_bytes = 0;  // size of GRAPH/.graphfs/index
  uint64_t graph_bytes = 0;  // column + row + blocks
  uint64_t bytes_read = 0;
  uint64_t chunks = 0;        // per file (column and row have the same number)
  uint64_t source_pairs = 0;  // (chunk, source) pairs stored
  int threads = 0;
  uint64_t ranges_reused = 0;  // source ranges whose records were kept from BuildOptions::reuse_from's index
  // The reused ranges' records kept their content ids, so the new index started as the old one
  // (its table files hard-linked, IndexDb::CreateSharing) and only the scanned ranges' records,
  // the chunk lists and the meta were written.
  bool shared = false;
  uint64_t index_bytes_written = 0;  // of index_bytes, the files this build wrote (not shared)
};

Result<BuildReport> BuildIndex(const BuildOptions& options);

// Checks an existing index against its graph and reads every record.
Status CheckIndex(const std::string& graph_dir);

}  // namespace graphfs::chunkindex
