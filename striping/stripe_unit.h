// Choosing a file's stripe unit (graphfs-stripe without --unit, issue 30).
//
// The unit is a power of two from 1 MiB to 16 MiB, chosen per file from its size, the number of
// disks, the engines' largest request and what one request costs the disks
// (graphfs-calibrate's records):
//   (a) at most the engines' request, rounded down to a power of two: a request of that size
//       then always crosses a unit boundary and is served by at least two disks at once
//       (CSMqGraph puts the unit between the engine's average and largest request). For a grid's
//       `column` and `row` the request is a block (file size / P²): engines with selective
//       scheduling read the active blocks one by one, so a block must reach several disks —
//       measured on the demo's mix (192 MiB column, P = 8, 3 MiB blocks): 8 MiB units 53.8 s,
//       2 MiB 46.4 s, the disks' floor for its bytes 45.6 s (BENCHMARKS.md, issue 30);
//   (b) at most file_size / (4 x disks), rounded down: the file has at least 4 units on every
//       disk, so a sequential reader crosses every disk several times (read-ahead reaches the
//       other disks early, a file's hot units fall on several disks) and small files spread;
//   (c) at least 20 x bytes_per_second x seconds_per_request, rounded up: one request's fixed
//       cost (seek, rotation, submission) is at most 5% of its transfer time. A disk request
//       of a reader that is not merged with its neighbours is about a unit, so a smaller unit
//       pays that cost on every read, for the life of the file. Without a calibration: 1 MiB.
// The largest unit (a) and (b) allow is taken (fewer, larger requests), but not less than (c)
// asks. When (c) asks for more than (b) allows (an HDD-like disk, a small file), (c) wins: the
// request cost is paid on every read, while a small file is read in few requests anyway; (c) is
// still held to (a) (a unit above the request makes each request a one-disk read), to 16 MiB,
// and to one unit per disk (file_size / disks, rounded down), so the file keeps a unit on every
// disk. A file smaller than 1 MiB per disk gets 1 MiB.
// Examples (4 disks, 24 MiB requests): 64 MiB -> 4 MiB; the demo's 192 MiB column -> 8 MiB;
// 2 GiB -> 16 MiB; 64 MiB on disks of 150 MB/s and 8 ms a request (HDD-like: (c) wants 32 MiB)
// -> 16 MiB, one unit per disk.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graphfs {

inline constexpr uint64_t kMinStripeUnit = 1ull << 20;
inline constexpr uint64_t kMaxStripeUnit = 16ull << 20;
inline constexpr uint64_t kDefaultEngineRequest = 24ull << 20;  // GridGraph's largest pread
inline constexpr uint64_t kUnitsPerDisk = 4;                    // rule (b)
inline constexpr double kRequestCostShare = 0.05;               // rule (c): cost / transfer time

struct StripeUnitInputs {
  uint64_t file_size = 0;
  uint32_t disks = 1;
  uint64_t engine_request = kDefaultEngineRequest;  // the engines' largest read
  double bytes_per_second = 0;     // one disk's sequential rate; 0: not measured
  double seconds_per_request = 0;  // one disk's cost per request beyond its bytes
  // The engines' typical read of this file, when known (0: not): a grid's `column` and `row` are
  // read a block at a time — an engine skips the blocks without active sources — so a block,
  // file size / P², is what one read asks for. Rule (a) caps the unit at this instead.
  uint64_t typical_request = 0;
};

struct StripeUnitChoice {
  uint64_t unit = kMinStripeUnit;
  std::string reason;  // the numbers that decided it, e.g. "8 MiB: at least 4 units per disk ..."
};

StripeUnitChoice ChooseStripeUnit(const StripeUnitInputs& in);

// What one request costs the disks of a set, from their stored calibrations
// (graphfs-calibrate, DISK/.graphfs-calibration.json): the median of bytes_per_second and of
// seconds_per_request over the disks that have one (each median on its own).
struct DiskRequestCost {
  double bytes_per_second = 0;     // 0: no disk has a calibration
  double seconds_per_request = 0;
  size_t calibrated = 0;           // disks with a usable calibration
  size_t disks = 0;
  std::string Describe() const;    // for the tool's output
};

DiskRequestCost MedianRequestCost(const std::vector<std::string>& disk_dirs);

}  // namespace graphfs
