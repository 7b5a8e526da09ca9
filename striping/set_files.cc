#include "striping/set_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>

namespace graphfs {

Result<std::vector<StripedFileRef>> FindStripedFiles(const std::string& root) {
  namespace fs = std::filesystem;
  std::vector<std::string> candidates;
  struct stat st;
  if (::lstat(root.c_str(), &st) != 0) return Error::FromErrno(root);
  if (S_ISREG(st.st_mode)) {
    candidates.push_back(root);
  } else if (S_ISDIR(st.st_mode)) {
    std::error_code ec;
    fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
    if (ec) return Error(ec.value(), root + ": " + ec.message());
    for (; it != end; it.increment(ec)) {
      if (ec) return Error(ec.value(), root + ": " + ec.message());
      std::error_code e2;
      // Stubs are small regular files; anything larger holds its own bytes.
      if (it->is_regular_file(e2) && !it->is_symlink(e2) && it->file_size(e2) <= kMaxStubSize)
        candidates.push_back(it->path().string());
    }
  } else {
    return Error(EINVAL, root + " is neither a directory nor a regular file");
  }
  std::sort(candidates.begin(), candidates.end());
  std::vector<StripedFileRef> found;
  std::set<std::string> ids;
  for (const std::string& path : candidates) {
    auto m = ReadManifest(path);
    if (!m.ok()) return m.error().Wrap(path);
    if (!m->has_value() || !ids.insert((*m)->file_id).second) continue;
    found.push_back({path, **m});
  }
  return found;
}

Result<SetFiles> FindSetFiles(const std::vector<std::string>& paths) {
  SetFiles out;
  std::set<std::string> ids;
  for (const std::string& path : paths) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return Error::FromErrno(path);
    const bool is_file = S_ISREG(st.st_mode);
    std::vector<std::string> graphs;
    if (is_file) {
      std::string dir = std::filesystem::path(path).parent_path().string();
      if (dir.empty()) dir = ".";
      struct stat rs;
      if (::stat((dir + "/" + kRegistryDir + "/" + kRegistryFile).c_str(), &rs) != 0)
        return Error(EINVAL, path + " is not in a striped graph directory (no " + kRegistryDir + "/" + kRegistryFile +
                                 " beside it)");
      graphs.push_back(dir);
    } else {
      graphs = FindRegistries(path, 6);
      if (graphs.empty())
        return Error(EINVAL, path + ": no striped graph at or under it (no " + std::string(kRegistryDir) + "/" +
                                 kRegistryFile + ")");
    }
    for (const std::string& g : graphs) {
      auto r = ReadRegistry(g);
      if (!r.ok()) return r.error();
      if (out.graph_dirs.empty()) {
        out.registry = *r;
      } else if (r->set_id != out.registry.set_id) {
        return Error(EINVAL, g + " is striped over disk set " + r->set_id + ", " + out.graph_dirs.front() +
                                 " over " + out.registry.set_id + ": run the tool once per set");
      } else {
        out.registry.parity = std::min(out.registry.parity, r->parity);
      }
      if (std::find(out.graph_dirs.begin(), out.graph_dirs.end(), g) == out.graph_dirs.end()) out.graph_dirs.push_back(g);
      if (!is_file) {
        auto files = FindStripedFiles(g);
        if (!files.ok()) return files.error();
        for (StripedFileRef& f : *files)
          if (f.manifest.set_id == out.registry.set_id && ids.insert(f.manifest.file_id).second)
            out.files.push_back(std::move(f));
      }
    }
    if (is_file) {
      auto files = FindStripedFiles(path);
      if (!files.ok()) return files.error();
      if (files->empty()) return Error(EINVAL, path + " is not a striped file");
      for (StripedFileRef& f : *files) {
        if (f.manifest.set_id != out.registry.set_id)
          return Error(EINVAL, path + " is striped over disk set " + f.manifest.set_id + ", its graph over " +
                                   out.registry.set_id);
        if (ids.insert(f.manifest.file_id).second) out.files.push_back(std::move(f));
      }
    }
  }
  return out;
}

Status CheckMountSet(const DiskSet& live, const DiskRegistry& registry) {
  if (live.set_id() == registry.set_id) return Status::Ok();
  return Error(EINVAL, "the graphs found are on disk set " + registry.set_id + ", the mount's is " + live.set_id());
}

Result<DiskSet> OpenTaskSet(const DiskSet* live, const DiskRegistry& registry) {
  if (live == nullptr) return DiskSet::Open(registry);
  GRAPHFS_RETURN_IF_ERROR(CheckMountSet(*live, registry));
  return *live;  // a copy shares the mount's state
}

}  // namespace graphfs
