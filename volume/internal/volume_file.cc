// A striped file of the volume, open: reads of its size and stub, writes and truncates that drop
// its cached units, and the unpack of a compressed file at its first change (volume_file.h).
#include "volume/internal/volume_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "common/log.h"
#include "striping/disk_set.h"
#include "striping/file_creation.h"
#include "striping/manifest.h"
#include "striping/part_io.h"
#include "striping/stripe_map.h"
#include "striping/stripe_parity.h"
#include "volume/internal/unpack_journal.h"
#include "volume/internal/stub_manifest.h"
#include "volume/internal/volume_core.h"

namespace graphfs::volume {

namespace {

// Where the stub open as `fd` is now (it may have been renamed since it was opened); empty if
// it was unlinked (then no name keeps either copy of its parts).
Result<std::string> StubPath(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Error::FromErrno("stat the stub");
  if (st.st_nlink == 0) return std::string();
  char path[PATH_MAX];
  const ssize_t n = ::readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), path, sizeof path - 1);
  if (n <= 0 || path[0] != '/') return Error(EIO, "cannot tell where the stub is");
  return std::string(path, static_cast<size_t>(n));
}

// The decoded bytes of `source` written into the parts of `plain` (created, empty) — with parity,
// whole rows at a time with their parity and sums, as graphfs-stripe writes a file —, all
// durable on return. Disks `lost` names get nothing: the file's units there are rebuilt from
// parity by its reads (and by a rebuild).
Status CopyDecoded(StripedSource& source, const DiskSet& disks, const StripeManifest& plain,
                   const std::vector<bool>& lost) {
  auto map = StripeMap::Create(plain.layout);
  if (!map.ok()) return map.error();
  std::unique_ptr<StripeParityWriter> parity;
  if (plain.layout.parity > 0) {
    auto w = StripeParityWriter::Open(disks, plain, /*resume=*/false, lost);
    if (!w.ok()) return w.error();
    parity = std::move(*w);
  }
  auto parts = OpenParts(disks, plain.file_id, O_WRONLY, lost);
  if (!parts.ok()) return parts.error();
  const uint64_t row = map->unit() * map->data_units(), size = plain.size;
  AlignedBuffer buf(std::max<uint64_t>(1, (16ull << 20) / row) * row);
  if (!buf.ok()) return Error(ENOMEM, "a buffer of " + std::to_string(buf.size()) + " bytes");
  for (uint64_t off = 0; off < size;) {
    const uint64_t len = std::min<uint64_t>(buf.size(), size - off);
    auto n = source.Load(off, len, buf.data());
    if (!n.ok()) return n.error();
    if (*n != len) return Error(EIO, "short decode at " + std::to_string(off));
    GRAPHFS_RETURN_IF_ERROR(WriteToParts(disks, *map, *parts, off, len, buf.data()));
    if (parity) GRAPHFS_RETURN_IF_ERROR(parity->AddRows(off, buf.data(), len, *parts));
    off += len;
  }
  for (uint32_t d = 0; d < disks.size(); ++d) {
    if (!(*parts)[d].valid()) continue;  // lost from the start
    if (::ftruncate((*parts)[d].get(), static_cast<off_t>(map->PartSize(d, size))) != 0 ||
        ::fsync((*parts)[d].get()) != 0)
      return Error::FromErrno("finish part on disk " + std::to_string(d) + " (" + disks.path(d) + ")");
  }
  return parity ? parity->Finish() : Status::Ok();
}

}  // namespace

uint64_t StripedVolumeFile::size() const { return shared_source()->size(); }

std::string StripedVolumeFile::id() const { return file()->manifest().file_id; }

StripedStub StripedVolumeFile::stub() const { return StubOf(file()->manifest()); }

std::shared_ptr<StripedSource> StripedVolumeFile::shared_source() const {
  std::lock_guard<std::mutex> lock(mu_);
  return source_;
}

std::shared_ptr<StripedFile> StripedVolumeFile::file() const {
  std::lock_guard<std::mutex> lock(mu_);
  return file_;
}

void StripedVolumeFile::NoteChange(StripedSource& source) {
  source.DropChunkLayout();
  // Requests planned from the old size are refused from here on (cache::UnitSource::Generation).
  source.BumpGeneration();
  core_.Invalidate(source);
}

Status StripedVolumeFile::Unpack() {
  const std::shared_ptr<StripedFile> old_file = file();
  const std::shared_ptr<StripedSource> old_source = shared_source();
  const StripeManifest old = old_file->manifest();
  const DiskSet* disks = core_.disk_set();
  if (disks == nullptr) return Error(EIO, "no disk set");
  const std::string what = "making compressed file " + backing_path_ + " plain for a write";
  StripeManifest plain;
  plain.file_id = NewId();
  plain.set_id = old.set_id;
  plain.layout = old.layout;
  plain.sum_block = old.sum_block;
  plain.size = old_source->size();
  // With a disk missing the copy goes on the present disks, lost on the missing one from the
  // start (striping/file_creation.h); a rebuild run by the daemon is told of it once it is named,
  // and holds it off while it switches the disk in.
  auto creation = FileCreation::Begin(*disks, plain);
  if (!creation.ok()) return creation.error().Wrap(what);
  auto stub = old_file->DupStub();
  if (!stub.ok()) return stub.error().Wrap(what);
  // A killed daemon leaves one copy's parts unnamed; the record lets the next mount remove them
  // (volume/internal/unpack_journal.h).
  auto stub_path = StubPath(stub->get());
  if (!stub_path.ok()) return stub_path.error().Wrap(what);
  const Status recorded = WriteUnpackRecord(*disks, {old.file_id, plain.file_id, *stub_path});
  if (!recorded.ok()) return recorded.error().Wrap(what);
  std::shared_ptr<StripedFile> fresh;
  auto fail = [&](const Error& e) {
    if (fresh) fresh->Discard();  // its manifest must never reach the stub
    core_.RemoveParts(plain.file_id);   // the compressed file is untouched
    DropUnpackRecord(*disks, plain.file_id);
    return e.Wrap(what);
  };
  const Status created = creation->CreateParts();
  if (!created.ok()) return fail(created.error());
  // Puts the old manifest back where a failed switch may have left the new one (the stub's fsync
  // failed after it was written); false: could not tell or could not write it.
  auto put_back_old = [&]() {
    auto dup = old_file->DupStub();
    if (!dup.ok()) return false;
    auto now = ReadManifestFd(dup->get());
    if (now.ok() && !(*now && (*now)->file_id == plain.file_id)) return true;
    return WriteManifestFd(dup->get(), old).ok() && ::fsync(dup->get()) == 0;
  };
  // The copy, written whole (keeping the file's parity and sums) and durable, then opened, then
  // named by the stub: the switch.
  const Status copied = CopyDecoded(*old_source, *disks, plain, creation->lost());
  if (!copied.ok()) return fail(copied.error());
  auto opened = core_.OpenFile(std::move(*stub), plain, /*writable=*/true);
  if (!opened.ok()) return fail(opened.error());
  fresh = *opened;
  auto dup = old_file->DupStub();
  if (!dup.ok()) return fail(dup.error());
  Status named = WriteManifestFd(dup->get(), plain);
  if (named.ok() && ::fsync(dup->get()) != 0) named = Error::FromErrno("fsync the stub");
  if (!named.ok()) {
    fresh->Discard();
    // "Both copies kept": the record stays, and the next mount removes the one the stub does not name.
    if (!put_back_old()) return named.error().Wrap(what + " (both copies kept)");
    return fail(named.error());
  }
  // Durable and named: a rebuild running does its units on the new disk too.
  creation->Named(*stub_path);
  auto source = core_.MakeSource(fresh, backing_path_);
  if (!source.ok()) return source.error().Wrap(what);  // switched already: the plain file is on disk
  {
    std::lock_guard<std::mutex> lock(mu_);
    file_ = fresh;
    source_ = *source;
  }
  NoteChange(**source);
  core_.Invalidate(*old_source);
  core_.RemoveParts(old.file_id);  // readers still holding the old source read through open fds
  DropUnpackRecord(*disks, plain.file_id);
  LogError("compressed file " + backing_path_ + " (" + old.file_id + ") is plain striped file " +
           plain.file_id + " from its first write on" +
           (creation->degraded() ? " (degraded: made while disks were missing, read through parity)" : ""));
  return Status::Ok();
}

Status StripedVolumeFile::MakePlain() {
  // A file turns plain once and never back: the check without the lock is enough for every
  // write after the first, which then do not queue behind one another here.
  if (!shared_source()->compressed()) return Status::Ok();
  std::lock_guard<std::mutex> lock(unpack_mu_);
  return shared_source()->compressed() ? Unpack() : Status::Ok();
}

Result<uint64_t> StripedVolumeFile::Write(uint64_t offset, const char* data, uint64_t length) {
  GRAPHFS_RETURN_IF_ERROR(MakePlain());
  const std::shared_ptr<StripedSource> source = shared_source();
  NoteChange(*source);
  auto n = file()->Write(offset, data, length);
  NoteChange(*source);
  return n;
}

Status StripedVolumeFile::Truncate(uint64_t size) {
  GRAPHFS_RETURN_IF_ERROR(MakePlain());
  const std::shared_ptr<StripedSource> source = shared_source();
  NoteChange(*source);
  Status s = file()->Truncate(size);
  NoteChange(*source);
  return s;
}

Status StripedVolumeFile::Flush() { return file()->Flush(); }
Status StripedVolumeFile::Sync() { return file()->Sync(); }

}  // namespace graphfs::volume
