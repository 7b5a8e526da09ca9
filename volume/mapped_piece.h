// A graph version's extent maps (grid/graph_file.h) as the mount reads them, so that fusefs
// needs nothing of grid/: `MappedFile` (a map and its open pieces) and the names a version's
// files have. A version of a striped graph keeps its bytes in striped files (the old version's
// `column`, the delta and compact pieces graphfs-update writes to the disks), and the mount
// reads them through the volume — the same cache, read-ahead and disk queues as every striped
// file — never around it: `Volume::stub_files()` gives grid::GraphFile these readers
// (`MappedPiece`).
#pragma once

#include <sys/stat.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "grid/graph_file.h"

namespace graphfs::volume {

class Volume;
class VolumeFile;

class MappedPiece : public grid::StubReader {
 public:
  MappedPiece(Volume& volume, std::shared_ptr<VolumeFile> file) : volume_(volume), file_(std::move(file)) {}
  uint64_t size() const override;
  // Through the cache (whole units, loaded once for every reader).
  Status ReadExact(char* buf, uint64_t length, uint64_t offset) const override;
  // For the read paths that batch their own requests (fusefs's reads, the LP loader).
  const std::shared_ptr<VolumeFile>& file() const { return file_; }

 private:
  Volume& volume_;
  std::shared_ptr<VolumeFile> file_;
};

// An extent map open with its pieces (read-only; thread-safe reads).
class MappedFile {
 public:
  // The map at `path` (its pieces are named relative to its directory: a real path, not
  // /proc/self/fd), its striped pieces opened through `volume`.
  static Result<std::shared_ptr<const MappedFile>> Open(Volume& volume, const std::string& path);

  uint64_t size() const { return file_.size(); }
  const std::string& path() const { return file_.path(); }
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
  Result<uint64_t> Read(char* buf, uint64_t length, uint64_t offset) const { return file_.Read(buf, length, offset); }

  explicit MappedFile(grid::GraphFile file) : file_(std::move(file)) {}

 private:
  grid::GraphFile file_;
};

// The size an extent map reads as, when the regular file at `path` (`st` its stat) is one;
// nullopt for any other file.
Result<std::optional<uint64_t>> ExtentMapSize(const std::string& path, const struct stat& st);
// The names of a version's files: a grid file (meta, column, row, their offsets, block-i-j) and
// the directory of the pieces extent maps read (GRAPH/.graphfs/pieces).
bool IsGraphFileName(const std::string& name);
const char* PiecesDir();

// Stubs of the volume's disk set open as MappedPieces (read-only).
class VolumeStubFiles : public grid::StubFiles {
 public:
  explicit VolumeStubFiles(Volume& volume) : volume_(volume) {}
  Result<std::optional<uint64_t>> StubSize(int fd, const std::string& path) const override;
  Result<std::shared_ptr<const grid::StubReader>> OpenStub(UniqueFd fd, const std::string& path) const override;

 private:
  Volume& volume_;
};

}  // namespace graphfs::volume
