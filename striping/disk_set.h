// The disks a graph is striped over, and proof that they are the right ones.
//
// Every disk directory carries an identity file `.graphfs-disk` naming the set it belongs
// to and its index in that set. A graph directory striped over a set records the set in
// `GRAPH/.graphfs/disks.json` (the registry). Mounting checks every registered disk: a
// foreign or swapped disk is refused with a message naming it, so a wrong /etc/fstab line can
// never serve bytes from the wrong disk. A missing disk is accepted as long as no more are
// missing than the registry's `parity` — the fewest parity units (K) of the files striped over
// the set, so every file can still be read through parity (docs/parity.md) — and the set then
// says which disks are missing; with more missing, or with no parity, it is refused naming them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace graphfs {

inline constexpr const char* kDiskIdentityFile = ".graphfs-disk";
inline constexpr const char* kRegistryDir = ".graphfs";
inline constexpr const char* kRegistryFile = "disks.json";

struct DiskRegistry {
  std::string set_id;
  std::vector<std::string> disks;  // absolute paths, in index order
  // The smallest parity K of the files striped over the set: how many disks may be missing at
  // mount. 0 in registries written before parity existed (none of their files had any).
  uint32_t parity = 0;
};

// What is known of a disk. The set itself knows kHealthy and kMissing (as Open found them); the
// other two come from what reads found since (disk_health.h joins the set with the I/O engine's
// counters): kFailing, present and read but some of its I/O failed or returned blocks whose sums
// did not match; kAvoided, its reads returned errors lately, so reads of files with parity go
// around it but for a probe each second (IoEngine::AvoidReads) until one succeeds.
enum class DiskState { kHealthy, kMissing, kFailing, kAvoided };
// "healthy", "missing", "failing", "avoided": the names `.graphfs/stats` and the tools print.
const char* DiskStateName(DiskState state);

class DiskSet {
 public:
  // For graphfs-stripe: claims `paths` as one set. Disks that already carry an identity
  // must all belong to the same set, at the index their position gives; blank disks are
  // stamped. Fails (naming the disk) on foreign or reordered disks.
  static Result<DiskSet> Claim(const std::vector<std::string>& paths);

  // For the mount and offline tools: opens a registered set and verifies each disk. Up to
  // registry.parity disks may be missing (no identity file: not mounted, or gone); they are
  // kMissing in the set. More than that is ENODEV naming every missing disk.
  static Result<DiskSet> Open(const DiskRegistry& registry);

  const std::string& set_id() const { return set_id_; }
  uint32_t size() const { return static_cast<uint32_t>(paths_.size()); }
  const std::string& path(uint32_t disk) const { return paths_[disk]; }
  std::string PartPath(uint32_t disk, const std::string& file_id) const;
  // kHealthy or kMissing (as found by Open; Claim finds every disk).
  DiskState state(uint32_t disk) const { return missing_[disk] ? DiskState::kMissing : DiskState::kHealthy; }
  bool degraded() const;
  // One line per missing disk for the log, naming it: "degraded: disk 2 (/disks/2) is missing;
  // files are read through parity". Empty when every disk is there.
  std::vector<std::string> DegradedNotes() const;

  DiskRegistry registry() const { return {set_id_, paths_, parity_}; }

 private:
  DiskSet(std::string set_id, std::vector<std::string> paths, uint32_t parity, std::vector<bool> missing)
      : set_id_(std::move(set_id)), paths_(std::move(paths)), parity_(parity), missing_(std::move(missing)) {}
  std::string set_id_;
  std::vector<std::string> paths_;
  uint32_t parity_ = 0;
  std::vector<bool> missing_;  // per disk
};

// Registry file I/O. Writes are atomic (temp file, fsync, rename, fsync directory).
Result<DiskRegistry> ReadRegistry(const std::string& graph_dir);
Status WriteRegistry(const std::string& graph_dir, const DiskRegistry& registry);

// What a disk's identity file says: the set it belongs to and its place in it.
struct DiskIdentity {
  std::string set_id;
  uint32_t index = 0;
  uint32_t count = 0;
};

// The file contents, without I/O (Read*/Write*/Claim use these; the fuzz target
// tests/fuzz/stripe_manifest_fuzz.cc feeds them damaged files). Decode errors say what is
// wrong but not which file: callers add that.
std::string EncodeRegistry(const DiskRegistry& registry);
Result<DiskRegistry> DecodeRegistry(const std::string& text);
std::string EncodeDiskIdentity(const DiskIdentity& identity);
Result<DiskIdentity> DecodeDiskIdentity(const std::string& text);

// Graph directories below `root` (itself included, at most `max_depth` levels down) that
// carry a registry. Hidden directories are not entered.
std::vector<std::string> FindRegistries(const std::string& root, int max_depth);

// Random 128-bit identifier as 32 hex digits.
std::string NewId();
// The disk that holds unit 0 of a file named `name` (files of a graph start on different disks,
// so their first units do not all load one disk).
uint32_t FirstDiskFor(const std::string& name, uint32_t disks);

// Writes `content` to `path` atomically and durably.
Status WriteFileAtomic(const std::string& path, const std::string& content);
Result<std::string> ReadSmallFile(const std::string& path, size_t limit = 1 << 20);

}  // namespace graphfs
