#include "striping/disk_backend.h"

#include "striping/local_disk_backend.h"

namespace graphfs {

Status CheckDiskFileName(const std::string& file) {
  if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos ||
      file.find('\0') != std::string::npos || file.size() > 255)
    return Error(EINVAL, "'" + file + "' is not a name for a file on a disk (a plain name without '/')");
  return Status::Ok();
}

Result<std::unique_ptr<DiskBackend>> OpenDiskBackend(const std::string& spec) {
  std::string dir = spec;
  if (spec.rfind("dir:", 0) == 0) {
    dir = spec.substr(4);
  } else if (const size_t colon = spec.find(':'); colon != std::string::npos && spec.find('/') > colon) {
    return Error(EINVAL, "disk '" + spec + "': unknown backend '" + spec.substr(0, colon) +
                             "' (a disk is a directory: /PATH or dir:/PATH)");
  }
  if (dir.empty() || dir[0] != '/')
    return Error(EINVAL, "disk '" + spec + "': a disk directory must be an absolute path");
  auto local = LocalDiskBackend::Open(dir);
  if (!local.ok()) return local.error();
  return std::unique_ptr<DiskBackend>(std::move(*local));
}

}  // namespace graphfs
