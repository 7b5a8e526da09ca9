#include "striping/scrub.h"

#include <algorithm>
#include <cstring>

#include "striping/disk_set.h"
#include "striping/journal_replay.h"
#include "striping/rate_limiter.h"
#include "striping/row_scan.h"
#include "striping/progress_line.h"
#include "striping/set_files.h"
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
  for (const ScrubDisk& d : report.disks) n += d.counts.repaired_blocks + d.counts.sum_repairs + d.counts.parity_rewrites;
  return n;
}

class FileScrub {
 public:
  FileScrub(const ScrubRequest& req, RowScanner& scan, std::vector<ScrubDisk>& disks)
      : req_(req), scan_(scan), map_(scan.map()), disks_(disks) {}

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

 private:
  ScrubCounts& Count(uint32_t disk) { return disks_[disk].counts; }
  // A slot whose disk is there: what is wrong with it can be written right.
  bool Writable(const SlotScan& sc) const { return sc.failed.empty() || sc.read_error; }

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
      for (uint32_t slot : fix) Unrepaired(row, slot, blk, scans[slot], why);
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
  DamageList damage_;
};

}  // namespace

nlohmann::json ScrubCountsJson(const ScrubCounts& c) {
  return {{"bytes_read", c.bytes_read},           {"checksum_errors", c.checksum_errors},
          {"read_errors", c.read_errors},         {"repaired_blocks", c.repaired_blocks},
          {"sum_repairs", c.sum_repairs},         {"parity_rewrites", c.parity_rewrites},
          {"unrepaired_blocks", c.unrepaired_blocks}};
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
    auto scan = RowScanner::Open(*set, f->manifest, req.repair);
    if (!scan.ok()) return scan.error().Wrap(f->path);
    ScrubFile& file = report.files.emplace_back();
    file.path = f->path;
    file.file_id = f->manifest.file_id;
    file.parity = f->manifest.layout.parity;
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
      file.counts.Add(c);
    }
  }
  progress.Finish(done);
  for (ScrubDisk& d : report.disks) {
    report.total.Add(d.counts);
    if (d.state != DiskStateName(DiskState::kMissing) && (d.counts.checksum_errors > 0 || d.counts.read_errors > 0))
      d.state = DiskStateName(DiskState::kFailing);
  }
  return report;
}

}  // namespace graphfs
