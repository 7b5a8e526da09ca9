#include "striping/rebuild_read_back.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <span>

namespace graphfs {

namespace {

uint64_t RoundUp(uint64_t v) { return (v + kDirectAlign - 1) / kDirectAlign * kDirectAlign; }

}  // namespace

RebuildReadBack::RebuildReadBack(DiskBackend& target, uint32_t disk, Io io)
    : target_(target), disk_(disk), io_(io), worker_([this] { Run(); }) {}

RebuildReadBack::~RebuildReadBack() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void RebuildReadBack::Rows(const StripedFileRef& f, uint64_t first_row, uint64_t end_row) {
  if (first_row < end_row) Push(Task{f, first_row, end_row, false});
}

void RebuildReadBack::Length(const StripedFileRef& f) { Push(Task{f, 0, 0, true}); }

void RebuildReadBack::Push(Task t) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(t));
  }
  cv_.notify_all();
}

Status RebuildReadBack::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

Status RebuildReadBack::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return (queue_.empty() && !busy_) || !error_.ok(); });
  return error_;
}

void RebuildReadBack::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Task t = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    Status s = Do(t);
    if (!s.ok()) s = s.error().Wrap("reading back the rebuilt units of " + t.file.path);
    lock.lock();
    busy_ = false;
    // After a failure the rebuild stops: nothing queued later needs reading.
    if (!s.ok()) {
      if (error_.ok()) error_ = s;
      queue_.clear();
    }
    cv_.notify_all();
  }
}

Status RebuildReadBack::Do(const Task& t) {
  const StripeManifest& m = t.file.manifest;
  if (t.length) {
    // The part was cut and its header rewritten since its rows were read: both are opened afresh.
    GRAPHFS_RETURN_IF_ERROR(OpenFile(m));
    Status s = CheckLength(m);
    open_.reset();
    return s;
  }
  if (!open_ || open_->file_id != m.file_id) GRAPHFS_RETURN_IF_ERROR(OpenFile(m));
  for (uint64_t row = t.first_row; row < t.end_row; ++row) GRAPHFS_RETURN_IF_ERROR(CheckRow(m, row));
  return Status::Ok();
}

Status RebuildReadBack::OpenFile(const StripeManifest& m) {
  open_.reset();
  auto map = StripeMap::Create(m.layout);
  if (!map.ok()) return map.error();
  auto part = target_.Open(m.file_id, DiskFileOptions{.direct_reads = io_ == Io::kDirect});
  if (!part.ok()) return part.error();
  auto sums = [&] {
    std::lock_guard<std::mutex> held(headers_mu_);
    return UnitSums::Open(target_, SumsHeaderOf(m, disk_), /*writable=*/false);
  }();
  if (!sums.ok()) return sums.error();
  if (buf_.size() < RoundUp(m.layout.unit)) {
    buf_ = AlignedBuffer(RoundUp(m.layout.unit));
    if (!buf_.ok()) return Error(ENOMEM, "no memory for a unit of " + std::to_string(m.layout.unit) + " bytes");
  }
  open_.emplace(Open{m.file_id, *map, std::move(*part), std::move(*sums)});
  return Status::Ok();
}

Status RebuildReadBack::CheckRow(const StripeManifest& m, uint64_t row) {
  DiskFile& part = *open_->part;
  const StripeMap& map = open_->map;
  const uint64_t length = map.RowUnitLength(row, map.DiskSlot(row, disk_), m.stored_size());
  if (length == 0) return Status::Ok();
  const uint64_t at = row * map.unit();
  uint64_t got = 0;
  if (const int direct = part.native_direct_fd(); direct >= 0 && at % kDirectAlign == 0) {
    // Whole aligned blocks: the unit starts aligned, and a short last one is read to the end of
    // the part (the read stops there).
    ssize_t n;
    do {
      n = ::pread(direct, buf_.data(), RoundUp(length), static_cast<off_t>(at));
    } while (n < 0 && errno == EINTR);
    if (n < 0) return Error::FromErrno("O_DIRECT read of " + part.where() + " at " + std::to_string(at));
    got = static_cast<uint64_t>(n);
  } else {
    // No O_DIRECT here: what the page cache holds of the range is written back and dropped first.
    if (const int fd = part.native_fd(); fd >= 0) {
      ::sync_file_range(fd, static_cast<off_t>(at), static_cast<off_t>(length),
                        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
      ::posix_fadvise(fd, static_cast<off_t>(at), static_cast<off_t>(length), POSIX_FADV_DONTNEED);
    }
    auto n = part.Read(at, std::span<char>(buf_.data(), length));
    if (!n.ok()) return n.error();
    got = *n;
  }
  if (got < length) return Error(EIO, part.where() + ": ends in row " + std::to_string(row));
  const uint64_t blocks = (length + m.sum_block - 1) / m.sum_block;
  auto stored = open_->sums->Read(row, 0, blocks);
  if (!stored.ok()) return stored.error();
  return VerifyBlockSums(std::span<const char>(buf_.data(), length), m.sum_block, *stored, 0,
                         part.where() + ", row " + std::to_string(row));
}

Status RebuildReadBack::CheckLength(const StripeManifest& m) {
  DiskFile& part = *open_->part;
  const uint64_t part_length = open_->map.PartSize(disk_, m.stored_size());
  auto size = part.Size();
  if (!size.ok()) return size.error();
  if (*size != part_length || open_->sums->header().part_length != part_length)
    return Error(EIO, part.where() + ": " + std::to_string(*size) + " bytes, its sums say " +
                          std::to_string(open_->sums->header().part_length) + ", the file's part is " +
                          std::to_string(part_length));
  return Status::Ok();
}

}  // namespace graphfs
