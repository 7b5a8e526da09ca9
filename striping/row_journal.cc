#include "striping/row_journal.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "common/little_endian.h"
#include "striping/local_disk_backend.h"
#include "striping/unit_checksum.h"

namespace graphfs {

namespace {

constexpr char kHeaderMagic[8] = {'G', 'F', 'J', 'R', 'N', 'L', '1', '\n'};
constexpr char kRecordMagic[8] = {'G', 'F', 'J', 'R', 'E', 'C', '1', '\n'};
constexpr size_t kMaxFileId = 1024;
constexpr size_t kChecksumAt = kJournalHeaderSize - 8;
constexpr size_t kRecordIdAt = 56;       // u16 length, then the bytes
constexpr size_t kRecordHashesAt = 1088;  // after the longest id
constexpr size_t kHeaderIdAt = 32;

void PutId(char* p, const std::string& id) {
  p[0] = static_cast<char>(id.size() & 0xff);
  p[1] = static_cast<char>(id.size() >> 8);
  std::memcpy(p + 2, id.data(), id.size());
}
std::string GetId(const char* p) {
  const size_t n = static_cast<unsigned char>(p[0]) | (static_cast<size_t>(static_cast<unsigned char>(p[1])) << 8);
  return std::string(p + 2, std::min(n, kMaxFileId));
}
void Seal(std::string& bytes) { Put64(&bytes[kChecksumAt], XXH3_64bits(bytes.data(), kChecksumAt)); }
bool Sealed(std::span<const char> bytes) {
  return bytes.size() == kJournalHeaderSize && Get64(bytes.data() + kChecksumAt) == XXH3_64bits(bytes.data(), kChecksumAt);
}

struct Header {
  uint32_t disk = 0;
  uint32_t slots = 0;
  uint64_t unit = 0;
  uint64_t checkpoint = 0;
  std::string file_id;
};

std::optional<Header> DecodeHeader(std::span<const char> bytes) {
  if (!Sealed(bytes) || std::memcmp(bytes.data(), kHeaderMagic, 8) != 0) return std::nullopt;
  Header h;
  h.disk = Get32(bytes.data() + 8);
  h.slots = Get32(bytes.data() + 12);
  h.unit = Get64(bytes.data() + 16);
  h.checkpoint = Get64(bytes.data() + 24);
  h.file_id = GetId(bytes.data() + kHeaderIdAt);
  return h;
}

}  // namespace

Result<std::string> EncodeJournalRecord(const std::string& file_id, const JournalRecord& r) {
  if (file_id.size() > kMaxFileId) return Error(EINVAL, "journal record: file id of " + std::to_string(file_id.size()) + " bytes");
  if (r.hashes.empty() || kRecordHashesAt + r.hashes.size() * 8 > kChecksumAt)
    return Error(EINVAL, "journal record: " + std::to_string(r.hashes.size()) + " units in a row");
  std::string bytes(kJournalHeaderSize, '\0');
  std::memcpy(&bytes[0], kRecordMagic, 8);
  Put64(&bytes[8], r.seq);
  Put64(&bytes[16], r.row);
  Put64(&bytes[24], r.begin);
  Put64(&bytes[32], r.length);
  Put64(&bytes[40], r.file_size);
  Put32(&bytes[48], r.slot);
  Put32(&bytes[52], static_cast<uint32_t>(r.hashes.size()));
  PutId(&bytes[kRecordIdAt], file_id);
  for (size_t i = 0; i < r.hashes.size(); ++i) Put64(&bytes[kRecordHashesAt + i * 8], r.hashes[i]);
  Seal(bytes);
  return bytes;
}

Result<JournalRecord> DecodeJournalRecord(std::span<const char> bytes, const std::string& file_id, uint32_t units) {
  auto damaged = [](const std::string& why) { return Error(EIO, "damaged journal record: " + why); };
  if (bytes.size() != kJournalHeaderSize) return damaged(std::to_string(bytes.size()) + " bytes");
  if (std::memcmp(bytes.data(), kRecordMagic, 8) != 0) return damaged("no magic");
  if (!Sealed(bytes)) return damaged("its checksum does not match");
  JournalRecord r;
  r.seq = Get64(bytes.data() + 8);
  r.row = Get64(bytes.data() + 16);
  r.begin = Get64(bytes.data() + 24);
  r.length = Get64(bytes.data() + 32);
  r.file_size = Get64(bytes.data() + 40);
  r.slot = Get32(bytes.data() + 48);
  const uint32_t n = Get32(bytes.data() + 52);
  if (GetId(bytes.data() + kRecordIdAt) != file_id) return damaged("of another file");
  if (n != units) return damaged(std::to_string(n) + " units in a row, the file has " + std::to_string(units));
  if (r.slot >= n) return damaged("slot " + std::to_string(r.slot) + " of " + std::to_string(n));
  if (r.begin + r.length < r.begin) return damaged("range wraps");
  r.hashes.resize(n);
  for (uint32_t i = 0; i < n; ++i) r.hashes[i] = Get64(bytes.data() + kRecordHashesAt + i * 8);
  return r;
}

uint32_t RowJournal::Pending::good() const {
  return static_cast<uint32_t>(std::count_if(units.begin(), units.end(), [](const auto& u) { return u.has_value(); }));
}

Result<std::unique_ptr<RowJournal>> RowJournal::Open(const DiskSet& disks, IoEngine* io, const StripeManifest& m,
                                                     const std::vector<bool>& present) {
  auto map = StripeMap::Create(m.layout);
  if (!map.ok()) return map.error();
  if (m.file_id.size() > kMaxFileId) return Error(EINVAL, "journal of a file id of " + std::to_string(m.file_id.size()) + " bytes");
  std::unique_ptr<RowJournal> j(new RowJournal(io, m, *map));
  j->disks_.resize(disks.size());
  for (uint32_t d = 0; d < disks.size(); ++d) {
    if (d >= present.size() || !present[d]) continue;
    auto backend = LocalDiskBackend::Open(disks.path(d));
    if (!backend.ok()) return backend.error().Wrap("journal of striped file " + m.file_id);
    j->disks_[d].backend = std::move(*backend);
  }
  return j;
}

std::string RowJournal::EncodeHeader(uint32_t disk) const {
  std::string bytes(kJournalHeaderSize, '\0');
  std::memcpy(&bytes[0], kHeaderMagic, 8);
  Put32(&bytes[8], disk);
  Put32(&bytes[12], slots_);
  Put64(&bytes[16], map_.unit());
  Put64(&bytes[24], checkpoint_);
  PutId(&bytes[kHeaderIdAt], file_id_);
  Seal(bytes);
  return bytes;
}

Status RowJournal::Create(uint32_t disk) {
  Disk& d = disks_[disk];
  auto file = d.backend->Open(FileName(file_id_), {.writable = true, .create = true});
  if (!file.ok()) return file.error();
  GRAPHFS_RETURN_IF_ERROR((*file)->Write(0, EncodeHeader(disk)));
  GRAPHFS_RETURN_IF_ERROR((*file)->Sync());
  // The name must outlive a crash too, or the next open would find no journal to replay.
  GRAPHFS_RETURN_IF_ERROR(d.backend->SyncNames());
  d.file = std::move(*file);
  return Status::Ok();
}

Result<std::vector<RowJournal::Pending>> RowJournal::Scan() {
  const uint32_t n = map_.disks();
  std::vector<std::pair<uint32_t, JournalRecord>> records;  // disk, record: the good ones
  std::map<uint64_t, std::vector<std::pair<uint32_t, std::string>>> bytes_of;  // seq -> (disk, unit bytes)
  uint64_t checkpoint = 0, last = 0;
  for (uint32_t d = 0; d < n; ++d) {
    Disk& disk = disks_[d];
    if (!disk.backend) continue;
    auto exists = disk.backend->Exists(FileName(file_id_));
    if (!exists.ok()) return exists.error();
    if (!*exists) continue;
    auto file = disk.backend->Open(FileName(file_id_), {.writable = !read_only_});
    if (!file.ok()) return file.error();
    disk.file = std::move(*file);
    std::string head(kJournalHeaderSize, '\0');
    auto got = disk.file->Read(0, head);
    if (!got.ok()) return got.error();
    // A damaged header (torn while the checkpoint moved) takes no part: the other disks' say.
    if (auto h = DecodeHeader(std::span<const char>(head.data(), *got));
        h && h->file_id == file_id_ && h->disk == d && h->unit == map_.unit() && h->slots == slots_) {
      checkpoint = std::max(checkpoint, h->checkpoint);
    }
    for (uint32_t s = 0; s < slots_; ++s) {
      const uint64_t at = kJournalHeaderSize + s * (kJournalHeaderSize + map_.unit());
      std::string rec(kJournalHeaderSize, '\0');
      auto r = disk.file->Read(at, rec);
      if (!r.ok()) return r.error();
      if (*r < kJournalHeaderSize) continue;
      auto decoded = DecodeJournalRecord(rec, file_id_, n);
      if (!decoded.ok()) continue;  // never written, or torn: a torn record verifies nowhere
      const JournalRecord& jr = *decoded;
      last = std::max(last, jr.seq);
      if (jr.seq % slots_ != s || jr.length > map_.unit() || jr.begin + jr.length > map_.unit() ||
          map_.SlotDisk(jr.row, jr.slot) != d)
        continue;
      std::string unit(jr.length, '\0');
      auto u = disk.file->Read(at + kJournalHeaderSize, unit);
      if (!u.ok()) return u.error();
      if (*u != jr.length || UnitChecksum(unit) != jr.hashes[jr.slot]) continue;  // its bytes were torn
      bytes_of[jr.seq].emplace_back(d, std::move(unit));
      records.emplace_back(d, jr);
    }
  }
  checkpoint_ = checkpoint;
  next_seq_ = std::max(last, checkpoint) + 1;
  std::map<uint64_t, Pending> pending;
  for (auto& [d, jr] : records) {
    if (jr.seq <= checkpoint) continue;
    auto [it, added] = pending.try_emplace(jr.seq);
    Pending& p = it->second;
    if (added) {
      p.record = jr;
      p.units.resize(n);
    } else if (jr.row != p.record.row || jr.begin != p.record.begin || jr.length != p.record.length ||
               jr.file_size != p.record.file_size || jr.hashes != p.record.hashes) {
      continue;  // disks that disagree about one entry: only the first one's units count
    }
    for (auto& [disk, bytes] : bytes_of[jr.seq]) {
      if (disk == d) p.units[jr.slot] = std::move(bytes);
    }
  }
  std::vector<Pending> out;
  for (auto& [seq, p] : pending) out.push_back(std::move(p));
  return out;
}

Result<bool> RowJournal::HasPending(const DiskSet& disks, const StripeManifest& m) {
  std::vector<bool> present(disks.size());
  for (uint32_t d = 0; d < disks.size(); ++d) present[d] = disks.state(d) != DiskState::kMissing;
  auto journal = Open(disks, /*io=*/nullptr, m, present);
  if (!journal.ok()) return journal.error();
  (*journal)->read_only_ = true;
  auto pending = (*journal)->Scan();
  if (!pending.ok()) return pending.error().Wrap("journal of striped file " + m.file_id);
  return !pending->empty();
}

Status RowJournal::Append(JournalRecord record, std::span<const std::span<const char>> units) {
  const uint32_t n = map_.disks();
  if (units.size() != n) return Error(EINVAL, "journal entry of " + std::to_string(units.size()) + " units, rows have " + std::to_string(n));
  record.seq = next_seq_;
  std::vector<std::string> heads(n);
  std::vector<IoRun> writes;
  for (uint32_t s = 0; s < n; ++s) {
    const uint32_t d = map_.SlotDisk(record.row, s);
    if (!disks_[d].backend) continue;
    if (!disks_[d].file) {
      if (Status made = Create(d); !made.ok()) return made.error().Wrap("journal of striped file " + file_id_);
    }
    record.slot = s;
    auto head = EncodeJournalRecord(file_id_, record);
    if (!head.ok()) return head.error();
    heads[s] = std::move(*head);
    IoRun& run = writes.emplace_back();
    run.kind = IoKind::kWrite;
    run.disk = d;
    run.fd = disks_[d].file->native_fd();
    run.offset = SlotOffset(record.seq);
    run.iov.push_back({heads[s].data(), heads[s].size()});
    if (record.length > 0) run.iov.push_back({const_cast<char*>(units[s].data()), record.length});
  }
  // The sequence number is spent even if the writes fail: a half-written entry is never reused.
  ++next_seq_;
  std::vector<IoRun> syncs;
  for (const IoRun& w : writes) {
    IoRun& run = syncs.emplace_back();
    run.kind = IoKind::kSync;
    run.disk = w.disk;
    run.fd = w.fd;
  }
  IoBatch wrote;
  if (Status s = io_->SubmitAndWait(writes, wrote); !s.ok())
    return s.error().Wrap("journal of striped file " + file_id_ + " on disk " + std::to_string(wrote.failed_disk()));
  IoBatch synced;
  if (Status s = io_->SubmitAndWait(syncs, synced); !s.ok())
    return s.error().Wrap("fsync of the journal of striped file " + file_id_ + " on disk " + std::to_string(synced.failed_disk()));
  return Status::Ok();
}

Status RowJournal::AdoptDisk(uint32_t disk, const DiskSet& disks) {
  const std::string what = "journal of striped file " + file_id_ + ", disk " + std::to_string(disk);
  if (disk >= disks_.size() || disk >= disks.size()) return Error(EINVAL, what + ": not in the set");
  if (disks_[disk].backend) return Status::Ok();
  if (last_seq() != checkpoint_)
    return Error(EBUSY, what + ": entries " + std::to_string(checkpoint_ + 1) + ".." + std::to_string(last_seq()) +
                            " are past the checkpoint");
  auto backend = LocalDiskBackend::Open(disks.path(disk));
  if (!backend.ok()) return backend.error().Wrap(what);
  auto exists = (*backend)->Exists(FileName(file_id_));
  if (!exists.ok()) return exists.error().Wrap(what);
  if (*exists) return Error(EEXIST, what + ": the switched-in disk holds a journal of the file already");
  disks_[disk].backend = std::move(*backend);
  return Status::Ok();
}

Status RowJournal::Checkpoint(uint64_t seq) {
  if (seq <= checkpoint_) return Status::Ok();
  const uint64_t before = checkpoint_;
  checkpoint_ = seq;  // what EncodeHeader writes
  std::vector<std::string> heads(disks_.size());
  std::vector<IoRun> writes, syncs;
  for (uint32_t d = 0; d < disks_.size(); ++d) {
    if (!disks_[d].file) continue;
    heads[d] = EncodeHeader(d);
    IoRun& w = writes.emplace_back();
    w.kind = IoKind::kWrite;
    w.disk = d;
    w.fd = disks_[d].file->native_fd();
    w.iov.push_back({heads[d].data(), heads[d].size()});
    IoRun& s = syncs.emplace_back();
    s.kind = IoKind::kSync;
    s.disk = d;
    s.fd = w.fd;
  }
  IoBatch wrote, synced;
  Status s = io_->SubmitAndWait(writes, wrote);
  if (s.ok()) s = io_->SubmitAndWait(syncs, synced);
  // Not known to be durable: the entries stay past the checkpoint, and are replayed after a
  // crash (replaying an applied entry writes the same bytes again).
  if (!s.ok()) {
    checkpoint_ = before;
    return s.error().Wrap("checkpoint of the journal of striped file " + file_id_);
  }
  return Status::Ok();
}

}  // namespace graphfs
