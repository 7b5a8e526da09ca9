#include "striping/file_creation.h"

#include <utility>

#include "striping/stale_rows.h"
#include "striping/stripe_map.h"
#include "striping/striped_file.h"

namespace graphfs {

Result<FileCreation> FileCreation::Begin(const DiskSet& disks, const StripeManifest& m) {
  disks.BeginCreate();
  FileCreation c(disks, m);  // from here its destructor ends the creation
  c.lost_.assign(disks.size(), false);
  std::string names;
  uint32_t lost = 0;
  for (uint32_t d = 0; d < disks.size(); ++d) {
    if (disks.state(d) != DiskState::kMissing) continue;
    c.lost_[d] = true;
    ++lost;
    names += (names.empty() ? "" : ", ") + std::to_string(d) + " (" + disks.path(d) + ")";
  }
  if (lost > 0 && (m.sum_block == 0 || lost > m.layout.parity))
    return Error(EIO, "striped file " + m.file_id + ": disks " + names + " are missing, and its parity is " +
                          std::to_string(m.sum_block == 0 ? 0 : m.layout.parity));
  return c;
}

FileCreation::FileCreation(FileCreation&& other) noexcept
    : disks_(other.disks_), m_(std::move(other.m_)), lost_(std::move(other.lost_)), ended_(other.ended_) {
  other.ended_ = true;
}

FileCreation::~FileCreation() { End(nullptr); }

bool FileCreation::degraded() const {
  for (bool l : lost_)
    if (l) return true;
  return false;
}

Status FileCreation::CreateParts() {
  GRAPHFS_RETURN_IF_ERROR(StripedFile::CreateParts(*disks_, m_.file_id, lost_));
  if (!degraded()) return Status::Ok();
  auto map = StripeMap::Create(m_.layout);
  if (!map.ok()) return map.error();
  auto stale = StaleRowsWriter::Open(*disks_, m_.file_id, m_.layout.disks, lost_);
  if (!stale.ok()) return stale.error();
  return (*stale)->Mark(0, map->Rows(m_.stored_size()));
}

void FileCreation::Named(const std::string& path) {
  const RebuildWatch::CreatedFile file{path, m_.file_id};
  End(&file);
}

void FileCreation::End(const RebuildWatch::CreatedFile* file) {
  if (ended_) return;
  ended_ = true;
  disks_->EndCreate(file);
}

}  // namespace graphfs
