#include "striping/parity_read.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>
#include <unordered_map>

#include "striping/local_disk_backend.h"
#include "striping/part_io.h"
#include "striping/row_repair.h"
#include "striping/unit_sums.h"

namespace graphfs {

namespace {

constexpr size_t kMaxIov = 512;  // a run's iovecs stay well below IOV_MAX

bool Aligned(uint64_t v) { return v % kDirectAlign == 0; }
uint64_t RoundUp(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

// The blocks of `bytes` (from block 0 of `sums`) whose sums differ.
uint64_t BadBlocks(std::span<const char> bytes, uint64_t sum_block, const std::vector<uint64_t>& sums,
                   uint64_t* first_bad) {
  uint64_t bad = 0;
  for (uint64_t i = 0, at = 0; at < bytes.size(); ++i, at += sum_block) {
    const auto block = bytes.subspan(at, std::min<uint64_t>(sum_block, bytes.size() - at));
    if (BlockSum(block, sum_block) != sums[i]) {
      if (bad == 0 && first_bad != nullptr) *first_bad = i;
      ++bad;
    }
  }
  return bad;
}

// The next `length` bytes of the segments `out`, from segment `seg` at `skip` (both advanced).
std::vector<iovec> Slice(const std::vector<iovec>& out, size_t& seg, uint64_t& skip, uint64_t length) {
  std::vector<iovec> slice;
  while (length > 0) {
    while (out[seg].iov_len == skip) {
      ++seg;
      skip = 0;
    }
    const uint64_t take = std::min<uint64_t>(length, out[seg].iov_len - skip);
    slice.push_back({static_cast<char*>(out[seg].iov_base) + skip, take});
    skip += take;
    length -= take;
  }
  return slice;
}

// The blocks of the segments `placed` (blocks of B from their start, the last may be shorter)
// whose sums differ; a block cut by a segment boundary is hashed across it.
uint64_t BadPlacedBlocks(const std::vector<iovec>& placed, uint64_t sum_block, const std::vector<uint64_t>& sums,
                         uint64_t* first_bad) {
  uint64_t bad = 0, block = 0;
  std::vector<std::span<const char>> pieces;
  size_t seg = 0;
  uint64_t skip = 0;
  while (seg < placed.size()) {
    pieces.clear();
    for (uint64_t need = sum_block; need > 0 && seg < placed.size();) {
      const uint64_t take = std::min<uint64_t>(need, placed[seg].iov_len - skip);
      pieces.emplace_back(static_cast<const char*>(placed[seg].iov_base) + skip, take);
      need -= take;
      skip += take;
      if (skip == placed[seg].iov_len) {
        ++seg;
        skip = 0;
      }
    }
    if (BlockSumOfPieces(pieces, sum_block) != sums[block]) {
      if (bad == 0 && first_bad != nullptr) *first_bad = block;
      ++bad;
    }
    ++block;
  }
  return bad;
}

// Copies `length` bytes from the segments `from`, `skip` bytes in, to the segments `to`,
// leaving out the stretches that are the same memory (read in place).
void CopyPlaced(const std::vector<iovec>& from, uint64_t skip, const std::vector<iovec>& to, uint64_t length) {
  size_t fi = 0, ti = 0;
  uint64_t fo = skip, to_at = 0;
  while (length > 0) {
    while (from[fi].iov_len == fo) {
      ++fi;
      fo = 0;
    }
    while (to[ti].iov_len == to_at) {
      ++ti;
      to_at = 0;
    }
    const uint64_t n = std::min({length, from[fi].iov_len - fo, to[ti].iov_len - to_at});
    const char* src = static_cast<const char*>(from[fi].iov_base) + fo;
    char* dst = static_cast<char*>(to[ti].iov_base) + to_at;
    if (src != dst) std::memcpy(dst, src, n);
    fo += n;
    to_at += n;
    length -= n;
  }
}

}  // namespace

Result<UnitSums> ParityReader::OpenSums(const DiskSet& disks, const StripeManifest& m, uint32_t d,
                                        const ParityPart& p) {
  auto backend = LocalDiskBackend::Open(disks.path(d));
  if (!backend.ok()) return Error(EIO, "sums: " + backend.error().message());
  auto opened = UnitSums::Open(**backend, {m.file_id, d, m.layout, m.sum_block, 0}, p.writable);
  if (!opened.ok()) return Error(EIO, "sums: " + opened.error().message());
  struct stat st;
  if (::fstat(p.fd, &st) != 0) return Error::FromErrno("stat " + p.path);
  GRAPHFS_RETURN_IF_ERROR(opened->CheckPartLength(static_cast<uint64_t>(st.st_size)));
  return opened;
}

Result<std::unique_ptr<ParityReader>> ParityReader::Open(const DiskSet& disks, IoEngine* io, const StripeManifest& m,
                                                         const StripeMap& map, std::vector<ParityPart> parts,
                                                         uint64_t max_run_bytes,
                                                         std::shared_ptr<RowSharePool> row_share) {
  const uint32_t n = map.disks();
  if (parts.size() != n) return Error(EINVAL, "parity reader: " + std::to_string(parts.size()) + " parts for " + std::to_string(n) + " disks");
  std::vector<std::optional<UnitSums>> sums(n);
  for (uint32_t d = 0; d < n; ++d) {
    ParityPart& p = parts[d];
    if (!p.lost.empty()) continue;
    auto opened = OpenSums(disks, m, d, p);
    if (opened.ok()) {
      sums[d].emplace(std::move(*opened));
      continue;
    }
    p.lost = opened.error().message();
  }
  std::unique_ptr<ParityReader> r(new ParityReader(disks, io, m, map, std::move(parts), max_run_bytes));
  if (map.parity() > 0) {
    auto codec = ParityCodec::Create(n, map.parity());
    if (!codec.ok()) return codec.error().Wrap("striped file " + m.file_id);
    r->codec_.emplace(std::move(*codec));
  }
  // More lost disks than parity: every read of some row would fail; say so now, naming them.
  // A stale disk counts: its writes are those of a lost disk, and any row it missed would be.
  std::vector<uint32_t> lost;
  std::string why;
  for (uint32_t d = 0; d < n; ++d) {
    const ParityPart& p = r->parts_->at(d);
    if (p.lost.empty() && !p.stale) continue;
    lost.push_back(d);
    why += (why.empty() ? "" : "; ") + std::string("disk ") + std::to_string(d) + ": " +
           (p.lost.empty() ? p.stale->why() : p.lost);
  }
  if (lost.size() > map.parity()) {
    std::string names;
    for (uint32_t d : lost) names += (names.empty() ? "" : ", ") + std::to_string(d);
    return Error(EIO, "striped file " + m.file_id + ": disk" + (lost.size() == 1 ? " " : "s ") + names +
                          " lost (" + why + "), parity " + std::to_string(map.parity()));
  }
  r->sums_ = std::make_unique<SumsCache>(std::move(sums), map.unit(), m.sum_block);
  if (r->codec_ && !lost.empty()) {
    if (row_share == nullptr) row_share = std::make_shared<RowSharePool>(kRowShareBytes);
    r->share_ = std::make_unique<RowShare>(m.sum_block, std::move(row_share));
  }
  return r;
}

BufferPool& ParityReader::ScratchPool() {
  // Never destroyed: a read finishing on an I/O worker while the process exits still gives its
  // scratch back; the idle buffers go with the process.
  static BufferPool* pool = new BufferPool(kScratchIdleBytes);
  return *pool;
}

Status ParityReader::AdoptDisk(uint32_t disk, ParityPart part) { return Adopt(disk, std::move(part), false); }

Status ParityReader::AdoptStaleDisk(uint32_t disk, ParityPart part) {
  if (part.stale == nullptr)
    return Error(EINVAL, "striped file " + file_id_ + ", disk " + std::to_string(disk) + ": taken back stale without its rows");
  return Adopt(disk, std::move(part), true);
}

Status ParityReader::Adopt(uint32_t disk, ParityPart part, bool stale) {
  if (disk >= map_.disks()) return Error(EINVAL, "disk " + std::to_string(disk) + " is not in the set");
  auto sums = OpenSums(set_, manifest_, disk, part);
  if (!sums.ok()) return sums.error().Wrap("striped file " + file_id_ + ", disk " + std::to_string(disk));
  // The sums first: a read that finds the disk present finds its sums too.
  sums_->Adopt(disk, std::move(*sums));
  std::lock_guard<std::mutex> lock(parts_mu_);
  auto parts = std::make_shared<PartList>(*parts_);
  part.lost.clear();
  if (!stale) part.stale = nullptr;
  (*parts)[disk] = std::move(part);
  parts_ = std::move(parts);
  // The blocks degraded reads share (share_) stay for the reads planned before, which may await
  // them; reads planned from now on rebuild nothing on this disk and claim none.
  return Status::Ok();
}

bool ParityReader::degraded() const {
  if (share_ == nullptr) return false;
  const std::shared_ptr<const PartList> parts = Parts();
  return std::any_of(parts->begin(), parts->end(), [](const ParityPart& p) { return !p.lost.empty() || p.stale; });
}

std::string ParityReader::lost(uint32_t disk) const {
  const std::shared_ptr<const PartList> parts = Parts();
  const ParityPart& p = parts->at(disk);
  return p.lost.empty() && p.stale ? p.stale->why() : p.lost;
}

void ParityReader::MarkStale(uint64_t first, uint64_t end) {
  const std::shared_ptr<const PartList> parts = Parts();
  for (const ParityPart& p : *parts)
    if (p.stale) p.stale->Mark(first, end);
}

bool ParityReader::DegradedRow(const PartList& parts, uint64_t row) const {
  for (uint32_t s = 0; s < map_.data_units(); ++s)
    if (!parts[map_.SlotDisk(row, s)].LostIn(row).empty()) return true;
  return false;
}

int ParityReader::ReadFd(const PartList& parts, uint32_t disk, bool aligned) {
  const ParityPart& p = parts[disk];
  return aligned && p.direct >= 0 ? p.direct : p.fd;
}

Result<std::unique_ptr<ParityRead>> ParityReader::Plan(std::vector<ParityTarget> targets, bool urgent) {
  // Sums rewritten behind this file's back (a scrub run by the daemon): read them again.
  if (const uint64_t epoch = set_.sums_epoch(); sums_epoch_.load(std::memory_order_acquire) != epoch) {
    sums_->Forget();
    sums_epoch_.store(epoch, std::memory_order_release);
  }
  std::unique_ptr<ParityRead> read(new ParityRead(this, Parts()));
  const PartList& parts = read->parts();
  const uint64_t unit = map_.unit(), b = sum_block_;
  const uint64_t stored_size = stored_size_.load(std::memory_order_acquire);
  for (const ParityTarget& t : targets) {
    if (t.length == 0) continue;
    size_t seg = 0;
    uint64_t skip = 0;
    for (const StripeExtent& e : map_.Split(t.offset, t.length)) {
      ParityRead::Piece p;
      p.row = e.disk_offset / unit;
      p.disk = e.disk;
      p.slot = map_.DiskSlot(p.row, e.disk);
      const uint64_t at = e.disk_offset % unit;
      const uint64_t end = std::min(RoundUp(at + e.length, b), map_.RowUnitLength(p.row, p.slot, stored_size));
      p.begin = at / b * b;
      p.length = end - p.begin;
      p.skip = at - p.begin;
      p.want = e.length;
      p.out = Slice(t.out, seg, skip, e.length);
      if (p.out.size() == 1 && p.skip == 0 && p.length == p.want) {
        p.bytes = static_cast<char*>(p.out[0].iov_base);  // read in place: nothing to copy
        p.out.clear();
      }
      read->pieces_.push_back(std::move(p));
    }
  }
  // Pieces on disks this read cannot use: a lost part, or a disk the engine reads around.
  std::vector<int8_t>& avoid = read->avoided_;  // asked once per read: a probe is taken once
  avoid.assign(map_.disks(), -1);
  for (ParityRead::Piece& p : read->pieces_) {
    if (std::string why = parts[p.disk].LostIn(p.row); !why.empty()) {
      p.failed = std::move(why);
      continue;
    }
    if (avoid[p.disk] < 0) avoid[p.disk] = io_->AvoidReads(p.disk) ? 1 : 0;
    if (avoid[p.disk] == 1) p.failed = "avoided (its reads returned errors; probed again each second)";
  }
  read->PlanSources(stored_size);
  for (ParityRead::Piece& p : read->pieces_) p.reads = {{0, p.length}};
  // The rest is read in place in the caller's segments where it can be, else into scratch.
  uint64_t scratch = 0;
  for (ParityRead::Piece& p : read->pieces_) {
    if (p.bytes != nullptr) continue;
    if (auto part = read->Place(p)) {
      scratch += *part;
      continue;
    }
    scratch += RoundUp(p.length, kDirectAlign);
  }
  if (scratch > 0) {
    read->scratch_ = ScratchPool().Take(scratch);
    if (!read->scratch_.ok()) return read->Failed("no memory for " + std::to_string(scratch) + " bytes of blocks");
    char* next = read->scratch_.data();
    for (ParityRead::Piece& p : read->pieces_) {
      for (iovec& v : p.placed) {
        if (v.iov_base != nullptr) continue;
        v.iov_base = next;
        next += RoundUp(v.iov_len, kDirectAlign);
      }
      if (p.bytes != nullptr || !p.placed.empty()) continue;
      p.bytes = next;
      next += RoundUp(p.length, kDirectAlign);
    }
  }

  // A degraded row's blocks that another read left here or has in flight are not read again.
  if (share_) read->ClaimShared(stored_size);

  // Runs: what the pieces of usable disks read (a claimed piece its runs of blocks nobody else
  // has, row_share.h), in disk order, touching ones merged.
  struct Stretch {
    size_t piece;
    uint64_t skip, length;  // of the piece's blocks
  };
  std::vector<Stretch> order;
  uint64_t in_place = 0, staged = 0;
  const uintptr_t scratch_begin = reinterpret_cast<uintptr_t>(read->scratch_.data());
  const uintptr_t scratch_end = scratch_begin + read->scratch_.size();
  auto in_scratch = [&](const void* at) {
    return reinterpret_cast<uintptr_t>(at) >= scratch_begin && reinterpret_cast<uintptr_t>(at) < scratch_end;
  };
  for (size_t i = 0; i < read->pieces_.size(); ++i) {
    const ParityRead::Piece& p = read->pieces_[i];
    if (!p.failed.empty() || p.shared) continue;
    for (const auto& [skip, length] : p.reads) {
      order.push_back({i, skip, length});
      if (p.placed.empty()) (in_scratch(p.bytes) ? staged : in_place) += length;
    }
    for (const iovec& v : p.placed) (in_scratch(v.iov_base) ? staged : in_place) += v.iov_len;
  }
  in_place_bytes_.fetch_add(in_place, std::memory_order_relaxed);
  staged_bytes_.fetch_add(staged, std::memory_order_relaxed);
  auto disk_offset = [&](const Stretch& s) {
    const ParityRead::Piece& p = read->pieces_[s.piece];
    return p.row * unit + p.begin + s.skip;
  };
  std::stable_sort(order.begin(), order.end(), [&](const Stretch& a, const Stretch& c) {
    const uint32_t da = read->pieces_[a.piece].disk, dc = read->pieces_[c.piece].disk;
    return da != dc ? da < dc : disk_offset(a) < disk_offset(c);
  });
  auto add = [](IoRun& run, const ParityRead::Piece& p, const Stretch& s) {
    if (p.placed.empty()) {
      run.iov.push_back({p.bytes + s.skip, s.length});
    } else {
      run.iov.insert(run.iov.end(), p.placed.begin(), p.placed.end());  // read whole: one stretch
    }
  };
  for (const Stretch& s : order) {
    const ParityRead::Piece& p = read->pieces_[s.piece];
    const size_t segments = p.placed.empty() ? 1 : p.placed.size();
    if (!read->runs_.empty()) {
      IoRun& last = read->runs_.back();
      if (last.disk == p.disk && last.offset + last.Length() == disk_offset(s) &&
          last.Length() + s.length <= max_run_bytes_ && last.iov.size() + segments <= kMaxIov) {
        add(last, p, s);
        if (read->run_pieces_.back().back() != s.piece) read->run_pieces_.back().push_back(s.piece);
        continue;
      }
    }
    IoRun run;
    run.kind = IoKind::kRead;
    run.disk = p.disk;
    run.offset = disk_offset(s);
    run.urgent = urgent;
    add(run, p, s);
    read->runs_.push_back(std::move(run));
    read->run_pieces_.push_back({s.piece});
  }
  for (IoRun& run : read->runs_) {
    bool aligned = Aligned(run.offset);
    for (const iovec& v : run.iov)
      aligned = aligned && Aligned(reinterpret_cast<uintptr_t>(v.iov_base)) && Aligned(v.iov_len);
    run.fd = ReadFd(parts, run.disk, aligned);
  }

  return read;
}

// The rows of pieces known to be unreadable before anything is read (a lost part, an avoided
// disk) are rebuilt from the same range of other units of their row: those sources are read
// with the rest of the read, in parallel on their disks, instead of one after another once it
// is done (Repair then finds them held). A source the read covers already is not read twice.
void ParityRead::PlanSources(uint64_t stored_size) {
  ParityReader& f = *file_;
  if (!f.codec_) return;
  const StripeMap& map = f.map_;
  const uint64_t b = f.sum_block_;
  struct Want {
    uint64_t row, begin, length;
    std::vector<uint32_t> slots;
  };
  std::vector<Want> wants;
  for (const Piece& p : pieces_) {
    if (p.failed.empty()) continue;
    const uint64_t end = std::min(RoundUp(p.begin + p.length, b), map.RowUnitLength(p.row, 0, stored_size));
    auto it = std::find_if(wants.begin(), wants.end(), [&](const Want& w) {
      return w.row == p.row && w.begin == p.begin && w.length == end - p.begin;
    });
    if (it == wants.end()) it = wants.insert(wants.end(), Want{p.row, p.begin, end - p.begin, {}});
    if (std::find(it->slots.begin(), it->slots.end(), p.slot) == it->slots.end()) it->slots.push_back(p.slot);
  }
  for (const Want& w : wants) {
    std::vector<uint32_t> failed;
    for (uint32_t s = 0; s < map.disks(); ++s) {
      const uint32_t disk = map.SlotDisk(w.row, s);
      if (!parts()[disk].LostIn(w.row).empty() || avoided_[disk] == 1) failed.push_back(s);
    }
    auto plan = PlanRowRepair(map, stored_size, w.row, w.slots, failed, w.begin, w.length);
    if (!plan.ok()) continue;  // too many failed: Repair says so, naming them
    for (const RowSource& src : plan->sources) {
      if (src.read_length == 0) continue;
      // A piece of the same unit that this read reads anyway serves as the source, widened to
      // its range when it holds part of it: two pieces of one unit would read the blocks they
      // share twice (the mount's extent of a lost unit starts with the previous unit's last
      // block, a source of the rebuild too).
      const uint64_t src_end = w.begin + src.read_length;
      auto have = std::find_if(pieces_.begin(), pieces_.end(), [&](const Piece& p) {
        return p.failed.empty() && p.row == w.row && p.slot == src.slot && p.begin <= src_end &&
               w.begin <= p.begin + p.length;
      });
      if (have != pieces_.end()) {
        Widen(*have, w.begin, src_end);
        continue;
      }
      Piece s;
      s.row = w.row;
      s.slot = src.slot;
      s.disk = src.disk;
      s.begin = w.begin;
      s.length = src.read_length;
      s.source_only = true;
      pieces_.push_back(std::move(s));  // a source only: no bytes of it are served
    }
  }
}

void ParityRead::Widen(Piece& p, uint64_t begin, uint64_t end) {
  const uint64_t new_begin = std::min(p.begin, begin);
  const uint64_t new_end = std::max(p.begin + p.length, end);
  if (new_begin == p.begin && new_end == p.begin + p.length) return;
  if (p.bytes != nullptr) {
    p.out = {{p.bytes, p.want}};  // was to be read in place: its wanted bytes go there after all
    p.bytes = nullptr;
  }
  p.skip += p.begin - new_begin;
  p.begin = new_begin;
  p.length = new_end - new_begin;
  p.also_source = true;
}

void ParityRead::ClaimShared(uint64_t stored_size) {
  ParityReader& f = *file_;
  const StripeMap& map = f.map_;
  std::vector<RowShare::Want> wants;
  for (size_t i = 0; i < pieces_.size(); ++i) {
    const Piece& p = pieces_[i];
    // Parity units serve rebuilds only, and a lost disk's pieces are rebuilt here.
    if (!p.failed.empty() || p.slot >= map.data_units() || !f.DegradedRow(parts(), p.row)) continue;
    wants.push_back({p.row, p.slot, p.begin, p.length, map.RowUnitLength(p.row, p.slot, stored_size), p.bytes});
    want_pieces_.push_back(i);
  }
  if (wants.empty()) return;
  undelivered_.assign(pieces_.size(), 0);
  const RowShare::Claimed claimed = f.share_->Claim(this, wants, this);
  for (size_t w = 0; w < wants.size(); ++w) {
    Piece& p = pieces_[want_pieces_[w]];
    p.shared = claimed.got[w] != RowShare::Got::kRead;
    p.claimed = claimed.got[w] == RowShare::Got::kRead;
    if (p.claimed) {
      p.reads.clear();
      for (const RowShare::ReadRange& r : claimed.read[w]) p.reads.emplace_back(r.begin - p.begin, r.length);
    }
  }
  if (claimed.awaited == 0) return;
  std::lock_guard<std::mutex> lock(wait_mu_);
  awaited_ = claimed.awaited;
  pending_ += static_cast<int64_t>(claimed.awaited);
}

void ParityRead::Arrived(size_t want, bool delivered) {
  std::unique_lock<std::mutex> lock(wait_mu_);  // two reads may fail blocks of one piece
  if (!delivered) undelivered_[want_pieces_[want]] = 1;
  --pending_;
  FireIfDone(std::move(lock));
}

void ParityRead::Arrive() {
  std::unique_lock<std::mutex> lock(wait_mu_);
  --pending_;
  FireIfDone(std::move(lock));
}

void ParityRead::FireIfDone(std::unique_lock<std::mutex> lock) {
  if (!armed_ || pending_ != 0) return;
  std::function<void()> done = std::move(done_);
  done_ = nullptr;
  if (!done) {
    wait_cv_.notify_all();  // under the lock: the waiter may free this read once it has it
    return;
  }
  lock.unlock();
  done();  // may free this read
}

void ParityRead::ReadUndelivered(SourceReads reads) {
  ParityReader& f = *file_;
  IoEngine* io = f.io_;
  const uint64_t unit = f.map_.unit();
  std::vector<size_t> todo;
  for (size_t i = 0; i < undelivered_.size(); ++i) {
    if (undelivered_[i] == 0) continue;
    pieces_[i].shared = false;
    todo.push_back(i);
  }
  std::vector<int> errors(todo.size(), 0);
  if (reads == SourceReads::kEngine) {
    std::vector<IoRun> runs(todo.size());
    for (size_t k = 0; k < todo.size(); ++k) {
      const Piece& p = pieces_[todo[k]];
      IoRun& run = runs[k];
      run.kind = IoKind::kRead;
      run.disk = p.disk;
      run.offset = p.row * unit + p.begin;
      run.urgent = true;
      run.iov.push_back({p.bytes, p.length});
      run.fd = f.ReadFd(parts(), p.disk, Aligned(run.offset) && Aligned(p.length) &&
                                    Aligned(reinterpret_cast<uintptr_t>(p.bytes)));
    }
    if (!runs.empty()) {
      IoBatch batch;
      (void)io->SubmitAndWait(runs, batch);  // each run's own error is what counts
    }
    for (size_t k = 0; k < runs.size(); ++k) errors[k] = runs[k].error;
  } else {
    for (size_t k = 0; k < todo.size(); ++k) {
      const Piece& p = pieces_[todo[k]];
      if (int fault = io->fault(p.disk); fault != 0) {
        errors[k] = fault;
        continue;
      }
      auto n = ReadFull(parts()[p.disk].fd, p.bytes, p.length, p.row * unit + p.begin, "read");
      if (!n.ok()) {
        errors[k] = n.error().code();
        continue;
      }
      std::memset(p.bytes + *n, 0, p.length - *n);  // past the part's end: a hole, which its sums tell
      io->counters(p.disk).bytes_read.fetch_add(*n, std::memory_order_relaxed);
    }
  }
  for (size_t k = 0; k < todo.size(); ++k) {
    Piece& p = pieces_[todo[k]];
    if (errors[k] == 0) {
      io->NoteReadOk(p.disk);
      continue;
    }
    io->NoteReadError(p.disk);
    p.read_error = true;
    p.failed = Error::FromErrno(errors[k], "read of " + parts()[p.disk].path).message();
  }
}

void ParityRead::GiveUpClaims() {
  for (Piece& p : pieces_) {
    if (!p.claimed) continue;
    p.claimed = false;
    file_->share_->Deliver(this, p.row, p.slot, p.begin, p.length, nullptr, false);
  }
}

std::optional<uint64_t> ParityRead::Place(Piece& p) {
  ParityReader& f = *file_;
  // A degraded row's blocks are shared with other reads, a failed piece is rebuilt, a source
  // serves no bytes: all of those want their blocks in one stretch.
  if (!p.failed.empty() || p.source_only || (f.share_ && f.DegradedRow(parts(), p.row))) return std::nullopt;
  const uint64_t b = f.sum_block_;
  const uint64_t at = p.begin + p.skip, want_end = at + p.want, end = p.begin + p.length;
  // The wanted whole blocks: [whole_begin, whole_end); the last block is whole when the piece
  // ends where the unit does.
  const uint64_t whole_begin = RoundUp(at, b);
  const uint64_t whole_end = want_end == end ? end : want_end / b * b;
  if (whole_begin >= whole_end) return std::nullopt;
  size_t seg = 0;
  uint64_t skip = 0;
  (void)Slice(p.out, seg, skip, whole_begin - at);
  std::vector<iovec> middle = Slice(p.out, seg, skip, whole_end - whole_begin);
  if (middle.size() + 2 > kMaxIov) return std::nullopt;
  uint64_t scratch = 0;
  if (whole_begin > p.begin) {
    p.placed.push_back({nullptr, whole_begin - p.begin});  // scratch, given at the end of Plan
    scratch += RoundUp(whole_begin - p.begin, kDirectAlign);
  }
  p.placed.insert(p.placed.end(), middle.begin(), middle.end());
  if (end > whole_end) {
    p.placed.push_back({nullptr, end - whole_end});
    scratch += RoundUp(end - whole_end, kDirectAlign);
  }
  return scratch;
}

Status ParityRead::Gather(Piece& p) {
  if (p.placed.empty()) return Status::Ok();
  AlignedBuffer stretch(RoundUp(p.length, kDirectAlign));
  if (!stretch.ok()) return Failed("no memory for " + std::to_string(p.length) + " bytes of blocks");
  char* to = stretch.data();
  for (const iovec& v : p.placed) {
    std::memcpy(to, v.iov_base, v.iov_len);
    to += v.iov_len;
  }
  p.bytes = stretch.data();
  p.placed.clear();
  gathered_.push_back(std::move(stretch));
  return Status::Ok();
}

void ParityRead::Submit(std::function<void()> done) {
  submitted_ = true;
  if (awaited_ > 0) {
    // Done once the runs and the blocks awaited from other reads are in, in whichever order.
    has_done_ = static_cast<bool>(done);
    std::vector<IoRun*> ptrs;
    for (IoRun& r : runs_) {
      r.batch = &batch_;
      ptrs.push_back(&r);
    }
    {
      std::lock_guard<std::mutex> lock(wait_mu_);
      done_ = std::move(done);
      if (!ptrs.empty()) ++pending_;
    }
    if (!ptrs.empty()) {
      batch_.Add(static_cast<int>(ptrs.size()));
      batch_.OnDone([this] { Arrive(); });
      file_->io_->Submit(ptrs.data(), ptrs.size());  // not armed: this read stays till FireIfDone
    }
    std::unique_lock<std::mutex> lock(wait_mu_);
    armed_ = true;
    FireIfDone(std::move(lock));  // may free this read
    return;
  }
  if (runs_.empty()) {
    waited_ = true;
    if (done) done();  // may free this read
    return;
  }
  has_done_ = static_cast<bool>(done);
  batch_.Add(static_cast<int>(runs_.size()));
  if (done) batch_.OnDone(std::move(done));
  std::vector<IoRun*> ptrs;
  ptrs.reserve(runs_.size());
  for (IoRun& r : runs_) {
    r.batch = &batch_;
    ptrs.push_back(&r);
  }
  IoEngine* io = file_->io_;
  io->Submit(ptrs.data(), ptrs.size());  // with `done`, this read may be gone once this returns
}

ParityRead::~ParityRead() {
  GiveUpClaims();
  if (!submitted_ && awaited_ > 0) {
    // Planned and never submitted: other reads may still copy blocks into its memory.
    std::unique_lock<std::mutex> lock(wait_mu_);
    armed_ = true;
    wait_cv_.wait(lock, [&] { return pending_ == 0; });
  }
  if (submitted_ && !has_done_) Wait();
  ParityReader::ScratchPool().Give(std::move(scratch_));
}

void ParityRead::Wait() {
  if (waited_) return;
  waited_ = true;
  if (awaited_ > 0) {
    std::unique_lock<std::mutex> lock(wait_mu_);
    wait_cv_.wait(lock, [&] { return armed_ && pending_ == 0; });
    return;
  }
  if (!runs_.empty()) batch_.Wait();
}

Error ParityRead::Failed(const std::string& why) const {
  return Error(EIO, "read of striped file " + file_->file_id_ + ": " + why);
}

Status ParityRead::Verify(Piece& p) {
  const uint64_t b = file_->sum_block_;
  auto sums = file_->sums_->Get(p.disk, p.row, p.begin / b, RoundUp(p.length, b) / b);
  if (!sums.ok()) {
    p.failed = "sums: " + sums.error().message();
    return Status::Ok();
  }
  uint64_t first_bad = 0;
  const uint64_t bad = p.placed.empty() ? BadBlocks({p.bytes, p.length}, b, *sums, &first_bad)
                                        : BadPlacedBlocks(p.placed, b, *sums, &first_bad);
  if (bad == 0) return Status::Ok();
  file_->io_->counters(p.disk).checksum_errors.fetch_add(bad, std::memory_order_relaxed);
  GRAPHFS_RETURN_IF_ERROR(Gather(p));
  p.bad_sum = true;
  p.as_read.assign(p.bytes, p.length);
  p.failed = std::to_string(bad) + " block" + (bad == 1 ? "" : "s") + " of row " + std::to_string(p.row) +
             "'s unit failed their checksum (the first: block " + std::to_string(p.begin / b + first_bad) + ")";
  return Status::Ok();
}

Status ParityRead::Finish(SourceReads reads) {
  IoEngine* io = file_->io_;
  for (size_t r = 0; r < runs_.size(); ++r) {
    const IoRun& run = runs_[r];
    if (run.error == 0) {
      io->NoteReadOk(run.disk);
      continue;
    }
    io->NoteReadError(run.disk);
    const std::string why = Error::FromErrno(run.error, "read of " + parts()[run.disk].path).message();
    for (size_t i : run_pieces_[r]) {
      pieces_[i].read_error = true;
      pieces_[i].failed = why;
    }
  }
  if (awaited_ > 0) ReadUndelivered(reads);
  bool failed = false;
  for (Piece& p : pieces_) {
    if (p.failed.empty() && !p.shared) GRAPHFS_RETURN_IF_ERROR(Verify(p));
    p.verified = p.failed.empty();
    failed = failed || !p.verified;
  }
  // Repair takes its sources and rebuilds into stretches; a read that must rebuild is rare.
  if (failed)
    for (Piece& p : pieces_) GRAPHFS_RETURN_IF_ERROR(Gather(p));
  if (file_->share_) Share();
  if (failed) GRAPHFS_RETURN_IF_ERROR(Repair(reads));
  for (const Piece& p : pieces_) {
    if (!p.placed.empty()) {
      CopyPlaced(p.placed, p.skip, p.out, p.want);  // the partly wanted blocks; the rest is there
      continue;
    }
    const char* from = p.bytes + p.skip;
    for (const iovec& v : p.out) {
      std::memcpy(v.iov_base, from, v.iov_len);
      from += v.iov_len;
    }
  }
  return Status::Ok();
}

// Delivers the data blocks of degraded rows this read claimed: to the reads waiting for them,
// and, verified and awaited by no one yet, kept for the other read of their row that will want
// them — a reader's for the rebuild of the row's lost unit (unless this read rebuilt the whole
// of that range itself), a rebuild's sources for the reader of those units. Blocks that failed
// go to no one: their waiters read them.
void ParityRead::Share() {
  for (Piece& p : pieces_) {
    if (!p.claimed) continue;
    p.claimed = false;
    const bool keep = p.verified && (p.source_only || p.also_source || !RebuiltWhole(p.row, p.begin, p.begin + p.length));
    file_->share_->Deliver(this, p.row, p.slot, p.begin, p.length, p.verified ? p.bytes : nullptr, keep);
  }
}

// The mount's extents are not cut where the stripe units are: the read of the unit after a lost
// one rebuilds the lost unit's last block(s) as well, yet the read of the rest of the lost unit
// still wants all of the row's blocks — overlapping a rebuilt range is not covering it (before, a
// read that overlapped one dropped its blocks, and the unit after each lost one was read twice:
// docs/parity.md, "Reads").
bool ParityRead::RebuiltWhole(uint64_t row, uint64_t begin, uint64_t end) const {
  const ParityReader& f = *file_;
  const StripeMap& map = f.map_;
  const uint64_t stored_size = f.stored_size_.load(std::memory_order_acquire);
  for (uint32_t s = 0; s < map.data_units(); ++s) {
    if (parts()[map.SlotDisk(row, s)].LostIn(row).empty()) continue;
    // Past a short lost unit's end its bytes are zeros: nothing there to rebuild.
    const uint64_t to = std::min(end, map.RowUnitLength(row, s, stored_size));
    std::vector<std::pair<uint64_t, uint64_t>> rebuilt;
    for (const Piece& q : pieces_)
      if (!q.failed.empty() && q.row == row && q.slot == s) rebuilt.emplace_back(q.begin, q.begin + q.length);
    std::sort(rebuilt.begin(), rebuilt.end());
    uint64_t at = begin;
    for (const auto& [b, e] : rebuilt) {
      if (b > at) break;
      at = std::max(at, e);
    }
    if (at < to) return false;
  }
  return true;
}

// The failed pieces of one row and one range of its units: rebuilt from one plan.
struct ParityRead::Group {
  uint64_t row = 0, begin = 0, length = 0;
  std::vector<uint32_t> slots;               // to rebuild
  std::vector<std::vector<size_t>> pieces;   // per slot: the pieces that want it (the first gets the bytes)
  std::vector<uint32_t> failed;              // slots not to read
  std::map<uint32_t, std::string> why;       // the failed slots', for the error
  RowRepairPlan plan;
  std::vector<std::span<char>> sources;      // plan.sources' bytes: in `owned`, or a piece's
  std::vector<AlignedBuffer> owned;
  bool source_failed = false;
  void Fail(uint32_t slot, std::string reason) {
    if (std::find(failed.begin(), failed.end(), slot) == failed.end()) failed.push_back(slot);
    why[slot] = std::move(reason);
  }
};

Status ParityRead::Repair(SourceReads reads) {
  ParityReader& f = *file_;
  IoEngine* io = f.io_;
  const StripeMap& map = f.map_;
  const uint64_t b = f.sum_block_;
  const uint64_t stored_size = f.stored_size_.load(std::memory_order_acquire);
  if (!f.codec_) {
    for (const Piece& p : pieces_)
      if (!p.failed.empty())
        return Failed("disk " + std::to_string(p.disk) + " (" + parts()[p.disk].path + "): " + p.failed +
                      "; the file has no parity to rebuild it from");
  }

  std::vector<Group> groups;
  std::map<std::tuple<uint64_t, uint64_t, uint64_t>, size_t> index;
  for (size_t i = 0; i < pieces_.size(); ++i) {
    const Piece& p = pieces_[i];
    if (p.verified) continue;
    // The range rebuilt covers whole blocks of the row's longer units too: a short last unit's
    // piece ends at its own end, but its sources are verified block by block.
    const uint64_t end = std::min(RoundUp(p.begin + p.length, b), map.RowUnitLength(p.row, 0, stored_size));
    auto [it, added] = index.try_emplace({p.row, p.begin, end - p.begin}, groups.size());
    if (added) groups.push_back({.row = p.row, .begin = p.begin, .length = end - p.begin});
    Group& g = groups[it->second];
    auto slot = std::find(g.slots.begin(), g.slots.end(), p.slot);
    if (slot == g.slots.end()) {
      g.slots.push_back(p.slot);
      g.pieces.push_back({i});
      g.why[p.slot] = p.failed;
    } else {
      g.pieces[static_cast<size_t>(slot - g.slots.begin())].push_back(i);
    }
  }
  // What else of each row is known to be bad: lost disks, and failed pieces of other ranges
  // that overlap the group's.
  for (Group& g : groups) {
    for (uint32_t s = 0; s < map.disks(); ++s) {
      const uint32_t disk = map.SlotDisk(g.row, s);
      if (std::find(g.slots.begin(), g.slots.end(), s) != g.slots.end()) continue;
      if (std::string why = parts()[disk].LostIn(g.row); !why.empty()) {
        g.Fail(s, std::move(why));
      } else if (avoided_[disk] == 1) {
        g.Fail(s, "avoided (its reads returned errors; probed again each second)");
      }
    }
    for (const Piece& p : pieces_) {
      if (p.verified || p.row != g.row || std::find(g.slots.begin(), g.slots.end(), p.slot) != g.slots.end()) continue;
      if (p.begin < g.begin + g.length && g.begin < p.begin + p.length) g.Fail(p.slot, p.failed);
    }
  }
  // Verified pieces of this read that can serve as sources without a read.
  std::unordered_multimap<uint64_t, size_t> held;
  for (size_t i = 0; i < pieces_.size(); ++i)
    if (pieces_[i].verified) held.emplace(pieces_[i].row * map.disks() + pieces_[i].slot, i);

  std::vector<size_t> open(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) open[i] = i;
  // Each round either rebuilds a group or fails one more of its slots: PlanRowRepair ends it.
  while (!open.empty()) {
    std::vector<std::pair<size_t, size_t>> to_read;  // group, source
    for (size_t gi : open) {
      Group& g = groups[gi];
      g.source_failed = false;
      auto plan = PlanRowRepair(map, stored_size, g.row, g.slots, g.failed, g.begin, g.length, g.why);
      if (!plan.ok()) return Error(plan.error().code(), "read of striped file " + f.file_id_ + ": " + plan.error().message());
      g.plan = std::move(*plan);
      g.sources.clear();
      g.owned.clear();
      for (size_t j = 0; j < g.plan.sources.size(); ++j) {
        const RowSource& src = g.plan.sources[j];
        // A piece this read holds already serves as the source: lent as it is when it covers
        // the whole range (RebuildRange only reads it then), else copied.
        const Piece* have = nullptr;
        auto range = held.equal_range(g.row * map.disks() + src.slot);
        for (auto it = range.first; it != range.second && have == nullptr; ++it) {
          const Piece& p = pieces_[it->second];
          if (src.read_length > 0 && p.begin <= g.begin && g.begin + src.read_length <= p.begin + p.length) have = &p;
        }
        if (have != nullptr && src.read_length == g.length) {
          g.sources.emplace_back(have->bytes + (g.begin - have->begin), g.length);
          continue;
        }
        g.owned.emplace_back(RoundUp(std::max<uint64_t>(g.length, 1), kDirectAlign));
        if (!g.owned.back().ok()) return Failed("no memory to rebuild row " + std::to_string(g.row));
        g.sources.emplace_back(g.owned.back().data(), g.length);
        if (src.read_length == 0) continue;
        if (have != nullptr) {
          std::memcpy(g.sources.back().data(), have->bytes + (g.begin - have->begin), src.read_length);
        } else {
          to_read.push_back({gi, j});
        }
      }
    }

    // Read the sources all at once through the disks' queues, or one by one.
    std::vector<int> errors(to_read.size(), 0);
    if (reads == SourceReads::kEngine && !to_read.empty()) {
      std::vector<IoRun> runs(to_read.size());
      for (size_t k = 0; k < to_read.size(); ++k) {
        Group& g = groups[to_read[k].first];
        const RowSource& src = g.plan.sources[to_read[k].second];
        IoRun& run = runs[k];
        run.kind = IoKind::kRead;
        run.disk = src.disk;
        run.offset = src.disk_offset;
        run.urgent = true;
        run.iov.push_back({g.sources[to_read[k].second].data(), src.read_length});
        run.fd = f.ReadFd(parts(), src.disk, Aligned(src.disk_offset) && Aligned(src.read_length));
      }
      IoBatch batch;
      (void)io->SubmitAndWait(runs, batch);  // each run's own error is what counts
      for (size_t k = 0; k < runs.size(); ++k) errors[k] = runs[k].error;
    } else {
      for (size_t k = 0; k < to_read.size(); ++k) {
        Group& g = groups[to_read[k].first];
        const RowSource& src = g.plan.sources[to_read[k].second];
        if (int fault = io->fault(src.disk); fault != 0) {
          errors[k] = fault;
          continue;
        }
        char* buf = g.sources[to_read[k].second].data();
        auto n = ReadFull(parts()[src.disk].fd, buf, src.read_length, src.disk_offset, "read");
        if (!n.ok()) {
          errors[k] = n.error().code();
          continue;
        }
        std::memset(buf + *n, 0, src.read_length - *n);  // past the part's end: a hole
        io->counters(src.disk).bytes_read.fetch_add(*n, std::memory_order_relaxed);
      }
    }
    for (size_t k = 0; k < to_read.size(); ++k) {
      Group& g = groups[to_read[k].first];
      const RowSource& src = g.plan.sources[to_read[k].second];
      if (errors[k] != 0) {
        io->NoteReadError(src.disk);
        g.Fail(src.slot, Error::FromErrno(errors[k], "read of " + parts()[src.disk].path).message());
        g.source_failed = true;
        continue;
      }
      io->NoteReadOk(src.disk);
      auto sums = f.sums_->Get(src.disk, g.row, g.begin / b, RoundUp(src.read_length, b) / b);
      if (!sums.ok()) {
        g.Fail(src.slot, "sums: " + sums.error().message());
        g.source_failed = true;
        continue;
      }
      const std::span<const char> bytes(g.sources[to_read[k].second].data(), src.read_length);
      if (const uint64_t bad = BadBlocks(bytes, b, *sums, nullptr); bad > 0) {
        io->counters(src.disk).checksum_errors.fetch_add(bad, std::memory_order_relaxed);
        g.Fail(src.slot, std::to_string(bad) + " block" + (bad == 1 ? "" : "s") + " failed their checksum");
        g.source_failed = true;
      }
    }

    std::vector<size_t> again;
    for (size_t gi : open) {
      Group& g = groups[gi];
      if (g.source_failed) {
        again.push_back(gi);
        continue;
      }
      std::vector<std::span<char>> sources, out;
      std::vector<std::string> longer;  // for a short unit's piece: the range past its end is zeros
      longer.reserve(g.pieces.size());
      sources = g.sources;
      for (const auto& ps : g.pieces) {
        if (pieces_[ps[0]].length == g.length) {
          out.emplace_back(pieces_[ps[0]].bytes, g.length);
        } else {
          out.emplace_back(longer.emplace_back(g.length, '\0'));
        }
      }
      Status rebuilt = RebuildRange(*f.codec_, g.plan, sources, out);
      if (!rebuilt.ok()) return Failed(rebuilt.error().message());
      for (size_t j = 0; j < g.pieces.size(); ++j) {
        const auto& ps = g.pieces[j];
        Piece& first = pieces_[ps[0]];
        if (out[j].data() != first.bytes) std::memcpy(first.bytes, out[j].data(), first.length);
        GRAPHFS_RETURN_IF_ERROR(AfterRebuild(first));
        for (size_t k = 1; k < ps.size(); ++k) std::memcpy(pieces_[ps[k]].bytes, first.bytes, first.length);
      }
    }
    open = std::move(again);
  }
  return Status::Ok();
}

Status ParityRead::AfterRebuild(Piece& p) {
  ParityReader& f = *file_;
  IoEngine* io = f.io_;
  DiskCounters& c = io->counters(p.disk);
  c.rebuilt_bytes.fetch_add(p.length, std::memory_order_relaxed);
  const ParityPart& part = parts()[p.disk];
  // A lost disk's bytes are served as rebuilt: their sources were verified. So are a stale disk's
  // in a row it missed: its sums there are as old as its bytes, and the resync rewrites both.
  if (!part.LostIn(p.row).empty() || !f.sums_->has(p.disk)) return Status::Ok();
  const uint64_t b = f.sum_block_;
  const uint64_t first_block = p.begin / b, blocks = RoundUp(p.length, b) / b;
  auto sums = f.sums_->Get(p.disk, p.row, first_block, blocks);
  if (!sums.ok()) return Status::Ok();
  const std::span<const char> rebuilt(p.bytes, p.length);
  const uint64_t bad = BadBlocks(rebuilt, b, *sums, nullptr);
  const bool can_write = part.writable && io->fault(p.disk) == 0;
  if (bad == 0) {
    // Self-healing: the disk is there and its sums agree with the parity; write the right bytes
    // back where the bad ones were (a bad sector is remapped by the write).
    if (!(p.bad_sum || p.read_error) || !can_write) return Status::Ok();
    uint64_t healed = blocks;
    if (p.bad_sum) {
      healed = 0;
      for (uint64_t at = 0; at < p.length; at += b)
        healed += std::memcmp(p.as_read.data() + at, p.bytes + at, std::min(b, p.length - at)) != 0;
    }
    const uint64_t at_disk = p.row * f.map_.unit() + p.begin;
    std::lock_guard<std::mutex> lock(f.RowLock(p.row));
    // Another read may have healed these blocks since this one read them (small frames share a
    // sum block, and concurrent reads of them each find it bad): read them again under the lock,
    // and write and count only when some still differ.
    std::string now(p.length, '\0');
    if (auto n = ReadFull(part.fd, now.data(), p.length, at_disk, "read"); n.ok() && *n == p.length) {
      healed = 0;
      for (uint64_t at = 0; at < p.length; at += b)
        healed += std::memcmp(now.data() + at, p.bytes + at, std::min(b, p.length - at)) != 0;
      if (healed == 0) return Status::Ok();
    }
    Status w = WriteAll(part.fd, p.bytes, p.length, at_disk, "heal of " + part.path);
    if (w.ok()) c.healed_blocks.fetch_add(healed, std::memory_order_relaxed);
    return Status::Ok();  // a heal that fails leaves the bad bytes for the next read to rebuild
  }
  if (p.bad_sum && std::memcmp(p.as_read.data(), p.bytes, p.length) == 0) {
    // The data was right and the parity agrees with it: the stored sums were the damaged part.
    if (can_write) {
      std::lock_guard<std::mutex> lock(f.RowLock(p.row));
      if (f.sums_->Put(p.disk, p.row, first_block, BlockSums(rebuilt, b)).ok())
        c.sum_repairs.fetch_add(bad, std::memory_order_relaxed);
    }
    return Status::Ok();
  }
  return Failed("row " + std::to_string(p.row) + ": the bytes rebuilt for disk " + std::to_string(p.disk) + " (" +
                part.path + ") match neither what it holds nor its sums (" + p.failed +
                "): the row's parity or sums are stale");
}

}  // namespace graphfs
