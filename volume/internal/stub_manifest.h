// What a StripedStub (volume/striped_stub.h) holds: the stub's manifest (striping/manifest.h),
// which the public header names only, so that a front end sees nothing of striping/.
// Not a public header.
#pragma once

#include <memory>
#include <utility>

#include "striping/manifest.h"
#include "volume/striped_stub.h"

namespace graphfs::volume {

struct StripedStub::Manifest : StripeManifest {
  explicit Manifest(StripeManifest manifest) : StripeManifest(std::move(manifest)) {}
};

// A stub that says `manifest`.
inline StripedStub StubOf(StripeManifest manifest) {
  return StripedStub(std::make_shared<const StripedStub::Manifest>(std::move(manifest)));
}

}  // namespace graphfs::volume
