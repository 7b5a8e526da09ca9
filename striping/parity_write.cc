#include "striping/parity_write.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "common/aligned_buffer.h"
#include "striping/part_io.h"
#include "striping/unit_checksum.h"
#include "striping/unit_sums.h"

namespace graphfs {

namespace {

uint64_t RoundUp(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

// N spans of `length` bytes each in one zeroed buffer (4 KiB apart, for the engine's runs).
struct RowBuffer {
  AlignedBuffer bytes;
  std::vector<std::span<char>> units;
  bool Make(uint32_t n, uint64_t length) {
    const uint64_t stride = RoundUp(std::max<uint64_t>(length, 1), kDirectAlign);
    bytes = AlignedBuffer(n * stride);
    if (!bytes.ok()) return false;
    std::memset(bytes.data(), 0, bytes.size());
    for (uint32_t s = 0; s < n; ++s) units.emplace_back(bytes.data() + s * stride, length);
    return true;
  }
  std::vector<std::span<const char>> Const() const { return {units.begin(), units.end()}; }
};

}  // namespace

Result<std::unique_ptr<ParityWriter>> ParityWriter::Open(const DiskSet& disks, IoEngine* io, const StripeManifest& m,
                                                         const StripeMap& map, ParityReader* reader,
                                                         std::vector<int> part_fds) {
  if (part_fds.size() != map.disks())
    return Error(EINVAL, "parity writer: " + std::to_string(part_fds.size()) + " parts for " + std::to_string(map.disks()) + " disks");
  std::vector<bool> present(map.disks()), lost(map.disks());
  for (uint32_t d = 0; d < map.disks(); ++d) {
    if (!reader->lost(d).empty()) part_fds[d] = -1;  // no part, or no sums to keep in step with it
    present[d] = part_fds[d] >= 0;
    lost[d] = !present[d];
  }
  auto journal = RowJournal::Open(disks, io, m, present);
  if (!journal.ok()) return journal.error();
  auto stale = StaleRowsWriter::Open(disks, m.file_id, map.disks(), lost);
  if (!stale.ok()) return stale.error();
  return std::unique_ptr<ParityWriter>(
      new ParityWriter(disks, io, m, map, reader, std::move(part_fds), std::move(*journal), std::move(*stale)));
}

Status ParityWriter::CheckWritable() const {
  for (uint32_t d = 0; d < map_.disks(); ++d) {
    if (part_fds_[d] >= 0) continue;
    if (const std::string lost = reader_->lost(d); lost.empty())
      return Error(EROFS, "striped file " + file_id_ + ": disk " + std::to_string(d) +
                              " was switched in while the file was open, but its writes could not take it (the "
                              "daemon's log says why): they resume when the file is opened again");
  }
  return Status::Ok();
}

std::shared_ptr<RebuildWatch> ParityWriter::HeldBy() const {
  for (uint32_t d = 0; d < map_.disks(); ++d) {
    if (part_fds_[d] >= 0) continue;
    if (auto watch = set_.rebuild(d); watch && watch->holding()) return watch;
  }
  return nullptr;
}

Status ParityWriter::MarkStale(uint64_t first, uint64_t end) {
  reader_->MarkStale(first, end);
  return stale_->Mark(first, end);
}

void ParityWriter::NoteRebuilds(uint64_t first, uint64_t end) const {
  for (uint32_t d = 0; d < map_.disks(); ++d)
    if (part_fds_[d] < 0)
      if (auto watch = set_.rebuild(d)) watch->Written(file_id_, first, end);
}

Status ParityWriter::AdoptDisk(uint32_t disk, int part_fd, const DiskSet& disks) {
  if (disk >= part_fds_.size()) return Error(EINVAL, "disk " + std::to_string(disk) + " is not in the set");
  if (part_fds_[disk] >= 0) return Status::Ok();
  // In-place writes put sums on the disk through the reader's SumsCache: it must have them.
  if (const std::string lost = reader_->lost(disk); !lost.empty())
    return Error(EINVAL, "striped file " + file_id_ + ": disk " + std::to_string(disk) + " is still lost to its reads (" + lost + ")");
  if (part_fd < 0) return Error(EINVAL, "striped file " + file_id_ + ": no part on disk " + std::to_string(disk));
  // The journal first: no unit is ever written in place on a disk whose journal lacks its entry.
  GRAPHFS_RETURN_IF_ERROR(journal_->AdoptDisk(disk, disks));
  part_fds_[disk] = part_fd;
  // Its records were cleared by the rebuild, which wrote every row: nothing more to mark.
  stale_->Forget(disk);
  return Status::Ok();
}

Result<std::optional<uint64_t>> ParityWriter::Recover() {
  auto pending = journal_->Scan();
  if (!pending.ok()) return pending.error().Wrap("recovery of striped file " + file_id_);
  const uint32_t n = map_.disks(), d_units = map_.data_units();
  std::optional<uint64_t> final_size;
  // The file's size before each entry: an entry that makes it shorter is a shrink.
  uint64_t size = reader_->stored_size();
  for (RowJournal::Pending& p : *pending) {
    const JournalRecord& r = p.record;
    // Fewer good units than D: the journal's fsync never returned, so the row was never
    // touched in place — the entry is dropped, and the row stays as it was.
    if (p.good() < d_units) continue;
    // A shrink replayed: a disk lost since it was journaled missed the cut too, and keeps its units
    // of the rows cut — should the file grow over them again they must read as zeros, not as what
    // the disk kept — so they are marked for it first, as Resize marks them (the new last row is
    // the entry's own, marked below). Marked even should the entry not apply: a mark costs reads
    // through parity, a missing one serves old bytes.
    if (r.file_size < size)
      if (Status m = MarkStale(map_.Rows(r.file_size), map_.Rows(size)); !m.ok())
        return m.error().Wrap("recovery of striped file " + file_id_);
    if (r.length > 0) {
      RowBuffer row;
      if (!row.Make(n, r.length)) return Error(ENOMEM, "recovery of striped file " + file_id_ + ": no memory for a row");
      std::vector<uint32_t> lost;
      for (uint32_t s = 0; s < n; ++s) {
        if (p.units[s]) {
          std::memcpy(row.units[s].data(), p.units[s]->data(), r.length);
        } else {
          lost.push_back(s);
        }
      }
      if (!lost.empty()) {
        const ParityCodec* codec = reader_->codec();
        if (codec == nullptr) continue;  // K = 0 needs every unit: p.good() < D said so already
        GRAPHFS_RETURN_IF_ERROR(codec->Reconstruct(row.units, lost));
        bool agree = true;
        for (uint32_t s : lost) agree = agree && UnitChecksum(row.units[s]) == r.hashes[s];
        if (!agree) continue;  // the good units do not make the entry they claim: not applied
      }
      // A disk lost since the entry was journaled may have missed its in-place write: the row is
      // marked for it before the others change (nothing is marked when no disk is lost).
      if (Status m = MarkStale(r.row, r.row + 1); !m.ok()) return m.error().Wrap("recovery of striped file " + file_id_);
      if (Status w = WriteInPlace(r.row, r.begin, row.units, r.file_size); !w.ok())
        return w.error().Wrap("recovery of striped file " + file_id_);
    }
    final_size = r.file_size;
    size = r.file_size;
    reader_->SetStoredSize(r.file_size);
  }
  return final_size;
}

Status ParityWriter::WriteInPlace(uint64_t row, uint64_t begin, std::span<const std::span<char>> units,
                                  uint64_t size) {
  const uint64_t length = units.empty() ? 0 : units[0].size();
  if (length == 0) return Status::Ok();
  const uint64_t unit = map_.unit();
  // A scrub run by the daemon (scrub.h) reads and repairs whole rows under this lock: it must not
  // see the row's units half written (their sums and parity would disagree, and it would "repair"
  // the new bytes back to the old ones).
  std::lock_guard<std::mutex> lock(reader_->RowLock(row));
  for (uint32_t d = 0; d < map_.disks(); ++d) {
    if (part_fds_[d] < 0) continue;
    if (int fault = io_->fault(d); fault != 0)
      return Error::FromErrno(fault, "write of striped file " + file_id_ + " on disk " + std::to_string(d));
    const uint32_t slot = map_.DiskSlot(row, d);
    const std::span<const char> bytes = units[slot];
    // The part holds no byte past its unit's end: a hole there reads as the zeros the code saw.
    const uint64_t held = map_.RowUnitLength(row, slot, size);
    if (held > begin) {
      const uint64_t n = std::min(length, held - begin);
      GRAPHFS_RETURN_IF_ERROR(WriteAll(part_fds_[d], bytes.data(), n, row * unit + begin,
                                       "write of striped file " + file_id_ + " on disk " + std::to_string(d)));
      io_->counters(d).bytes_written.fetch_add(n, std::memory_order_relaxed);
    }
    // Sums of the whole range, zero blocks included: a truncate's zeros must sum to 0 again.
    GRAPHFS_RETURN_IF_ERROR(reader_->sums().Put(d, row, begin / sum_block_, BlockSums(bytes, sum_block_)));
  }
  // Still under the row's lock, which a daemon's rebuild holds while it reads the row: either it
  // read the row before this write, and passed it (it is told, and does the row again), or it
  // reads it after, new bytes and all.
  NoteRebuilds(row, row + 1);
  return Status::Ok();
}

Status ParityWriter::Commit(uint64_t row, uint64_t begin, uint64_t end, const std::vector<Piece>& pieces,
                            uint64_t size, uint64_t read_limit, uint64_t new_size, const SyncAll& sync) {
  if (journal_->full()) {
    // The oldest slot is about to be reused: its entry must be durable in place first.
    GRAPHFS_RETURN_IF_ERROR(sync(size));
    GRAPHFS_RETURN_IF_ERROR(Checkpoint());
  }
  const uint32_t n = map_.disks(), d_units = map_.data_units();
  const uint64_t length = end - begin;
  JournalRecord record;
  record.row = row;
  record.begin = begin;
  record.length = length;
  record.file_size = new_size;
  if (length == 0) {
    record.hashes.assign(n, UnitChecksum({}));
    std::vector<std::span<const char>> none(n);
    GRAPHFS_RETURN_IF_ERROR(journal_->Append(record, none));
    reader_->SetStoredSize(new_size);
    return Status::Ok();
  }
  RowBuffer buf;
  if (!buf.Make(n, length)) return Error(ENOMEM, "write of striped file " + file_id_ + ": no memory for a row");

  // The data units' bytes the write leaves as they are, read verified (rebuilt if need be).
  std::vector<ParityTarget> targets;
  for (uint32_t s = 0; s < d_units; ++s) {
    const bool covered = std::any_of(pieces.begin(), pieces.end(), [&](const Piece& p) {
      return p.slot == s && p.at <= begin && p.at + p.length >= end;
    });
    if (covered) continue;
    const uint64_t from = map_.SlotFileOffset(row, s) + begin;
    const uint64_t to = std::min(from + length, read_limit);
    if (from >= to) continue;
    targets.push_back({from, to - from, {{buf.units[s].data(), to - from}}});
  }
  if (!targets.empty()) {
    auto read = reader_->Plan(std::move(targets), /*urgent=*/true);
    if (!read.ok()) return read.error().Wrap("write of striped file " + file_id_);
    (*read)->Submit(nullptr);
    (*read)->Wait();
    if (Status s = (*read)->Finish(SourceReads::kEngine); !s.ok())
      return s.error().Wrap("write of striped file " + file_id_ + ": reading row " + std::to_string(row));
  }
  for (const Piece& p : pieces) std::memcpy(buf.units[p.slot].data() + (p.at - begin), p.bytes, p.length);
  // Past the file's new end every data unit is zeros (a truncate cuts them; parity codes them).
  for (uint32_t s = 0; s < d_units; ++s) {
    const uint64_t held = map_.RowUnitLength(row, s, new_size);
    if (held < end) {
      const uint64_t from = std::max(held, begin) - begin;
      std::memset(buf.units[s].data() + from, 0, length - from);
    }
  }
  if (const ParityCodec* codec = reader_->codec(); codec != nullptr) {
    std::vector<std::span<const char>> data(buf.units.begin(), buf.units.begin() + d_units);
    std::vector<std::span<char>> parity(buf.units.begin() + d_units, buf.units.end());
    GRAPHFS_RETURN_IF_ERROR(codec->Encode(data, parity));
  }
  for (uint32_t s = 0; s < n; ++s) record.hashes.push_back(UnitChecksum(buf.units[s]));
  // The row marked stale for every lost disk before anything of it changes (journal included):
  // the parity changes even where the lost disk's own unit is not written.
  GRAPHFS_RETURN_IF_ERROR(MarkStale(row, row + 1));
  GRAPHFS_RETURN_IF_ERROR(journal_->Append(record, buf.Const()));
  // From here a crash is replayed: the entry is durable on every present disk.
  GRAPHFS_RETURN_IF_ERROR(WriteInPlace(row, begin, buf.units, new_size));
  // With a disk lost, this commit's own read of the row kept its blocks for another read of the
  // row (row_share.h): they are the row's old bytes now.
  reader_->ForgetShared();
  reader_->SetStoredSize(new_size);
  return Status::Ok();
}

Result<uint64_t> ParityWriter::Write(uint64_t offset, const char* buf, uint64_t length, uint64_t size,
                                     const SyncAll& sync) {
  const uint64_t unit = map_.unit(), b = sum_block_;
  const uint64_t window = std::max(kMaxCommit, b);  // a power of two: windows never straddle units
  struct Group {
    uint64_t row = 0, window = 0, begin = 0, end = 0, file_end = 0;
    std::vector<Piece> pieces;
  };
  uint64_t current = size;
  std::optional<Group> group;
  auto commit = [&]() -> Status {
    if (!group) return Status::Ok();
    const uint64_t new_size = std::max(current, group->file_end);
    GRAPHFS_RETURN_IF_ERROR(Commit(group->row, group->begin, group->end, group->pieces, current, current, new_size, sync));
    current = new_size;
    group.reset();
    return Status::Ok();
  };
  for (const StripeExtent& e : map_.Split(offset, length)) {
    const uint64_t row = e.disk_offset / unit;
    const uint32_t slot = map_.DiskSlot(row, e.disk);
    for (uint64_t x = 0; x < e.length;) {
      const uint64_t at = e.disk_offset % unit + x;
      const uint64_t take = std::min(e.length - x, window - at % window);
      const uint64_t begin = at / b * b, end = std::min(RoundUp(at + take, b), unit);
      if (group && (group->row != row || group->window != at / window)) GRAPHFS_RETURN_IF_ERROR(commit());
      if (!group) group = Group{.row = row, .window = at / window, .begin = begin, .end = end};
      group->begin = std::min(group->begin, begin);
      group->end = std::max(group->end, end);
      group->file_end = std::max(group->file_end, e.file_offset + x + take);
      group->pieces.push_back({slot, at, take, buf + (e.file_offset - offset) + x});
      x += take;
    }
  }
  GRAPHFS_RETURN_IF_ERROR(commit());
  return current;
}

Status ParityWriter::Resize(uint64_t size, uint64_t new_size, const SyncAll& sync) {
  const uint64_t unit = map_.unit(), b = sum_block_, d_units = map_.data_units();
  // A lost disk keeps its units of the rows a shrink cuts: should the file grow over them again
  // they must read as zeros, not as what the disk kept (with sums to match).
  if (new_size < size) GRAPHFS_RETURN_IF_ERROR(MarkStale(map_.Rows(new_size), map_.Rows(size)));
  if (new_size >= size || new_size % (unit * d_units) == 0) return Commit(0, 0, 0, {}, size, size, new_size, sync);
  // The new last row: its data past the new end becomes zeros, and its parity follows. One
  // entry for the whole tail (up to a unit of each disk): a shrink replayed halfway would leave
  // parity that still codes the cut bytes.
  const uint64_t row = map_.RowOf(new_size);
  const uint32_t slot = static_cast<uint32_t>((new_size / unit) % d_units);
  const bool later = slot + 1 < d_units && map_.SlotFileOffset(row, slot + 1) < size;
  const uint64_t begin = later ? 0 : (new_size % unit) / b * b;
  const uint64_t end = std::min(RoundUp(map_.RowUnitLength(row, 0, size), b), unit);
  return Commit(row, begin, end, {}, size, new_size, new_size, sync);
}

Status ParityWriter::Cut(uint64_t size, uint64_t old_size) {
  const uint64_t rows = map_.Rows(size);
  for (uint32_t d = 0; d < map_.disks(); ++d) {
    if (part_fds_[d] < 0) continue;
    struct stat st;
    if (::fstat(part_fds_[d], &st) != 0) return Error::FromErrno("stat part of striped file " + file_id_ + " on disk " + std::to_string(d));
    const uint64_t share = map_.PartSize(d, size), now = static_cast<uint64_t>(st.st_size);
    // The sums' header says the part's length before the part is cut: never longer than it is.
    GRAPHFS_RETURN_IF_ERROR(reader_->sums().Cut(d, rows, std::min(now, share)));
    if (now > share && ::ftruncate(part_fds_[d], static_cast<off_t>(share)) != 0)
      return Error::FromErrno("truncate part of striped file " + file_id_ + " on disk " + std::to_string(d));
  }
  // Cut now: a rebuild that passed them holds their old units (should the file grow over them
  // again they must be zeros); one that reads them from now on reads zeros.
  NoteRebuilds(rows, map_.Rows(old_size));
  return Status::Ok();
}

}  // namespace graphfs
