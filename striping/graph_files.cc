#include "striping/graph_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "striping/part_io.h"

namespace graphfs {

Result<std::optional<DiskSet>> RegisteredDiskSet(const std::string& graph_dir) {
  auto registry = ReadRegistry(graph_dir);
  if (!registry.ok()) {
    if (registry.error().code() == ENOENT) return std::optional<DiskSet>();
    return registry.error();
  }
  auto set = DiskSet::Open(*registry);
  if (!set.ok()) return set.error().Wrap("the disks " + graph_dir + " is striped over");
  return std::optional<DiskSet>(std::move(*set));
}

std::optional<StripeManifest> StubManifest(const std::string& path, const struct stat& st) {
  if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > kMaxStubSize) return std::nullopt;
  auto m = ReadManifest(path);
  if (!m.ok() || !*m) return std::nullopt;
  return **m;
}

uint64_t StoredBytes(const std::string& path, const struct stat& st) {
  auto m = StubManifest(path, st);
  return m ? m->stored_size() : static_cast<uint64_t>(st.st_size);
}

Result<const DiskSet*> LazyDiskSet::Get() {
  if (set_) return &*set_;
  std::string tried;
  for (const std::string& dir : dirs_) {
    auto set = RegisteredDiskSet(dir);
    if (!set.ok()) return set.error();
    if (*set) {
      set_ = std::move(**set);
      return &*set_;
    }
    tried += (tried.empty() ? "" : ", ") + dir;
  }
  return Error(ENOENT, "no disk registry (.graphfs/" + std::string(kRegistryFile) + ") in " + tried);
}

Status RemoveGraphFile(const std::string& path, LazyDiskSet& disks) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Error::FromErrno("stat " + path);
  }
  if (st.st_nlink == 1) {
    if (auto m = StubManifest(path, st)) {
      auto set = disks.Get();
      if (!set.ok()) return set.error().Wrap("removing the parts of " + path);
      RemovePartsOf(**set, m->file_id);
    }
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Error::FromErrno("remove " + path);
  return Status::Ok();
}

Status RemoveGraphTree(const std::string& dir, LazyDiskSet& disks) {
  std::error_code ec;
  std::vector<std::string> dirs;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::end(it);
       it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) {
      dirs.push_back(it->path().string());
    } else {
      GRAPHFS_RETURN_IF_ERROR(RemoveGraphFile(it->path().string(), disks));
    }
  }
  if (ec && ec != std::errc::no_such_file_or_directory) return Error(ec.value(), "list " + dir + ": " + ec.message());
  if (ec) return Status::Ok();
  // Deepest first.
  std::sort(dirs.begin(), dirs.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  dirs.push_back(dir);
  for (const std::string& d : dirs)
    if (::rmdir(d.c_str()) != 0 && errno != ENOENT) return Error::FromErrno("remove " + d);
  return Status::Ok();
}

}  // namespace graphfs
