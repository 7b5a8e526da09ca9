// ReadPackedDirectory(StripedFile&): a file of its own so that packed_directory.cc, the format
// alone, links without StripedFile (its fuzz target builds it by itself).
#include "striping/packed_directory.h"
#include "striping/striped_file.h"

#include <string>

namespace graphfs {

Result<PackedDirectory> ReadPackedDirectory(StripedFile& stream) {
  const StripeManifest m = stream.manifest();
  if (!m.packed) return Error(EINVAL, "striped file " + m.file_id + " is not compressed");
  const std::string what = "directory of compressed file " + m.file_id;
  std::string bytes(m.packed->directory_length(), '\0');
  auto n = stream.Read(m.packed->directory_offset, bytes.size(), bytes.data());
  if (!n.ok()) return n.error().Wrap(what);
  if (*n != bytes.size()) return Error(EIO, what + ": the packed stream ends early");
  auto dir = PackedDirectory::Decode(bytes);
  if (!dir.ok()) return dir.error().Wrap(what);
  if (dir->raw_size() != m.size) {
    return Error(EIO, what + ": its units hold " + std::to_string(dir->raw_size()) + " bytes, the manifest says " +
                          std::to_string(m.size));
  }
  return dir;
}

}  // namespace graphfs
