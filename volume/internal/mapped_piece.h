// Internal to the volume (the front end's view is volume/mapped_file.h).
// A version of a striped graph keeps its bytes in striped files (the old version's
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
#include "volume/mapped_file.h"

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
