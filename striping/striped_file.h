// A striped file: its parts on every disk of the set, its manifest in the stub's xattr.
//
// Reads and writes are split at stripe-unit boundaries, pieces that touch on one disk are
// merged into one vectored run, and the runs go to the disks' queues at once. Bytes past
// the end of a part read as zeros (a part may be shorter than its share after a truncate
// that grew the file). Aligned runs use an O_DIRECT descriptor, so striped data does not
// also sit in the page cache of the part files.
//
// Read-ahead and caching sit above this class (volume/, cache/): it only moves bytes. Of a
// compressed file (manifest `packed`) it reads the packed stream — size() is the stream's —
// and refuses writes; the volume decodes (volume/internal/packed_file.h) and makes it plain first. A
// file with parity or block sums (manifest version 2) is read through ParityReader
// (parity_read.h) by every read call below: each block is verified against its sum before it
// is served, and what a lost, failing or lying disk cannot give is rebuilt from the rest of its
// row and healed in place. Writes and truncates of such files go through the row journal
// (parity_write.h), which keeps the rows' parity and sums in step with their data across a
// crash at any point; opening such a file writable first replays what the journal holds. They
// run alone (ReadGate), and Sync also moves the journal's checkpoint. Files without sums take
// none of that path.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <vector>

#include "common/aligned_buffer.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "striping/disk_set.h"
#include "striping/io_engine.h"
#include "striping/manifest.h"
#include "striping/parity_read.h"
#include "striping/parity_write.h"
#include "striping/read_gate.h"
#include "striping/stripe_map.h"

namespace graphfs {

struct StripedFileOptions {
  bool writable = true;
  bool direct_io = true;                   // O_DIRECT for aligned runs
  uint64_t max_run_bytes = 64ull << 20;    // cap when merging touching pieces
  // Of a file with parity and a lost disk: where its reads keep their degraded rows' blocks for
  // each other (row_share_pool.h; the mount's, charged to its memory budget). nullptr: a pool
  // of the file's own (ParityReader::kRowShareBytes).
  std::shared_ptr<RowSharePool> row_share;
};

class StripedFile {
 public:
  // Opens the parts of the file described by `manifest`. `stub_fd` (owned) is a readable
  // descriptor of the stub, used to persist the manifest.
  static Result<std::shared_ptr<StripedFile>> Open(const DiskSet& disks, IoEngine* io, UniqueFd stub_fd,
                                                   const StripeManifest& manifest, const StripedFileOptions& options);
  // Creates the parts of a new, empty striped file (graphfs-stripe), on every disk but those
  // `lost` names (a file created while disks are missing: file_creation.h; its parts there are
  // lost from the start, which only a file with parity survives). Empty `lost`: every disk.
  static Status CreateParts(const DiskSet& disks, const std::string& file_id, const std::vector<bool>& lost = {});
  ~StripedFile();

  uint64_t size() const { return size_.load(std::memory_order_acquire); }
  // Of a file with sums: how many bytes its reads placed straight in the callers' memory, and
  // how many they staged in scratch memory first (zeros for other files).
  ParityReader::PlacementStats parity_placement() const {
    return parity_ ? parity_->placement_stats() : ParityReader::PlacementStats{};
  }
  StripeManifest manifest() const;
  const StripeMap& map() const { return map_; }
  // Whether the data byte at `offset` lies on a disk lost for this file (missing, or its part or
  // sums gone, or stale in that row): its reads rebuild it from the same range of its row's other units, D reads on as
  // many disks. A caller that paces its reads per disk (the volume's ExtentReads) keeps as many of
  // such reads in flight as a present disk's, once for each disk that serves them.
  // Whether a disk is lost for this file (its reads go through parity and share the degraded
  // rows' blocks in options.row_share).
  bool degraded() const { return parity_ != nullptr && parity_->degraded(); }
  bool Rebuilt(uint64_t offset) const {
    if (parity_ == nullptr) return false;
    const DiskLocation at = map_.Locate(offset);
    return parity_->Rebuilds(at.disk, at.disk_offset / map_.unit());
  }

  // The online switch (DiskSet::Replace): disk `disk` of `disks`, missing when this file was
  // opened, is back — or, stale when it was opened, was resynced (its part is open already and
  // kept). Opens this file's part and sums there and hands them to the reads
  // (ParityReader::AdoptDisk): reads planned from now on read the disk, those in flight finish
  // as planned. The descriptors stay open until the file is closed, so no read in flight ever
  // sees one closed. Nothing to do (Ok) for a file that reads the disk already or has no sums;
  // an error (the part or its sums not there, or damaged) leaves the file reading through parity.
  // A file open for writing takes the disk for its writes too (AdoptForWrites): writes refused
  // while the disk was lost work again through the same open file; should that part fail, the
  // reads keep the disk and the writes stay refused until the file is opened again (an error
  // saying so).
  Status AdoptDisk(uint32_t disk, const DiskSet& disks);
  // The same with the file's writes held off by the caller (LockWrites): a stale disk resynced
  // by the daemon's scrub (scrub.h) while the file is open, whose writes must not mark a row
  // between the resync and the switch.
  Status AdoptDisk(uint32_t disk, const DiskSet& disks, const std::unique_lock<std::mutex>& held);
  // Disk `disk` of `disks`, missing when this file was opened, was taken back under the running
  // mount (DiskSet::TakeBack). With the file's writes held off (so that no write marks a row
  // meanwhile), asks the write-intent records: none for the disk — the file missed no write — and
  // the disk is the file's again for reads and writes (AdoptDisk); some, and the file's reads take
  // the disk's rows they do not mark and keep rebuilding the marked ones, its writes keep treating
  // it as lost and mark what they write (ParityReader::AdoptStaleDisk), until the daemon's scrub
  // resyncs the rows and hands it the disk. `*stale` (optional) says which. Ok with nothing done
  // when the file reads the disk already or has no sums; an error (no part there — a file created
  // while the disk was missing — or damaged sums) leaves it reading the disk through parity.
  Status TakeBackDisk(uint32_t disk, const DiskSet& disks, bool* stale = nullptr);
  // No write, truncate or sync of the file runs while the lock is held.
  std::unique_lock<std::mutex> LockWrites() { return std::unique_lock<std::mutex>(write_mu_); }
  // Returns once no write, truncate or sync of the file is under way: one that starts after
  // this sees what the set says now (a rebuild's RebuildWatch::Hold).
  void AwaitWrites() { std::lock_guard<std::mutex> serial(write_mu_); }

  // Reads up to `length` bytes at `offset`; fewer at end of file, 0 past it.
  Result<uint64_t> Read(uint64_t offset, uint64_t length, char* buf);
  // Reads several ranges at once, each `length` bytes at `offset` into `buf` (inside the file):
  // every disk gets its share in one submission, so the disks work in parallel.
  struct ReadRequest {
    uint64_t offset = 0;
    uint64_t length = 0;
    char* buf = nullptr;
  };
  Status ReadMany(std::span<const ReadRequest> requests) const;
  // ReadMany without waiting: the reads are queued on the disks when this returns, so a
  // caller can submit the next batch before it copies out of this one and no disk idles
  // between batches. The buffers must stay valid until Wait (or the destructor) returns.
  class PendingRead {
   public:
    ~PendingRead();  // waits, if Wait was not called
    PendingRead(const PendingRead&) = delete;
    PendingRead& operator=(const PendingRead&) = delete;
    Status Wait();

   private:
    friend class StripedFile;
    PendingRead() = default;
    const StripedFile* file_ = nullptr;
    std::shared_lock<std::shared_mutex> lock_;  // no truncate while the reads run
    std::vector<IoRun> runs_;
    IoBatch batch_;
    std::unique_ptr<ParityRead> parity_;  // a file with sums reads through this instead
    Status parity_status_;
    ReadGate* gate_ = nullptr;  // left at Wait: a file with sums
    bool waited_ = false;
  };
  Result<std::unique_ptr<PendingRead>> StartReadMany(std::span<const ReadRequest> requests) const;
  // Reads file bytes [offset, offset + the iovecs' total) scattered into `iov`, without waiting:
  // `done` runs on an I/O worker once every piece is in (the first error, naming the disk).
  // One run per stripe-unit piece (so a range inside one stripe unit is one disk request); `urgent`
  // runs go ahead of the disks' queued ones. The caller keeps the file and the buffers alive
  // until `done` runs (its capture can hold them) and does not race it with Truncate: bytes past
  // a part's end read as zeros. Page-aligned pieces go O_DIRECT.
  void ReadAsync(uint64_t offset, std::vector<iovec> iov, bool urgent, std::function<void(Status)> done) const;
  // Writes all bytes (extending the file if needed); returns `length`.
  Result<uint64_t> Write(uint64_t offset, const char* buf, uint64_t length);
  Status Truncate(uint64_t new_size);
  // Never writes its manifest to the stub again (not at Flush, Sync or destruction): for a file
  // that was to replace another in its stub and is abandoned half-written.
  void Discard();
  // A descriptor of the stub (for a file that replaces this one in it).
  Result<UniqueFd> DupStub() const;
  // Persists the manifest if it changed (size), without forcing it to disk.
  Status Flush();
  // Makes data, size and layout durable: fsync of every part written or truncated since
  // the last Sync (every part at the first), manifest, fsync of the stub. A part that holds
  // nothing new is left alone, so a disk that turned read-only or failed fails only the
  // fsyncs of files with data for it.
  Status Sync();

 private:
  StripedFile(const DiskSet& disks, IoEngine* io, UniqueFd stub_fd, const StripeManifest& m, StripeMap map,
              const StripedFileOptions& options);
  std::vector<IoRun> PlanRuns(IoKind kind, uint64_t offset, uint64_t length, char* buf) const;
  // Why a write or truncate cannot be done (read-only, or a compressed file), or Ok.
  Status RefuseChange() const;
  // Write and Truncate of a file with sums: through the row journal, alone.
  Result<uint64_t> WriteParity(uint64_t offset, const char* buf, uint64_t length);
  Status TruncateParity(uint64_t new_size);
  // write_mu_ for a write or truncate of a file with sums, once no rebuild of a disk it lost
  // holds its writes (ParityWriter::HeldBy).
  std::unique_lock<std::mutex> LockForChange();
  // Replays the row journal at open and makes the outcome durable.
  Status RecoverJournal();
  // AdoptDisk's part for the writer (its part, sums and journal on the disk), under write_mu_.
  Status AdoptForWrites(uint32_t disk, const DiskSet& disks);
  // Sync's work without its lock; a file with sums also syncs its sums files.
  Status SyncLocked();
  void MarkModified();
  // "read of striped file ID: disk 2: Input/output error (DISK/parts/ID)": names the disk.
  Error DiskError(const char* op, const IoBatch& batch, const Error& e) const;
  // A finished read batch's outcome: Ok, or its first error as a DiskError.
  Status ReadStatus(const IoBatch& batch) const;
  // The descriptor a read run of `disk` uses: O_DIRECT when the run is page-aligned and the
  // filesystem has it, else buffered.
  int ReadFd(uint32_t disk, bool aligned) const;

  IoEngine* io_;
  UniqueFd stub_fd_;
  const StripeMap map_;
  const StripedFileOptions options_;
  struct Part {
    UniqueFd fd;      // buffered, read-write (or read-only)
    UniqueFd direct;  // O_DIRECT, for aligned runs
    std::string path;
    // Written or truncated since the last successful Sync. Set after the change, so that a
    // Sync running beside a write never clears the flag of bytes it did not cover. True at
    // open: a daemon that died may have left unsynced data in the backing page cache.
    std::atomic<bool> unsynced{true};
  };
  std::vector<Part> parts_;

  mutable std::mutex manifest_mu_;
  StripeManifest manifest_;
  bool manifest_dirty_ = false;
  bool discarded_ = false;  // Discard(): the manifest is never written again

  // Set for a file with block sums (manifest version 2): every read goes through it.
  std::unique_ptr<ParityReader> parity_;
  // Set for such a file opened writable: every write and truncate goes through it.
  std::unique_ptr<ParityWriter> writer_;
  // Reads of such a file enter it; its writes and truncates hold it alone.
  mutable ReadGate gate_;
  // Serializes its writes, truncates and syncs: the journal's checkpoint must never pass an
  // entry whose in-place writes are still under way.
  std::mutex write_mu_;

  // Truncate excludes reads and writes; reads and writes run concurrently.
  mutable std::shared_mutex rw_;
  std::atomic<uint64_t> size_{0};
};

}  // namespace graphfs
