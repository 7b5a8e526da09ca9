// A graph version's extent maps (grid/graph_file.h) as the mount reads them, so that fusefs
// needs nothing of grid/: `MappedFile` (a map and its open pieces) and the names a version's
// files have. Its striped pieces are read through the volume (volume/internal/mapped_piece.h).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace graphfs::volume {

class Volume;
class VolumeFile;

// An extent map open with its pieces (read-only; thread-safe reads).
class MappedFile {
 public:
  // The map at `path` (its pieces are named relative to its directory: a real path, not
  // /proc/self/fd), its striped pieces opened through `volume`.
  static Result<std::shared_ptr<const MappedFile>> Open(Volume& volume, const std::string& path);

  uint64_t size() const;
  const std::string& path() const;
  // Where [offset, offset + length) lies (clipped to the file), in file order: a plain piece's
  // descriptor (to splice from), or a striped piece (`striped`, read through Volume::Read).
  struct Piece {
    int fd = -1;
    uint64_t offset = 0;
    uint64_t length = 0;
    VolumeFile* striped = nullptr;
  };
  std::vector<Piece> Pieces(uint64_t offset, uint64_t length) const;
  // Up to `length` bytes at `offset`: short at the end of the file, empty past it.
  Result<uint64_t> Read(char* buf, uint64_t length, uint64_t offset) const;

  // The open map itself (grid/graph_file.h's GraphFile, in volume/internal/mapped_piece.cc): a
  // front end sees its name only.
  struct Map;
  explicit MappedFile(std::unique_ptr<const Map> map);
  ~MappedFile();

 private:
  std::unique_ptr<const Map> map_;
};

// The size an extent map reads as, when the regular file at `path` (`st` its stat) is one;
// nullopt for any other file.
Result<std::optional<uint64_t>> ExtentMapSize(const std::string& path, const struct stat& st);
// The names of a version's files: a grid file (meta, column, row, their offsets, block-i-j) and
// the directory of the pieces extent maps read (GRAPH/.graphfs/pieces).
bool IsGraphFileName(const std::string& name);
const char* PiecesDir();

}  // namespace graphfs::volume
