// graphfs's own mount options, given as -o key=value on the command line or in fstab: one
// table (mount_options.cc) gives each its name, help line and parser. Everything else
// (allow_other, ro, fsname, ...) goes to libfuse unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace graphfs {

struct MountOptions {
  std::string cache_size = "25%";    // shared chunk cache budget (bytes or % of RAM)
  bool cache_size_given = false;     // on the command line (a memory= budget then conflicts)
  uint64_t cache_bytes = 0;          // resolved
  std::string memory;                // one budget for cache, staging, LP windows, indexes ("": none)
  uint64_t memory_bytes = 0;         // resolved
  std::string cache_policy = "priority";  // a name of volume::CachePolicyNames()
  unsigned cache_window = 600;       // seconds a read counts towards a unit's priority
  std::string cache_trace;           // cache_trace=FILE: unit lookups logged (diagnostics)
  // FUSE worker threads at most. A reader blocked on a miss holds one: four engines each with a
  // 24 MiB O_DIRECT pread in flight are 96 requests of 1 MiB (max_background is 128), and 16
  // threads left whole readers unserved while the disks idled (BENCHMARKS.md, issue 30).
  unsigned threads = 128;
  std::string passthrough = "auto";  // auto: ordinary files in FUSE passthrough where possible; off
  std::string io = "perdisk";        // io=shared: one queue for all disks (comparison)
  unsigned io_workers = 0;           // per disk (io=perdisk, default 1) or in the pool (io=shared, default N)
  unsigned queue_depth = 4;          // runs in flight per I/O worker
  int nice = -5;                     // the daemon's CPU priority (0: as inherited)
  unsigned readahead_units = 0;      // stripe units read ahead of a sequential reader; 0 = two per disk
  bool readahead_off = false;        // readahead=0
  uint64_t readahead_mem = 1ull << 30;  // units loaded ahead of their readers (cache staging)
  bool direct = true;                // O_DIRECT on part files for aligned reads
  uint64_t kernel_readahead = 0;     // the kernel's read-ahead window on this mount; 0 = its own (128K)
  std::vector<std::string> disks;    // overrides the registered disk paths (in order)
  std::string log_file;
  bool read_only = false;            // seen in the FUSE options (ro)
  double timeout = 1.0;              // attribute/entry cache seconds
  std::string lp = "vertex";         // logical partitions: vertex-granular (runs of active sources) or whole chunks
  std::string lp_loader = "direct";  // whole chunks of LPs: direct from the disks (then offered to the cache), or through it
  bool lp_diagonal = true;           // LPs prefer diagonal blocks' chunks among equal priorities
  uint64_t lp_memory = 512ull << 20;  // LPs loaded ahead and held by jobs (volume_options.h)
  uint64_t disk_bandwidth = 0;       // read-cost model: bytes/s of one disk (0: graphfs-calibrate's, else default)
  int64_t request_cost_us = -1;      //   and cost of one request in µs (-1: calibrated, else default)
};

// Parses one "key=value" (or bare "key") option. Returns true if the key is graphfs's,
// false if it belongs to libfuse; an error for a graphfs key with a bad value.
Result<bool> ApplyMountOption(MountOptions& options, const std::string& option);

// Resolves sizes that depend on the machine (cache_size=N% of RAM).
Status ResolveMountOptions(MountOptions& options);

// Help text for graphfs's own options, from the table.
std::string MountOptionsHelp();

}  // namespace graphfs
