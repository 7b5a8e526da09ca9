// What an open file or directory of the mount carries between requests.
#pragma once

#include <dirent.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "fusefs/striped_read.h"
#include "striping/striped_file.h"

namespace graphfs {

struct Inode;
struct JobFileHandle;

struct FileHandle {
  enum class Kind { kPlain, kStriped, kControl, kJob };
  Kind kind = Kind::kPlain;
  Inode* inode = nullptr;
  UniqueFd fd;                           // kPlain
  UniqueFd direct;                       // kPlain opened with O_DIRECT: aligned reads go here
  std::shared_ptr<StripedFile> striped;  // kStriped
  std::shared_ptr<StripedSource> source;  // kStriped: its units in the cache
  ReadStreams streams;                   // kStriped: sequential readers of this handle
  std::string content;                   // kControl: snapshot taken at open
  std::shared_ptr<JobFileHandle> job;    // kJob: a file of .graphfs/jobs/NAME/
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
