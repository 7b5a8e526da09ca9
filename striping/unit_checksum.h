// Checksums of the units striping stores: XXH3-64 of the bytes a unit (or a fixed-size block
// of it) holds on its disk, whatever they are — raw file bytes, a compressed file's packed
// stream, or parity. A read verifies them before it serves a byte or feeds the unit to
// reconstruction, so a flipped bit is found and repaired from parity instead of being served
// (docs/parity.md, "Checksums"). Pure functions of bytes; no I/O.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace graphfs {

// XXH3-64 (seed 0) of `bytes`.
uint64_t UnitChecksum(std::span<const char> bytes);

// Ok when `bytes` hash to `expected`; else EIO: "checksum mismatch in WHAT: stored 0x..., read 0x...".
Status VerifyUnit(std::span<const char> bytes, uint64_t expected, const std::string& what);

// The checksums of `bytes` cut into blocks of `block` bytes (the last one may be shorter), in
// order; none for empty bytes. EINVAL for a block size of 0.
Result<std::vector<uint64_t>> BlockChecksums(std::span<const char> bytes, uint64_t block);

// Checks every block of `bytes` against `expected` (as BlockChecksums makes them). EINVAL when
// the count of sums does not fit the bytes; EIO naming WHAT and the first block that does not
// match (its index and byte offset).
Status VerifyBlocks(std::span<const char> bytes, uint64_t block, std::span<const uint64_t> expected,
                    const std::string& what);

}  // namespace graphfs
