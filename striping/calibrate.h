// Measuring a disk for the read-cost model of vertex-granular logical partitions
// (chunkindex/read_cost.h): its sequential read throughput and what one more read request
// costs beyond its bytes (seek, rotation, submission). `graphfs-calibrate` runs it on every
// disk of a set and stores the result on the disk (DISK/.graphfs-calibration.json), where
// the daemon reads it at mount; mount options override it.
//
// The probe writes a file of `probe_bytes` on the disk (then removes it), makes it durable
// and drops it from the page cache, then reads it with O_DIRECT, one request at a time:
//   sequential  whole file in `sequential_request` reads      -> bytes_per_second
//   random      `random_reads` reads of `random_bytes` at random aligned offsets
//               -> seconds_per_request = mean time - random_bytes / bytes_per_second
// One request at a time is the cost model's unit: a request the engine merges or queues
// behind another is cheaper, so the model errs towards reading through gaps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace graphfs {

struct CalibrateOptions {
  uint64_t probe_bytes = 256ull << 20;
  uint64_t sequential_request = 4ull << 20;
  uint64_t random_bytes = 4096;
  unsigned random_reads = 400;
  uint64_t seed = 1;
};

struct DiskCalibration {
  std::string path;                  // the directory measured (not stored: the file is in it)
  double bytes_per_second = 0;       // sequential
  double seconds_per_request = 0;    // beyond the bytes
  double random_read_seconds = 0;    // mean time of one random read (what the request cost came from)
  uint64_t probe_bytes = 0;
  bool direct = true;                // O_DIRECT worked (else the page cache may have served reads)
  int64_t measured_unix = 0;
};

// Measures the disk holding directory `dir`.
Result<DiskCalibration> CalibrateDisk(const std::string& dir, const CalibrateOptions& options);

// DIR/.graphfs-calibration.json
std::string CalibrationPath(const std::string& dir);
std::string EncodeCalibration(const DiskCalibration& c);
Result<DiskCalibration> DecodeCalibration(const std::string& text);
Status SaveCalibration(const DiskCalibration& c);  // to CalibrationPath(c.path), atomically
// The stored calibration of `dir`; ENOENT when it has none.
Result<DiskCalibration> LoadCalibration(const std::string& dir);

}  // namespace graphfs
