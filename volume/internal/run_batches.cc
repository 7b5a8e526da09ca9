#include "volume/internal/run_batches.h"

#include <algorithm>

namespace graphfs::volume {

RunBatchPlan PlanRunBatches(const std::vector<CopyRange>& pieces, const StripeMap& map, uint64_t file_size,
                            uint64_t align, uint64_t limit) {
  const uint32_t disks = std::max<uint32_t>(1, map.disks());
  limit = std::max(limit / align * align, align);
  auto align_down = [&](uint64_t v) { return v / align * align; };
  auto align_up = [&](uint64_t v) { return std::min(file_size, (v + align - 1) / align * align); };
  auto room = [&](uint64_t n) { return (n + align - 1) / align * align; };

  // Per disk: its pieces in file order, the input range each was cut from, its batches (batch
  // i owns pieces [batches[i].first, batches[i].last)) and the bytes its spans read.
  struct DiskBatches {
    std::vector<CopyRange> pieces;
    std::vector<size_t> origin;
    std::vector<RunBatch> batches;
    uint64_t bytes = 0;
  };
  std::vector<DiskBatches> per(disks);

  // 1. A piece is cut where a stripe unit ends and at multiples of `limit`, so that aligned out
  // it still fits one batch.
  for (size_t i = 0; i < pieces.size(); ++i) {
    const CopyRange& r = pieces[i];
    for (const StripeExtent& e : map.Split(r.offset, r.length)) {
      DiskBatches& to = per[e.disk % disks];
      for (uint64_t at = e.file_offset, end = e.file_offset + e.length; at < end;) {
        const uint64_t cut = std::min(end, (at / limit + 1) * limit);
        to.pieces.push_back({at, cut - at, r.out_offset + (at - r.offset)});
        to.origin.push_back(i);
        at = cut;
      }
    }
  }

  // 2. Per disk, aligned spans merged where they touch, packed into batches of at most `limit`.
  for (uint32_t d = 0; d < disks; ++d) {
    DiskBatches& out = per[d];
    std::vector<RunBatch>& batches = out.batches;
    for (size_t i = 0; i < out.pieces.size(); ++i) {
      const uint64_t begin = align_down(out.pieces[i].offset);
      const uint64_t end = align_up(out.pieces[i].offset + out.pieces[i].length);
      if (!batches.empty() && begin <= batches.back().spans.back().end) {
        RunBatch& b = batches.back();
        RunSpan& sp = b.spans.back();
        const uint64_t grown = sp.at + room(std::max(end, sp.end) - sp.begin);
        if (grown <= limit) {
          sp.end = std::max(end, sp.end);
          b.bytes = grown;
          b.last = i + 1;
          continue;
        }
      }
      // A new batch when this one is full (a span cut there may read its last block twice).
      if (batches.empty() || batches.back().bytes + room(end - begin) > limit) {
        RunBatch fresh;
        fresh.disk = d;
        fresh.first = fresh.last = i;
        batches.push_back(std::move(fresh));
      }
      RunBatch& b = batches.back();
      b.spans.push_back({begin, end, b.bytes});
      b.bytes += room(end - begin);
      b.last = i + 1;
    }
    for (const RunBatch& b : batches)
      for (const RunSpan& sp : b.spans) out.bytes += sp.end - sp.begin;
  }

  // 3. Interleave: next comes the disk that has submitted the smallest fraction of its bytes
  // (ties: the one with more left), so every disk's queue drains at the same pace.
  RunBatchPlan plan;
  plan.disk_bytes.assign(disks, 0);
  for (uint32_t d = 0; d < disks; ++d) plan.disk_bytes[d] = per[d].bytes;
  std::vector<size_t> next(disks, 0);
  std::vector<uint64_t> submitted(disks, 0);
  while (true) {
    int pick = -1;
    for (uint32_t d = 0; d < disks; ++d) {
      if (next[d] == per[d].batches.size()) continue;
      if (pick < 0) {
        pick = static_cast<int>(d);
        continue;
      }
      const uint32_t p = static_cast<uint32_t>(pick);
      // submitted[d] / bytes[d] < submitted[p] / bytes[p], without division.
      const unsigned __int128 lhs = static_cast<unsigned __int128>(submitted[d]) * per[p].bytes;
      const unsigned __int128 rhs = static_cast<unsigned __int128>(submitted[p]) * per[d].bytes;
      if (lhs < rhs || (lhs == rhs && per[d].bytes - submitted[d] > per[p].bytes - submitted[p])) pick = static_cast<int>(d);
    }
    if (pick < 0) break;
    DiskBatches& from = per[static_cast<uint32_t>(pick)];
    RunBatch b = std::move(from.batches[next[static_cast<uint32_t>(pick)]++]);
    for (const RunSpan& sp : b.spans) submitted[static_cast<uint32_t>(pick)] += sp.end - sp.begin;
    const size_t first = plan.pieces.size();
    plan.pieces.insert(plan.pieces.end(), from.pieces.begin() + static_cast<std::ptrdiff_t>(b.first),
                       from.pieces.begin() + static_cast<std::ptrdiff_t>(b.last));
    plan.origin.insert(plan.origin.end(), from.origin.begin() + static_cast<std::ptrdiff_t>(b.first),
                       from.origin.begin() + static_cast<std::ptrdiff_t>(b.last));
    b.last = first + (b.last - b.first);
    b.first = first;
    plan.batches.push_back(std::move(b));
  }
  return plan;
}

}  // namespace graphfs::volume
