// Reads of a striped file with block sums (manifest version 2), as docs/parity.md's "Reads:
// verified, degraded, self-healing" has them:
//
//  1. The file ranges are split over the data units as for any striped file, each piece widened
//     to the sum blocks it touches (B-aligned, at most the unit's end), and queued on the disks;
//     a disk whose part is lost (missing disk, no part, damaged sums) or that is failing gets no
//     run — its pieces go straight to step 3, and the same byte range of the other units of
//     their row that step 3 will read is queued with the rest (in parallel on their disks,
//     unless the read covers it already).
//  2. Every block read is checked against its sum (SumsCache) before a byte is served. The
//     blocks a target wants whole are read straight into its memory and checked there, however
//     its buffers cut them (the mount's extents span several cache units); only a first or last
//     block the target wants part of goes through scratch memory (kept for the next reads).
//  3. A piece that failed (read error, lost or failing disk, wrong sum) is rebuilt from the same
//     byte range of the row's other units (row_repair.h), which are verified too; what the read
//     already holds of them is not read again. A source that fails joins the failed and the row
//     is planned again; more failures in a row than K is EIO naming every failed disk and why.
//  4. A rebuilt piece whose disk is present is checked against its own sums: it is written back in
//     place when they agree (self-healing, under the row's lock); when the bytes read were right
//     all along, the sums were the damaged part and are rewritten; when neither agrees, nothing
//     is served (EIO).
//  5. Per-disk counters (DiskCounters: checksum_errors, rebuilt_bytes, healed_blocks,
//     sum_repairs) and the disk's health (IoEngine::NoteReadError) record what happened.
//
// StripedFile uses this for every read entry point of such a file; files without sums never
// come here.
#pragma once

#include <sys/uio.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/aligned_buffer.h"
#include "common/buffer_pool.h"
#include "common/result.h"
#include "striping/disk_set.h"
#include "striping/io_engine.h"
#include "striping/manifest.h"
#include "striping/parity_codec.h"
#include "striping/row_share.h"
#include "striping/stale_marks.h"
#include "striping/stripe_map.h"
#include "striping/sums_cache.h"

namespace graphfs {

// One disk's part of the file, as StripedFile opened it (it keeps the descriptors open).
struct ParityPart {
  int fd = -1;      // buffered; read-write when heals may write; -1 when lost
  int direct = -1;  // O_DIRECT for aligned reads, or -1
  bool writable = false;
  std::string path;
  std::string lost;  // why the disk's units of this file must all be rebuilt; empty when present
  // A disk that came back after missing writes of this file (its write-intent records name it):
  // the rows it missed, rebuilt from the others; its other rows are read from it. Null otherwise.
  std::shared_ptr<StaleMarks> stale;
  // Why the disk's unit of `row` must be rebuilt (lost, or stale there); empty when it is read.
  std::string LostIn(uint64_t row) const {
    if (!lost.empty()) return lost;
    return stale && stale->Has(row) ? stale->why() : std::string();
  }
};

// A file range and where its bytes go.
struct ParityTarget {
  uint64_t offset = 0;
  uint64_t length = 0;
  std::vector<iovec> out;  // length bytes in all
};

// How a read gets the row sources it needs to rebuild a piece: through the I/O engine, all at
// once (a caller's thread, which may wait on the disks' workers), or by pread one after another
// (on an I/O worker, which must not wait on the workers' queues).
enum class SourceReads { kEngine, kDirect };

class ParityRead;

class ParityReader {
 public:
  // `parts` has one entry per disk of the set. Opens the sums file of every part that is not
  // lost (a damaged or missing one makes that disk lost for this file). EIO naming the disks
  // when more of them are lost than the file's parity.
  // A file with a lost disk keeps its degraded rows' blocks for its other reads within
  // `row_share`'s capacity (shared with the pool's other files: the mount's memory budget
  // charges it); nullptr: a pool of its own of kRowShareBytes (the offline tools, tests).
  static Result<std::unique_ptr<ParityReader>> Open(const DiskSet& disks, IoEngine* io, const StripeManifest& m,
                                                    const StripeMap& map, std::vector<ParityPart> parts,
                                                    uint64_t max_run_bytes,
                                                    std::shared_ptr<RowSharePool> row_share = nullptr);

  // Plans a read of `targets` (each inside the file): ParityRead::Submit queues its runs, then
  // ParityRead::Finish verifies, repairs and copies out.
  Result<std::unique_ptr<ParityRead>> Plan(std::vector<ParityTarget> targets, bool urgent);

  const std::string& file_id() const { return file_id_; }

  // What the row journal's writer (parity_write.h) needs of the open file: the sums it keeps in
  // step with the units, the codec, which disks are lost for this file, and the size rows are
  // measured against, which a write or truncate changes (no read runs meanwhile: StripedFile
  // excludes them).
  SumsCache& sums() { return *sums_; }
  const ParityCodec* codec() const { return codec_ ? &*codec_ : nullptr; }
  // Why disk `disk` is lost to this file's writes, or empty: lost to its reads, or stale (its
  // reads rebuild only the rows it missed, but every write marks its row for it, as for a lost
  // disk, until a resync or a rebuild). By value: a disk switched in online (AdoptDisk) changes
  // it while reads run.
  std::string lost(uint32_t disk) const;
  // Whether a read of disk `disk`'s unit of `row` rebuilds it from the rest of the row (lost, or
  // stale in that row) rather than reading it.
  bool Rebuilds(uint32_t disk, uint64_t row) const { return !Parts()->at(disk).LostIn(row).empty(); }
  // Rows [first, end) are about to be written with the stale disks lost to the writes: reads
  // rebuild them from now on (the writer marks them in the records too, durable, before the row
  // changes).
  void MarkStale(uint64_t first, uint64_t end);
  // Disk `disk`, lost for this file since it was opened because the disk was missing, is back
  // (a rebuilt disk switched in online, DiskSet::Replace), or, stale, was resynced (a daemon's
  // scrub): `part` has its descriptors (owned by the caller, open until this reader is gone).
  // Opens and checks its sums file, then reads planned from now on read the disk, every row of
  // it; reads planned before finish as they were planned (each read keeps the parts it was
  // planned with). Nothing changes on an error.
  Status AdoptDisk(uint32_t disk, ParityPart part);
  // Disk `disk`, lost for this file since it was opened because the disk was missing, is back
  // under the running mount (DiskSet::TakeBack) but missed writes of this file: `part.stale`
  // holds the rows its records mark. Opens and checks its sums file, then reads planned from now
  // on read the disk's other rows from it and rebuild the marked ones, as for a disk found stale
  // when the file was opened; lost() still names the disk (stale), so the writes keep treating it
  // as lost and mark every row they write — here too (MarkStale) — until a resync's AdoptDisk.
  // EINVAL without `part.stale`; nothing changes on an error.
  Status AdoptStaleDisk(uint32_t disk, ParityPart part);
  // The lock of a row of this file (DiskSet::RowLock): heals and in-place writes take it.
  std::mutex& RowLock(uint64_t row) const { return set_.RowLock(file_id_, row); }
  void SetStoredSize(uint64_t size) { stored_size_.store(size, std::memory_order_release); }
  uint64_t stored_size() const { return stored_size_.load(std::memory_order_acquire); }
  // What degraded reads shared of their rows' blocks (row_share.h); zeros when no disk is lost.
  RowShare::Stats share_stats() const { return share_ ? share_->stats() : RowShare::Stats{}; }
  // Whether a disk is lost or stale for this file now (its reads share their degraded rows'
  // blocks). A disk switched in (AdoptDisk) no longer counts, though the blocks shared before
  // stay for the reads planned before.
  bool degraded() const;
  // The most bytes of blocks degraded reads keep for each other (row_share.h) when the caller
  // gives no pool: enough for the mount's streams at its default read-ahead (docs/parity.md).
  static constexpr uint64_t kRowShareBytes = 256ull << 20;
  // Before a write or truncate (no read runs meanwhile): the blocks reads shared may change.
  void ForgetShared() {
    if (share_) share_->Clear();
  }
  // Where the reads put the blocks they read: straight into the callers' memory, or into
  // scratch memory first (a block wanted in part, a degraded row's, a rebuild's source), whose
  // wanted bytes are then copied out.
  struct PlacementStats {
    uint64_t in_place_bytes = 0, staged_bytes = 0;
  };
  PlacementStats placement_stats() const {
    return {in_place_bytes_.load(std::memory_order_relaxed), staged_bytes_.load(std::memory_order_relaxed)};
  }

 private:
  friend class ParityRead;
  using PartList = std::vector<ParityPart>;
  ParityReader(const DiskSet& disks, IoEngine* io, const StripeManifest& m, const StripeMap& map, PartList parts,
               uint64_t max_run_bytes)
      : set_(disks), io_(io), map_(map), manifest_(m), file_id_(m.file_id), stored_size_(m.stored_size()),
        sum_block_(m.sum_block), parts_(std::make_shared<const PartList>(std::move(parts))),
        max_run_bytes_(max_run_bytes), sums_epoch_(disks.sums_epoch()) {}
  // The parts as of now; a read keeps the list it was planned with.
  std::shared_ptr<const PartList> Parts() const {
    std::lock_guard<std::mutex> lock(parts_mu_);
    return parts_;
  }
  // Opens disk d's sums file and checks the part's length against it (`p.fd` open): the sums, or
  // why the disk is lost for this file.
  static Result<UnitSums> OpenSums(const DiskSet& disks, const StripeManifest& m, uint32_t d, const ParityPart& p);
  static int ReadFd(const PartList& parts, uint32_t disk, bool aligned);
  // AdoptDisk and AdoptStaleDisk: `part` with its stale marks kept, or cleared.
  Status Adopt(uint32_t disk, ParityPart part, bool stale);
  // A row one of whose data units lies on a disk lost (or stale) in it: its reads share blocks
  // (share_).
  bool DegradedRow(const PartList& parts, uint64_t row) const;
  // Scratch memory idle between reads, one pool for every file of the process (so that the
  // idle bytes do not grow with the files open): a fresh mapping costs a zeroed page per 4 KiB
  // on first touch and a TLB flush at munmap, on the I/O worker that completes the read.
  static constexpr uint64_t kScratchIdleBytes = 16ull << 20;
  static BufferPool& ScratchPool();

  const DiskSet set_;  // a copy: shares the set's row locks, paths and sums epoch
  IoEngine* io_;
  const StripeMap map_;
  const StripeManifest manifest_;  // as opened: the sums files' headers are checked against it
  const std::string file_id_;
  std::atomic<uint64_t> stored_size_;
  const uint64_t sum_block_;
  mutable std::mutex parts_mu_;
  std::shared_ptr<const PartList> parts_;  // replaced whole (AdoptDisk), under parts_mu_
  const uint64_t max_run_bytes_;
  std::atomic<uint64_t> sums_epoch_;  // the set's sums epoch the cached sums are of
  std::optional<ParityCodec> codec_;  // none for K = 0: a bad block is then EIO
  std::unique_ptr<SumsCache> sums_;
  std::unique_ptr<RowShare> share_;  // when a disk is lost for this file and there is parity
  std::atomic<uint64_t> in_place_bytes_{0}, staged_bytes_{0};
};

// One read in flight. Of a degraded row, it may await blocks another read has in flight
// (row_share.h): then Submit's `done` (or Wait) waits for those too.
class ParityRead final : private RowShare::Waiter {
 public:
  // Waits for the runs, if submitted without `done` and not waited for, and for the blocks other
  // reads still copy here; gives up the blocks it claimed and did not deliver.
  ~ParityRead();
  ParityRead(const ParityRead&) = delete;
  ParityRead& operator=(const ParityRead&) = delete;

  // Queues the runs on the disks. `done`, if set, runs once every run finished (on an I/O
  // worker, or here when nothing was queued) and may free this read; without it, Wait waits.
  void Submit(std::function<void()> done);
  void Wait();
  // Once the runs are done: verifies every piece, rebuilds the failed ones (their sources read
  // as `reads` says), heals, and copies the bytes to the targets. EIO naming the disks when a
  // row cannot be rebuilt or nothing right can be served.
  Status Finish(SourceReads reads);

 private:
  friend class ParityReader;
  struct Piece {
    uint64_t row = 0;
    uint32_t slot = 0;
    uint32_t disk = 0;
    uint64_t begin = 0;   // the blocks read, within the unit: B-aligned start
    uint64_t length = 0;  // to a block boundary or the unit's end
    // Where they are read: one stretch (the caller's memory, or scratch), or, when `placed` is
    // set, nowhere contiguous.
    char* bytes = nullptr;
    // The blocks read in pieces: the wanted whole blocks in the caller's segments, a first and
    // last block wanted in part in scratch; `length` bytes in all, in order. Gathered into one
    // stretch (and cleared) before anything but verifying and copying out touches them.
    std::vector<iovec> placed;
    uint64_t skip = 0;      // the asked-for bytes: [skip, skip + want) of them
    uint64_t want = 0;
    std::vector<iovec> out;  // where those go unless read in place as one stretch; else empty
    std::string failed;      // why the piece must be rebuilt; empty while it is good
    bool read_error = false;  // its run failed
    bool bad_sum = false;     // a block did not match its sum
    std::string as_read;      // its bytes as read, when bad_sum
    bool verified = false;    // read and checked: may serve as a source of its row
    bool source_only = false; // read only as a source of its row's rebuild (PlanSources)
    bool also_source = false; // widened to a source's range of its row's rebuild (PlanSources)
    bool shared = false;      // taken from the blocks another read left or had in flight (row_share.h)
    bool claimed = false;     // read by this read for others too: delivered in Share
    // What of the blocks this read reads: runs of them, (skip, length) from `begin`, in order; the
    // rest, which other reads have, is taken or awaited (row_share.h). One run of all unless
    // claimed.
    std::vector<std::pair<uint64_t, uint64_t>> reads;
  };
  struct Group;  // pieces of one row and range rebuilt together (parity_read.cc)

  ParityRead(ParityReader* file, std::shared_ptr<const ParityReader::PartList> parts)
      : file_(file), parts_(std::move(parts)) {}
  const ParityReader::PartList& parts() const { return *parts_; }
  // Claims the degraded rows' data blocks this read wants (row_share.h), all in one step: taken,
  // awaited from another read in flight, or read here and delivered to those who wait.
  void ClaimShared(uint64_t stored_size);
  void Arrived(size_t want, bool delivered) override;
  // One of the things a submitted read waits for is in: the runs, or a block awaited.
  void Arrive();
  // Once submitted and everything is in: runs `done`, or wakes Wait.
  void FireIfDone(std::unique_lock<std::mutex> lock);
  // Reads the pieces whose awaited blocks did not come (their read failed), as `reads` says.
  void ReadUndelivered(SourceReads reads);
  // The claimed blocks not delivered (the read ends early): their waiters read them.
  void GiveUpClaims();
  // Adds, as pieces that serve no bytes, the row sources of the pieces already known failed
  // (lost or avoided disks), so that they are read with the rest.
  void PlanSources(uint64_t stored_size);
  // Widens a piece that also serves as a row source to [begin, end) with its own range.
  void Widen(Piece& p, uint64_t begin, uint64_t end);
  // Whether this read rebuilds [begin, end) of every lost data unit of `row` itself (then no other
  // read's rebuild wants the row's blocks of that range from it).
  bool RebuiltWhole(uint64_t row, uint64_t begin, uint64_t end) const;
  // Lays a piece out to be read in place in the caller's segments (`placed`) when it is read
  // for its own bytes and wants at least one whole block; returns the scratch bytes it needs
  // (its partly wanted first and last blocks), or nullopt when it goes to scratch whole.
  std::optional<uint64_t> Place(Piece& p);
  // Copies a placed piece's blocks into one stretch of its own (`bytes`): for a read that must
  // rebuild, heal or share, which work on stretches. ENOMEM named.
  Status Gather(Piece& p);
  void Share();
  Status Verify(Piece& p);
  Status Repair(SourceReads reads);
  Status AfterRebuild(Piece& p);
  // "read of striped file ID: ..."
  Error Failed(const std::string& why) const;

  ParityReader* file_;
  // The file's parts as this read was planned: what it reads, rebuilds and heals, even if a disk
  // is switched in meanwhile (their descriptors stay open while the file is).
  std::shared_ptr<const ParityReader::PartList> parts_;
  std::vector<Piece> pieces_;
  AlignedBuffer scratch_;  // from the file's pool, given back at the end
  std::vector<AlignedBuffer> gathered_;  // Gather's stretches
  std::vector<IoRun> runs_;
  std::vector<std::vector<size_t>> run_pieces_;  // the pieces each run reads
  std::vector<int8_t> avoided_;  // per disk: 1 when failing and left alone, 0 when read, -1 not asked
  IoBatch batch_;
  bool submitted_ = false;
  bool waited_ = false;
  bool has_done_ = false;
  // Blocks awaited from other reads (row_share.h): the pieces of the claim's wants, which of
  // them did not come (set by the reads that could not deliver), and what Submit's `done` or Wait
  // waits for — the runs and the blocks; those two under wait_mu_.
  uint64_t awaited_ = 0;
  std::vector<size_t> want_pieces_;
  std::vector<uint8_t> undelivered_;
  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  int64_t pending_ = 0;  // may drop below 0 while blocks arrive before Submit counts the runs
  bool armed_ = false;   // Submit has counted everything
  std::function<void()> done_;
};

}  // namespace graphfs
