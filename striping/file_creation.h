// A striped file the mount's daemon creates and writes whole — the plain copy a compressed file's
// first write makes (the volume's unpack) — while disks of its set are missing (docs/parity.md,
// "Writes with a disk lost"). Its parts go on the present disks only: on a missing disk the file
// is lost from the start, as if that disk had died under it, and its reads rebuild those units
// from parity. Every row is marked in the write-intent records of the missing disks (stale_rows.h)
// before a byte is written, as a write with the disk lost marks its row: a missing disk that comes
// back holds none of the file and is stale for it, and a rebuild clears the records once it has
// written the file's units on the new disk.
//
// A rebuild run by the daemon must do the new file too: it is told (RebuildWatch::Created, through
// DiskSet::EndCreate) once the file is durable and named, and the creation is held like a write
// for the rebuild's last pass — Begin waits while the rebuild holds the writes, and the hold waits
// for the creations under way, so which disks are missing cannot change while one runs (a disk is
// switched in only during a hold).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "striping/disk_set.h"
#include "striping/manifest.h"

namespace graphfs {

class FileCreation {
 public:
  // Begins the creation of the file `m` describes (its id, layout; `m.stored_size()` the bytes it
  // will hold). Waits while a rebuild holds the writes. EIO naming the disks when more are missing
  // than its parity survives.
  static Result<FileCreation> Begin(const DiskSet& disks, const StripeManifest& m);
  FileCreation(FileCreation&& other) noexcept;
  FileCreation& operator=(FileCreation&&) = delete;
  FileCreation(const FileCreation&) = delete;
  ~FileCreation();  // ends the creation (given up, unless Named)

  // Per disk: missing when the creation began, so the file has no part there.
  const std::vector<bool>& lost() const { return lost_; }
  bool degraded() const;

  // Creates the file's empty parts on the present disks and, with a disk lost, marks every row of
  // the file in the lost disks' write-intent records, durable.
  Status CreateParts();
  // The file is durable and named by its stub at `path`: every rebuild running is told, and the
  // creation ends.
  void Named(const std::string& path);

 private:
  FileCreation(const DiskSet& disks, StripeManifest m) : disks_(&disks), m_(std::move(m)) {}
  void End(const RebuildWatch::CreatedFile* file);
  const DiskSet* disks_;
  StripeManifest m_;
  std::vector<bool> lost_;
  bool ended_ = false;
};

}  // namespace graphfs
