// Reed–Solomon parity of one stripe row, on Intel's ISA-L (libisal).
//
// A row of a striped file with parity has N units of the same length: N-K data units, then K
// parity units (docs/parity.md says how they lie on the disks). Encode computes the K parity
// units from the data units; Reconstruct rebuilds up to K units that are missing, failed or
// failed their checksum, from the N-K others. The code is ISA-L's Reed–Solomon (Vandermonde)
// matrix over GF(2^8): its first parity unit is the XOR of the data units (RAID-5's parity),
// the second the sum of 2^i times data unit i (RAID-6's Q). ISA-L guarantees that this matrix
// rebuilds every pattern of lost units when K <= 3; graphfs uses K = 1 or 2.
//
// Pure functions of bytes: no I/O, no checksums (unit_checksum.h), no knowledge of disks.
// Thread-safe: a codec is immutable once made; Reconstruct builds its decode tables per call.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"

namespace graphfs {

class ParityCodec {
 public:
  static constexpr uint32_t kMaxParity = 2;    // what the layout and the tools offer
  static constexpr uint32_t kMaxUnits = 255;   // GF(2^8): at most 255 units in a row

  // A codec for rows of `units` (N) units of which `parity` (K) are parity. EINVAL unless
  // 1 <= K <= kMaxParity, K < N (a row needs a data unit) and N <= kMaxUnits.
  static Result<ParityCodec> Create(uint32_t units, uint32_t parity);

  uint32_t units() const { return units_; }
  uint32_t parity() const { return parity_; }
  uint32_t data_units() const { return units_ - parity_; }

  // Writes the K parity units of a row whose data units are `data` (N-K of them). Every span,
  // data and parity, must have the same length (EINVAL otherwise, naming the first that
  // differs); a shorter last unit of a file is padded with zeros by the caller.
  Status Encode(std::span<const std::span<const char>> data, std::span<const std::span<char>> parity) const;

  // `row` is the whole row, N units of one length in row order (data units, then parity).
  // The units whose indexes are in `lost` (at most K, distinct, each < N) are rebuilt in place
  // from the others, which are only read; the bytes a lost unit's span held are ignored.
  // EINVAL for bad arguments, naming them.
  Status Reconstruct(std::span<const std::span<char>> row, std::span<const uint32_t> lost) const;

 private:
  ParityCodec(uint32_t units, uint32_t parity);
  uint32_t units_;
  uint32_t parity_;
  std::vector<unsigned char> matrix_;         // N x (N-K): identity rows, then the parity rows
  std::vector<unsigned char> encode_tables_;  // ISA-L's expanded tables of the parity rows
};

}  // namespace graphfs
