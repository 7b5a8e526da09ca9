#include "striping/rebuild.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>

#include "striping/disk_backend.h"
#include "striping/disk_set.h"
#include "striping/journal_replay.h"
#include "striping/rate_limiter.h"
#include "striping/rebuild_read_back.h"
#include "striping/row_scan.h"
#include "striping/progress_line.h"
#include "striping/set_files.h"
#include "striping/stale_rows.h"
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

// What the new directory holds decides whether to start, resume, or refuse. Returns the record
// of a rebuild to resume (nullopt: start afresh).
Result<std::optional<RebuildRecord>> CheckTarget(const std::string& to, const DiskRegistry& registry, uint32_t disk) {
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
    if (!record)
      return Error(EEXIST, to + " is disk " + std::to_string(disk) + " of set " + registry.set_id +
                               " already (rebuilt, or the disk itself): nothing to rebuild");
  }
  if (record) return record;
  auto names = Entries(to);
  if (!names.ok()) return names.error();
  std::erase(*names, "lost+found");  // a fresh ext4 has it
  if (!names->empty())
    return Error(ENOTEMPTY, to + " is not empty (" + std::to_string(names->size()) + " entr" +
                                (names->size() == 1 ? "y" : "ies") + ": " + names->front() +
                                (names->size() > 1 ? ", ..." : "") + "); rebuild writes onto an empty directory");
  return std::optional<RebuildRecord>();
}

class DiskRebuild {
 public:
  DiskRebuild(const RebuildRequest& req, const DiskSet& set, DiskBackend& target, RebuildRecord& record,
              RebuildReport& report, RebuildReadBack& read_back)
      : req_(req), set_(set), target_(target), record_(record), report_(report), limiter_(req.rate, req.task != nullptr ? &req.task->cancel : nullptr),
        read_back_(read_back) {}

  // Puts file `f`'s units of the disk on the target, resuming at `first_row`, and hands each row
  // written to the read back.
  Status File(const StripedFileRef& f, uint64_t first_row, ProgressLine& progress, uint64_t& done) {
    const StripeManifest& m = f.manifest;
    const uint32_t disk = req_.disk;
    auto scan = RowScanner::Open(set_, m, /*writable=*/false, disk);
    if (!scan.ok()) return scan.error();
    RowScanner& s = **scan;
    const StripeMap& map = s.map();
    DiskFileOptions o;
    o.create = true;
    auto part = target_.Open(m.file_id, o);
    if (!part.ok()) return part.error();
    Result<UnitSums> sums = first_row > 0 ? UnitSums::Open(target_, SumsHeaderOf(m, disk), /*writable=*/true)
                                          : UnitSums::Create(target_, SumsHeaderOf(m, disk));
    if (!sums.ok()) return sums.error();
    const uint64_t b = m.sum_block, stored = m.stored_size();
    uint64_t since = 0;
    for (uint64_t row = first_row; row < s.rows(); ++row) {
      const uint32_t slot = map.DiskSlot(row, disk);
      const uint64_t length = map.RowUnitLength(row, slot, stored);
      if (length == 0) continue;
      if (req_.task != nullptr && req_.task->cancel.load(std::memory_order_relaxed))
        return Error(ECANCELED, "rebuild stopped at row " + std::to_string(row) + " (resumed when run again)");
      // Run by the daemon: the row's heals wait until its unit is on the new disk (and this does
      // not read a block while a heal rewrites it).
      std::unique_lock<std::mutex> row_lock;
      if (req_.live != nullptr) row_lock = std::unique_lock<std::mutex>(req_.live->RowLock(m.file_id, row));
      std::vector<uint32_t> others;
      for (uint32_t o2 = 0; o2 < map.disks(); ++o2)
        if (o2 != slot) others.push_back(o2);
      std::vector<uint64_t> read(map.disks(), 0);
      const std::vector<SlotScan> scans = s.Read(row, others, &read);
      uint64_t read_bytes = 0;
      for (uint64_t r : read) read_bytes += r;
      for (uint64_t blk = 0; blk * b < length; ++blk) {
        std::vector<uint32_t> bad = {slot};
        std::string why;
        for (uint32_t o2 : others) {
          if (scans[o2].BlockGood(blk, b)) continue;
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
                                std::to_string(disk) + "'s bytes");
        const uint64_t begin = blk * b;
        GRAPHFS_RETURN_IF_ERROR(s.Rebuild(row, bad, begin, std::min(b, s.row_length(row) - begin)));
      }
      const std::span<const char> unit(s.unit(slot).data(), length);
      GRAPHFS_RETURN_IF_ERROR((*part)->Write(row * map.unit(), unit));
      // Start the unit's writeback now, so that the new disk writes while the others are read
      // for the next rows, instead of all at the checkpoint's fsync.
      if ((*part)->native_fd() >= 0)
        ::sync_file_range((*part)->native_fd(), static_cast<off_t>(row * map.unit()), static_cast<off_t>(length),
                          SYNC_FILE_RANGE_WRITE);
      GRAPHFS_RETURN_IF_ERROR(sums->Write(row, 0, BlockSums(unit, b)));
      if (row_lock.owns_lock()) row_lock.unlock();
      read_back_.Rows(f, row, row + 1);
      // A row that did not read back right stops the rebuild now rather than at the end.
      GRAPHFS_RETURN_IF_ERROR(read_back_.error());
      report_.bytes += length;
      since += length;
      done += read_bytes;
      if (req_.task != nullptr) req_.task->done.store(done, std::memory_order_relaxed);
      limiter_.Take(read_bytes);
      progress.Update(done, f.path);
      if (since >= req_.checkpoint) {
        GRAPHFS_RETURN_IF_ERROR(Durable(**part, *sums, m.file_id, row + 1));
        since = 0;
      }
    }
    // The part's full length: a last row whose unit on this disk is short or absent ends it.
    const uint64_t part_length = map.PartSize(disk, stored);
    GRAPHFS_RETURN_IF_ERROR((*part)->Truncate(part_length));
    {
      auto held = read_back_.HoldSumsHeaders();  // the read back may be opening this header
      GRAPHFS_RETURN_IF_ERROR(sums->SetPartLength(part_length));
    }
    GRAPHFS_RETURN_IF_ERROR((*part)->Sync());
    GRAPHFS_RETURN_IF_ERROR(sums->Sync());
    GRAPHFS_RETURN_IF_ERROR(target_.SyncNames());
    read_back_.Length(f);
    record_.done.insert(m.file_id);
    record_.file.clear();
    record_.row = 0;
    return WriteFileAtomic(req_.to + "/" + kRebuildRecordFile, record_.Encode());
  }

 private:
  // Rows below `next_row` of `file` are on the target for good: the record says so.
  Status Durable(DiskFile& part, UnitSums& sums, const std::string& file, uint64_t next_row) {
    GRAPHFS_RETURN_IF_ERROR(part.Sync());
    GRAPHFS_RETURN_IF_ERROR(sums.Sync());
    GRAPHFS_RETURN_IF_ERROR(target_.SyncNames());
    record_.file = file;
    record_.row = next_row;
    return WriteFileAtomic(req_.to + "/" + kRebuildRecordFile, record_.Encode());
  }

  const RebuildRequest& req_;
  const DiskSet& set_;
  DiskBackend& target_;
  RebuildRecord& record_;
  RebuildReport& report_;
  RateLimiter limiter_;
  RebuildReadBack& read_back_;
};

}  // namespace

struct PreparedRebuild {
  RebuildRequest req;
  SetFiles found;
  DiskRegistry registry;
  std::optional<DiskSet> set;
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
  auto resume = CheckTarget(report.to, registry, req.disk);
  if (!resume.ok()) return resume.error();
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
  // A file whose writer was killed is brought to its journaled state first: rebuilt from rows the
  // journal would still change, the disk's units would code bytes the file does not hold.
  for (StripedFileRef& f : found_ptr->files) {
    auto m = ReplayRowJournal(*prep->set, f.path, f.manifest);
    if (!m.ok()) return m.error();
    f.manifest = std::move(*m);
  }
  RebuildRecord& record = prep->record;
  if (*resume) {
    record = **resume;
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

Result<RebuildReport> RunRebuild(PreparedRebuild& prep) {
  const RebuildRequest& req = prep.req;
  const SetFiles* found = &prep.found;
  const DiskRegistry& registry = prep.registry;
  const uint32_t n = static_cast<uint32_t>(registry.disks.size());
  RebuildRecord& record = prep.record;
  RebuildReport& report = prep.report;
  const uint64_t total = prep.total;
  GRAPHFS_RETURN_IF_ERROR(WriteFileAtomic(report.to + "/" + kRebuildRecordFile, record.Encode()));
  auto target = OpenDiskBackend(report.to);
  if (!target.ok()) return target.error();

  const auto started = std::chrono::steady_clock::now();
  ProgressLine progress(req.progress, "graphfs-rebuild", total);
  uint64_t done = 0;
  // Every row is read back from the new disk while the next ones are rebuilt — this run's rows,
  // and those a killed run made durable, which it may not have read back.
  RebuildReadBack read_back(**target, req.disk);
  for (const StripedFileRef& f : found->files) {
    // Every layout made a map above (the room check), or the rebuild stopped there.
    const uint64_t rows = StripeMap::Create(f.manifest.layout)->Rows(f.manifest.stored_size());
    if (record.done.count(f.manifest.file_id)) {
      read_back.Rows(f, 0, rows);
      read_back.Length(f);
    } else if (record.file == f.manifest.file_id) {
      read_back.Rows(f, 0, record.row);
    }
  }
  DiskRebuild rebuild(req, *prep.set, **target, record, report, read_back);
  for (const StripedFileRef& f : found->files) {
    if (record.done.count(f.manifest.file_id)) continue;
    const uint64_t first_row = record.file == f.manifest.file_id ? record.row : 0;
    if (Status s = rebuild.File(f, first_row, progress, done); !s.ok()) return s.error().Wrap(f.path);
  }
  progress.Finish(total);
  const auto rebuilt = std::chrono::steady_clock::now();
  // Every part read back whole before the directory becomes the disk.
  GRAPHFS_RETURN_IF_ERROR(read_back.Wait());
  report.rebuild_seconds = std::chrono::duration<double>(rebuilt - started).count();
  report.verify_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - rebuilt).count();
  // Every row of the new disk is written and read back, so the rows the disk missed while it was
  // lost (stale_rows.h) are in step there: their records go before the directory becomes the
  // disk (a kill between leaves records, which only cost reads through parity until a scrub).
  // Run by the daemon, writes of files that lost the disk were refused all along.
  for (const StripedFileRef& f : found->files)
    if (Status s = ClearStaleRows(*prep.set, f.manifest.file_id, req.disk); !s.ok()) return s.error().Wrap(f.path);
  // The directory is the disk now; then the registries say where it is.
  GRAPHFS_RETURN_IF_ERROR(WriteFileAtomic(report.to + "/" + kDiskIdentityFile,
                                          EncodeDiskIdentity({registry.set_id, req.disk, n})));
  for (const std::string& g : found->graph_dirs) {
    auto r = ReadRegistry(g);
    if (!r.ok()) return r.error();
    r->disks[req.disk] = report.to;
    GRAPHFS_RETURN_IF_ERROR(WriteRegistry(g, *r));
    report.registries.push_back(g);
  }
  if (::unlink((report.to + "/" + kRebuildRecordFile).c_str()) != 0)
    return Error::FromErrno("remove " + report.to + "/" + kRebuildRecordFile);
  return report;
}

Result<RebuildReport> Rebuild(const RebuildRequest& req) {
  auto prep = PrepareRebuild(req);
  if (!prep.ok()) return prep.error();
  return RunRebuild(**prep);
}

}  // namespace graphfs
