#include "volume/striped_stub.h"

#include <cstring>

#include "striping/manifest.h"
#include "volume/internal/stub_manifest.h"

namespace graphfs::volume {

Result<std::optional<StripedStub>> StripedStub::Read(const std::string& path, const struct stat& st, bool follow) {
  if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > kMaxStubSize) return std::optional<StripedStub>();
  auto m = ReadManifest(path, follow);
  if (!m.ok()) return m.error();
  if (!m->has_value()) return std::optional<StripedStub>();
  return std::optional<StripedStub>(StubOf(std::move(**m)));
}

uint64_t StripedStub::size() const { return manifest_->size; }
const std::string& StripedStub::file_id() const { return manifest_->file_id; }

bool IsReservedXattr(const char* name) {
  return std::strncmp(name, kReservedXattrPrefix, std::strlen(kReservedXattrPrefix)) == 0;
}

}  // namespace graphfs::volume
