// A striped file's stub as the front end sees it: a small regular file under the source
// directory whose extended attribute (its manifest, striping/manifest.h) names the striped
// file whose bytes lie in parts on the disks. The front end finds stubs at lookup, opens them
// through the volume (Volume::OpenStriped) and asks the volume to remove a stub's parts when
// its last name goes (Volume::RemoveParts); what a manifest holds stays the volume's.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/result.h"

namespace graphfs {
struct StripeManifest;
}

namespace graphfs::volume {

class StripedStub {
 public:
  // The stub at `path` (`st`: its stat; `follow`: through a final symlink, as /proc/self/fd
  // paths need): none when it is no stub — not a regular file, larger than a stub can be, or
  // without a manifest —, an error when its manifest is damaged.
  static Result<std::optional<StripedStub>> Read(const std::string& path, const struct stat& st, bool follow = false);
  explicit StripedStub(StripeManifest manifest);

  uint64_t size() const;               // the striped file's size when the stub was read
  const std::string& file_id() const;  // names its parts on the disks
 private:
  friend class Volume;  // opens the file the manifest names
  const StripeManifest& manifest() const { return *manifest_; }
  std::shared_ptr<const StripeManifest> manifest_;  // copies share it
};

// Whether the extended attribute `name` is one users neither see nor set: the stubs' manifests
// live in `user.graphfs.*`.
bool IsReservedXattr(const char* name);

}  // namespace graphfs::volume
