// Writes and truncates of a striped file with block sums (manifest version 2), through the row
// journal (row_journal.h; docs/parity.md, "Writes: the row journal"):
//
//  1. A write is cut into commits: the pieces of one row whose ranges within their units
//     overlap (widened to whole sum blocks, at most kMaxCommit bytes of each unit).
//  2. A commit reads the range of the row's data units the write does not cover (verified and,
//     with a disk lost, rebuilt: ParityReader), lays the new bytes over them, encodes the
//     range's parity, and journals the range of all N units with their hashes (fsynced).
//  3. Only then are the units written in place with their sums. A crash before step 3 began
//     leaves the row as it was; one during it is replayed from the journal at the next open.
//  4. When the journal's ring is full, the caller's sync (parts, sums, manifest made durable)
//     runs and the checkpoint moves past every entry.
//
// Recovery (Recover, at open) replays the entries past the checkpoint that have at least D
// good units — rebuilding the others from them — and drops the rest (torn: never applied).
// The file's size becomes the last replayed entry's: truncates are journaled too, so that a
// replay never brings back bytes a later truncate cut.
//
// With up to K disks lost to the file, writes and truncates still land (docs/parity.md, "Writes
// with a disk lost"): a commit reads the row's other data units through the reader (rebuilding
// what lay on the lost disk), encodes, journals and writes in place on the present disks only.
// Before the journal entry, the row is marked in the file's write-intent record for each lost
// disk (stale_rows.h), durable on every present disk: a lost disk that comes back holds old
// units whose old sums still match, and the record is what keeps them from being served. While
// the mount's daemon rebuilds a disk the file lost, each row written in place (or cut) is told to
// the rebuild (RebuildWatch), which does again the rows it had passed; writes wait only while the
// rebuilt disk is switched in (HeldBy), and are refused (EROFS) after a switch the writer could
// not take. A disk rebuilt and
// switched in while the file is open (AdoptDisk) takes writes again — its part, its sums and its
// journal — without a reopen. Not thread-safe: StripedFile runs it with reads excluded, or under
// its writer's mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "common/result.h"
#include "striping/disk_set.h"
#include "striping/io_engine.h"
#include "striping/manifest.h"
#include "striping/parity_read.h"
#include "striping/row_journal.h"
#include "striping/stale_rows.h"
#include "striping/stripe_map.h"

namespace graphfs {

class ParityWriter {
 public:
  // The most of each unit one commit rewrites: bounds the memory a commit holds (N times it).
  static constexpr uint64_t kMaxCommit = 1 << 20;

  // `part_fds[d]`: disk d's part, read-write, or -1 when it is lost for this file.
  static Result<std::unique_ptr<ParityWriter>> Open(const DiskSet& disks, IoEngine* io, const StripeManifest& m,
                                                    const StripeMap& map, ParityReader* reader,
                                                    std::vector<int> part_fds);

  // Makes the parts, the sums and the manifest durable with the file's size `size`, which is
  // what the journaled entries so far have made it (StripedFile's sync, without its locks).
  using SyncAll = std::function<Status(uint64_t size)>;

  // Replays the journal (see above). The file's size afterwards when an entry was replayed,
  // else nullopt. The replayed units are written in place but not synced: the caller syncs,
  // then calls Checkpoint.
  Result<std::optional<uint64_t>> Recover();
  // Ok, or why writes are refused now: a disk switched in that the writer could not take, named.
  Status CheckWritable() const;
  // The daemon's rebuild of a disk lost to the file, when it holds writes while it switches the
  // disk in: the caller waits for it (RebuildWatch::AwaitRelease) without its locks. Else nullptr.
  std::shared_ptr<RebuildWatch> HeldBy() const;
  // Writes `length` bytes at `offset` of a file of `size` bytes; returns its new size.
  Result<uint64_t> Write(uint64_t offset, const char* buf, uint64_t length, uint64_t size, const SyncAll& sync);
  // Journals the new size; a shrink rewrites the new last row's tail (zeros past the end, and
  // the parity of that) as one entry, then Cut must follow once the manifest says `new_size`.
  Status Resize(uint64_t size, uint64_t new_size, const SyncAll& sync);
  // Cuts every present part, and its sums, to a file of `size` bytes (it had `old_size`).
  Status Cut(uint64_t size, uint64_t old_size);
  Status SyncSums() { return reader_->sums().Sync(); }
  // After `sync` made everything durable: the journal's entries are all applied.
  Status Checkpoint() { return journal_->Checkpoint(journal_->last_seq()); }
  // Disk `disk`, lost when the file was opened, was switched in and the reads have it (the
  // reader's sums of it included): `part_fd` (read-write, the caller's, open while this writer
  // is) is its part. The caller has made everything durable and checkpointed (RowJournal::
  // AdoptDisk says why); from now on commits journal a unit on the disk and write it in place.
  // Nothing changes on an error, and writes stay refused (CheckWritable).
  Status AdoptDisk(uint32_t disk, int part_fd, const DiskSet& disks);

 private:
  ParityWriter(const DiskSet& disks, IoEngine* io, const StripeManifest& m, const StripeMap& map,
               ParityReader* reader, std::vector<int> part_fds, std::unique_ptr<RowJournal> journal,
               std::unique_ptr<StaleRowsWriter> stale)
      : set_(disks), io_(io), map_(map), file_id_(m.file_id), sum_block_(m.sum_block), reader_(reader),
        part_fds_(std::move(part_fds)), journal_(std::move(journal)), stale_(std::move(stale)) {}
  // New bytes for a unit: `length` at `at` within slot `slot`'s unit.
  struct Piece {
    uint32_t slot = 0;
    uint64_t at = 0;
    uint64_t length = 0;
    const char* bytes = nullptr;
  };
  // Steps 2-4 for range [begin, end) of row `row` of a file of `size` bytes: the data units'
  // bytes below `read_limit` that no piece covers are read, everything from `new_size` on is zero.
  Status Commit(uint64_t row, uint64_t begin, uint64_t end, const std::vector<Piece>& pieces, uint64_t size,
                uint64_t read_limit, uint64_t new_size, const SyncAll& sync);
  // The row's range `units` (N spans of end - begin bytes) written in place with their sums
  // on every present disk, for a file of `size` bytes.
  Status WriteInPlace(uint64_t row, uint64_t begin, std::span<const std::span<char>> units, uint64_t size);
  // Rows [first, end) about to change on the present disks only: marked for every disk lost to
  // the file — for the reads of a stale one first (they rebuild those rows from now on), then in
  // the write-intent records, durable.
  Status MarkStale(uint64_t first, uint64_t end);
  // Rows [first, end) changed on the present disks: told to the daemon's rebuild of each disk
  // lost to the file, if one runs (it does again those it passed).
  void NoteRebuilds(uint64_t first, uint64_t end) const;

  const DiskSet set_;  // a copy: shares the set's states (a rebuild running: RebuildWatch)
  IoEngine* io_;
  const StripeMap map_;
  const std::string file_id_;
  const uint64_t sum_block_;
  ParityReader* reader_;
  std::vector<int> part_fds_;
  std::unique_ptr<RowJournal> journal_;
  // The write-intent record of the disks lost to the file (none lost: marks nothing).
  std::unique_ptr<StaleRowsWriter> stale_;
};

}  // namespace graphfs
