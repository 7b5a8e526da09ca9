// A cgroup-v1 memory cgroup for one job: created with a limit, the job moves
// itself in before exec, and the group is removed when the job is done.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>

#include "common/result.h"

namespace graphfs::engine {

class MemoryCgroup {
 public:
  MemoryCgroup() = default;
  MemoryCgroup(MemoryCgroup&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  MemoryCgroup& operator=(MemoryCgroup&& other) noexcept;
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;
  ~MemoryCgroup();

  // mkdir ROOT/NAME and write memory.limit_in_bytes.
  static Result<MemoryCgroup> Create(const std::string& name, uint64_t limit_bytes,
                                     const std::string& root = "/sys/fs/cgroup/memory");

  const std::string& path() const { return path_; }
  // The path of cgroup.procs; the child writes its pid there (async-signal-safe).
  std::string ProcsFile() const { return path_ + "/cgroup.procs"; }
  // Peak usage (memory.max_usage_in_bytes), 0 if unknown.
  uint64_t MaxUsage() const;
  Status Remove();

 private:
  std::string path_;
};

}  // namespace graphfs::engine
