// What an open file or directory of the mount carries between requests.
#pragma once

#include <dirent.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "volume/volume.h"

namespace graphfs {

namespace volume {
class VolumeFile;
}
struct Inode;
struct JobFileHandle;

struct FileHandle {
  enum class Kind { kPlain, kStriped, kMapped, kControl, kJob };
  Kind kind = Kind::kPlain;
  Inode* inode = nullptr;
  UniqueFd fd;                           // kPlain
  UniqueFd direct;                       // kPlain opened with O_DIRECT: aligned reads go here
  // kPlain: counted by Passthrough::Acquire (to be released), and whether the kernel
  // reads and writes it itself (FUSE passthrough; no READ or WRITE reaches the daemon).
  bool route_counted = false;
  bool passthrough = false;
  std::shared_ptr<volume::VolumeFile> striped;  // kStriped
  volume::ReadStreams streams;                  // kStriped: sequential readers of this handle
  std::shared_ptr<const volume::MappedFile> mapped;  // kMapped: an extent map (read-only)
  std::string content;                   // kControl: snapshot taken at open
  std::shared_ptr<JobFileHandle> job;    // kJob: a file of .graphfs/jobs/NAME/

  // The kernel sends RELEASE only after it has the replies to every request on the handle,
  // so a request's last use of the handle (and of its descriptors) happens before Release
  // deletes it. TSan cannot see that ordering when it runs through splice(2) on /dev/fuse,
  // as libfuse's request and reply paths do. A read marks its last use just before it
  // replies, and Release waits on the mark before it deletes, which gives TSan the order.
  void MarkLastUse() { uses_.fetch_add(1, std::memory_order_release); }
  void AfterLastUse() const { (void)uses_.load(std::memory_order_acquire); }

 private:
  std::atomic<uint64_t> uses_{0};
};

struct DirEntry {
  std::string name;
  ino_t ino;
  unsigned char type;  // DT_*
};

struct DirHandle {
  UniqueFd fd;
  bool is_root = false;
  bool is_control = false;
  Inode* jobs_inode = nullptr;  // .graphfs/jobs or a job's directory
  std::vector<DirEntry> entries;  // read at opendir and on rewind; offsets are indexes + 1
  bool loaded = false;
};

}  // namespace graphfs
