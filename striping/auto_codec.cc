#include "striping/auto_codec.h"

#include <algorithm>

namespace graphfs {

AutoCost AutoPassCost(const AutoCostModel& model, double ratio, double decode_bps, uint64_t file_bytes) {
  AutoCost c;
  const double disk_pass = ratio / model.disk_bandwidth;
  const double decode = decode_bps > 0 ? 1.0 / (decode_bps * model.decode_cores) : 0.0;
  if (model.memory == 0) {
    c.disk = disk_pass;
    c.decode = decode;
    c.pass = std::max(c.disk, c.decode) + model.memory_passes * c.decode;
    return c;
  }
  const double room = static_cast<double>(model.memory) * kAutoFramesShareOfMemory;
  const double frames = ratio * static_cast<double>(file_bytes);
  c.from_memory = frames <= 0 ? 1.0 : std::min(1.0, room / frames);
  c.decode = decode;
  if (static_cast<double>(file_bytes) <= room) {
    // Decoded once and kept: only the first pass costs, from the disks (the same count of
    // passes for every candidate, so that one decides).
    c.from_memory = 1.0;
    c.disk = disk_pass;
  } else {
    c.disk = (1.0 - c.from_memory) * disk_pass;
  }
  c.pass = std::max(c.disk, c.decode);
  return c;
}

}  // namespace graphfs
