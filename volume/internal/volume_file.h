// A striped file of the volume, open (the VolumeFile a front end holds): its bytes on the
// disks, its units in the cache. Changes through it drop the file's cached units (before and
// after, so that a unit loaded while a write was in flight does not outlive it). A compressed
// file becomes plain at its first write or truncate (Unpack).
// Not a public header: the read path and the LP loader take its StripedSource.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "common/result.h"
#include "striping/striped_file.h"
#include "volume/internal/striped_source.h"
#include "volume/volume.h"

namespace graphfs::volume {

class VolumeCore;

class StripedVolumeFile final : public VolumeFile {
 public:
  StripedVolumeFile(VolumeCore& core, std::shared_ptr<StripedFile> file, std::shared_ptr<StripedSource> source,
                    std::string backing_path)
      : core_(core), file_(std::move(file)), source_(std::move(source)), backing_path_(std::move(backing_path)) {}

  // Every VolumeFile is one (the volume makes them all): the face hands it back to the core so.
  static StripedVolumeFile& Of(VolumeFile& file) { return static_cast<StripedVolumeFile&>(file); }

  uint64_t size() const override;
  std::string id() const override;
  StripedStub stub() const override;
  Result<uint64_t> Write(uint64_t offset, const char* data, uint64_t length) override;
  Status Truncate(uint64_t size) override;
  Status Flush() override;
  Status Sync() override;

  // The file's bytes as the cache sees them now (readers keep the copy for their read: an
  // unpacked file's old source stays readable until they let go).
  std::shared_ptr<StripedSource> shared_source() const;

 private:
  std::shared_ptr<StripedFile> file() const;
  void NoteChange(StripedSource& source);
  // A compressed file's first change: its units are decoded into a new plain striped file,
  // made durable, and the stub's manifest switched to it in one fsetxattr + fsync — before the
  // switch the compressed file is whole, after it the plain one is; the old parts go last.
  Status Unpack();
  // Unpack if the file is still compressed (once, whoever comes first).
  Status MakePlain();

  VolumeCore& core_;
  mutable std::mutex mu_;  // file_ and source_ (replaced once, by Unpack)
  std::shared_ptr<StripedFile> file_;
  std::shared_ptr<StripedSource> source_;
  std::mutex unpack_mu_;  // one Unpack; changes wait for it
  const std::string backing_path_;
};

}  // namespace graphfs::volume
