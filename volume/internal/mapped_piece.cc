#include "volume/internal/mapped_piece.h"

#include "grid/grid_layout.h"
#include "striping/manifest.h"
#include "striping/striped_file.h"
#include "volume/internal/volume_core.h"
#include "volume/internal/volume_file.h"

namespace graphfs::volume {

uint64_t MappedPiece::size() const { return file_->size(); }

Status MappedPiece::ReadExact(char* buf, uint64_t length, uint64_t offset) const {
  if (length == 0) return Status::Ok();
  return core_.CopyRanges(file_->shared_source(), file_->size(), {CopyRange{offset, length, 0}}, buf, 0);
}

struct MappedFile::Map {
  grid::GraphFile file;
};

Result<std::shared_ptr<const MappedFile>> MappedFile::Open(Volume& volume, const std::string& path) {
  auto f = grid::GraphFile::Open(path, &volume.core().stub_files());
  if (!f.ok()) return f.error();
  return std::make_shared<const MappedFile>(std::make_unique<const Map>(Map{std::move(*f)}));
}

MappedFile::MappedFile(std::unique_ptr<const Map> map) : map_(std::move(map)) {}
MappedFile::~MappedFile() = default;
uint64_t MappedFile::size() const { return map_->file.size(); }
const std::string& MappedFile::path() const { return map_->file.path(); }
Result<uint64_t> MappedFile::Read(char* buf, uint64_t length, uint64_t offset) const {
  return map_->file.Read(buf, length, offset);
}

std::vector<MappedFile::Piece> MappedFile::Pieces(uint64_t offset, uint64_t length) const {
  std::vector<Piece> out;
  for (const grid::GraphFile::Piece& p : map_->file.Pieces(offset, length)) {
    // Only the volume opens a map's stubs, always as MappedPieces (VolumeStubFiles).
    const auto* piece = static_cast<const MappedPiece*>(p.stub);
    out.push_back({p.fd, p.offset, p.length, piece != nullptr ? piece->file().get() : nullptr});
  }
  return out;
}

Result<std::optional<uint64_t>> ExtentMapSize(const std::string& path, const struct stat& st) {
  if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > grid::kMaxExtentMapBytes)
    return std::optional<uint64_t>();
  auto map = grid::ReadExtentMap(path);
  if (!map.ok()) return map.error();
  if (!*map) return std::optional<uint64_t>();
  return std::optional<uint64_t>((*map)->size());
}

bool IsGraphFileName(const std::string& name) { return grid::IsGridFileName(name); }
const char* PiecesDir() { return grid::kPiecesDir; }

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
  if (core_.disk_set() == nullptr || core_.io() == nullptr)
    return Error(EIO, path + " is striped but the mount has no disk set open");
  // A piece is never written: versions share it.
  auto file = core_.OpenFile(std::move(fd), **m, /*writable=*/false);
  if (!file.ok()) return file.error().Wrap(path);
  // A piece is cut into stripe-aligned blocks (.graphfs/pieces has no index), while the same
  // stub by its own name (an old version's `column`) may be cut into its index's chunks.
  auto source = core_.MakeSource(*file, path, ":piece");
  if (!source.ok()) return source.error();
  auto vf = std::make_shared<StripedVolumeFile>(core_, *file, std::move(*source), path);
  return std::shared_ptr<const grid::StubReader>(std::make_shared<MappedPiece>(core_, std::move(vf)));
}

}  // namespace graphfs::volume
