#include "striping/stale_rows.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "common/little_endian.h"

namespace graphfs {

namespace {

constexpr char kMagic[8] = {'G', 'F', 'S', 'T', 'A', 'L', 'E', '1'};
constexpr uint64_t kHeaderSize = 4096;
constexpr size_t kChecksumAt = kHeaderSize - 8;
constexpr size_t kIdAt = 16;
constexpr size_t kMaxFileId = 1024;

std::string EncodeHeader(const std::string& file_id, uint32_t lost, uint32_t units) {
  std::string bytes(kHeaderSize, '\0');
  std::memcpy(&bytes[0], kMagic, 8);
  Put32(&bytes[8], lost);
  Put32(&bytes[12], units);
  bytes[kIdAt] = static_cast<char>(file_id.size() & 0xff);
  bytes[kIdAt + 1] = static_cast<char>(file_id.size() >> 8);
  std::memcpy(&bytes[kIdAt + 2], file_id.data(), file_id.size());
  Put64(&bytes[kChecksumAt], XXH3_64bits(bytes.data(), kChecksumAt));
  return bytes;
}

// Whether `bytes` is the header EncodeHeader makes for this file and disk.
bool HeaderGood(const std::string& bytes, const std::string& file_id, uint32_t lost) {
  if (bytes.size() < kHeaderSize || std::memcmp(bytes.data(), kMagic, 8) != 0) return false;
  if (Get64(bytes.data() + kChecksumAt) != XXH3_64bits(bytes.data(), kChecksumAt)) return false;
  const size_t n = static_cast<unsigned char>(bytes[kIdAt]) | (static_cast<size_t>(static_cast<unsigned char>(bytes[kIdAt + 1])) << 8);
  return Get32(bytes.data() + 8) == lost && n == file_id.size() && bytes.compare(kIdAt + 2, n, file_id) == 0;
}

// Reads a whole record file (header and bitmap).
Result<std::string> ReadAll(DiskFile& file) {
  auto size = file.Size();
  if (!size.ok()) return size.error();
  std::string bytes(*size, '\0');
  auto got = file.Read(0, bytes);
  if (!got.ok()) return got.error();
  bytes.resize(*got);
  return bytes;
}

}  // namespace

uint64_t StaleRows::Count(uint64_t rows) const {
  if (all) return rows;
  uint64_t n = 0;
  for (uint64_t r = 0; r < rows && r / 8 < bits.size(); ++r) n += Has(r) ? 1 : 0;
  return n;
}

void StaleRows::Mark(uint64_t first, uint64_t end) {
  if (all || first >= end) return;
  if (bits.size() < (end + 7) / 8) bits.resize((end + 7) / 8, 0);
  for (uint64_t r = first; r < end; ++r) bits[r / 8] |= static_cast<uint8_t>(1u << (r % 8));
}

Result<std::optional<StaleRows>> LoadStaleRows(const DiskSet& disks, const std::string& file_id, uint32_t lost) {
  std::optional<StaleRows> out;
  const std::string name = StaleRecordName(file_id, lost);
  for (uint32_t d = 0; d < disks.size(); ++d) {
    if (d == lost || disks.state(d) == DiskState::kMissing) continue;
    auto backend = OpenDiskBackend(disks.path(d));
    if (!backend.ok()) continue;  // a disk gone since the set was opened: the others tell
    auto exists = (*backend)->Exists(name);
    if (!exists.ok()) return exists.error().Wrap("write-intent record of striped file " + file_id);
    if (!*exists) continue;
    if (!out) out.emplace();
    auto file = (*backend)->Open(name, {});
    auto bytes = file.ok() ? ReadAll(**file) : Result<std::string>(file.error());
    if (!bytes.ok() || !HeaderGood(*bytes, file_id, lost)) {
      out->all = true;  // unreadable or damaged: the safe side is every row
      continue;
    }
    const uint64_t n = bytes->size() - kHeaderSize;
    if (out->bits.size() < n) out->bits.resize(n, 0);
    for (uint64_t i = 0; i < n; ++i) out->bits[i] |= static_cast<uint8_t>((*bytes)[kHeaderSize + i]);
  }
  return out;
}

Status ClearStaleRows(const DiskSet& disks, const std::string& file_id, uint32_t lost) {
  const std::string name = StaleRecordName(file_id, lost);
  for (uint32_t d = 0; d < disks.size(); ++d) {
    if (d == lost || disks.state(d) == DiskState::kMissing) continue;
    auto backend = OpenDiskBackend(disks.path(d));
    if (!backend.ok()) return backend.error().Wrap("clear the write-intent record of striped file " + file_id);
    GRAPHFS_RETURN_IF_ERROR((*backend)->Remove(name));
    GRAPHFS_RETURN_IF_ERROR((*backend)->SyncNames());
  }
  return Status::Ok();
}

Result<std::unique_ptr<StaleRowsWriter>> StaleRowsWriter::Open(const DiskSet& disks, const std::string& file_id,
                                                               uint32_t units, const std::vector<bool>& lost) {
  if (file_id.size() > kMaxFileId) return Error(EINVAL, "write-intent record of a file id of " + std::to_string(file_id.size()) + " bytes");
  std::unique_ptr<StaleRowsWriter> w(new StaleRowsWriter(file_id, units));
  if (std::find(lost.begin(), lost.end(), true) == lost.end()) return w;  // marks nothing
  for (uint32_t d = 0; d < disks.size(); ++d) {
    if (d < lost.size() && lost[d]) {
      auto had = LoadStaleRows(disks, file_id, d);
      if (!had.ok()) return had.error();
      Lost l;
      l.disk = d;
      // Loaded, but written whole again (header and bits) on every present disk at the first
      // Mark: a copy some disk lacks would otherwise be made without a header.
      if (*had) l.rows = std::move(**had);
      w->lost_.push_back(std::move(l));
      continue;
    }
    if (disks.state(d) == DiskState::kMissing) continue;
    auto backend = OpenDiskBackend(disks.path(d));
    if (!backend.ok()) return backend.error().Wrap("write-intent record of striped file " + file_id);
    w->present_.push_back(std::move(*backend));
  }
  return w;
}

void StaleRowsWriter::Forget(uint32_t disk) {
  std::erase_if(lost_, [disk](const Lost& l) { return l.disk == disk; });
}

Status StaleRowsWriter::Create(Lost& l) {
  const std::string name = StaleRecordName(file_id_, l.disk);
  for (auto& backend : present_) {
    auto file = backend->Open(name, {.writable = true, .create = true});
    if (!file.ok()) return file.error();
    // A record some earlier writer left keeps its bits: they were loaded at Open, and are
    // written again below with the new ones.
    GRAPHFS_RETURN_IF_ERROR((*file)->Write(0, EncodeHeader(file_id_, l.disk, units_)));
    if (!l.rows.bits.empty()) GRAPHFS_RETURN_IF_ERROR((*file)->Write(kHeaderSize, {reinterpret_cast<const char*>(l.rows.bits.data()), l.rows.bits.size()}));
    GRAPHFS_RETURN_IF_ERROR((*file)->Sync());
    // The name must outlive a crash: a record that vanished would let the disk's old units be served.
    GRAPHFS_RETURN_IF_ERROR(backend->SyncNames());
  }
  l.created = true;
  return Status::Ok();
}

Status StaleRowsWriter::Mark(uint64_t first, uint64_t end) {
  if (first >= end) return Status::Ok();
  for (Lost& l : lost_) {
    if (l.rows.all) continue;
    bool fresh = false;
    for (uint64_t r = first; r < end && !fresh; ++r) fresh = !l.rows.Has(r);
    if (!fresh && l.created) {
      // Marked already — if the record is still there: a resync that finished meanwhile
      // (graphfs-scrub) removed it, and this write would then go unrecorded. One look at one disk.
      auto there = present_.empty() ? Result<bool>(true) : present_.front()->Exists(StaleRecordName(file_id_, l.disk));
      if (!there.ok()) return there.error().Wrap("write-intent record of striped file " + file_id_);
      if (*there) continue;
      l.created = false;
    }
    const uint64_t lo = first / 8, hi = (end + 7) / 8;
    l.rows.Mark(first, end);
    if (!l.created) {
      if (Status s = Create(l); !s.ok()) return s.error().Wrap("write-intent record of striped file " + file_id_);
      continue;
    }
    const std::string name = StaleRecordName(file_id_, l.disk);
    for (auto& backend : present_) {
      auto file = backend->Open(name, {.writable = true, .create = true});
      if (!file.ok()) return file.error().Wrap("write-intent record of striped file " + file_id_);
      GRAPHFS_RETURN_IF_ERROR((*file)->Write(kHeaderSize + lo, {reinterpret_cast<const char*>(l.rows.bits.data() + lo), hi - lo}));
      GRAPHFS_RETURN_IF_ERROR((*file)->Sync());
    }
  }
  return Status::Ok();
}

}  // namespace graphfs
