#include "volume/mapped_piece.h"

#include "striping/manifest.h"
#include "striping/striped_file.h"
#include "volume/volume.h"

namespace graphfs::volume {

uint64_t MappedPiece::size() const { return file_->size(); }

Status MappedPiece::ReadExact(char* buf, uint64_t length, uint64_t offset) const {
  if (length == 0) return Status::Ok();
  return volume_.CopyRanges(file_->shared_source(), file_->size(), {CopyRange{offset, length, 0}}, buf, 0);
}

Result<std::optional<uint64_t>> VolumeStubFiles::StubSize(int fd, const std::string& path) const {
  auto m = ReadManifestFd(fd);
  if (!m.ok()) return m.error().Wrap(path);
  if (!*m) return std::optional<uint64_t>();
  return std::optional<uint64_t>((*m)->size);
}

Result<std::shared_ptr<const grid::StubReader>> VolumeStubFiles::OpenStub(UniqueFd fd, const std::string& path) const {
  auto m = ReadManifestFd(fd.get());
  if (!m.ok()) return m.error().Wrap(path);
  if (!*m) return Error(EINVAL, path + " is not a striped file");
  if (volume_.disk_set() == nullptr || volume_.io() == nullptr)
    return Error(EIO, path + " is striped but the mount has no disk set open");
  StripedFileOptions o;
  o.writable = false;  // a piece is never written: versions share it
  o.direct_io = volume_.options().direct;
  auto file = StripedFile::Open(*volume_.disk_set(), volume_.io(), std::move(fd), **m, o);
  if (!file.ok()) return file.error().Wrap(path);
  // A piece is cut into stripe-aligned blocks (.graphfs/pieces has no index), while the same
  // stub by its own name (an old version's `column`) may be cut into its index's chunks.
  auto source = volume_.MakeSource(*file, path, ":piece");
  if (!source.ok()) return source.error();
  auto vf = std::make_shared<VolumeFile>(volume_, *file, std::move(*source), path);
  return std::shared_ptr<const grid::StubReader>(std::make_shared<MappedPiece>(volume_, std::move(vf)));
}

}  // namespace graphfs::volume
