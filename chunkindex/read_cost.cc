#include "chunkindex/read_cost.h"

#include <algorithm>

namespace graphfs::chunkindex {

namespace {

uint64_t AlignDown(uint64_t v, uint64_t a) { return v / a * a; }
uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

ChunkReadPlan PlanChunkRead(uint64_t chunk_offset, uint64_t chunk_length, std::span<const ByteRun> runs,
                            const ReadCost& cost, uint64_t stored_length) {
  const uint64_t align = std::max<uint64_t>(cost.align, 1);
  const uint64_t gap_worth = cost.GapWorthReading();
  ChunkReadPlan plan;
  // Merge runs whose widened blocks touch (the gap is read anyway) or whose gap costs less
  // than a request. Widening stays inside the chunk's own aligned span.
  auto disk_begin = [&](uint64_t off) { return AlignDown(chunk_offset + off, align); };
  auto disk_end = [&](uint64_t end) { return AlignUp(chunk_offset + end, align); };
  for (const ByteRun& r : runs) {
    if (r.length == 0) continue;
    if (!plan.extents.empty()) {
      ByteRun& last = plan.extents.back();
      const bool touching = disk_begin(r.offset) <= disk_end(last.end());
      if (touching || r.offset - last.end() <= gap_worth) {
        last.length = r.end() - last.offset;
        continue;
      }
    }
    plan.extents.push_back(r);
  }
  for (const ByteRun& e : plan.extents) {
    plan.bytes += e.length;
    plan.disk_bytes += disk_end(e.end()) - disk_begin(e.offset);
  }
  plan.seconds = cost.Seconds(plan.disk_bytes, plan.extents.size());
  const uint64_t whole_disk = stored_length > 0 ? stored_length : disk_end(chunk_length) - disk_begin(0);
  plan.whole_seconds = cost.Seconds(whole_disk, 1);
  bool whole = !plan.extents.empty() && plan.seconds > cost.partial_share * plan.whole_seconds;
  if (stored_length > 0) {
    plan.disk_bytes = stored_length;
    plan.seconds = plan.whole_seconds;
    whole = !plan.extents.empty() &&
            static_cast<double>(plan.bytes) > cost.partial_share * static_cast<double>(chunk_length);
  }
  if (whole) {
    plan.whole = true;
    plan.extents.assign(1, ByteRun{0, chunk_length});
    plan.bytes = chunk_length;
    plan.disk_bytes = whole_disk;
    plan.seconds = plan.whole_seconds;
  }
  return plan;
}

}  // namespace graphfs::chunkindex
