#include "striping/striped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "striping/stale_rows.h"

namespace graphfs {

namespace {

bool Aligned(uint64_t v) { return v % kDirectAlign == 0; }

}  // namespace

Status StripedFile::CreateParts(const DiskSet& disks, const std::string& file_id, const std::vector<bool>& lost) {
  auto is_lost = [&](uint32_t d) { return d < lost.size() && lost[d]; };
  for (uint32_t d = 0; d < disks.size(); ++d) {
    if (is_lost(d)) continue;
    const std::string path = disks.PartPath(d, file_id);
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    if (!fd.valid()) return Error::FromErrno("create part " + path);
    if (::fsync(fd.get()) != 0) return Error::FromErrno("fsync part " + path);
  }
  for (uint32_t d = 0; d < disks.size(); ++d) {
    if (is_lost(d)) continue;
    UniqueFd dir(::open((disks.path(d) + "/parts").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.valid()) ::fsync(dir.get());
  }
  return Status::Ok();
}

Result<std::shared_ptr<StripedFile>> StripedFile::Open(const DiskSet& disks, IoEngine* io, UniqueFd stub_fd,
                                                       const StripeManifest& manifest,
                                                       const StripedFileOptions& options) {
  if (manifest.set_id != disks.set_id())
    return Error(EIO, "striped file " + manifest.file_id + " belongs to disk set " + manifest.set_id +
                          ", not to the mounted set " + disks.set_id());
  if (manifest.layout.disks != disks.size())
    return Error(EIO, "striped file " + manifest.file_id + " spans " + std::to_string(manifest.layout.disks) +
                          " disks, the set has " + std::to_string(disks.size()));
  if (io != nullptr && io->disks() != disks.size()) return Error(EINVAL, "I/O engine disk count mismatch");
  auto map = StripeMap::Create(manifest.layout);
  if (!map.ok()) return map.error();
  std::shared_ptr<StripedFile> f(new StripedFile(disks, io, std::move(stub_fd), manifest, *map, options));
  const int mode = options.writable ? O_RDWR : O_RDONLY;
  // A file with sums can do without the parts of up to K disks (ParityReader rebuilds them).
  const bool sums = manifest.sum_block != 0;
  std::vector<ParityPart> parity_parts(sums ? disks.size() : 0);
  for (uint32_t d = 0; d < disks.size(); ++d) {
    Part& p = f->parts_[d];
    p.path = disks.PartPath(d, manifest.file_id);
    if (disks.state(d) == DiskState::kMissing) {
      if (!sums)
        return Error(ENODEV, "striped file " + manifest.file_id + " has no parity, and disk " + std::to_string(d) +
                                 " (" + disks.path(d) + ") is missing");
      parity_parts[d].lost = "disk " + disks.path(d) + " is missing";
      parity_parts[d].path = p.path;
      continue;
    }
    // Back (DiskState::kStale), but this file was written while it was lost: its old units of the
    // rows the records mark still match their old sums, so those are never read — they are
    // rebuilt from the others — until a resync (graphfs-scrub) or a rebuild put them in step and
    // removed the records; its other rows are in step and read from it (ParityPart::stale).
    // Asked of every disk, not only of those the set found stale: the records are the truth (a
    // writer may have made them since the set looked), the set's state the report.
    std::shared_ptr<StaleMarks> stale_marks;
    if (sums) {
      auto stale = LoadStaleRows(disks, manifest.file_id, d);
      if (!stale.ok()) return stale.error();
      if (*stale)
        stale_marks = std::make_shared<StaleMarks>(
            std::move(**stale), "disk " + disks.path(d) + " is stale: this file was written while it was lost");
    }
    p.fd.reset(::open(p.path.c_str(), mode | O_CLOEXEC | O_NOFOLLOW));
    if (!p.fd.valid()) {
      if (sums && errno == ENOENT) {
        parity_parts[d].lost = "no part " + p.path;
        parity_parts[d].path = p.path;
        continue;
      }
      return Error::FromErrno(EIO == errno ? EIO : errno,
                              "part of striped file on disk " + std::to_string(d) + " (" + p.path + ")");
    }
    if (options.direct_io) {
      p.direct.reset(::open(p.path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC | O_NOFOLLOW));
      // Filesystems without O_DIRECT (tmpfs) fall back to buffered reads.
    }
    if (sums)
      parity_parts[d] = {p.fd.get(), p.direct.valid() ? p.direct.get() : -1, options.writable, p.path, "",
                         std::move(stale_marks)};
  }
  if (sums) {
    auto reader = ParityReader::Open(disks, io, manifest, f->map_, std::move(parity_parts), options.max_run_bytes,
                                     options.row_share);
    if (!reader.ok()) return reader.error();
    f->parity_ = std::move(*reader);
    // A compressed file's stream is never written (RefuseChange), and a journal's sizes would be
    // taken for the stream's: no writer. Its reads still heal in place when writable.
    if (options.writable && !manifest.packed) {
      std::vector<int> fds(disks.size(), -1);
      for (uint32_t d = 0; d < disks.size(); ++d) fds[d] = f->parts_[d].fd.valid() ? f->parts_[d].fd.get() : -1;
      auto writer = ParityWriter::Open(disks, io, manifest, f->map_, f->parity_.get(), std::move(fds));
      if (!writer.ok()) return writer.error();
      f->writer_ = std::move(*writer);
      GRAPHFS_RETURN_IF_ERROR(f->RecoverJournal());
    }
    // A disk switched in online reaches the files open over the set through this.
    disks.Track(f);
  }
  return f;
}

Status StripedFile::AdoptDisk(uint32_t disk, const DiskSet& disks) {
  // Part::fd and ::direct are read by writes, truncates and syncs, all under write_mu_; the reads
  // of a file with sums take the descriptors ParityReader hands them.
  std::unique_lock<std::mutex> lock(write_mu_);
  return AdoptDisk(disk, disks, lock);
}

Status StripedFile::AdoptDisk(uint32_t disk, const DiskSet& disks, const std::unique_lock<std::mutex>& held) {
  if (held.mutex() != &write_mu_ || !held.owns_lock()) return Error(EINVAL, "AdoptDisk without the file's write lock");
  if (!parity_ || disk >= parts_.size() || parity_->lost(disk).empty()) return Status::Ok();
  if (disks.state(disk) == DiskState::kMissing)
    return Error(ENODEV, "striped file " + manifest().file_id + ": disk " + std::to_string(disk) + " is still missing");
  Part& p = parts_[disk];
  if (p.fd.valid()) {
    // A stale disk resynced (the daemon's scrub): its part has been open all along, its rows not
    // marked read through these descriptors — kept, since reads in flight may use them.
    ParityPart part{p.fd.get(), p.direct.valid() ? p.direct.get() : -1, options_.writable, p.path, "", nullptr};
    GRAPHFS_RETURN_IF_ERROR(parity_->AdoptDisk(disk, std::move(part)));
  } else {
    const std::string path = disks.PartPath(disk, manifest().file_id);
    UniqueFd fd(::open(path.c_str(), (options_.writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW));
    if (!fd.valid()) return Error::FromErrno("part of striped file on disk " + std::to_string(disk) + " (" + path + ")");
    UniqueFd direct;
    if (options_.direct_io) direct.reset(::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC | O_NOFOLLOW));
    ParityPart part{fd.get(), direct.valid() ? direct.get() : -1, options_.writable, path, "", nullptr};
    GRAPHFS_RETURN_IF_ERROR(parity_->AdoptDisk(disk, std::move(part)));
    p.fd = std::move(fd);
    p.direct = std::move(direct);
    p.path = path;
  }
  if (!writer_) return Status::Ok();
  if (Status s = AdoptForWrites(disk, disks); !s.ok())
    return s.error().Wrap("striped file " + manifest().file_id + " reads disk " + std::to_string(disk) +
                          " now, but its writes stay refused until it is opened again");
  return Status::Ok();
}

Status StripedFile::TakeBackDisk(uint32_t disk, const DiskSet& disks, bool* stale) {
  std::unique_lock<std::mutex> lock(write_mu_);
  if (stale != nullptr) *stale = false;
  if (!parity_ || disk >= parts_.size() || parity_->lost(disk).empty()) return Status::Ok();
  if (disks.state(disk) == DiskState::kMissing)
    return Error(ENODEV, "striped file " + manifest().file_id + ": disk " + std::to_string(disk) + " is still missing");
  if (parts_[disk].fd.valid()) return Status::Ok();  // stale when opened: its part open, its rows marked
  // No write runs (write_mu_), and each marks its row in the records before anything of it
  // changes: the records now are every row the disk missed, and stay so until the writer marks more
  // — which it does in the reads' marks too (ParityReader::MarkStale).
  auto rows = LoadStaleRows(disks, manifest().file_id, disk);
  if (!rows.ok()) return rows.error().Wrap("striped file " + manifest().file_id);
  if (!*rows) return AdoptDisk(disk, disks, lock);
  const std::string path = disks.PartPath(disk, manifest().file_id);
  UniqueFd fd(::open(path.c_str(), (options_.writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid())
    return Error::FromErrno("striped file " + manifest().file_id + " was written while disk " + std::to_string(disk) +
                            " was missing, and has no part there (" + path + ")");
  UniqueFd direct;
  if (options_.direct_io) direct.reset(::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC | O_NOFOLLOW));
  auto marks = std::make_shared<StaleMarks>(std::move(**rows), "disk " + disks.path(disk) +
                                                                   " is stale: this file was written while it was lost");
  ParityPart part{fd.get(), direct.valid() ? direct.get() : -1, options_.writable, path, "", std::move(marks)};
  GRAPHFS_RETURN_IF_ERROR(parity_->AdoptStaleDisk(disk, std::move(part)));
  Part& p = parts_[disk];
  p.fd = std::move(fd);
  p.direct = std::move(direct);
  p.path = path;
  if (stale != nullptr) *stale = true;
  return Status::Ok();
}

Status StripedFile::AdoptForWrites(uint32_t disk, const DiskSet& disks) {
  // Why this order is safe against a kill -9 at any point (no RAID write hole): write_mu_ is
  // held, so no write, truncate or sync of this file is under way, and none starts before the
  // writer has the disk. (1) Parts, sums and manifest made durable, then the journal's checkpoint
  // moved past every entry: nothing journaled while the disk was lost (with a unit fewer than
  // the row's N) is ever replayed. A kill here leaves the file as a Sync would. (2) The journal
  // takes the disk; its file there is made (header with this checkpoint, fsynced with its name)
  // at the next entry, before that entry's units are written. (3) Only then does the writer
  // write in place on the disk. So every entry from the switch on is journaled on all N disks
  // and fsynced before any unit of its row changes in place: a kill during the in-place writes
  // is replayed at the next mount (which finds the disk in the registry: the rebuild rewrote it
  // before the switch), from any D of the N journal units, onto all N disks; a kill before the
  // journal's fsync leaves fewer than D good units, and the row untouched in place.
  GRAPHFS_RETURN_IF_ERROR(SyncLocked());
  GRAPHFS_RETURN_IF_ERROR(writer_->Checkpoint());
  return writer_->AdoptDisk(disk, parts_[disk].fd.get(), disks);
}

Status StripedFile::RecoverJournal() {
  std::lock_guard<std::mutex> lock(write_mu_);
  const uint64_t before = size();
  auto replayed = writer_->Recover();
  if (!replayed.ok()) return replayed.error();
  if (!*replayed) return Status::Ok();
  // The last replayed entry's size is the file's: a write journaled past the manifest's size,
  // or a truncate whose manifest never reached the disk.
  const uint64_t size = **replayed;
  size_.store(size);
  MarkModified();
  GRAPHFS_RETURN_IF_ERROR(writer_->Cut(size, std::max(before, size)));
  GRAPHFS_RETURN_IF_ERROR(SyncLocked());
  return writer_->Checkpoint();
}

StripedFile::StripedFile(const DiskSet& disks, IoEngine* io, UniqueFd stub_fd, const StripeManifest& m,
                         StripeMap map, const StripedFileOptions& options)
    : io_(io), stub_fd_(std::move(stub_fd)), map_(map), options_(options), parts_(disks.size()), manifest_(m) {
  // A compressed file's parts hold its packed stream: that is what this class reads (the
  // volume decodes it), so its size here is the stream's.
  size_.store(m.stored_size());
}

StripedFile::~StripedFile() {
  if (options_.writable) (void)Flush();
}

StripeManifest StripedFile::manifest() const {
  std::lock_guard<std::mutex> lock(manifest_mu_);
  StripeManifest m = manifest_;
  if (!m.packed) m.size = size();
  return m;
}

std::vector<IoRun> StripedFile::PlanRuns(IoKind kind, uint64_t offset, uint64_t length, char* buf) const {
  std::vector<IoRun> runs;
  for (const DiskRun& dr : StripeMap::MergeRuns(map_.Split(offset, length), options_.max_run_bytes)) {
    IoRun run;
    run.kind = kind;
    run.disk = dr.disk;
    run.offset = dr.disk_offset;
    bool aligned = Aligned(dr.disk_offset) && Aligned(dr.length);
    for (const StripeExtent& piece : dr.pieces) {
      char* base = buf + (piece.file_offset - offset);
      run.iov.push_back({base, piece.length});
      aligned = aligned && Aligned(reinterpret_cast<uintptr_t>(base)) && Aligned(piece.length);
    }
    run.fd = kind == IoKind::kRead ? ReadFd(dr.disk, aligned) : parts_[dr.disk].fd.get();
    runs.push_back(std::move(run));
  }
  return runs;
}

Result<uint64_t> StripedFile::Read(uint64_t offset, uint64_t length, char* buf) {
  std::shared_lock<std::shared_mutex> lock(rw_);
  const uint64_t size = this->size();
  if (offset >= size || length == 0) return uint64_t{0};
  length = std::min(length, size - offset);
  if (parity_) {
    gate_.EnterRead();
    struct Leave {
      ReadGate& gate;
      ~Leave() { gate.LeaveRead(); }
    } leave{gate_};
    std::vector<ParityTarget> targets{{offset, length, {{buf, length}}}};
    auto read = parity_->Plan(std::move(targets), /*urgent=*/false);
    if (!read.ok()) return read.error();
    (*read)->Submit(nullptr);
    (*read)->Wait();
    GRAPHFS_RETURN_IF_ERROR((*read)->Finish(SourceReads::kEngine));
    return length;
  }
  std::vector<IoRun> runs = PlanRuns(IoKind::kRead, offset, length, buf);
  IoBatch batch;
  Status s = io_->SubmitAndWait(runs, batch);
  if (!s.ok()) return DiskError("read", batch, s.error());
  return length;
}

Status StripedFile::ReadMany(std::span<const ReadRequest> requests) const {
  auto pending = StartReadMany(requests);
  if (!pending.ok()) return pending.error();
  return (*pending)->Wait();
}

Result<std::unique_ptr<StripedFile::PendingRead>> StripedFile::StartReadMany(
    std::span<const ReadRequest> requests) const {
  std::unique_ptr<PendingRead> p(new PendingRead());
  p->file_ = this;
  p->lock_ = std::shared_lock<std::shared_mutex>(rw_);
  const uint64_t size = this->size();
  std::vector<ParityTarget> targets;
  for (const ReadRequest& r : requests) {
    if (r.length == 0) continue;
    if (r.offset > size || r.length > size - r.offset)
      return Error(EINVAL, "read of [" + std::to_string(r.offset) + ", " + std::to_string(r.offset + r.length) +
                               ") of striped file " + manifest_.file_id + " past its end (" + std::to_string(size) + ")");
    if (parity_) {
      targets.push_back({r.offset, r.length, {{r.buf, r.length}}});
      continue;
    }
    std::vector<IoRun> more = PlanRuns(IoKind::kRead, r.offset, r.length, r.buf);
    std::move(more.begin(), more.end(), std::back_inserter(p->runs_));
  }
  if (parity_) {
    gate_.EnterRead();
    p->gate_ = &gate_;  // Wait (or the destructor) leaves it
    auto read = parity_->Plan(std::move(targets), /*urgent=*/false);
    if (!read.ok()) return read.error();
    p->parity_ = std::move(*read);
    p->parity_->Submit(nullptr);
    return p;
  }
  if (p->runs_.empty()) return p;
  p->batch_.Add(static_cast<int>(p->runs_.size()));
  std::vector<IoRun*> ptrs;
  ptrs.reserve(p->runs_.size());
  for (IoRun& r : p->runs_) {
    r.batch = &p->batch_;
    ptrs.push_back(&r);
  }
  io_->Submit(ptrs.data(), ptrs.size());
  return p;
}

void StripedFile::ReadAsync(uint64_t offset, std::vector<iovec> iov, bool urgent,
                            std::function<void(Status)> done) const {
  // A run's iovecs stay well below IOV_MAX (1024): tiny units would otherwise need more.
  constexpr size_t kMaxIov = 512;
  struct Pending {
    std::vector<IoRun> runs;
    IoBatch batch;
  };
  uint64_t length = 0;
  for (const iovec& v : iov) length += v.iov_len;
  if (length == 0) return done(Status::Ok());
  if (parity_) {
    gate_.EnterRead();
    std::vector<ParityTarget> targets{{offset, length, std::move(iov)}};
    auto planned = parity_->Plan(std::move(targets), urgent);
    if (!planned.ok()) {
      gate_.LeaveRead();
      return done(planned.error());
    }
    // Verified on the I/O worker that finishes the last run; sources of a rebuild are read
    // there by pread (a worker must not wait on the disks' queues).
    ParityRead* read = planned->release();
    read->Submit([this, read, done = std::move(done)] {
      Status s = read->Finish(SourceReads::kDirect);
      delete read;
      gate_.LeaveRead();
      done(std::move(s));
    });
    return;
  }
  auto* p = new Pending;
  size_t vi = 0;
  uint64_t vskip = 0;  // bytes of iov[vi] already given to runs
  for (const StripeExtent& piece : map_.Split(offset, length)) {
    uint64_t at = 0;  // bytes of the piece given to runs
    while (at < piece.length) {
      IoRun run;
      run.kind = IoKind::kRead;
      run.disk = piece.disk;
      run.offset = piece.disk_offset + at;
      run.urgent = urgent;
      bool aligned = Aligned(run.offset);
      while (at < piece.length && run.iov.size() < kMaxIov) {
        while (iov[vi].iov_len == vskip) {
          ++vi;
          vskip = 0;
        }
        const uint64_t take = std::min<uint64_t>(piece.length - at, iov[vi].iov_len - vskip);
        char* base = static_cast<char*>(iov[vi].iov_base) + vskip;
        run.iov.push_back({base, take});
        aligned = aligned && Aligned(reinterpret_cast<uintptr_t>(base)) && Aligned(take);
        at += take;
        vskip += take;
      }
      run.fd = ReadFd(piece.disk, aligned);
      p->runs.push_back(std::move(run));
    }
  }
  p->batch.Add(static_cast<int>(p->runs.size()));
  p->batch.OnDone([this, p, done = std::move(done)] {
    Status s = ReadStatus(p->batch);
    delete p;
    done(std::move(s));
  });
  std::vector<IoRun*> ptrs;
  for (IoRun& r : p->runs) {
    r.batch = &p->batch;
    ptrs.push_back(&r);
  }
  io_->Submit(ptrs.data(), ptrs.size());  // `p` may be gone once this returns
}

StripedFile::PendingRead::~PendingRead() {
  if (!waited_) (void)Wait();
}

Status StripedFile::PendingRead::Wait() {
  if (!waited_) {
    waited_ = true;
    if (parity_) {
      parity_->Wait();
      parity_status_ = parity_->Finish(SourceReads::kEngine);
    }
    if (gate_ != nullptr) gate_->LeaveRead();
    if (!runs_.empty()) batch_.Wait();
    lock_ = {};
  }
  if (parity_) return parity_status_;
  return file_->ReadStatus(batch_);
}

Status StripedFile::ReadStatus(const IoBatch& batch) const {
  if (batch.error() == 0) return Status::Ok();
  return DiskError("read", batch, Error::FromErrno(batch.error(), "disk " + std::to_string(batch.failed_disk())));
}

int StripedFile::ReadFd(uint32_t disk, bool aligned) const {
  const Part& part = parts_[disk];
  return aligned && part.direct.valid() ? part.direct.get() : part.fd.get();
}

Error StripedFile::DiskError(const char* op, const IoBatch& batch, const Error& e) const {
  const uint32_t d = batch.failed_disk();
  const std::string where = d < parts_.size() ? " (" + parts_[d].path + ")" : "";
  return Error(e.code(), std::string(op) + " of striped file " + manifest_.file_id + ": " + e.message() + where);
}

void StripedFile::MarkModified() {
  std::lock_guard<std::mutex> lock(manifest_mu_);
  if (manifest_.checksum) manifest_.checksum.reset();
  manifest_dirty_ = true;
}

void StripedFile::Discard() {
  std::lock_guard<std::mutex> lock(manifest_mu_);
  discarded_ = true;
}

Result<UniqueFd> StripedFile::DupStub() const {
  UniqueFd fd(::fcntl(stub_fd_.get(), F_DUPFD_CLOEXEC, 0));
  if (!fd.valid()) return Error::FromErrno("dup stub of striped file " + manifest_.file_id);
  return fd;
}

Status StripedFile::RefuseChange() const {
  if (!options_.writable) return Error(EROFS, "striped file opened read-only");
  if (manifest_.packed) {
    return Error(EOPNOTSUPP, "striped file " + manifest_.file_id + " is compressed (" + manifest_.packed->codec +
                                 "): writes are not supported yet; graphfs-unstripe restores the plain file");
  }
  return Status::Ok();
}

Result<uint64_t> StripedFile::Write(uint64_t offset, const char* buf, uint64_t length) {
  GRAPHFS_RETURN_IF_ERROR(RefuseChange());
  if (length == 0) return uint64_t{0};
  if (offset + length < offset) return Error(EFBIG, "write past the largest offset");
  if (writer_) return WriteParity(offset, buf, length);
  std::shared_lock<std::shared_mutex> lock(rw_);
  std::vector<IoRun> runs = PlanRuns(IoKind::kWrite, offset, length, const_cast<char*>(buf));
  std::vector<uint64_t> planned(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) planned[i] = runs[i].Length();
  IoBatch batch;
  Status s = io_->SubmitAndWait(runs, batch);
  // A run's iov is consumed as it transfers: what it left is what did not land.
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].Length() < planned[i]) parts_[runs[i].disk].unsynced.store(true, std::memory_order_release);
  }
  if (!s.ok()) return DiskError("write", batch, s.error());
  uint64_t cur = size_.load();
  while (offset + length > cur && !size_.compare_exchange_weak(cur, offset + length)) {
  }
  MarkModified();
  return length;
}

std::unique_lock<std::mutex> StripedFile::LockForChange() {
  std::unique_lock<std::mutex> serial(write_mu_);
  // A daemon's rebuild of a disk this file lost holds writes while it switches the disk in, and
  // hands each open file the disk under its write_mu_: wait without it.
  while (auto held = writer_->HeldBy()) {
    serial.unlock();
    held->AwaitRelease();
    serial.lock();
  }
  return serial;
}

Result<uint64_t> StripedFile::WriteParity(uint64_t offset, const char* buf, uint64_t length) {
  std::unique_lock<std::mutex> serial = LockForChange();
  std::unique_lock<std::shared_mutex> lock(rw_);
  ReadGate::WriteScope gate(gate_);
  GRAPHFS_RETURN_IF_ERROR(writer_->CheckWritable());
  parity_->ForgetShared();
  auto written = writer_->Write(offset, buf, length, size(), [this](uint64_t size) {
    size_.store(size);
    return SyncLocked();
  });
  // Whatever landed in place is not durable until the next Sync.
  for (Part& p : parts_) p.unsynced.store(true, std::memory_order_release);
  if (!written.ok()) return written.error();
  size_.store(*written);
  MarkModified();
  return length;
}

Status StripedFile::TruncateParity(uint64_t new_size) {
  {
    std::unique_lock<std::mutex> serial = LockForChange();
    std::unique_lock<std::shared_mutex> lock(rw_);
    ReadGate::WriteScope gate(gate_);
    GRAPHFS_RETURN_IF_ERROR(writer_->CheckWritable());
    parity_->ForgetShared();
    const uint64_t old = size();
    Status s = writer_->Resize(old, new_size, [this](uint64_t size) {
      size_.store(size);
      return SyncLocked();
    });
    for (Part& p : parts_) p.unsynced.store(true, std::memory_order_release);
    if (!s.ok()) return s.error();
    size_.store(new_size);
    MarkModified();
    if (new_size < old) {
      // The manifest says the new size before the parts are cut (a crash between leaves bytes
      // past a part's share, which the journal's replay cuts again).
      GRAPHFS_RETURN_IF_ERROR(Flush());
      if (::fsync(stub_fd_.get()) != 0) return Error::FromErrno("fsync stub of " + manifest_.file_id);
      GRAPHFS_RETURN_IF_ERROR(writer_->Cut(new_size, old));
    }
  }
  return Flush();
}

Status StripedFile::Truncate(uint64_t new_size) {
  GRAPHFS_RETURN_IF_ERROR(RefuseChange());
  if (writer_) return TruncateParity(new_size);
  std::unique_lock<std::shared_mutex> lock(rw_);
  // Parts never hold bytes past their share of the logical size, so growing leaves a
  // hole (read as zeros) and shrinking cuts every part to its new share.
  if (new_size < size()) {
    for (uint32_t d = 0; d < parts_.size(); ++d) {
      struct stat st;
      if (::fstat(parts_[d].fd.get(), &st) != 0) return Error::FromErrno("stat part " + parts_[d].path);
      const uint64_t share = map_.PartSize(d, new_size);
      if (static_cast<uint64_t>(st.st_size) > share) {
        if (::ftruncate(parts_[d].fd.get(), static_cast<off_t>(share)) != 0)
          return Error::FromErrno("truncate part " + parts_[d].path);
        parts_[d].unsynced.store(true, std::memory_order_release);
      }
    }
  }
  size_.store(new_size);
  MarkModified();
  lock.unlock();
  return Flush();
}

Status StripedFile::Flush() {
  StripeManifest m;
  {
    std::lock_guard<std::mutex> lock(manifest_mu_);
    if (!manifest_dirty_ || discarded_) return Status::Ok();
    manifest_.size = size();
    m = manifest_;
    manifest_dirty_ = false;
  }
  Status s = WriteManifestFd(stub_fd_.get(), m);
  if (!s.ok()) {
    std::lock_guard<std::mutex> lock(manifest_mu_);
    manifest_dirty_ = true;
    return s;
  }
  // The stub's mtime is the file's mtime.
  struct timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
  ::futimens(stub_fd_.get(), times);
  return Status::Ok();
}

Status StripedFile::Sync() {
  if (!parity_) return SyncLocked();
  // Also without a writer (a compressed file opened writable): a disk switched in (AdoptDisk)
  // sets its part's descriptor under this mutex, and SyncLocked reads them.
  std::lock_guard<std::mutex> serial(write_mu_);
  GRAPHFS_RETURN_IF_ERROR(SyncLocked());
  if (!writer_) return Status::Ok();
  // Every entry is applied and durable in place: the journal's ring is free again.
  return writer_->Checkpoint();
}

Status StripedFile::SyncLocked() {
  if (options_.writable) {
    std::vector<IoRun> runs;
    for (uint32_t d = 0; d < parts_.size(); ++d) {
      // A lost part of a file with parity (missing disk) has no descriptor and nothing to sync.
      if (!parts_[d].fd.valid() || !parts_[d].unsynced.exchange(false, std::memory_order_acq_rel)) continue;
      IoRun& run = runs.emplace_back();
      run.kind = IoKind::kSync;
      run.disk = d;
      run.fd = parts_[d].fd.get();
    }
    IoBatch batch;
    Status s = io_->SubmitAndWait(runs, batch);
    if (!s.ok()) {
      // Not known to be durable: the next Sync tries those parts again.
      for (const IoRun& run : runs) parts_[run.disk].unsynced.store(true, std::memory_order_release);
      return DiskError("sync", batch, s.error());
    }
    if (writer_) GRAPHFS_RETURN_IF_ERROR(writer_->SyncSums());
  }
  GRAPHFS_RETURN_IF_ERROR(Flush());
  if (::fsync(stub_fd_.get()) != 0) return Error::FromErrno("fsync stub of " + manifest_.file_id);
  return Status::Ok();
}

}  // namespace graphfs
