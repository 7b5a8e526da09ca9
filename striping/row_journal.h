// The row journal of a striped file with parity and block sums (docs/parity.md, "Writes: the row
// journal"): before a write changes a row's units in place, the new bytes of the changed range of
// every unit of the row — data and parity alike — go to the journal, one unit per disk, and are
// fsynced. A crash during the in-place writes then leaves a row whose new bytes are durable in
// the journal, and the next open replays them; a crash before the journal's fsync leaves an
// entry with fewer than D good units, whose row was never touched in place, and it is dropped.
// So no crash leaves a row whose parity disagrees with its data (the RAID write hole).
//
// One file per disk, DISK/parts/ID.journal through the disk's backend:
//   [0, 4096)        header: "GFJRNL1\n", the disk's index, the ring's slots J, the unit S, the
//                    checkpoint (every entry up to that sequence number is applied in place and
//                    durable), the file id (u16 length + bytes), XXH3-64 of [0, 4088) at 4088.
//   slot j of J      at 4096 + j * (4096 + S): a record header (4096 bytes) then the unit's bytes.
// A record header: "GFJREC1\n", the entry's sequence number, row, range [begin, begin + length)
// within each unit of the row, the file's size once the entry is applied, the unit's slot in the
// row, the row's units N, the file id, the XXH3-64 of each of the N units' range, and its own
// XXH3-64 at 4088. Entry `seq` lies in slot seq % J of every disk that holds a unit of it. A
// record of length 0 carries only a size (a truncate that grows, or cuts at a row boundary).
//
// The journal writes and fsyncs through the I/O engine (the disks in parallel); recovery reads
// with the backend's calls. Not thread-safe: the writer (parity_write.h) runs alone.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "striping/disk_backend.h"
#include "striping/disk_set.h"
#include "striping/io_engine.h"
#include "striping/manifest.h"
#include "striping/stripe_map.h"

namespace graphfs {

inline constexpr uint64_t kJournalHeaderSize = 4096;

// One disk's record of one journal entry.
struct JournalRecord {
  uint64_t seq = 0;
  uint64_t row = 0;
  uint64_t begin = 0;      // the range, within each unit of the row
  uint64_t length = 0;     // 0: a record of the size only
  uint64_t file_size = 0;  // the file's size once the entry is applied
  uint32_t slot = 0;       // which unit of the row this disk's bytes are
  std::vector<uint64_t> hashes;  // XXH3-64 of each unit's range, N of them (slot order)
};

// The 4096 bytes of a record header; EINVAL when the file id or N does not fit.
Result<std::string> EncodeJournalRecord(const std::string& file_id, const JournalRecord& record);
// EIO "damaged journal record: ..." for anything EncodeJournalRecord would not have written, or
// a record of another file or row width.
Result<JournalRecord> DecodeJournalRecord(std::span<const char> bytes, const std::string& file_id, uint32_t units);

class RowJournal {
 public:
  static constexpr uint32_t kSlots = 4;
  static std::string FileName(const std::string& file_id) { return file_id + ".journal"; }

  // The journals of file `m` on the disks `present[d]` says are there; a disk whose journal does
  // not exist yet gets one at the first Append. Reads nothing yet (Scan does).
  static Result<std::unique_ptr<RowJournal>> Open(const DiskSet& disks, IoEngine* io, const StripeManifest& m,
                                                  const std::vector<bool>& present);

  // An entry found past the checkpoint: its record, and per slot of the row the unit's bytes
  // when that disk's record and bytes verify (nullopt otherwise).
  struct Pending {
    JournalRecord record;
    std::vector<std::optional<std::string>> units;
    uint32_t good() const;
  };
  // Reads every journal's header and records: the entries past the newest checkpoint any disk
  // recorded, in sequence order. Sets the checkpoint and the next sequence number past every
  // record seen (good or torn), so that no stale record ever passes for a new one.
  Result<std::vector<Pending>> Scan();
  // Whether file `m`'s journals on the disks of `disks` that are there hold an entry past the
  // checkpoint — good or torn: what opening the file writable would replay or drop. Opens
  // nothing for writing (for the offline tools, which must replay before they read).
  static Result<bool> HasPending(const DiskSet& disks, const StripeManifest& m);

  uint64_t checkpoint() const { return checkpoint_; }
  uint64_t last_seq() const { return next_seq_ - 1; }
  // Whether the next Append would overwrite an entry past the checkpoint: the caller must make
  // the in-place writes durable and Checkpoint first.
  bool full() const { return next_seq_ - checkpoint_ > slots_; }

  // Writes the next entry (its seq is set here): `units[s]` (record.length bytes) to the disk of
  // slot s of the row, on every present disk, then fsyncs them all. The entry is durable when
  // this returns Ok.
  Status Append(JournalRecord record, std::span<const std::span<const char>> units);
  // Records in every journal that every entry up to `seq` is applied and durable in place.
  Status Checkpoint(uint64_t seq);
  // Disk `disk`, lost when the journal was opened, is back (a rebuilt disk switched in online,
  // StripedFile::AdoptDisk): the entries appended from now on put a unit on it too, its journal
  // made at the first of them with the checkpoint as it is then. Only with no entry past the
  // checkpoint (EBUSY otherwise; the caller syncs and checkpoints first): an entry journaled
  // while the disk was lost has a unit fewer than its row's N, so its replay would survive one
  // damaged unit fewer than K promises; none is left for a recovery once the disk is back. A
  // journal of the file already on the disk is refused
  // (EEXIST): the rebuild never writes one, so it is not of this sequence, and its records could
  // pass for new ones.
  Status AdoptDisk(uint32_t disk, const DiskSet& disks);

 private:
  RowJournal(IoEngine* io, const StripeManifest& m, const StripeMap& map)
      : io_(io), map_(map), file_id_(m.file_id), slots_(kSlots) {}
  struct Disk {
    std::unique_ptr<DiskBackend> backend;
    std::unique_ptr<DiskFile> file;  // open once it exists
  };
  std::string EncodeHeader(uint32_t disk) const;
  Status Create(uint32_t disk);
  uint64_t SlotOffset(uint64_t seq) const { return kJournalHeaderSize + (seq % slots_) * (kJournalHeaderSize + map_.unit()); }

  IoEngine* io_;
  const StripeMap map_;
  const std::string file_id_;
  const uint32_t slots_;
  std::vector<Disk> disks_;  // backend null for a lost disk
  bool read_only_ = false;   // HasPending's: Scan opens the journals for reading only
  uint64_t checkpoint_ = 0;
  uint64_t next_seq_ = 1;
};

}  // namespace graphfs
