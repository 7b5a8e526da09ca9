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

namespace graphfs::volume {

class StripedStub {
 public:
  // The stub at `path` (`st`: its stat; `follow`: through a final symlink, as /proc/self/fd
  // paths need): none when it is no stub — not a regular file, larger than a stub can be, or
  // without a manifest —, an error when its manifest is damaged.
  static Result<std::optional<StripedStub>> Read(const std::string& path, const struct stat& st, bool follow = false);

  uint64_t size() const;               // the striped file's size when the stub was read
  const std::string& file_id() const;  // names its parts on the disks

  // The manifest itself (volume/internal/stub_manifest.h, with StubOf that makes a stub of
  // one): the volume opens the file it names; a front end sees its name only.
  struct Manifest;
  explicit StripedStub(std::shared_ptr<const Manifest> manifest) : manifest_(std::move(manifest)) {}
  const Manifest& manifest() const { return *manifest_; }

 private:
  std::shared_ptr<const Manifest> manifest_;  // copies share it
};

// Whether the extended attribute `name` is one users neither see nor set: the stubs' manifests
// live in `user.graphfs.*`.
bool IsReservedXattr(const char* name);

}  // namespace graphfs::volume
