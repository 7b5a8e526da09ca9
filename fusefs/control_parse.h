// Parsers of what users write into the control directory MOUNTPOINT/.graphfs/: the job
// files of jobs/NAME/, `fault` and `disks`. Pure (no GraphFs, no locks, no I/O) and depending on
// common/ only, so that tests/fuzz/control_parse_fuzz.cc can feed them anything a user
// could write; jobs_dir.cc and control_dir.cc apply what they return.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace graphfs {

// partition_size is refused above this (an LP is one buffer in the daemon).
inline constexpr uint64_t kMaxPartitionBytes = 64ull << 30;

// `text` without leading and trailing blanks (space, tab, CR, LF).
std::string TrimBlanks(std::string_view text);

// `active`: a bitmap of exactly ceil(V/8) bytes, bit v = byte[v/8] >> (v%8) & 1. Returns
// ceil(V/64) words (bit v = words[v/64] >> (v%64) & 1). Refuses another size and bits set
// past the last vertex.
Result<std::vector<uint64_t>> ParseActiveBitmap(std::string_view bytes, uint64_t vertices);

// `active.list`: vertex ids below V in decimal, separated by whitespace, or `all` (every
// vertex); an empty list activates nothing. Returns the set as ceil(V/64) words.
Result<std::vector<uint64_t>> ParseActiveList(std::string_view text, uint64_t vertices);

// `partition_size`: a size (K/M/G suffixes, blanks around ignored) in (0, kMaxPartitionBytes].
Result<uint64_t> ParsePartitionSize(std::string_view text);

// `fault`: "DISK ERRNO", DISK below `disks`, ERRNO in [0, 4095] (0 heals the disk).
struct FaultRequest {
  uint32_t disk = 0;
  int error = 0;
};
Result<FaultRequest> ParseFaultLine(std::string_view text, uint64_t disks);

// `disks` (docs/parity.md): one line, words separated by blanks —
//   rebuild I DIR [RATE]   rebuild missing disk I (below `disks`) onto DIR, an absolute path
//                          without blanks, ".." or NUL; then the mount reads the disk there
//   scrub [RATE]           check and repair every file with sums
// RATE: bytes per second read from the disks, a size (K/M/G/T suffixes, optionally "/s");
// 0 or none: no limit. Anything else is EINVAL saying what was expected.
struct DisksCommand {
  enum class Kind { kRebuild, kScrub };
  Kind kind = Kind::kScrub;
  uint32_t disk = 0;
  std::string dir;
  uint64_t rate = 0;
};
Result<DisksCommand> ParseDisksLine(std::string_view text, uint64_t disks);

// `graph`: a path relative to the mount root, or an absolute path inside `mountpoint` or
// `source` -> the path relative to the root, without "." or empty components (empty: the
// root itself). Refuses "..", paths outside the mount and the control directory.
Result<std::string> MountRelative(std::string_view text, const std::string& mountpoint,
                                  const std::string& source);

// The files of an LP a job holds: lp-SEQ (its view, packed), lp-SEQ.map (text: where the
// view's pieces come from), lp-SEQ.pieces (binary: where they lie in shared memory).
enum class LpFile { kView, kMap, kPieces };

// "lp-12" -> 12 (kView), "lp-12.map" -> 12 (kMap), "lp-12.pieces" -> 12 (kPieces); 0 if `name`
// is not an LP file name (sequence numbers start at 1, in decimal without leading zeros, at
// most 19 digits).
uint64_t ParseLpFileName(std::string_view name, LpFile* kind);

}  // namespace graphfs
