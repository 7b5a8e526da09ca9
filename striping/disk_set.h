// The disks a graph is striped over, and proof that they are the right ones.
//
// Every disk directory carries an identity file `.graphfs-disk` naming the set it belongs
// to and its index in that set. A graph directory striped over a set records the set in
// `GRAPH/.graphfs/disks.json` (the registry). Mounting checks every registered disk: a
// missing, foreign or swapped disk is refused with a message naming it, so a wrong
// /etc/fstab line can never serve bytes from the wrong disk.
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
};

class DiskSet {
 public:
  // For graphfs-stripe: claims `paths` as one set. Disks that already carry an identity
  // must all belong to the same set, at the index their position gives; blank disks are
  // stamped. Fails (naming the disk) on foreign or reordered disks.
  static Result<DiskSet> Claim(const std::vector<std::string>& paths);

  // For the mount and offline tools: opens a registered set and verifies each disk.
  static Result<DiskSet> Open(const DiskRegistry& registry);

  const std::string& set_id() const { return set_id_; }
  uint32_t size() const { return static_cast<uint32_t>(paths_.size()); }
  const std::string& path(uint32_t disk) const { return paths_[disk]; }
  std::string PartPath(uint32_t disk, const std::string& file_id) const;

  DiskRegistry registry() const { return {set_id_, paths_}; }

 private:
  DiskSet(std::string set_id, std::vector<std::string> paths) : set_id_(std::move(set_id)), paths_(std::move(paths)) {}
  std::string set_id_;
  std::vector<std::string> paths_;
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
