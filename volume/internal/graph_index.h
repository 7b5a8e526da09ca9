// The chunk layouts of indexed graphs, so the cache's unit for `column` and `row` is the
// chunk the priority formula is about. Loaded from GRAPH/.graphfs/index when a striped
// partition file is first opened, kept per graph directory, reloaded when the index or the
// files change. A stale or damaged index is not used (the file falls back to stripe-aligned
// blocks) and the reason — "re-run graphfs-index" — goes to the log and to stats.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cache/unit_layout.h"
#include "chunkindex/chunk_index.h"
#include "common/result.h"
#include "grid/graph_file.h"
#include "common/unique_fd.h"

namespace graphfs {
class StripedFile;
}

namespace graphfs::volume {

class VolumeCore;

// A graph file opened for reading as the mount shows it: a striped file (the backing file
// is its stub) through its stripe map, anything else — an ordinary file or an extent map (a
// graph version's `column`, grid/graph_file.h) — directly.
struct MountedGraphFile {
  std::shared_ptr<StripedFile> striped;     // set when striped
  std::shared_ptr<const grid::GraphFile> plain;  // otherwise
  struct stat st;                        // of the backing file (the stub when striped)
};
Result<MountedGraphFile> OpenMountedGraphFile(VolumeCore& core, const std::string& path, bool direct_io);

// (inode, size, mtime) of each path, -1s for a missing one: changes when a file is replaced
// or written.
std::vector<int64_t> FilesStamp(std::initializer_list<std::string> paths);

// Opens the chunk table of backing directory `dir`, checking it against the graph's files
// as the mount shows them (striped files through their stripe map).
Result<chunkindex::ChunkTable> OpenMountedTable(VolumeCore& core, const std::string& dir);

class GraphIndexes {
 public:
  // The chunk layout of `name` in backing directory `dir` (absolute), or null with the
  // reason in `why` ("" when the file is simply not a partition file or has no index).
  std::shared_ptr<const cache::ChunkLayout> Find(VolumeCore& core, const std::string& dir, const std::string& name,
                                                 std::string* why);

  struct IndexState {
    std::string dir;
    bool loaded = false;
    std::string error;
    uint64_t column_chunks = 0, row_chunks = 0;
  };
  std::vector<IndexState> List();

 private:
  struct Stamp {
    std::vector<int64_t> values;  // ino, size, mtime of the index directory and the partition files
    bool operator==(const Stamp&) const = default;
  };
  struct Loaded {
    Stamp stamp;
    std::shared_ptr<const cache::ChunkLayout> column, row;
    std::string error;
  };
  static Stamp TakeStamp(const std::string& dir);
  static Loaded Load(VolumeCore& core, const std::string& dir);

  std::mutex mu_;
  std::map<std::string, Loaded> by_dir_;
};

}  // namespace graphfs::volume
