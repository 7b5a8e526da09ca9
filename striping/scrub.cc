#include "striping/scrub.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "striping/disk_backend.h"
#include "striping/disk_set.h"
#include "striping/journal_replay.h"
#include "striping/rate_limiter.h"
#include "striping/row_scan.h"
#include "striping/progress_line.h"
#include "striping/row_journal.h"
#include "striping/set_files.h"
#include "striping/stale_rows.h"
#include "striping/striped_file.h"
#include "striping/unit_sums.h"

namespace graphfs {

void ScrubCounts::Add(const ScrubCounts& o) {
  bytes_read += o.bytes_read;
  checksum_errors += o.checksum_errors;
  read_errors += o.read_errors;
  repaired_blocks += o.repaired_blocks;
  sum_repairs += o.sum_repairs;
  parity_rewrites += o.parity_rewrites;
  unrepaired_blocks += o.unrepaired_blocks;
  resynced_blocks += o.resynced_blocks;
}

namespace {

// Damage left in one file, merged: adjacent file ranges with the same reason become one line.
class DamageList {
 public:
  void FileRange(uint64_t begin, uint64_t end, const std::string& why) {
    if (!ranges_.empty() && ranges_.back().end == begin && ranges_.back().why == why) {
      ranges_.back().end = end;
      return;
    }
    ranges_.push_back({begin, end, why});
  }
  void Note(const std::string& line) {
    if (std::find(notes_.begin(), notes_.end(), line) == notes_.end()) notes_.push_back(line);
  }
  std::vector<std::string> Lines() const {
    std::vector<std::string> out;
    for (const Range& r : ranges_)
      out.push_back("file bytes [" + std::to_string(r.begin) + ", " + std::to_string(r.end) + "): " + r.why);
    out.insert(out.end(), notes_.begin(), notes_.end());
    return out;
  }

 private:
  struct Range {
    uint64_t begin, end;
    std::string why;
  };
  std::vector<Range> ranges_;
  std::vector<std::string> notes_;
};

// Blocks and sums a scrub wrote so far, over every disk.
uint64_t Changed(const ScrubReport& report) {
  uint64_t n = 0;
  for (const ScrubDisk& d : report.disks)
    n += d.counts.repaired_blocks + d.counts.sum_repairs + d.counts.parity_rewrites + d.counts.resynced_blocks;
  return n;
}

class FileScrub {
 public:
  // The slots of stale disks (stale_rows.h) are rewritten from their rows when it repairs.
  FileScrub(const ScrubRequest& req, RowScanner& scan, std::vector<ScrubDisk>& disks)
      : req_(req), scan_(scan), map_(scan.map()), disks_(disks), resync_(req.repair) {}

  // Scrubs row `row`; the bytes read are added to `read`.
  Status Row(uint64_t row, uint64_t& read) {
    const uint32_t n = map_.disks();
    std::vector<uint64_t> per_disk(n, 0);
    const std::vector<SlotScan> scans = scan_.Read(row, {}, &per_disk);
    for (uint32_t d = 0; d < n; ++d) {
      Count(d).bytes_read += per_disk[d];
      read += per_disk[d];
    }
    bool bad = false, fixable = false;
    for (const SlotScan& sc : scans) {
      if (sc.read_error) ++Count(sc.disk).read_errors;
      Count(sc.disk).checksum_errors += sc.bad_blocks.size();
      if (sc.bad_blocks.empty() && (sc.failed.empty() || sc.length == 0)) continue;
      bad = true;
      fixable = fixable || Writable(sc);
    }
    if (!bad) return CheckParity(row);
    // Checked against the sums alone: the row's redundancy went with a lost disk, whose units
    // are graphfs-rebuild's to put back.
    if (!fixable) return Status::Ok();
    const uint64_t b = scan_.sum_block(), len = scan_.row_length(row);
    for (uint64_t blk = 0; blk * b < len; ++blk) GRAPHFS_RETURN_IF_ERROR(Block(row, blk, scans));
    return Status::Ok();
  }

  std::vector<std::string> Damage() const { return damage_.Lines(); }

  ScrubCounts& Count(uint32_t disk) { return disks_[disk].counts; }
  // Whether a stale disk's slot could not be resynced (its rows' other units too bad).
  bool resync_failed(uint32_t disk) const { return resync_failed_.count(disk) != 0; }

 private:
  // A slot whose disk is there: what is wrong with it can be written right.
  bool Writable(const SlotScan& sc) const { return sc.failed.empty() || sc.read_error || (sc.stale && resync_); }

  // Every block matched its sum: the parity must be what the data encodes to.
  Status CheckParity(uint64_t row) {
    auto differ = scan_.ParityMismatches(row);
    if (!differ.ok()) return differ.error();
    if (differ->empty()) return Status::Ok();
    const uint64_t len = scan_.row_length(row), blocks = scan_.blocks(row);
    if (!req_.repair) {
      for (uint32_t slot : *differ) {
        const uint32_t disk = map_.SlotDisk(row, slot);
        damage_.Note("row " + std::to_string(row) + ": parity unit on disk " + std::to_string(disk) +
                     " does not match the row's data (a lost write); not repaired (--no-repair)");
        Count(disk).unrepaired_blocks += blocks;
      }
      return Status::Ok();
    }
    // The data wins: its sums all matched. Rebuilding the parity slots from it is encoding them.
    GRAPHFS_RETURN_IF_ERROR(scan_.Rebuild(row, *differ, 0, len));
    for (uint32_t slot : *differ) {
      GRAPHFS_RETURN_IF_ERROR(scan_.WriteBlocks(row, slot, 0, blocks));
      GRAPHFS_RETURN_IF_ERROR(scan_.WriteSums(row, slot, 0, blocks));
      ++Count(map_.SlotDisk(row, slot)).parity_rewrites;
    }
    return Status::Ok();
  }

  // Block `blk` of every unit of the row: rebuilt from the good ones where some are bad.
  Status Block(uint64_t row, uint64_t blk, const std::vector<SlotScan>& scans) {
    const uint64_t b = scan_.sum_block();
    std::vector<uint32_t> bad, fix;
    for (uint32_t slot = 0; slot < scans.size(); ++slot) {
      if (scans[slot].BlockGood(blk, b)) continue;
      bad.push_back(slot);
      if (Writable(scans[slot])) fix.push_back(slot);
    }
    if (fix.empty()) return Status::Ok();
    const uint32_t k = map_.parity();
    if (bad.size() > k) {
      std::string why = std::to_string(bad.size()) + " of the row's units are bad here (";
      for (size_t i = 0; i < bad.size(); ++i) {
        const SlotScan& sc = scans[bad[i]];
        why += (i ? "; " : "") + std::string("disk ") + std::to_string(sc.disk) + ": " +
               (sc.failed.empty() ? "checksum" : sc.failed);
      }
      why += "), parity " + std::to_string(k);
      for (uint32_t slot : fix) {
        if (scans[slot].stale) resync_failed_.insert(scans[slot].disk);
        Unrepaired(row, slot, blk, scans[slot], why);
      }
      return Status::Ok();
    }
    const uint64_t begin = blk * b, len = std::min(b, scan_.row_length(row) - begin);
    std::vector<std::string> as_read;
    for (uint32_t slot : fix) as_read.emplace_back(scan_.unit(slot).data() + begin, len);
    GRAPHFS_RETURN_IF_ERROR(scan_.Rebuild(row, bad, begin, len));
    for (size_t i = 0; i < fix.size(); ++i) {
      const uint32_t slot = fix[i];
      const SlotScan& sc = scans[slot];
      if (begin >= sc.length) continue;
      if (sc.stale) {
        // What the disk holds there is older than the row: the rebuilt bytes are the row's.
        GRAPHFS_RETURN_IF_ERROR(scan_.WriteBlocks(row, slot, blk, 1));
        GRAPHFS_RETURN_IF_ERROR(scan_.WriteSums(row, slot, blk, 1));
        ++Count(sc.disk).resynced_blocks;
        continue;
      }
      const std::span<const char> rebuilt(scan_.unit(slot).data() + begin, std::min(b, sc.length - begin));
      const bool sum_agrees = scan_.HasSums(slot) && BlockSum(rebuilt, b) == scan_.StoredSum(slot, blk);
      const bool bytes_agree = !sc.read_error && std::memcmp(as_read[i].data(), rebuilt.data(), rebuilt.size()) == 0;
      if (!sum_agrees && !bytes_agree) {
        // Restore what is on the disk: nothing is written over it.
        std::memcpy(scan_.unit(slot).data() + begin, as_read[i].data(), len);
        Unrepaired(row, slot, blk, sc,
                   "the bytes rebuilt from parity match neither what disk " + std::to_string(sc.disk) +
                       " holds nor its sum: the row's parity or sums are stale");
        continue;
      }
      if (!req_.repair) {
        Unrepaired(row, slot, blk, sc, std::string(sum_agrees ? "bad bytes" : "bad sum") + " on disk " +
                                           std::to_string(sc.disk) + "; not repaired (--no-repair)");
        continue;
      }
      if (sum_agrees) {
        GRAPHFS_RETURN_IF_ERROR(scan_.WriteBlocks(row, slot, blk, 1));
        ++Count(sc.disk).repaired_blocks;
      } else {
        GRAPHFS_RETURN_IF_ERROR(scan_.WriteSums(row, slot, blk, 1));
        ++Count(sc.disk).sum_repairs;
      }
    }
    return Status::Ok();
  }

  void Unrepaired(uint64_t row, uint32_t slot, uint64_t blk, const SlotScan& sc, const std::string& why) {
    ++Count(sc.disk).unrepaired_blocks;
    const uint64_t b = scan_.sum_block();
    if (slot < map_.data_units()) {
      const uint64_t begin = map_.SlotFileOffset(row, slot) + blk * b;
      damage_.FileRange(begin, begin + std::min(b, sc.length - blk * b), why);
    } else {
      damage_.Note("row " + std::to_string(row) + ": parity unit on disk " + std::to_string(sc.disk) + ": " + why);
    }
  }

  const ScrubRequest& req_;
  RowScanner& scan_;
  const StripeMap& map_;
  std::vector<ScrubDisk>& disks_;
  const bool resync_;
  std::set<uint32_t> resync_failed_;
  DamageList damage_;
};

}  // namespace

nlohmann::json ScrubCountsJson(const ScrubCounts& c) {
  return {{"bytes_read", c.bytes_read},           {"checksum_errors", c.checksum_errors},
          {"read_errors", c.read_errors},         {"repaired_blocks", c.repaired_blocks},
          {"sum_repairs", c.sum_repairs},         {"parity_rewrites", c.parity_rewrites},
          {"unrepaired_blocks", c.unrepaired_blocks}, {"resynced_blocks", c.resynced_blocks}};
}

ScrubCounts ScrubCountsFromJson(const nlohmann::json& j) {
  ScrubCounts c;
  c.bytes_read = j.value("bytes_read", uint64_t{0});
  c.checksum_errors = j.value("checksum_errors", uint64_t{0});
  c.read_errors = j.value("read_errors", uint64_t{0});
  c.repaired_blocks = j.value("repaired_blocks", uint64_t{0});
  c.sum_repairs = j.value("sum_repairs", uint64_t{0});
  c.parity_rewrites = j.value("parity_rewrites", uint64_t{0});
  c.unrepaired_blocks = j.value("unrepaired_blocks", uint64_t{0});
  c.resynced_blocks = j.value("resynced_blocks", uint64_t{0});
  return c;
}

struct PreparedScrub {
  ScrubRequest req;
  SetFiles found;
  std::optional<DiskSet> set;
  ScrubReport report;
  std::vector<const StripedFileRef*> todo;
  uint64_t total = 0;
};

void PreparedScrubDeleter::operator()(PreparedScrub* p) const { delete p; }

namespace {

// Whether the mount's daemon has the file open: its writer then keeps the row journal, and a
// replay by another opener could put back bytes it has since written.
bool OpenInMount(const DiskSet& live, const std::string& file_id) {
  for (const auto& f : live.OpenFiles())
    if (f->manifest().file_id == file_id) return true;
  return false;
}

// The mount's open copy of a file, or null.
std::shared_ptr<StripedFile> OpenCopy(const DiskSet* live, const std::string& file_id) {
  if (live == nullptr) return nullptr;
  for (auto& f : live->OpenFiles())
    if (f->manifest().file_id == file_id) return f;
  return nullptr;
}

// After a file's rows: each stale disk whose marked rows were all rewritten is cut to the file,
// made durable, and only then are the file's records of it removed.
// `open`: the mount's open copy of the file, whose writes the caller holds off (`held`): it takes
// the resynced disk for its reads and writes (StripedFile::AdoptDisk) before the records go.
Status FinishResync(const ScrubRequest& req, const DiskSet& set, const StripedFileRef& f, RowScanner& scan,
                    const FileScrub& scrub, StripedFile* open, const std::unique_lock<std::mutex>* held,
                    ScrubReport& report) {
  for (uint32_t d = 0; d < set.size(); ++d) {
    if (!scan.stale(d)) continue;
    const std::string what = f.path + ": disk " + std::to_string(d) + ": ";
    const uint64_t rows = scan.stale(d)->Count(scan.rows());
    if (!req.repair) {
      report.resynced.push_back(what + std::to_string(rows) + " rows written while it was lost; not resynced (--no-repair)");
      continue;
    }
    if (scrub.resync_failed(d)) {
      report.resynced.push_back(what + "not resynced: rows whose other units are bad too (the damage lists them)");
      continue;
    }
    GRAPHFS_RETURN_IF_ERROR(scan.CutToFile(d));
    if (Status s = scan.Sync(); !s.ok()) return s.error().Wrap(f.path);
    // The disk's journal of the file is from before it was lost: every entry in it is applied
    // (or was torn), and the present disks' journals went on without it. Gone, a later entry
    // makes a new one; kept, its records could pass for the file's own (RowJournal::AdoptDisk).
    {
      auto backend = OpenDiskBackend(set.path(d));
      if (!backend.ok()) return backend.error().Wrap(f.path);
      GRAPHFS_RETURN_IF_ERROR((*backend)->Remove(RowJournal::FileName(f.manifest.file_id)));
      GRAPHFS_RETURN_IF_ERROR((*backend)->SyncNames());
    }
    if (open != nullptr) {
      // Its writes are held off: it reads and writes the disk from here, before the records go.
      if (Status s = open->AdoptDisk(d, set, *held); !s.ok()) {
        report.resynced.push_back(what + "rows resynced, records kept: the open file could not take the disk (" +
                                  s.error().message() + ")");
        continue;
      }
    } else if (req.live != nullptr && OpenInMount(*req.live, f.manifest.file_id)) {
      // Opened in the mount while its rows were rewritten: its writer's marks since then must
      // stay (it finds its record gone and makes it again otherwise).
      report.resynced.push_back(what + "rows resynced, records kept: the mount opened the file meanwhile");
      continue;
    }
    if (Status s = ClearStaleRows(set, f.manifest.file_id, d); !s.ok()) return s.error().Wrap(f.path);
    if (req.live != nullptr) req.live->SumsChanged();
    report.resynced.push_back(what + std::to_string(rows) + " rows resynced");
  }
  return Status::Ok();
}

}  // namespace

Result<PreparedScrubPtr> PrepareScrub(const ScrubRequest& req) {
  PreparedScrubPtr prep(new PreparedScrub);
  prep->req = req;
  auto found = FindSetFiles(req.paths);
  if (!found.ok()) return found.error();
  prep->found = std::move(*found);
  DiskRegistry registry = prep->found.registry;
  if (!req.disks.empty()) {
    if (req.disks.size() != registry.disks.size())
      return Error(EINVAL, "--disks lists " + std::to_string(req.disks.size()) + " disks, the registry has " +
                               std::to_string(registry.disks.size()));
    registry.disks = req.disks;
  }
  auto opened = OpenTaskSet(req.live, registry);
  if (!opened.ok()) return opened.error();
  prep->set.emplace(std::move(*opened));
  const DiskSet* set = &*prep->set;
  ScrubReport& report = prep->report;
  report.set_id = set->set_id();
  for (uint32_t d = 0; d < set->size(); ++d) {
    report.disks.push_back({set->path(d), DiskStateName(set->state(d)), {}});
    if (set->state(d) == DiskState::kMissing) report.missing.push_back(d);
  }
  uint64_t total = 0;
  for (StripedFileRef& f : prep->found.files) {
    if (f.manifest.sum_block == 0) {
      report.skipped.push_back(f.path + ": no checksums or parity (striped without --parity)");
      continue;
    }
    // A row the journal would rewrite is not checked (nor "repaired") as it is in place now.
    if (req.live == nullptr || !OpenInMount(*req.live, f.manifest.file_id)) {
      bool replayed = false;
      auto m = ReplayRowJournal(*set, f.path, f.manifest, &replayed);
      if (!m.ok()) return m.error();
      f.manifest = std::move(*m);
      if (replayed) report.replayed.push_back(f.path);
    }
    auto map = StripeMap::Create(f.manifest.layout);
    if (!map.ok()) return map.error().Wrap(f.path);
    for (uint32_t d = 0; d < set->size(); ++d)
      if (set->state(d) != DiskState::kMissing) total += map->PartSize(d, f.manifest.stored_size());
    prep->todo.push_back(&f);
  }
  if (prep->todo.empty())
    return Error(EINVAL, "none of the " + std::to_string(prep->found.files.size()) +
                             " striped files there has checksums or parity (striped without --parity): nothing "
                             "to scrub");
  prep->total = total;
  if (req.task != nullptr) req.task->total.store(total, std::memory_order_relaxed);
  return prep;
}

Result<ScrubReport> Scrub(const ScrubRequest& req) {
  auto prep = PrepareScrub(req);
  if (!prep.ok()) return prep.error();
  return RunScrub(**prep);
}

Result<ScrubReport> RunScrub(PreparedScrub& prep) {
  const ScrubRequest& req = prep.req;
  const DiskSet* set = &*prep.set;
  ScrubReport& report = prep.report;
  const std::vector<const StripedFileRef*>& todo = prep.todo;
  const uint64_t total = prep.total;
  ProgressLine progress(req.progress, "graphfs-scrub", total);
  RateLimiter limiter(req.rate, req.task != nullptr ? &req.task->cancel : nullptr);
  uint64_t done = 0;
  for (const StripedFileRef* f : todo) {
    // Run by the daemon, a file it has open keeps its writer, which would mark rows a resync
    // passed: its writes wait while its stale rows are rewritten, until it has taken the disk —
    // and the rows are those of its size now, which its stub may not say yet.
    StripeManifest m = f->manifest;
    std::shared_ptr<StripedFile> open = OpenCopy(req.live, m.file_id);
    std::unique_lock<std::mutex> held;
    if (open != nullptr && req.repair) {
      bool stale = false;
      for (uint32_t d = 0; d < set->size() && !stale; ++d) {
        auto rows = LoadStaleRows(*set, m.file_id, d);
        if (!rows.ok()) return rows.error().Wrap(f->path);
        stale = rows->has_value();
      }
      if (stale) {
        held = open->LockWrites();
        m = open->manifest();
      }
    }
    auto scan = RowScanner::Open(*set, m, req.repair);
    if (!scan.ok()) return scan.error().Wrap(f->path);
    ScrubFile& file = report.files.emplace_back();
    file.path = f->path;
    file.file_id = m.file_id;
    file.parity = m.layout.parity;
    file.rows = (*scan)->rows();
    std::vector<ScrubCounts> before;
    for (const ScrubDisk& d : report.disks) before.push_back(d.counts);
    FileScrub scrub(req, **scan, report.disks);
    for (uint64_t row = 0; row < file.rows; ++row) {
      if (req.task != nullptr && req.task->cancel.load(std::memory_order_relaxed))
        return Error(ECANCELED, "scrub stopped at " + f->path + ", row " + std::to_string(row));
      uint64_t read = 0;
      {
        // Run by the daemon: no heal or in-place write of the row while it is read and repaired.
        std::unique_lock<std::mutex> row_lock;
        if (req.live != nullptr) row_lock = std::unique_lock<std::mutex>(req.live->RowLock(f->manifest.file_id, row));
        const uint64_t changed_before = Changed(report);
        if (Status s = scrub.Row(row, read); !s.ok()) return s.error().Wrap(f->path + ", row " + std::to_string(row));
        if (req.live != nullptr && Changed(report) != changed_before) {
          // Written to the disks before the lock goes: the daemon's reads of the row after it
          // read the new sums, not those they kept.
          if (Status s = (*scan)->Sync(); !s.ok()) return s.error().Wrap(f->path);
          req.live->SumsChanged();
        }
      }
      done += read;
      if (req.task != nullptr) req.task->done.store(done, std::memory_order_relaxed);
      limiter.Take(read);
      progress.Update(done, f->path);
    }
    if (Status s = (*scan)->Sync(); !s.ok()) return s.error().Wrap(f->path);
    GRAPHFS_RETURN_IF_ERROR(
        FinishResync(req, *set, *f, **scan, scrub, held ? open.get() : nullptr, held ? &held : nullptr, report));
    file.damage = scrub.Damage();
    // The file's counts: what its rows added to the disks'.
    for (size_t d = 0; d < report.disks.size(); ++d) {
      ScrubCounts c = report.disks[d].counts;
      const ScrubCounts& b = before[d];
      c.bytes_read -= b.bytes_read;
      c.checksum_errors -= b.checksum_errors;
      c.read_errors -= b.read_errors;
      c.repaired_blocks -= b.repaired_blocks;
      c.sum_repairs -= b.sum_repairs;
      c.parity_rewrites -= b.parity_rewrites;
      c.unrepaired_blocks -= b.unrepaired_blocks;
      c.resynced_blocks -= b.resynced_blocks;
      file.counts.Add(c);
    }
  }
  progress.Finish(done);
  for (uint32_t d = 0; d < set->size(); ++d) {
    if (set->state(d) == DiskState::kMissing) continue;
    if (AnyStaleRecordFor(*set, d)) {
      report.stale.push_back(d);
      report.disks[d].state = DiskStateName(DiskState::kStale);
    } else if (set->state(d) == DiskState::kStale) {
      // Every file written while it was lost is in step on it again (a graph of the set not
      // scrubbed would still hold records: AnyStaleRecordFor looks at every file's).
      set->ClearStale(d);
      report.disks[d].state = DiskStateName(DiskState::kHealthy);
    }
  }
  for (ScrubDisk& d : report.disks) {
    report.total.Add(d.counts);
    if (d.state != DiskStateName(DiskState::kMissing) && (d.counts.checksum_errors > 0 || d.counts.read_errors > 0))
      d.state = DiskStateName(DiskState::kFailing);
  }
  return report;
}

}  // namespace graphfs
