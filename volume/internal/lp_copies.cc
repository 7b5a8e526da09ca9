// The logical-partition loader's bulk copies of the volume's core: CopyRanges (through the cache, unit by
// unit, prefetched in disk turns; units already in an LP's shared memory borrowed, not copied)
// and CopyRuns (cached pieces copied or borrowed, the rest read straight from the disks in
// batches: run_batches.h). read_path.cc is the FUSE read path.
#include <algorithm>
#include <cstring>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "common/clock.h"
#include "volume/internal/striped_source.h"
#include "volume/internal/unit_request.h"
#include "volume/internal/volume_core.h"

namespace graphfs::volume {

namespace {

// Whether a cached unit lies in the shared memory an LP is made of, so that the LP can borrow it
// where it lies (chunkindex/lp_memory.h) instead of copying it.
bool InLpMemory(const cache::UnitRef& unit, const chunkindex::LpMemory& lp) {
  return unit.arena() != nullptr && unit.arena() == lp.arena().get();
}

// Units next to each other in the file sit on one disk (a stripe unit holds several). The
// indexes [begin, end) of `units` reordered one disk after another — the first unit of each
// disk, then the second of each, ... — so prefetches handed out in this order go to every
// disk at once, not all to the disk of the next stripe unit.
std::vector<size_t> InDiskTurns(const StripedSource& src, const std::vector<cache::UnitExtent>& units, size_t begin,
                                size_t end, size_t disks) {
  std::vector<std::pair<uint32_t, size_t>> order;  // (n-th unit of its disk, unit)
  std::vector<uint32_t> seen(disks, 0);
  std::vector<uint64_t> share(disks, 0);  // bytes of a unit per disk
  for (size_t i = begin; i < end; ++i) {
    std::fill(share.begin(), share.end(), 0);
    src.DiskShare(units[i].offset, units[i].length, share);
    const size_t disk = static_cast<size_t>(std::max_element(share.begin(), share.end()) - share.begin());
    order.push_back({seen[disk]++, i});
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<size_t> out;
  for (const auto& [turn, i] : order) out.push_back(i);
  return out;
}

// CopyRanges' runs of a compressed file decoded from their frames' blocks (PackedFile::DecodePieces):
// for each unit the LP takes less than half of (`borrows` false), its decoded unit if the cache
// holds it (into *peeked, for CopyRanges to take instead of asking again), else its pieces
// decoded from the blocks of the frame the frame tier holds, or else from those blocks alone
// read from the disks (PackedFile::ReadPieces, every such unit at once, once the frame's layout
// is known), and placed in the LP through `copy_to` (the unit into *by_blocks). units[k] is the unit of the k-th piece of `ranges`, as
// CopyRanges lists them; a unit's pieces are adjacent (the ranges ascend).
template <typename Borrows, typename CopyTo>
Status CopyFromBlocks(cache::ChunkCache& cache, const std::shared_ptr<StripedSource>& src,
                      const cache::UnitLayout& layout, uint64_t generation, uint64_t file_size,
                      const std::vector<CopyRange>& ranges, const std::vector<cache::UnitExtent>& units,
                      Borrows& borrows, CopyTo& copy_to, chunkindex::LpMemory* place, uint32_t pid,
                      std::unordered_map<uint64_t, cache::UnitRef>* peeked, std::unordered_set<uint64_t>* by_blocks) {
  struct Piece {
    PackedFile::UnitPiece in_unit;
    uint64_t lp_at = 0;
  };
  std::vector<Piece> group;  // the pieces of unit `of`
  cache::UnitExtent of;
  // Units whose frame the frame tier does not hold: their pieces read from the disks below, only
  // the blocks they lie in (PackedFile::ReadPieces), all at once.
  std::vector<PackedFile::UnitPieces> from_disks;
  std::vector<std::pair<cache::UnitExtent, std::vector<uint64_t>>> from_disks_at;  // the unit, its pieces' LP offsets
  auto flush = [&]() -> Status {
    if (group.empty() || borrows(of) || peeked->contains(of.index) || by_blocks->contains(of.index)) {
      group.clear();
      return Status::Ok();
    }
    if (cache::UnitRef ref = cache.Peek(RequestFor(src, layout, generation, file_size, of), pid)) {
      peeked->emplace(of.index, std::move(ref));
      group.clear();
      return Status::Ok();
    }
    std::vector<PackedFile::UnitPiece> pieces;
    uint64_t bytes = 0;
    for (const Piece& p : group) {
      pieces.push_back(p.in_unit);
      bytes += p.in_unit.length;
    }
    auto outcome = src->packed()->DecodePieces(of.index, pieces, [&](size_t i, const char* from) -> Status {
      const uint64_t n = group[i].in_unit.length;
      char* to = copy_to(of, n);
      if (to == nullptr) return Error(ENOMEM, "no memory for " + std::to_string(n) + " bytes of an LP");
      std::memcpy(to, from, n);
      place->Place(group[i].lp_at, n, to);
      return Status::Ok();
    });
    if (!outcome.ok()) return outcome.error();
    if (*outcome == PackedFile::PiecesOutcome::kDecoded) {
      by_blocks->insert(of.index);
      cache.NoteBypass(pid, bytes);
    } else if (*outcome == PackedFile::PiecesOutcome::kFrameNotHeld) {
      std::vector<uint64_t> lp_at;
      for (const Piece& p : group) lp_at.push_back(p.lp_at);
      from_disks.push_back({of.index, std::move(pieces)});
      from_disks_at.emplace_back(of, std::move(lp_at));
    }
    group.clear();
    return Status::Ok();
  };
  size_t k = 0;
  for (const CopyRange& r : ranges) {
    for (uint64_t at = r.offset; at < r.offset + r.length;) {
      const cache::UnitExtent& u = units[k++];
      const uint64_t n = std::min(r.offset + r.length, u.offset + u.length) - at;
      if (!group.empty() && of.index != u.index) GRAPHFS_RETURN_IF_ERROR(flush());
      of = u;
      group.push_back({{at - u.offset, n}, r.out_offset + (at - r.offset)});
      at += n;
    }
  }
  GRAPHFS_RETURN_IF_ERROR(flush());
  if (from_disks.empty()) return Status::Ok();
  auto read = src->packed()->ReadPieces(from_disks, [&](size_t entry, size_t i, const char* from) -> Status {
    const uint64_t n = from_disks[entry].pieces[i].length;
    char* to = copy_to(from_disks_at[entry].first, n);
    if (to == nullptr) return Error(ENOMEM, "no memory for " + std::to_string(n) + " bytes of an LP");
    std::memcpy(to, from, n);
    place->Place(from_disks_at[entry].second[i], n, to);
    return Status::Ok();
  });
  if (!read.ok()) return read.error();
  for (size_t e = 0; e < from_disks.size(); ++e) {
    if (!(*read)[e]) continue;
    by_blocks->insert(from_disks[e].unit);
    uint64_t bytes = 0;
    for (const PackedFile::UnitPiece& p : from_disks[e].pieces) bytes += p.length;
    cache.NoteBypass(pid, bytes);
  }
  return Status::Ok();
}

}  // namespace

std::vector<bool> VolumeCore::InMemory(const std::shared_ptr<StripedSource>& src, uint64_t file_size,
                                       std::span<const std::pair<uint64_t, uint64_t>> ranges) const {
  std::vector<bool> in(ranges.size(), false);
  const std::shared_ptr<const cache::UnitLayout> layout = src->layout();
  if (cache_ == nullptr || layout == nullptr) return in;
  // Ranges come ascending and units are shared by neighbours: the last unit's answer is reused.
  uint64_t last_unit = UINT64_MAX;
  bool last_in = false;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto [offset, length] = ranges[i];
    if (length == 0 || offset + length > file_size) continue;
    bool all = true;
    for (cache::UnitExtent u = layout->Find(offset, file_size); all && u.offset < offset + length && u.length > 0;
         u = layout->At(u.index + 1, file_size)) {
      if (u.index != last_unit) {
        last_unit = u.index;
        last_in = cache_->Contains({src->key(), u.index});
      }
      all = last_in;
    }
    in[i] = all;
  }
  return in;
}

Status VolumeCore::CopyRanges(const std::shared_ptr<StripedSource>& src, uint64_t file_size,
                          const std::vector<CopyRange>& ranges, char* out, uint32_t pid, bool done_with_units,
                          chunkindex::LpMemory* place, uint64_t* borrowed) {
  const std::shared_ptr<const cache::UnitLayout> layout = src->layout();
  // The caller read `file_size` earlier; a write since then is caught only from here on (LP
  // files are built from indexed graphs, and a write makes the index stale anyway).
  const uint64_t generation = src->Generation();
  const StripeMap& map = src->file().map();
  const uint64_t window = read_ahead_.LoaderWindow(map.unit(), map.disks());
  // The units to copy, in order; a unit two ranges share is listed twice (the cache loads it once).
  // With `place`, also the bytes the ranges take of each unit: an LP borrows a unit it takes at
  // least half of; of the others it copies what it takes (pinning a whole decoded unit for a few
  // runs of it would hold far more memory than the LP's size, which the window bounds).
  std::vector<cache::UnitExtent> units;
  std::unordered_map<uint64_t, uint64_t> wanted;
  for (const CopyRange& r : ranges) {
    if (r.offset + r.length > file_size)
      return Error(EINVAL, "read of [" + std::to_string(r.offset) + ", " + std::to_string(r.offset + r.length) +
                               ") past the end (" + std::to_string(file_size) + " bytes)");
    uint64_t covered = r.offset;
    for (cache::UnitExtent u = layout->Find(r.offset, file_size); covered < r.offset + r.length && u.length > 0;
         u = layout->At(u.index + 1, file_size)) {
      units.push_back(u);
      if (place != nullptr) wanted[u.index] += std::min(r.offset + r.length, u.offset + u.length) - covered;
      covered = u.offset + u.length;
    }
    if (covered < r.offset + r.length) return Error(EIO, "the cache's unit layout does not cover the file");
  }
  auto borrows = [&](const cache::UnitExtent& u) { return 2 * wanted[u.index] >= u.length; };
  // What is copied goes into blocks of the LP, one per unit at most (a block per piece would cost
  // a granule of shared memory for every run): the units not borrowed share one block, sized up
  // front and taken at the first copy; a unit meant to be borrowed but found outside the LP's
  // memory gets one of its own.
  struct Room {
    char* at = nullptr;
    uint64_t left = 0;
  };
  Room shared_room, unit_room;
  uint64_t copied_total = 0;  // what the units not borrowed give
  for (size_t i = 0; place != nullptr && i < units.size(); ++i)
    if ((i == 0 || units[i - 1].index != units[i].index) && !borrows(units[i])) copied_total += wanted[units[i].index];
  auto copy_to = [&](const cache::UnitExtent& u, uint64_t n) -> char* {
    Room& room = borrows(u) ? unit_room : shared_room;
    if (room.left < n) {
      const uint64_t bytes = std::max(n, borrows(u) ? wanted[u.index] : copied_total);
      room.at = place->Allocate(bytes).data;
      room.left = room.at == nullptr ? 0 : bytes;
      if (room.at == nullptr) return nullptr;
    }
    char* to = room.at;
    room.at += n;
    room.left -= n;
    return to;
  };
  // A compressed file's units the LP takes less than half of: their decoded unit found in memory
  // (taken below instead of asking the cache again), else their runs decoded from the blocks of
  // the frame the frame tier holds, or read alone from the disks, when they lie in at most half
  // of its blocks — not the whole unit for a few runs (docs/block-frames.md). Those units are neither asked for nor prefetched.
  std::unordered_map<uint64_t, cache::UnitRef> peeked;
  std::unordered_set<uint64_t> by_blocks;
  if (place != nullptr && src->compressed() && cache_ != nullptr) {
    GRAPHFS_RETURN_IF_ERROR(CopyFromBlocks(*cache_, src, *layout, generation, file_size, ranges, units, borrows, copy_to,
                                           place, pid, &peeked, &by_blocks));
  }
  std::shared_ptr<cache::UnitRef> owner;  // with `place`: the unit the LP borrowed last, pinned by it
  uint64_t owner_unit = 0;                //   its index
  size_t prefetched = 0;  // units [0, prefetched) were handed to the prefetchers (or are being copied)
  const size_t disks = disks_ ? disks_->size() : 1;
  uint64_t ahead = 0;     // bytes of those not copied yet
  size_t k = 0;
  for (const CopyRange& r : ranges) {
    uint64_t at = r.offset;
    while (at < r.offset + r.length) {
      const cache::UnitExtent& u = units[k];
      if (prefetched <= k) {
        prefetched = k + 1;
        ahead = u.length;
      }
      size_t end = prefetched;
      while (end < units.size() && ahead + units[end].length <= window) ahead += units[end++].length;
      if (end > prefetched) {
        for (size_t i : InDiskTurns(*src, units, prefetched, end, disks)) {
          if (!by_blocks.contains(units[i].index) && !peeked.contains(units[i].index))
            cache_->Prefetch(RequestFor(src, *layout, generation, file_size, units[i]), pid);
        }
        prefetched = end;
      }
      const uint64_t n = std::min(r.offset + r.length, u.offset + u.length) - at;
      if (by_blocks.contains(u.index)) {  // placed from its frame's blocks already
        at += n;
        ahead -= std::min(ahead, u.length);
        ++k;
        continue;
      }
      read_ahead_.NoteReader(src->key(), pid);
      Result<cache::UnitRef> ref = cache::UnitRef();
      if (auto p = peeked.find(u.index); p != peeked.end()) {
        ref = std::move(p->second);
        peeked.erase(p);
      } else {
        ref = cache_->Get(RequestFor(src, *layout, generation, file_size, u), pid);
        if (!ref.ok()) return ref.error();
      }
      const uint64_t lp_at = r.out_offset + (at - r.offset);
      ref->NoteServed(n);
      if (place == nullptr) {
        std::memcpy(out + lp_at, ref->data() + (at - u.offset), n);
      } else if (InLpMemory(*ref, *place) && borrows(u)) {
        if (!owner || owner_unit != u.index) {
          owner = std::make_shared<cache::UnitRef>(std::move(*ref));  // `ref` is empty from here on
          owner_unit = u.index;
        }
        place->Borrow(lp_at, n, owner->data() + (at - u.offset), owner->arena(), owner->memory_offset() + (at - u.offset),
                      owner, owner->length());
        if (borrowed != nullptr) *borrowed += n;
      } else {
        char* to = copy_to(u, n);
        if (to == nullptr) return Error(ENOMEM, "no memory for " + std::to_string(n) + " bytes of an LP");
        std::memcpy(to, ref->data() + (at - u.offset), n);
        place->Place(lp_at, n, to);
      }
      at += n;
      if (at == u.offset + u.length || at == r.offset + r.length) {
        ahead -= std::min(ahead, u.length);
        // The ranges are ascending: a unit the next range does not start in is done with.
        if (done_with_units && (k + 1 == units.size() || units[k + 1].index != u.index)) {
          ref->NoteConsumed();
          // Borrowed: pinned as long as the LP lives, so it leaves the staging area now.
          if (owner && owner_unit == u.index) owner->LeaveStaging();
        }
        ++k;
      }
    }
  }
  return Status::Ok();
}

Status VolumeCore::CopyRuns(const std::shared_ptr<StripedSource>& src, uint64_t file_size,
                        const std::vector<CopyRange>& ranges, char* out, uint32_t pid, RunsReport* report,
                        std::vector<AlignedBuffer>* scratch, chunkindex::LpMemory* place) {
  const std::shared_ptr<const cache::UnitLayout> layout = src->layout();
  const uint64_t generation = src->Generation();
  // 1. Each range cut at unit boundaries: a piece whose unit is in the cache is copied from
  // it, the others are read from the disks.
  std::vector<CopyRange> from_disk;
  std::vector<std::pair<CopyRange, cache::UnitRef>> cached;  // with `place`: borrowed or copied below
  for (const CopyRange& r : ranges) {
    if (r.offset > file_size || r.length > file_size - r.offset)
      return Error(EINVAL, "read of [" + std::to_string(r.offset) + ", " + std::to_string(r.offset + r.length) +
                               ") past the end (" + std::to_string(file_size) + " bytes)");
    uint64_t at = r.offset;
    for (cache::UnitExtent u = layout->Find(r.offset, file_size); at < r.offset + r.length;
         u = layout->At(u.index + 1, file_size)) {
      const uint64_t end = u.length == 0 ? r.offset + r.length : std::min(r.offset + r.length, u.offset + u.length);
      const CopyRange piece{at, end - at, r.out_offset + (at - r.offset)};
      cache::UnitRef ref;
      if (cache_ != nullptr && u.length > 0) ref = cache_->Peek(RequestFor(src, *layout, generation, file_size, u), pid);
      if (ref && place != nullptr) {
        cached.emplace_back(CopyRange{at - u.offset, piece.length, piece.out_offset}, std::move(ref));
      } else if (ref) {
        std::memcpy(out + piece.out_offset, ref.data() + (at - u.offset), piece.length);
        ref.NoteServed(piece.length);
        report->from_cache += piece.length;
      } else {
        from_disk.push_back(piece);  // at most a unit: the spans below merge neighbours again
      }
      at = end;
      if (u.length == 0) break;
    }
  }
  if (!cached.empty()) {
    // Units in the LP's own shared memory are borrowed — the LP is made of them — where the LP
    // takes at least half of one, or the cache keeps it anyway (admitted: pinning it costs no
    // memory the cache does not spend already, and the runs are not copied). Of the others it
    // copies what it takes, into one block (pinning a whole unit the cache let go for a few runs
    // of it would hold far more memory than the LP's size).
    std::unordered_map<const char*, uint64_t> wanted;  // by unit: the bytes taken of it
    for (const auto& [c, ref] : cached) wanted[ref.data()] += c.length;
    std::vector<std::pair<CopyRange, cache::UnitRef>> to_copy;
    std::shared_ptr<cache::UnitRef> owner;  // the unit the last pieces came from, pinned by the LP
    uint64_t owner_cost = 0;                // what pinning it adds to the LP's footprint
    std::unordered_map<const char*, bool> borrows;  // by unit: decided at its first piece (the
                                                    // cache's lock once per unit, not per run)
    for (size_t i = 0; i < cached.size(); ++i) {
      auto& [c, ref] = cached[i];  // c.offset: in the unit; c.out_offset: in the LP
      report->from_cache += c.length;
      const bool most = 2 * wanted[ref.data()] >= ref.length();
      auto [decided, first] = borrows.try_emplace(ref.data(), false);
      if (first) decided->second = InLpMemory(ref, *place) && (most || ref.admitted());
      if (!decided->second) {
        to_copy.push_back(std::move(cached[i]));
        continue;
      }
      ref.NoteServed(c.length);
      if (!owner || owner->data() != ref.data()) {
        // An admitted unit borrowed for a few runs counts as those runs in the LP's footprint
        // (the window bounds what LPs hold beyond the cache), a unit taken mostly as itself.
        owner_cost = most ? ref.length() : wanted[ref.data()];
        ref.LeaveStaging();  // it stays pinned as long as the LP lives: not in the staging area
        owner = std::make_shared<cache::UnitRef>(std::move(ref));
      }  // else: a further piece of the same unit, whose pin `owner` already holds
      place->Borrow(c.out_offset, c.length, owner->data() + c.offset, owner->arena(), owner->memory_offset() + c.offset,
                    owner, owner_cost);
      report->borrowed += c.length;
    }
    uint64_t total = 0;
    for (const auto& [c, ref] : to_copy) total += c.length;
    const chunkindex::LpMemory::Block block = total > 0 ? place->Allocate(total) : chunkindex::LpMemory::Block{};
    if (total > 0 && block.data == nullptr) return Error(ENOMEM, "no memory for " + std::to_string(total) + " bytes of an LP");
    uint64_t at = 0;
    for (auto& [c, ref] : to_copy) {
      std::memcpy(block.data + at, ref.data() + c.offset, c.length);
      place->Place(c.out_offset, c.length, block.data + at);
      ref.NoteServed(c.length);
      at += c.length;
    }
  }
  if (from_disk.empty()) return Status::Ok();

  // 2. Batches of bounded memory, each on one disk, interleaved over the disks
  // (volume/internal/run_batches.h).
  const RunBatchPlan plan = PlanRunBatches(from_disk, src->file().map(), file_size, kDirectAlign,
                                           std::max<uint64_t>(kDirectAlign, options_.runs_batch_bytes));
  const std::vector<RunBatch>& batches = plan.batches;

  // 3. kRunsBatchesInFlight batches in flight: the disks read the next ones while this one is
  // copied out. A batch lies on one disk and the window holds batches of every disk in
  // proportion to its share, so each disk's queue holds its own next pieces and the LP
  // loads about as fast as its busiest disk allows.
  std::vector<AlignedBuffer> local;
  std::vector<AlignedBuffer>& buffers = scratch != nullptr ? *scratch : local;
  if (place == nullptr && buffers.size() < kRunsBatchesInFlight) buffers.resize(kRunsBatchesInFlight);
  std::vector<char*> placed(place != nullptr ? batches.size() : 0);  // each batch's block of the LP
  std::unique_ptr<StripedFile::PendingRead> pending[kRunsBatchesInFlight];
  auto batch_data = [&](size_t b) -> char* {
    return place != nullptr ? placed[b] : buffers[b % kRunsBatchesInFlight].data();
  };
  auto submit = [&](size_t b) -> Status {
    if (place != nullptr) {
      // Blocks are 64 KiB-aligned (the shared memory's granule) or come from the heap's
      // aligned allocation: either way aligned for O_DIRECT.
      placed[b] = place->Allocate(batches[b].bytes).data;
      if (placed[b] == nullptr) return Error(ENOMEM, "no memory for " + std::to_string(batches[b].bytes) + " bytes of runs");
      if (reinterpret_cast<uintptr_t>(placed[b]) % kDirectAlign != 0) {
        placed[b] = nullptr;
        return Error(EINVAL, "an LP memory block is not aligned for direct I/O");
      }
    } else {
      AlignedBuffer& buffer = buffers[b % kRunsBatchesInFlight];
      if (buffer.size() < batches[b].bytes) buffer = AlignedBuffer(batches[b].bytes);
      if (!buffer.ok()) return Error(ENOMEM, "no memory for " + std::to_string(batches[b].bytes) + " bytes of runs");
    }
    char* data = batch_data(b);
    std::vector<StripedFile::ReadRequest> requests;
    for (const RunSpan& sp : batches[b].spans) requests.push_back({sp.begin, sp.end - sp.begin, data + sp.at});
    auto started = src->file().StartReadMany(requests);
    if (!started.ok()) return started.error();
    pending[b % kRunsBatchesInFlight] = std::move(*started);
    return Status::Ok();
  };
  report->per_disk.resize(std::max<size_t>(plan.disk_bytes.size(), disks_ ? disks_->size() : 1), 0);
  std::vector<uint64_t> left(from_disk.size());  // per range, bytes not yet read
  // With `place`, per range, where its pieces landed: (file offset, data, length); a whole unit
  // is offered from there.
  std::vector<std::vector<std::tuple<uint64_t, const char*, uint64_t>>> unit_pieces(place != nullptr ? from_disk.size() : 0);
  for (size_t i = 0; i < from_disk.size(); ++i) left[i] = from_disk[i].length;
  for (size_t b = 0; b < std::min<size_t>(kRunsBatchesInFlight, batches.size()); ++b) GRAPHFS_RETURN_IF_ERROR(submit(b));
  for (size_t b = 0; b < batches.size(); ++b) {
    GRAPHFS_RETURN_IF_ERROR(pending[b % kRunsBatchesInFlight]->Wait());
    const RunBatch& batch = batches[b];
    const char* data = batch_data(b);
    report->requests += batch.spans.size();
    for (const RunSpan& sp : batch.spans) {
      report->disk_bytes += sp.end - sp.begin;
      report->per_disk[batch.disk] += sp.end - sp.begin;
    }
    size_t k = 0;
    for (size_t i = batch.first; i < batch.last; ++i) {
      const CopyRange& r = plan.pieces[i];
      while (batch.spans[k].end < r.offset + r.length) ++k;
      const char* at = data + batch.spans[k].at + (r.offset - batch.spans[k].begin);
      if (place != nullptr) {
        place->Place(r.out_offset, r.length, at);
        if (cache_ != nullptr) unit_pieces[plan.origin[i]].emplace_back(r.offset, at, r.length);
      } else {
        std::memcpy(out + r.out_offset, at, r.length);
      }
    }
    if (b + kRunsBatchesInFlight < batches.size()) GRAPHFS_RETURN_IF_ERROR(submit(b + kRunsBatchesInFlight));
    // Whole units read from the disks (whole chunks of lp_loader=direct) are offered to the
    // cache from `out` once all their pieces are in (a unit on two disks comes in two
    // batches), while the next batches are read; the cache keeps them if its policy would
    // have kept them loaded through it. Runs never are: the cache holds only whole units.
    if (cache_ != nullptr) {
      for (size_t i = batch.first; i < batch.last; ++i) {
        const size_t o = plan.origin[i];
        left[o] -= plan.pieces[i].length;
        if (left[o] != 0) continue;
        const CopyRange& r = from_disk[o];  // inside one unit (step 1)
        const cache::UnitExtent u = layout->Find(r.offset, file_size);
        if (u.length == 0 || u.offset != r.offset || u.length != r.length) continue;
        if (place == nullptr) {
          cache_->Offer(RequestFor(src, *layout, generation, file_size, u), out + r.out_offset, pid);
        } else {
          // The unit's bytes in the LP's memory: offered where they lie if its pieces are in one
          // run, else gathered first (a unit two batches read; the cache copies either way).
          std::vector<std::tuple<uint64_t, const char*, uint64_t>>& at = unit_pieces[o];
          std::sort(at.begin(), at.end());  // two disks' batches may come in either order
          bool contiguous = true;
          for (size_t j = 1; j < at.size(); ++j)
            contiguous = contiguous && std::get<1>(at[j]) == std::get<1>(at[j - 1]) + std::get<2>(at[j - 1]);
          if (contiguous) {
            cache_->Offer(RequestFor(src, *layout, generation, file_size, u), std::get<1>(at.front()), pid);
          } else {
            std::string gathered;
            gathered.reserve(r.length);
            for (const auto& [offset, data, len] : at) gathered.append(data, len);
            cache_->Offer(RequestFor(src, *layout, generation, file_size, u), gathered.data(), pid);
          }
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace graphfs::volume
