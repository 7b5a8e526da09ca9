// The read-cost model of vertex-granular LPs (chunkindex/read_cost.h) and where its numbers
// come from: the disks' calibration (`graphfs-calibrate`), mount options, or defaults
// (VolumeCore::read_cost(); loaded in volume_core.cc).
#pragma once

#include <string>
#include <vector>

#include "chunkindex/read_cost.h"
#include "striping/calibrate.h"

namespace graphfs::volume {

struct ReadCostModel {
  chunkindex::ReadCost cost;
  std::string source;
  std::vector<DiskCalibration> disks;  // the calibrations found on the disks
  std::vector<std::string> missing;    // disks without one
  std::vector<std::string> damaged;    // why a disk's calibration was not used
};

}  // namespace graphfs::volume
