// graphfs-scrub (docs/parity.md, "graphfs-scrub"): reads every unit of every striped file with
// block sums — data and parity — checks each block against its sum and each row's parity against
// its data, repairs what it can, and reports per file and per disk.
//
// What it repairs, block by block (row_scan.h): a block whose bytes fail their sum or whose read
// failed is rebuilt from the same block of the row's other units; when the rebuilt bytes match
// the stored sum they are written back in place (`repaired_blocks`), when they equal what was
// read the sum was the damaged part and is rewritten (`sum_repairs`), and when they match
// neither the row's parity or sums are stale and nothing is written (unrepairable). A row whose
// blocks all match their sums but whose parity is not what its data encodes to (a lost write)
// gets its parity rewritten from the data (`parity_rewrites`): the data wins, as in md's
// "repair". More bad units in a block than the file's parity K is unrepairable: those file
// bytes read EIO through the mount, and the report names them. A missing disk is reported (its
// units are rebuilt by graphfs-rebuild, not here); rows that lost their redundancy to it are
// checked against their sums only.
//
// A stale disk — there, but files were written while it was lost (their write-intent records,
// stale_rows.h) — is resynced: the units of the rows the records mark are rebuilt from the rest
// of the row and written on it with their sums (`resynced_blocks`), the part cut to the file's
// size, all fsynced, and only then the file's records removed; once no record names the disk,
// the mount's set says it is healthy again (DiskSet::ClearStale). Only the marked rows are
// rewritten (md's resync by its bitmap), not the whole disk. A file created while the disk was
// missing has no part there, and every row marked: its part and sums are made, empty, and every
// row written into them (RowScanner::Open). Run by the daemon, a file it has
// open has its writes held off while its stale rows are rewritten (its writer would mark rows
// the resync passed), then takes the disk for its reads and writes (StripedFile::AdoptDisk)
// before its records go.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/result.h"
#include "striping/disk_set.h"
#include "striping/set_task.h"

namespace graphfs {

struct ScrubRequest {
  // Graph directories, directories holding graphs, or striped files; all on one disk set.
  std::vector<std::string> paths;
  std::vector<std::string> disks;  // overrides the registered disk paths (same order); empty: registry
  bool repair = true;              // false: report only, write nothing
  uint64_t rate = 0;               // bytes per second read from all disks together; 0: no limit
  bool progress = true;            // progress line on stderr
  // Set when the mount's daemon runs the scrub (`scrub` written to MOUNTPOINT/.graphfs/disks):
  // its set, whose row locks each row's scrub holds (the daemon's heals and in-place writes take
  // them too), and whose sums epoch a row's repair bumps, so that the daemon's open files read
  // the sums again (DiskSet::SumsChanged); `paths` is then the mount's source. A file the daemon
  // has open is not replayed (its writer keeps its journal).
  const DiskSet* live = nullptr;
  SetTaskProgress* task = nullptr;  // progress and cancel, for a runner in the background
};

struct ScrubCounts {
  uint64_t bytes_read = 0;
  uint64_t checksum_errors = 0;     // blocks whose bytes did not match their sum
  uint64_t read_errors = 0;         // units whose read failed
  uint64_t repaired_blocks = 0;     // blocks rewritten from parity
  uint64_t sum_repairs = 0;         // sums rewritten (the block was right)
  uint64_t parity_rewrites = 0;     // parity units rewritten from their row's data
  uint64_t unrepaired_blocks = 0;   // bad blocks left as they were (unrepairable, or --no-repair)
  uint64_t resynced_blocks = 0;     // blocks of a stale disk rewritten from their rows
  void Add(const ScrubCounts& o);
};

struct ScrubFile {
  std::string path;
  std::string file_id;
  uint32_t parity = 0;
  uint64_t rows = 0;
  ScrubCounts counts;
  // What is still wrong, merged into ranges: "file bytes [a, b): why", "row 3 parity on disk 1: why".
  std::vector<std::string> damage;
};

struct ScrubDisk {
  std::string path;
  std::string state;  // DiskStateName: healthy, missing, or failing when it erred or served bad blocks
  ScrubCounts counts;
};

struct ScrubReport {
  std::string set_id;
  std::vector<ScrubFile> files;
  std::vector<std::string> skipped;  // "PATH: why" (files without sums)
  std::vector<std::string> replayed; // files whose row journal was replayed first (journal_replay.h)
  std::vector<ScrubDisk> disks;
  std::vector<uint32_t> missing;     // disks missing from the set: their units were not checked
  // "FILE: disk 1: 3 rows resynced", or why not ("... open in the mount", "... --no-repair").
  std::vector<std::string> resynced;
  std::vector<uint32_t> stale;       // disks that still miss writes (records left) after the scrub
  ScrubCounts total;
  // Whether anything found is still wrong: unrepaired blocks, a missing disk, a stale one.
  bool damage_left() const { return total.unrepaired_blocks > 0 || !missing.empty() || !stale.empty(); }
};

// Errors (nothing was scrubbed, or a repair could not be written): no registry at or under a
// path, paths on different disk sets, no file with sums, a set that cannot be opened (more disks
// missing than its parity), I/O errors writing a repair.
Result<ScrubReport> Scrub(const ScrubRequest& request);

// A file's or a disk's counts as the daemon's `.graphfs/disks` shows a scrub it ran, and back
// (graphfs-scrub prints the report of a scrub it handed to the mount); absent fields read 0.
nlohmann::json ScrubCountsJson(const ScrubCounts& counts);
ScrubCounts ScrubCountsFromJson(const nlohmann::json& j);

// Scrub in two steps, for a runner that answers bad requests at once and scrubs in the
// background: what Scrub checks before it reads a row (the errors above but a repair's), then
// the rows.
struct PreparedScrub;
struct PreparedScrubDeleter {
  void operator()(PreparedScrub* p) const;
};
using PreparedScrubPtr = std::unique_ptr<PreparedScrub, PreparedScrubDeleter>;
Result<PreparedScrubPtr> PrepareScrub(const ScrubRequest& request);
Result<ScrubReport> RunScrub(PreparedScrub& prepared);

}  // namespace graphfs
