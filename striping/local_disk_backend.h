// A disk that is a local directory (its own filesystem, usually one device): the files of the
// disk backend interface (disk_backend.h) are DIR/parts/NAME, read and written with
// pread/pwrite, and their descriptors are handed to the I/O engine's io_uring workers.
#pragma once

#include <memory>
#include <string>

#include "striping/disk_backend.h"

namespace graphfs {

class LocalDiskBackend : public DiskBackend {
 public:
  // `dir` must be an existing directory (ENOENT or ENOTDIR naming it otherwise); DIR/parts/ is
  // made when the first file is created.
  static Result<std::unique_ptr<LocalDiskBackend>> Open(const std::string& dir);

  const std::string& name() const override { return dir_; }
  Result<std::unique_ptr<DiskFile>> Open(const std::string& file, const DiskFileOptions& options) override;
  Result<bool> Exists(const std::string& file) const override;
  Status Remove(const std::string& file) override;
  Status SyncNames() override;

  // DIR/parts/FILE (no check of the name).
  std::string PathOf(const std::string& file) const { return parts_ + "/" + file; }

 private:
  explicit LocalDiskBackend(std::string dir) : dir_(std::move(dir)), parts_(dir_ + "/parts") {}
  std::string dir_;
  std::string parts_;
};

}  // namespace graphfs
