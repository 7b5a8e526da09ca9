// Inodes the kernel knows about, keyed by the backing file's (dev, ino).
//
// Like libfuse's passthrough_hp, each inode holds an O_PATH descriptor of the backing
// file and the kernel's lookup count; the FUSE node id is the Inode's address. Virtual
// inodes (the control directory) have no backing file.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "volume/volume.h"

namespace graphfs {

struct ControlJob;

struct Inode {
  // kJobsDir is .graphfs/jobs; kJobDir and kJobFile are a job's directory and files
  // (fusefs/jobs_dir.h owns them).
  enum class Kind { kBacked, kControlDir, kControlFile, kJobsDir, kJobDir, kJobFile };
  Kind kind = Kind::kBacked;
  UniqueFd fd;  // O_PATH; invalid for virtual inodes
  dev_t dev = 0;
  ino_t ino = 0;
  std::atomic<uint64_t> nlookup{0};
  std::string control_name;  // virtual files: which one
  std::shared_ptr<ControlJob> job;  // kJobDir, kJobFile

  // An extent map (a graph version's `column` or `row`, volume/internal/mapped_piece.h): read-only, its size
  // the map's. Set at lookup before the inode is shared and never changed: a map is written once
  // (a new version is a new file).
  bool mapped = false;
  uint64_t mapped_size = 0;

  std::mutex mu;  // guards the fields below
  std::optional<volume::StripedStub> stub;  // set when the file is striped
  std::shared_ptr<volume::VolumeFile> striped;  // opened on first use
  bool remove_parts = false;               // last name unlinked: drop the parts when forgotten
  // `mapped`: shared by the open handles, closed with the last (open pieces would keep the
  // version they lie in in use, version_reclaim.h).
  std::weak_ptr<const volume::MappedFile> graph_file;
  // Ordinary files (fusefs/passthrough.h): opens in FUSE passthrough, which share one
  // backing id, and opens served by the daemon; the kernel allows only one kind at a time.
  int32_t backing_id = 0;
  uint32_t passthrough_opens = 0;
  uint32_t daemon_opens = 0;
};

class InodeTable {
 public:
  InodeTable();
  ~InodeTable();
  Inode& root() { return *root_; }
  Inode& control_dir() { return *control_dir_; }
  void SetRoot(UniqueFd fd, dev_t dev, ino_t ino);

  // The inode for (dev, ino): an existing one (its nlookup raised) or `fresh`, adopted.
  // Returns the inode to use; `fresh` is dropped if one existed.
  Inode& Intern(std::unique_ptr<Inode> fresh);
  Inode* Find(dev_t dev, ino_t ino);
  // Lowers nlookup; at zero the inode is removed and returned (caller disposes of it).
  std::unique_ptr<Inode> Forget(Inode& inode, uint64_t n);
  // At unmount: removes and returns the inodes whose last name was unlinked (remove_parts),
  // which the kernel will no longer forget.
  std::vector<std::unique_ptr<Inode>> TakeUnlinked();
  Inode* Control(const std::string& name);  // virtual files under .graphfs/

  size_t size();

 private:
  std::mutex mu_;
  std::map<std::pair<dev_t, ino_t>, std::unique_ptr<Inode>> by_id_;
  std::unique_ptr<Inode> root_;
  std::unique_ptr<Inode> control_dir_;
  std::map<std::string, std::unique_ptr<Inode>> control_files_;
};

}  // namespace graphfs
