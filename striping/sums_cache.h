// The block sums of an open striped file's parts, as its reads need them (docs/parity.md,
// "Reads", step 2): one sums file per disk (unit_sums.h), read by pages of kPageSums sums and
// kept while the file is open, so a stream of reads costs one small read of a sums file per
// 512 blocks (32 MiB of a disk's units at 64 KiB blocks). Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "striping/unit_sums.h"

namespace graphfs {

class SumsCache {
 public:
  static constexpr uint64_t kPageSums = 512;

  // `sums[d]` is disk d's sums file, or nullopt for a disk whose sums cannot be had (missing).
  SumsCache(std::vector<std::optional<UnitSums>> sums, uint64_t unit, uint64_t sum_block);

  bool has(uint32_t disk) const;
  // Disk `disk`, lost when the file was opened, is back (a rebuilt disk switched in online):
  // its sums file from now on.
  void Adopt(uint32_t disk, UnitSums sums);
  // Drops every sum read so far (the sums files were rewritten by someone else: a scrub run by
  // the daemon); the next reads read them again.
  void Forget();
  // The sums of blocks [first_block, first_block + count) of the unit `disk` holds in `row`.
  // ENODEV for a disk without sums; the sums file's read error otherwise.
  Result<std::vector<uint64_t>> Get(uint32_t disk, uint64_t row, uint64_t first_block, uint64_t count);
  // Rewrites those sums on the disk (a damaged sum found by a read) and in the cache.
  Status Put(uint32_t disk, uint64_t row, uint64_t first_block, const std::vector<uint64_t>& sums);
  // A file cut to `rows` rows whose part on `disk` is now `part_length` bytes: the header says
  // so, and the sums past those rows are dropped, on the disk and here.
  Status Cut(uint32_t disk, uint64_t rows, uint64_t part_length);
  // Makes every sums file written since the last call durable; the first error.
  Status Sync();

 private:
  struct Disk {
    std::mutex mu;
    std::optional<UnitSums> sums;
    bool unsynced = false;  // written since the last Sync
    std::unordered_map<uint64_t, std::vector<uint64_t>> pages;  // page index -> kPageSums sums
  };
  uint64_t blocks_per_unit_;
  std::vector<std::unique_ptr<Disk>> disks_;
};

}  // namespace graphfs
