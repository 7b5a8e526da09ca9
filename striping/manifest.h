// The manifest of a striped file: what replaces the file's bytes in the source directory.
//
// After striping, SOURCE/PATH is a small stub file; its extended attribute
// `user.graphfs.stripe` holds the manifest (JSON): the file's id (its parts are
// DISK/parts/<id>), its logical size, the stripe layout and the disk set. The xattr is
// the single source of truth; it is updated with fsetxattr and made durable by fsync
// of the stub, so size and layout survive crashes once fsync returned.
//
// Version 1: no parity, no block sums (files striped before issue 44). Version 2 adds the
// layout's parity (K) and the block size of the units' sums (docs/parity.md, "The manifest");
// it is a new number so that a daemon of before refuses the file instead of reading it with the
// parity-blind layout. Encode writes version 1 for a file without either, so such files stay
// readable by older daemons.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "striping/stripe_map.h"

namespace graphfs {

inline constexpr const char* kManifestXattr = "user.graphfs.stripe";
// Every xattr under this prefix is graphfs's own: hidden from and refused to users of the mount.
inline constexpr const char* kReservedXattrPrefix = "user.graphfs.";
// Stubs are never larger than this; bigger files are not probed for a manifest.
inline constexpr uint64_t kMaxStubSize = 4096;
inline constexpr const char* kStubText =
    "This file is striped by graphfs: its bytes live on the disks named in the xattr user.graphfs.stripe.\n"
    "Read it through a graphfs mount, or bring the plain file back with scripts/graphfs-unstripe.\n";

// A compressed file (graphfs-stripe --compress): its parts hold the packed stream — one
// checksummed frame per unit, then the directory (packed_directory.h) — while the manifest's
// `size` stays the file's own size.
struct PackedInfo {
  std::string codec;             // what graphfs-stripe asked for (each frame names its own)
  uint64_t stream_size = 0;      // bytes of the packed stream, the directory included
  uint64_t directory_offset = 0; // the directory: [offset, stream_size)
  uint64_t directory_length() const { return stream_size - directory_offset; }
};

// Block sums (unit_sums.h): the smallest block, and graphfs-stripe's default.
inline constexpr uint64_t kMinSumBlock = 4096;
inline constexpr uint64_t kDefaultSumBlock = 64 * 1024;

struct StripeManifest {
  std::string file_id;
  std::string set_id;
  uint64_t size = 0;
  StripeLayout layout;  // layout.parity is 0 in a version 1 manifest
  // Bytes per checksummed block of every unit (a power of two, kMinSumBlock <= B, B divides the
  // unit); 0 when the file has no sums (version 1).
  uint64_t sum_block = 0;
  // XXH3-64 of the whole content at striping time; cleared once the file is modified.
  std::optional<uint64_t> checksum;
  std::optional<PackedInfo> packed;  // set for compressed files
  // Bytes the parts hold: the packed stream of a compressed file, else `size`.
  uint64_t stored_size() const { return packed ? packed->stream_size : size; }

  // The manifest version Encode writes: 2 when the file has parity or sums, else 1.
  uint32_t version() const { return sum_block != 0 || layout.parity != 0 ? 2 : 1; }

  std::string Encode() const;
  // EINVAL for damage ("damaged stripe manifest: ..."), a version other than 1 or 2, a layout
  // StripeMap refuses (parity >= disks among it), or a version 2 manifest whose sum_block is not
  // a power of two from kMinSumBlock that divides the unit.
  static Result<StripeManifest> Decode(const std::string& text);
};

// Reads the manifest of the file at `path` (not following a final symlink). Returns
// nullopt when the file carries none (an ordinary file).
Result<std::optional<StripeManifest>> ReadManifest(const std::string& path, bool follow = false);
Result<std::optional<StripeManifest>> ReadManifestFd(int fd);
Status WriteManifestFd(int fd, const StripeManifest& manifest);

}  // namespace graphfs
