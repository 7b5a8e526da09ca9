#include "engines/jobs/memory_cgroup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "grid/posix_io.h"

namespace graphfs::engine {

MemoryCgroup& MemoryCgroup::operator=(MemoryCgroup&& other) noexcept {
  if (this != &other) {
    (void)Remove();
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

MemoryCgroup::~MemoryCgroup() { (void)Remove(); }

Result<MemoryCgroup> MemoryCgroup::Create(const std::string& name, uint64_t limit_bytes, const std::string& root) {
  MemoryCgroup group;
  const std::string path = root + "/" + name;
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return Error::FromErrno("mkdir " + path + " (is the cgroup-v1 memory controller mounted, are we root?)");
  }
  group.path_ = path;
  const std::string limit = std::to_string(limit_bytes);
  Status s = grid::WriteWholeFile(path + "/memory.limit_in_bytes", limit.data(), limit.size());
  if (!s.ok()) return s.error().Wrap("setting memory limit");
  return group;
}

uint64_t MemoryCgroup::MaxUsage() const {
  if (path_.empty()) return 0;
  auto text = grid::ReadWholeFile(path_ + "/memory.max_usage_in_bytes");
  if (!text.ok()) return 0;
  return std::strtoull(text->c_str(), nullptr, 10);
}

Status MemoryCgroup::Remove() {
  if (path_.empty()) return Status::Ok();
  // The last task may still be leaving the group right after waitpid; retry briefly.
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (::rmdir(path_.c_str()) == 0 || errno == ENOENT) {
      path_.clear();
      return Status::Ok();
    }
    if (errno != EBUSY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Error error = Error::FromErrno("rmdir " + path_);
  path_.clear();
  return error;
}

}  // namespace graphfs::engine
