#include "volume/internal/run_grains.h"

namespace graphfs::volume {

RunGrains CountRunGrains(const cache::UnitLayout& layout, uint64_t file_size,
                         std::span<const chunkindex::LpExtent> extents, uint64_t block) {
  RunGrains g;
  // Runs ascend and do not overlap, so a unit or block shared by neighbours is the last one
  // counted: no set needed.
  bool any_unit = false, any_block = false;
  uint64_t last_unit = 0, last_block = 0;
  for (const chunkindex::LpExtent& e : extents) {
    if (e.whole || e.length == 0) continue;
    const uint64_t end = e.file_offset + e.length;
    const uint64_t first_block = e.file_offset / block, end_block = (end - 1) / block;
    const uint64_t from = any_block && last_block >= first_block ? last_block + 1 : first_block;
    if (end_block >= from) g.blocks += end_block - from + 1;
    for (uint64_t at = e.file_offset; at < end;) {
      const cache::UnitExtent u = layout.Find(at, file_size);
      if (u.length == 0) break;  // past the file's end: nothing there to read
      if (!any_unit || u.index != last_unit) {
        ++g.units;
        g.unit_bytes += u.length;
      }
      last_unit = u.index;
      any_unit = true;
      at = u.offset + u.length;
    }
    last_block = end_block;
    any_block = true;
  }
  return g;
}

}  // namespace graphfs::volume
