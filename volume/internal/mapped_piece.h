// Internal to the volume (the front end's view is volume/mapped_file.h).
// A version of a striped graph keeps its bytes in striped files (the old version's
// `column`, the delta and compact pieces graphfs-update writes to the disks), and the mount
// reads them through the volume — the same cache, read-ahead and disk queues as every striped
// file — never around it: `VolumeCore::stub_files()` gives grid::GraphFile these readers
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

class VolumeCore;
class StripedVolumeFile;

class MappedPiece : public grid::StubReader {
 public:
  MappedPiece(VolumeCore& core, std::shared_ptr<StripedVolumeFile> file) : core_(core), file_(std::move(file)) {}
  uint64_t size() const override;
  // Through the cache (whole units, loaded once for every reader).
  Status ReadExact(char* buf, uint64_t length, uint64_t offset) const override;
  // For the read paths that batch their own requests (fusefs's reads, the LP loader).
  const std::shared_ptr<StripedVolumeFile>& file() const { return file_; }

 private:
  VolumeCore& core_;
  std::shared_ptr<StripedVolumeFile> file_;
};

// Stubs of the volume's disk set open as MappedPieces (read-only).
class VolumeStubFiles : public grid::StubFiles {
 public:
  explicit VolumeStubFiles(VolumeCore& core) : core_(core) {}
  Result<std::optional<uint64_t>> StubSize(int fd, const std::string& path) const override;
  Result<std::shared_ptr<const grid::StubReader>> OpenStub(UniqueFd fd, const std::string& path) const override;

 private:
  VolumeCore& core_;
};

}  // namespace graphfs::volume
