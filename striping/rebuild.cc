#include "striping/rebuild.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "common/crash_point.h"
#include "striping/atomic_write.h"
#include "striping/disk_backend.h"
#include "striping/disk_set.h"
#include "striping/journal_replay.h"
#include "striping/rate_limiter.h"
#include "striping/rebuild_crash_points.h"
#include "striping/rebuild_files.h"
#include "striping/rebuild_in_place.h"
#include "striping/rebuild_read_back.h"
#include "striping/row_scan.h"
#include "striping/progress_line.h"
#include "striping/set_files.h"
#include "striping/set_hold.h"
#include "striping/stale_rows.h"
#include "striping/striped_file.h"
#include "striping/unit_sums.h"

namespace graphfs {

using json = nlohmann::json;

// DIR/.graphfs-rebuild.json: what a killed run had made durable. (Outside the anonymous
// namespace: PreparedRebuild, declared in the header, holds one.)
struct RebuildRecord {
  std::string set_id;
  uint32_t disk = 0;
  std::set<std::string> done;  // file ids whose units on the new disk are complete
  std::string file;            // the file in progress, and the first row not yet durable
  uint64_t row = 0;

  std::string Encode() const {
    return json{{"set", set_id}, {"disk", disk}, {"done", done}, {"file", file}, {"row", row}}.dump() + "\n";
  }
  static Result<RebuildRecord> Decode(const std::string& text, const std::string& where) {
    try {
      const json j = json::parse(text);
      RebuildRecord r;
      r.set_id = j.at("set").get<std::string>();
      r.disk = j.at("disk").get<uint32_t>();
      r.done = j.at("done").get<std::set<std::string>>();
      r.file = j.at("file").get<std::string>();
      r.row = j.at("row").get<uint64_t>();
      return r;
    } catch (const std::exception& e) {
      return Error(EINVAL, where + ": damaged rebuild record (" + e.what() + "); remove it to start over");
    }
  }
};

namespace {

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

// The entries of `dir` other than . and ..
Result<std::vector<std::string>> Entries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return Error::FromErrno(dir);
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// WriteFileAtomic's temporary copies (`NAME.tmp.PID`, disk_set.cc) of the files a run writes on
// DIR: a run killed between a copy's sync and its rename leaves one, under a pid no later run has.
// Any pid: no other writer works in DIR (an offline run holds the set's disks alone, set_hold.h;
// the daemon runs one task at a time), so none is a copy under way.
bool IsLeftTemporary(const std::string& name) {
  return TemporaryCopyPid(name, kRebuildRecordFile).has_value() || TemporaryCopyPid(name, kDiskIdentityFile).has_value();
}

// Removes what IsLeftTemporary names in `dir`.
Status RemoveLeftTemporaries(const std::string& dir) {
  auto names = Entries(dir);
  if (!names.ok()) return names.error();
  for (const std::string& n : *names)
    if (IsLeftTemporary(n) && ::unlink((dir + "/" + n).c_str()) != 0 && errno != ENOENT)
      return Error::FromErrno("remove " + dir + "/" + n);
  return Status::Ok();
}

// What the new directory holds: a killed run's record to resume from, or the disk itself — its
// identity and no record, so a finished rebuild's directory, or the disk never lost (neither:
// start afresh).
struct Target {
  std::optional<RebuildRecord> resume;
  bool is_disk = false;
};

// What the new directory holds decides whether to start, resume, or refuse (or, when it is the
// disk, whether it is in place already: CheckRebuiltInPlace).
Result<Target> CheckTarget(const std::string& to, const DiskRegistry& registry, uint32_t disk) {
  struct stat st;
  if (::stat(to.c_str(), &st) != 0) return Error::FromErrno(to);
  if (!S_ISDIR(st.st_mode)) return Error(ENOTDIR, to + " is not a directory");
  for (uint32_t d = 0; d < registry.disks.size(); ++d) {
    if (d == disk || RealPath(registry.disks[d]) != to) continue;
    return Error(EINVAL, to + " is disk " + std::to_string(d) + " of set " + registry.set_id +
                             ": rebuild onto a new, empty directory");
  }
  std::optional<RebuildRecord> record;
  const std::string record_path = to + "/" + kRebuildRecordFile;
  if (::access(record_path.c_str(), F_OK) == 0) {
    auto text = ReadSmallFile(record_path, 64 << 20);
    if (!text.ok()) return text.error();
    auto r = RebuildRecord::Decode(*text, record_path);
    if (!r.ok()) return r.error();
    if (r->set_id != registry.set_id || r->disk != disk)
      return Error(EINVAL, to + " holds a rebuild of disk " + std::to_string(r->disk) + " of set " + r->set_id +
                               ", not of disk " + std::to_string(disk) + " of " + registry.set_id +
                               "; finish that one, or give another directory");
    record = std::move(*r);
  }
  if (auto text = ReadSmallFile(to + "/" + kDiskIdentityFile, 64 << 10); text.ok()) {
    auto id = DecodeDiskIdentity(*text);
    if (!id.ok()) return Error(EINVAL, to + ": damaged " + kDiskIdentityFile + ": " + id.error().message());
    if (id->set_id != registry.set_id)
      return Error(EINVAL, to + " belongs to disk set " + id->set_id + " (disk " + std::to_string(id->index) +
                               "), not to " + registry.set_id);
    if (id->index != disk)
      return Error(EINVAL, to + " is disk " + std::to_string(id->index) + " of set " + registry.set_id + ", not disk " +
                               std::to_string(disk));
    // The identity is stamped after every part was verified: with no record left the rebuild is
    // finished (a record left means the registries may still need the new path).
    if (!record) return Target{std::nullopt, true};
  }
  if (record) return Target{std::move(record), false};
  auto names = Entries(to);
  if (!names.ok()) return names.error();
  std::erase(*names, "lost+found");  // a fresh ext4 has it
  // A run killed while it wrote its first record (RunRebuild removes the copy).
  std::erase_if(*names, IsLeftTemporary);
  if (!names->empty())
    return Error(ENOTEMPTY, to + " is not empty (" + std::to_string(names->size()) + " entr" +
                                (names->size() == 1 ? "y" : "ies") + ": " + names->front() +
                                (names->size() > 1 ? ", ..." : "") + "); rebuild writes onto an empty directory");
  return Target{};
}

class DiskRebuild {
 public:
  DiskRebuild(const RebuildRequest& req, const DiskSet& set, DiskBackend& target, RebuildRecord& record,
              RebuildReport& report, RebuildReadBack& read_back, RebuildWatch* watch)
      : req_(req), set_(set), target_(target), record_(record), report_(report), limiter_(req.rate, req.task != nullptr ? &req.task->cancel : nullptr),
        read_back_(read_back), watch_(watch) {}

  // Puts file `f`'s units of the disk on the target, resuming at `first_row`, and hands each row
  // written to the read back.
  Status File(const StripedFileRef& f, uint64_t first_row, ProgressLine& progress, uint64_t& done) {
    const StripeManifest& m = f.manifest;
    auto scan = RowScanner::Open(set_, m, /*writable=*/false, req_.disk);
    if (!scan.ok()) return scan.error();
    RowScanner& s = **scan;
    DiskFileOptions o;
    o.create = true;
    auto part = target_.Open(m.file_id, o);
    if (!part.ok()) return part.error();
    Result<UnitSums> sums = first_row > 0 ? UnitSums::Open(target_, SumsHeaderOf(m, req_.disk), /*writable=*/true)
                                          : UnitSums::Create(target_, SumsHeaderOf(m, req_.disk));
    if (!sums.ok()) return sums.error();
    uint64_t since = 0;
    for (uint64_t row = first_row; row < s.rows(); ++row) {
      auto rebuilt = Row(s, **part, *sums, row, /*limited=*/true, f);
      if (!rebuilt.ok() && Defer(rebuilt.error(), m, row, /*writes_go_on=*/true)) continue;
      if (!rebuilt.ok()) return rebuilt.error();
      if (rebuilt->written == 0) continue;
      CrashPoint(record_.file == m.file_id ? kRebuildCrashUnitPastCheckpoint : kRebuildCrashUnitWritten);
      since += rebuilt->written;
      done += rebuilt->read;
      if (req_.task != nullptr) req_.task->done.store(done, std::memory_order_relaxed);
      progress.Update(done, f.path);
      if (since >= req_.checkpoint) {
        GRAPHFS_RETURN_IF_ERROR(Durable(**part, *sums, m.file_id, row + 1));
        since = 0;
      }
    }
    // Every row passed, and any the file grows to: a write from now on is done again.
    if (watch_ != nullptr) watch_->Passed(m.file_id, UINT64_MAX);
    GRAPHFS_RETURN_IF_ERROR(EndPart(f, **part, *sums));
    CrashPoint(kRebuildCrashPartEnded);
    record_.done.insert(m.file_id);
    record_.file.clear();
    record_.row = 0;
    GRAPHFS_RETURN_IF_ERROR(WriteFileAtomic(req_.to + "/" + kRebuildRecordFile, record_.Encode()));
    CrashPoint(kRebuildCrashFileDone);
    return Status::Ok();
  }

  // How a pass does rows again: paced by the rate or at full speed, with the writes going on or
  // held — then until `deadline`, past which the rows not begun are left for the next pass, once
  // the hold did one (`did_row`, shared by the files of the pass: every hold makes progress).
  struct AgainHow {
    bool paced = false;
    bool writes_go_on = false;
    std::optional<std::chrono::steady_clock::time_point> deadline;
    bool* did_row = nullptr;
  };
  // Does rows `rows` of file `f`, passed already, again from what the row holds now — `m`, the
  // file's manifest now, says its size — and cuts or extends the part to that size. Rows a write
  // changed behind the rebuild, or that the write-intent records mark after a resume. The rows a
  // hold's deadline left undone go to `left`.
  Status Again(const StripedFileRef& f, const StripeManifest& m, const std::set<uint64_t>& rows, const AgainHow& how,
               std::set<uint64_t>& left) {
    auto scan = RowScanner::Open(set_, m, /*writable=*/false, req_.disk);
    if (!scan.ok()) return scan.error();
    auto part = target_.Open(m.file_id, DiskFileOptions{.writable = true, .create = true});
    if (!part.ok()) return part.error();
    auto sums = UnitSums::Open(target_, SumsHeaderOf(m, req_.disk), /*writable=*/true);
    if (!sums.ok()) return sums.error();
    const StripedFileRef now{f.path, m};
    for (auto it = rows.begin(); it != rows.end(); ++it) {
      const uint64_t row = *it;
      if (row >= (*scan)->rows()) break;
      if (how.deadline && *how.did_row && std::chrono::steady_clock::now() >= *how.deadline) {
        left.insert(it, rows.end());
        break;
      }
      auto rebuilt = Row(**scan, **part, *sums, row, how.paced, now);
      if (!rebuilt.ok() && Defer(rebuilt.error(), m, row, how.writes_go_on)) continue;
      if (!rebuilt.ok()) return rebuilt.error();
      report_.redone_rows += rebuilt->written > 0;
      if (!how.writes_go_on) report_.held_rows += rebuilt->written > 0;
      if (how.did_row != nullptr) *how.did_row = true;
    }
    return EndPart(now, **part, *sums);
  }

 private:
  // Run by the daemon while writes go on, a row that cannot be rebuilt (EIO) may be one whose
  // length a write changed since the size its scanner reads by (the file grown over its last row
  // or cut), or one a shrink is cutting (it cuts parts and sums past its new end outside the row
  // locks): it is left to a later pass, which reads the file as it is then. The last pass, with
  // the writes held, fails on it. The row is marked in the file's write-intent record too, as a
  // write would: the progress record moves past it, and a run resumed after a kill does again
  // the rows the records mark. Whether `error` was so deferred.
  bool Defer(const Error& error, const StripeManifest& m, uint64_t row, bool writes_go_on) {
    if (!writes_go_on || watch_ == nullptr || error.code() != EIO) return false;
    // A file whose parts are going: dropped by the caller, and given no record to outlive them.
    if (watch_->removed(m.file_id)) return false;
    std::vector<bool> lost(m.layout.disks, false);
    lost[req_.disk] = true;
    auto stale = StaleRowsWriter::Open(set_, m.file_id, m.layout.disks, lost);
    if (!stale.ok() || !(*stale)->Mark(row, row + 1).ok()) return false;
    watch_->Passed(m.file_id, row + 1);
    watch_->Written(m.file_id, row, row + 1);
    return true;
  }

  struct RowDone {
    uint64_t read = 0, written = 0;  // bytes (none written: the disk holds nothing of the row)
  };
  // Rebuilds the disk's unit of row `row` from the row's other units, writes it and its sums to
  // the target and hands the row of `ref` (the file as `s` reads it) to the read back.
  Result<RowDone> Row(RowScanner& s, DiskFile& part, UnitSums& sums, uint64_t row, bool limited,
                      const StripedFileRef& ref) {
    const StripeMap& map = s.map();
    const StripeManifest& m = s.manifest();
    const uint32_t slot = map.DiskSlot(row, req_.disk);
    const uint64_t length = map.RowUnitLength(row, slot, m.stored_size()), b = m.sum_block;
    if (length == 0) return RowDone{};
    if (req_.task != nullptr && req_.task->cancel.load(std::memory_order_relaxed))
      return Error(ECANCELED, "rebuild stopped at row " + std::to_string(row) + " (resumed when run again)");
    // Run by the daemon: the row's heals and writes wait until its unit is on the new disk (and
    // this does not read a block while one rewrites it).
    std::unique_lock<std::mutex> row_lock;
    if (req_.live != nullptr) row_lock = std::unique_lock<std::mutex>(req_.live->RowLock(m.file_id, row));
    std::vector<uint32_t> others;
    for (uint32_t o2 = 0; o2 < map.disks(); ++o2)
      if (o2 != slot) others.push_back(o2);
    std::vector<uint64_t> read(map.disks(), 0);
    const std::vector<SlotScan> scans = s.Read(row, others, &read);
    GRAPHFS_RETURN_IF_ERROR(Unit(s, scans, row, slot, length));
    // Read under the row's lock: a write of the row from now on is told to the watch.
    if (watch_ != nullptr) watch_->Passed(m.file_id, row + 1);
    RowDone out{0, length};
    for (uint64_t r : read) out.read += r;
    const std::span<const char> unit(s.unit(slot).data(), length);
    GRAPHFS_RETURN_IF_ERROR(part.Write(row * map.unit(), unit));
    // Start the unit's writeback now, so that the new disk writes while the others are read
    // for the next rows, instead of all at the checkpoint's fsync.
    if (part.native_fd() >= 0)
      ::sync_file_range(part.native_fd(), static_cast<off_t>(row * map.unit()), static_cast<off_t>(length),
                        SYNC_FILE_RANGE_WRITE);
    GRAPHFS_RETURN_IF_ERROR(sums.Write(row, 0, BlockSums(unit, b)));
    if (row_lock.owns_lock()) row_lock.unlock();
    read_back_.Rows(ref, row, row + 1);
    // A row that did not read back right stops the rebuild now rather than at the end.
    GRAPHFS_RETURN_IF_ERROR(read_back_.error());
    report_.bytes += length;
    if (limited) limiter_.Take(out.read);
    return out;
  }

  // Rebuilds the first `length` bytes of slot `slot`'s unit in `s`'s buffers, block by block, from
  // the other slots `scans` read (a bad source block rebuilt around, and counted). EIO
  // naming the row, the block and the disks when more than K units are bad at a block.
  Status Unit(RowScanner& s, const std::vector<SlotScan>& scans, uint64_t row, uint32_t slot, uint64_t length) {
    const StripeMap& map = s.map();
    const uint64_t b = s.sum_block();
    for (uint64_t blk = 0; blk * b < length; ++blk) {
      std::vector<uint32_t> bad = {slot};
      std::string why;
      for (uint32_t o2 = 0; o2 < map.disks(); ++o2) {
        if (o2 == slot || scans[o2].BlockGood(blk, b)) continue;
        bad.push_back(o2);
        if (!scans[o2].failed.empty()) {
          why += "; disk " + std::to_string(scans[o2].disk) + ": " + scans[o2].failed;
        } else {
          why += "; disk " + std::to_string(scans[o2].disk) + ": block " + std::to_string(blk) + " failed its checksum";
          ++report_.bad_source_blocks;
        }
      }
      if (bad.size() > map.parity())
        return Error(EIO, "row " + std::to_string(row) + ", block " + std::to_string(blk) + ": " +
                              std::to_string(bad.size() - 1) + " other unit(s) of the row are bad there" + why +
                              "; parity " + std::to_string(map.parity()) + " cannot rebuild disk " +
                              std::to_string(req_.disk) + "'s bytes");
      const uint64_t begin = blk * b;
      GRAPHFS_RETURN_IF_ERROR(s.Rebuild(row, bad, begin, std::min(b, s.row_length(row) - begin)));
    }
    return Status::Ok();
  }

  // The part's full length for file `f`: a last row whose unit on this disk is short or absent
  // ends it (and a file cut while the rebuild ran has no sums past it); durable, then checked.
  Status EndPart(const StripedFileRef& f, DiskFile& part, UnitSums& sums) {
    const StripeMap map = *StripeMap::Create(f.manifest.layout);
    const uint64_t stored = f.manifest.stored_size(), part_length = map.PartSize(req_.disk, stored);
    GRAPHFS_RETURN_IF_ERROR(part.Truncate(part_length));
    {
      auto held = read_back_.HoldSumsHeaders();  // the read back may be opening this header
      GRAPHFS_RETURN_IF_ERROR(sums.SetPartLength(part_length));
      GRAPHFS_RETURN_IF_ERROR(sums.CutRows(map.Rows(stored)));
    }
    GRAPHFS_RETURN_IF_ERROR(part.Sync());
    GRAPHFS_RETURN_IF_ERROR(sums.Sync());
    GRAPHFS_RETURN_IF_ERROR(target_.SyncNames());
    read_back_.Length(f);
    return Status::Ok();
  }

  // Rows below `next_row` of `file` are on the target for good: the record says so.
  Status Durable(DiskFile& part, UnitSums& sums, const std::string& file, uint64_t next_row) {
    GRAPHFS_RETURN_IF_ERROR(part.Sync());
    GRAPHFS_RETURN_IF_ERROR(sums.Sync());
    GRAPHFS_RETURN_IF_ERROR(target_.SyncNames());
    CrashPoint(kRebuildCrashCheckpointSynced);
    record_.file = file;
    record_.row = next_row;
    GRAPHFS_RETURN_IF_ERROR(
        WriteFileAtomicCrashingAt(req_.to + "/" + kRebuildRecordFile, record_.Encode(), kRebuildCrashCheckpointTmp));
    CrashPoint(kRebuildCrashCheckpointed);
    return Status::Ok();
  }

  const RebuildRequest& req_;
  const DiskSet& set_;
  DiskBackend& target_;
  RebuildRecord& record_;
  RebuildReport& report_;
  RateLimiter limiter_;
  RebuildReadBack& read_back_;
  RebuildWatch* watch_;  // run by the daemon: told each row passed
};

}  // namespace

struct PreparedRebuild {
  RebuildRequest req;
  SetFiles found;
  DiskRegistry registry;
  std::optional<DiskSet> set;
  SetHold hold;  // offline: the set's disks, kept from a mount's daemon for the whole run
  RebuildRecord record;
  RebuildReport report;
  uint64_t total = 0;
};

void PreparedRebuildDeleter::operator()(PreparedRebuild* p) const { delete p; }

Result<PreparedRebuildPtr> PrepareRebuild(const RebuildRequest& req) {
  PreparedRebuildPtr prep(new PreparedRebuild);
  prep->req = req;
  auto found = FindSetFiles(req.paths);
  if (!found.ok()) return found.error();
  prep->found = std::move(*found);
  SetFiles* found_ptr = &prep->found;
  DiskRegistry& registry = prep->registry;
  registry = found_ptr->registry;
  const uint32_t n = static_cast<uint32_t>(registry.disks.size());
  if (req.disk >= n)
    return Error(EINVAL, "--disk " + std::to_string(req.disk) + ": the set has disks 0.." + std::to_string(n - 1));
  if (req.live != nullptr) {
    GRAPHFS_RETURN_IF_ERROR(CheckMountSet(*req.live, registry));
    if (req.live->state(req.disk) == DiskState::kStale)
      return Error(EINVAL, "disk " + std::to_string(req.disk) + " (" + req.live->path(req.disk) +
                               ") is stale, not missing: `scrub` resyncs the rows written while it was lost");
    if (req.live->state(req.disk) != DiskState::kMissing)
      return Error(EINVAL, "disk " + std::to_string(req.disk) + " (" + req.live->path(req.disk) +
                               ") is not missing from the mount: rebuild replaces a lost disk");
  }
  if (!req.disks.empty()) {
    if (req.disks.size() != n)
      return Error(EINVAL, "--disks lists " + std::to_string(req.disks.size()) + " disks, the registry has " +
                               std::to_string(n));
    registry.disks = req.disks;
  }
  RebuildReport& report = prep->report;
  report.set_id = registry.set_id;
  report.to = RealPath(req.to);
  auto target = CheckTarget(report.to, registry, req.disk);
  if (!target.ok()) return target.error();
  if (target->is_disk) {
    // The daemon's rebuild is of a disk missing from the mount, which DIR, in place, is not.
    if (req.live != nullptr)
      return Error(EEXIST, report.to + " is disk " + std::to_string(req.disk) + " of set " + registry.set_id +
                               " already: nothing to rebuild");
    // A finished run's rerun (or the disk never lost): done, when the disks prove it. Nothing
    // is written, so no hold is taken and no journal replayed.
    auto with_part = CheckRebuiltInPlace(*found_ptr, registry, req.disk, report.to);
    if (!with_part.ok()) return with_part.error();
    report.in_place = true;
    report.registries = found_ptr->graph_dirs;
    report.files = *with_part;
    return prep;
  }
  const std::optional<RebuildRecord>& resume = target->resume;
  // Every file must be rebuildable before a byte is written.
  std::vector<std::string> unprotected;
  for (const StripedFileRef& f : found_ptr->files)
    if (f.manifest.sum_block == 0 || f.manifest.layout.parity == 0)
      unprotected.push_back(f.path + " has no parity (--parity 0)");
  if (!unprotected.empty())
    return Error(EINVAL, unprotected.front() + (unprotected.size() > 1 ? " (and " + std::to_string(unprotected.size() - 1) + " more)" : "") +
                             ": its units on disk " + std::to_string(req.disk) + " cannot be rebuilt");
  // The other disks are read as the registry (or --disks) names them; the one rebuilt is not read
  // even when it is there (a failing disk being replaced). The daemon's own set shares its row
  // locks with the daemon's reads.
  auto set = OpenTaskSet(req.live, registry);
  if (!set.ok()) return set.error();
  prep->set.emplace(std::move(*set));
  // Offline, no daemon may serve the set meanwhile (set_hold.h): its writes with the disk lost
  // would not reach the new disk, and the records they mark would be cleared at the end.
  if (req.live == nullptr) {
    auto hold = SetHold::Exclusive(*prep->set, "graphfs-rebuild --offline");
    if (!hold.ok()) return hold.error();
    prep->hold = std::move(*hold);
  }
  // A file whose writer was killed is brought to its journaled state first: rebuilt from rows the
  // journal would still change, the disk's units would code bytes the file does not hold.
  for (StripedFileRef& f : found_ptr->files) {
    auto m = ReplayRowJournal(*prep->set, f.path, f.manifest);
    if (!m.ok()) return m.error();
    f.manifest = std::move(*m);
  }
  RebuildRecord& record = prep->record;
  if (resume) {
    record = *resume;
    report.resumed = true;
  } else {
    record.set_id = registry.set_id;
    record.disk = req.disk;
  }
  // Room for what is left to write: the parts and their sums.
  uint64_t need = 0, total = 0;
  for (const StripedFileRef& f : found_ptr->files) {
    auto map = StripeMap::Create(f.manifest.layout);
    if (!map.ok()) return map.error().Wrap(f.path);
    const uint64_t stored = f.manifest.stored_size(), part = map->PartSize(req.disk, stored);
    report.files += part > 0;
    if (record.done.count(f.manifest.file_id)) continue;
    need += part + kSumsHeaderSize + map->Rows(stored) * (f.manifest.layout.unit / f.manifest.sum_block) * 8;
    for (uint32_t d = 0; d < n; ++d)
      if (d != req.disk) total += map->PartSize(d, stored);
  }
  struct statvfs vfs;
  if (::statvfs(report.to.c_str(), &vfs) == 0 && static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize < need)
    return Error(ENOSPC, report.to + " has " + FormatSize(static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize) +
                             " free, disk " + std::to_string(req.disk) + "'s units need " + FormatSize(need));
  prep->total = total;
  if (req.task != nullptr) req.task->total.store(total, std::memory_order_relaxed);
  return prep;
}

namespace {

// The rows written behind the daemon's rebuild are done again in passes while the writes go on,
// and the writes are held for the last of them only when at most kRebuildRowsToHold rows are left
// (written, or marked for a resumed run): the hold does them at full speed, so the pause it
// costs the writers is a few rows' reads, and is bounded by RebuildRequest::max_hold besides.
// The first kPassesAtRate passes keep to the rate; should writes keep coming faster than rows
// are done again at it, the passes after them go at full speed — with the writes still going on —
// to catch up, rather than holding the writes for however many rows are left.
constexpr int kPassesAtRate = 4;
constexpr uint64_t kRebuildRowsToHold = 16;

// File `f`'s manifest now: as an open file of the mount's set has it (its writes change the
// size), else as its stub says; `f`'s own offline, where nothing writes meanwhile.
StripeManifest ManifestNow(const DiskSet* live, const StripedFileRef& f) {
  if (live == nullptr) return f.manifest;
  for (const auto& open : live->OpenFiles())
    if (StripeManifest m = open->manifest(); m.file_id == f.manifest.file_id) return m;
  auto m = ReadManifest(f.path);
  if (m.ok() && m->has_value() && (*m)->file_id == f.manifest.file_id) return **m;
  return f.manifest;
}

using RowsByFile = std::map<std::string, std::set<uint64_t>>;

// Sleeps `how_long`, cut short (checked every 100 ms) when the task is cancelled.
void SleepUnlessCancelled(std::chrono::duration<double> how_long, const SetTaskProgress* task) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(how_long);
  while (std::chrono::steady_clock::now() < until && !(task != nullptr && task->cancel.load(std::memory_order_relaxed)))
    std::this_thread::sleep_until(std::min(until, std::chrono::steady_clock::now() + std::chrono::milliseconds(100)));
}

// A resumed run: the rows the killed one made durable on the new disk are read back, and those of
// them written since — the write-intent records mark every row written while the disk was lost,
// before the write — are done again (`again`; every file resumed has an entry, since its size may
// have changed too). The rows are counted by what the killed run left on the new disk: the file
// may have grown or shrunk since. Run by the daemon, the watch is told those rows were passed.
Status ResumedRows(const PreparedRebuild& prep, DiskBackend& target, RebuildReadBack& read_back,
                   RebuildWatch* watch, RowsByFile& again) {
  const RebuildRecord& record = prep.record;
  for (const StripedFileRef& f : prep.found.files) {
    const std::string& id = f.manifest.file_id;
    const uint64_t passed = record.done.count(id) ? UINT64_MAX : record.file == id ? record.row : 0;
    if (passed == 0) continue;
    if (watch != nullptr) watch->Passed(id, passed);
    auto marked = LoadStaleRows(*prep.set, id, prep.req.disk);
    if (!marked.ok()) return marked.error().Wrap(f.path);
    const StripeMap map = *StripeMap::Create(f.manifest.layout);
    auto part = target.Open(id, {});
    auto part_size = part.ok() ? (*part)->Size() : Result<uint64_t>(uint64_t{0});
    if (!part_size.ok()) return part_size.error().Wrap(f.path);
    // Whole units the killed run left; a short last one is done again (the file may have grown
    // over it), as is every row marked.
    const uint64_t whole = *part_size / map.unit(), rows = std::min(passed, map.Rows(f.manifest.stored_size()));
    std::set<uint64_t>& redo = again[id];
    if (*part_size % map.unit() != 0 && whole < rows) redo.insert(whole);
    if (*marked)
      for (uint64_t r = 0; r < rows; ++r)
        if ((*marked)->Has(r)) redo.insert(r);
    // Not the rows done again: the killed run may have been killed doing one of them again, its
    // unit written and its sums not yet (they are read back once done again).
    uint64_t from = 0;
    for (uint64_t r : redo) {
      read_back.Rows(f, from, std::min(r, whole));
      from = r + 1;
    }
    read_back.Rows(f, from, std::min(whole, rows));
  }
  return Status::Ok();
}

}  // namespace

Result<RebuildReport> RunRebuild(PreparedRebuild& prep) {
  const RebuildRequest& req = prep.req;
  const DiskRegistry& registry = prep.registry;
  const uint32_t n = static_cast<uint32_t>(registry.disks.size());
  RebuildRecord& record = prep.record;
  RebuildReport& report = prep.report;
  if (report.in_place) return report;
  const uint64_t total = prep.total;
  // What a run killed while it wrote the record or the identity left (rebuild_crash_points.h).
  GRAPHFS_RETURN_IF_ERROR(RemoveLeftTemporaries(report.to));
  GRAPHFS_RETURN_IF_ERROR(
      WriteFileAtomicCrashingAt(report.to + "/" + kRebuildRecordFile, record.Encode(), kRebuildCrashRecordTmp));
  CrashPoint(kRebuildCrashStarted);
  auto target = OpenDiskBackend(report.to);
  if (!target.ok()) return target.error();
  // Run by the daemon, the files that lost the disk take writes all along: from here each row a
  // write changes behind the rebuild is told to it, until the disk is switched in (or the run
  // ends otherwise), which also lets go the writes held for the switch.
  std::shared_ptr<RebuildWatch> watch = req.live != nullptr ? req.live->WatchRebuild(req.disk) : nullptr;
  struct EndWatch {
    const DiskSet* live;
    uint32_t disk;
    ~EndWatch() {
      if (live != nullptr) live->EndRebuild(disk);
    }
  } end_watch{req.live, req.disk};

  const auto started = std::chrono::steady_clock::now();
  ProgressLine progress(req.progress, "graphfs-rebuild", total);
  uint64_t done = 0;
  // Every row is read back from the new disk while the next ones are rebuilt — this run's rows,
  // and those a killed run made durable, which it may not have read back.
  RebuildReadBack read_back(**target, req.disk);
  RowsByFile again;
  if (report.resumed) GRAPHFS_RETURN_IF_ERROR(ResumedRows(prep, **target, read_back, watch.get(), again));
  DiskRebuild rebuild(req, *prep.set, **target, record, report, read_back, watch.get());
  // Run by the daemon, files come and go meanwhile (rebuild_files.h): those found before the watch
  // existed are found again, the files created since are told to the watch, and a file removed is
  // dropped — whether it was removed before its turn or failed under the rebuild as its parts went.
  std::vector<StripedFileRef>& files = prep.found.files;
  auto removed = [&](const StripedFileRef& f) { return watch != nullptr && watch->removed(f.manifest.file_id); };
  // Appended files (created while the rebuild ran), from `from` on: rebuilt whole, counted.
  auto add_to_total = [&](size_t from) {
    for (size_t i = from; i < files.size(); ++i) {
      const StripeMap map = *StripeMap::Create(files[i].manifest.layout);
      const uint64_t stored = files[i].manifest.stored_size();
      report.files += map.PartSize(req.disk, stored) > 0;
      for (uint32_t d = 0; d < n; ++d)
        if (d != req.disk) prep.total += map.PartSize(d, stored);
    }
    if (req.task != nullptr) req.task->total.store(prep.total, std::memory_order_relaxed);
  };
  if (watch != nullptr) {
    const size_t before = files.size();
    auto refreshed = RefreshRebuildFiles(req.paths, files, *watch);
    if (!refreshed.ok()) return refreshed.error();
    add_to_total(before);
  }
  auto do_files = [&](size_t from) -> Status {
    for (size_t i = from; i < files.size(); ++i) {
      const StripedFileRef& f = files[i];
      if (record.done.count(f.manifest.file_id) || removed(f)) continue;
      const uint64_t first_row = record.file == f.manifest.file_id ? record.row : 0;
      if (Status s = rebuild.File(f, first_row, progress, done); !s.ok() && !removed(f)) return s.error().Wrap(f.path);
    }
    return Status::Ok();
  };
  GRAPHFS_RETURN_IF_ERROR(do_files(0));
  // Files created while the rebuild ran, until none came during the last of them.
  auto do_created = [&]() -> Status {
    for (;;) {
      const size_t before = files.size();
      auto added = TakeCreatedFiles(*req.live, *watch, files);
      if (!added.ok()) return added.error();
      if (*added == 0) return Status::Ok();
      add_to_total(before);
      GRAPHFS_RETURN_IF_ERROR(do_files(before));
    }
  };
  if (watch != nullptr) GRAPHFS_RETURN_IF_ERROR(do_created());
  progress.Finish(prep.total);
  // The rows written behind the rebuild, and the files whose size changed, done again — in
  // passes while writes go on, then with them held: the last pass leaves nothing behind, and the
  // writes wait (ParityWriter::HeldBy) until the caller has switched the disk in. Offline
  // (no watch) one pass does it all: nothing writes meanwhile.
  for (int pass = 0;; ++pass) {
    if (watch != nullptr) GRAPHFS_RETURN_IF_ERROR(do_created());
    uint64_t rows_left = watch != nullptr ? watch->written() : 0;
    for (const auto& [id, rows] : again) rows_left += rows.size();
    const bool last = watch == nullptr || rows_left <= kRebuildRowsToHold;
    std::chrono::steady_clock::time_point held_at;
    DiskRebuild::AgainHow how;
    bool did_row = false;
    how.paced = !last && pass < kPassesAtRate;
    how.writes_go_on = !last;
    how.did_row = &did_row;
    if (watch != nullptr && last) {
      watch->Hold();
      // A write under way finishes first; any later one of a file that lost the disk waits.
      for (const auto& open : req.live->OpenFiles()) open->AwaitWrites();
      // So does a file being created with the disk missing; one created since the last pass is
      // done whole with the writes going on first (the next pass), not inside the hold.
      req.live->AwaitCreations();
      if (std::vector<RebuildWatch::CreatedFile> created = watch->TakeCreated(); !created.empty()) {
        for (RebuildWatch::CreatedFile& c : created) watch->Created(std::move(c));
        watch->Release();
        continue;
      }
      held_at = std::chrono::steady_clock::now();
      how.deadline = held_at + req.max_hold;
    }
    if (watch != nullptr)
      for (auto& [id, rows] : watch->TakeWritten()) again[id].merge(rows);
    // No row is read back while it is written again.
    GRAPHFS_RETURN_IF_ERROR(read_back.Wait());
    bool given_up = false;
    for (StripedFileRef& f : prep.found.files) {
      if (removed(f)) {
        again.erase(f.manifest.file_id);
        continue;
      }
      const StripeManifest now = ManifestNow(req.live, f);
      const uint64_t before = f.manifest.stored_size();
      auto it = again.find(f.manifest.file_id);
      if (it == again.end() && now.stored_size() == before) continue;
      std::set<uint64_t> rows = it != again.end() ? std::move(it->second) : std::set<uint64_t>{};
      if (it != again.end()) again.erase(it);
      if (now.stored_size() != before) {
        // Grown or cut: the rows past the shorter size, and its last row, which changed length.
        const StripeMap map = *StripeMap::Create(now.layout);
        const uint64_t from = map.Rows(std::min(before, now.stored_size()));
        for (uint64_t r = from > 0 ? from - 1 : 0; r < map.Rows(now.stored_size()); ++r) rows.insert(r);
      }
      std::set<uint64_t> left;
      if (Status s = rebuild.Again(f, now, rows, how, left); !s.ok()) {
        if (removed(f)) continue;
        return s.error().Wrap(f.path);
      }
      if (!left.empty()) {
        again[f.manifest.file_id].merge(left);
        given_up = true;
      }
      f.manifest = now;
    }
    if (watch != nullptr && last) {
      const double held = std::chrono::duration<double>(std::chrono::steady_clock::now() - held_at).count();
      report.longest_hold_seconds = std::max(report.longest_hold_seconds, held);
      if (given_up) {
        // Past max_hold: the writes go on, and the rows left wait for the next pass. The writes
        // get as long as the hold took before another: woken, they must get their turn rather
        // than find themselves held again at once.
        ++report.holds_given_up;
        watch->Release();
        SleepUnlessCancelled(std::chrono::duration<double>(held), req.task);
        continue;
      }
    }
    if (last) break;
  }
  const auto rebuilt = std::chrono::steady_clock::now();
  // Every part read back whole before the directory becomes the disk.
  GRAPHFS_RETURN_IF_ERROR(read_back.Wait());
  report.rebuild_seconds = std::chrono::duration<double>(rebuilt - started).count();
  report.verify_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - rebuilt).count();
  CrashPoint(kRebuildCrashReadBack);
  // Every row of the new disk is written and read back, so the rows the disk missed while it was
  // lost (stale_rows.h) are in step there: their records go before the directory becomes the
  // disk (a kill between leaves records, which only cost reads through parity until a scrub).
  // Run by the daemon, the writes of the files that lost the disk are held until the switch.
  for (const StripedFileRef& f : prep.found.files)
    if (Status s = ClearStaleRows(*prep.set, f.manifest.file_id, req.disk); !s.ok()) return s.error().Wrap(f.path);
  // What the rebuild had put on the new disk of files removed meanwhile goes (read back by now).
  if (watch != nullptr)
    for (const std::string& id : watch->RemovedFiles()) {
      GRAPHFS_RETURN_IF_ERROR((*target)->Remove(id));
      GRAPHFS_RETURN_IF_ERROR((*target)->Remove(UnitSums::FileName(id)));
    }
  // The directory is the disk now; then the registries say where it is.
  GRAPHFS_RETURN_IF_ERROR(WriteFileAtomicCrashingAt(report.to + "/" + kDiskIdentityFile,
                                                 EncodeDiskIdentity({registry.set_id, req.disk, n}),
                                                 kRebuildCrashIdentityTmp));
  CrashPoint(kRebuildCrashIdentityStamped);
  for (const std::string& g : prep.found.graph_dirs) {
    auto r = ReadRegistry(g);
    if (!r.ok()) return r.error();
    r->disks[req.disk] = report.to;
    GRAPHFS_RETURN_IF_ERROR(WriteRegistry(g, *r));
    report.registries.push_back(g);
    CrashPoint(kRebuildCrashRegistrySwitched);
  }
  if (::unlink((report.to + "/" + kRebuildRecordFile).c_str()) != 0)
    return Error::FromErrno("remove " + report.to + "/" + kRebuildRecordFile);
  CrashPoint(kRebuildCrashRecordRemoved);
  // With the writes still held: every open file takes the disk before any of them writes again.
  if (req.switch_in) GRAPHFS_RETURN_IF_ERROR(req.switch_in(report.to));
  return report;
}

Result<RebuildReport> Rebuild(const RebuildRequest& req) {
  auto prep = PrepareRebuild(req);
  if (!prep.ok()) return prep.error();
  return RunRebuild(**prep);
}

}  // namespace graphfs
