// A striped graph's files for the offline tools (graphfs-update and its reclaims): the graph's
// disk set (its registry, `.graphfs/disks.json`), opened with an I/O engine of its own; its
// stubs read as the files they stand for (grid::StubFiles: graph versions' extent maps read
// pieces that are stubs, and chunkindex/ reads `row` through them); new files written as striped
// files over the same disks; files removed with their parts when their last link goes; and what
// a file keeps on the disks. Plain graphs need none of it: GraphDisks::Open says so (nullptr).
//
//   auto disks = GraphDisks::Open(graph_dir);          // nullptr: not striped
//   grid::ScopedDefaultStubFiles scope(&(*disks)->stubs());
//   auto out = NewGraphFile::Create(path, disks->get(), "column");  // striped when disks
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "grid/graph_file.h"
#include "striping/disk_set.h"
#include "striping/io_engine.h"
#include "striping/manifest.h"
#include "striping/stripe_map.h"

namespace graphfs::volume {

class GraphDisks {
 public:
  // The disk set `graph_dir` is striped over, every disk checked; nullptr when the directory
  // has no registry (a plain graph).
  static Result<std::unique_ptr<GraphDisks>> Open(const std::string& graph_dir);
  ~GraphDisks();

  const DiskSet& disks() const { return disks_; }
  IoEngine* io() const { return io_.get(); }
  // Reads stubs of this set through their parts (a compressed one decoded); ordinary files are
  // left to grid/. A stub of another set is an error naming it.
  const grid::StubFiles& stubs() const { return *stubs_; }
  // The stripe unit new files get: the one `column` was striped with, else 16 MiB.
  uint64_t unit() const { return unit_; }

 private:
  GraphDisks(DiskSet disks, std::unique_ptr<IoEngine> io);
  DiskSet disks_;
  std::unique_ptr<IoEngine> io_;
  std::unique_ptr<grid::StubFiles> stubs_;
  uint64_t unit_ = 16ull << 20;
};

// A new graph file written at increasing or any offsets, then made durable: a plain file, or
// (with `disks`) a striped file over the graph's disk set — its stub (text and manifest) is
// written and made durable before any part exists, so whoever finds the stub finds the parts
// to remove; the parts hold the bytes, the manifest's size is set at Finish.
class NewGraphFile {
 public:
  // `path` must not exist. `disks` null: a plain file.
  static Result<std::unique_ptr<NewGraphFile>> Create(const std::string& path, const GraphDisks* disks);
  Status Write(const char* data, uint64_t length, uint64_t offset);
  // Everything durable (parts, then the stub's manifest with the size written so far).
  Status Finish();

 private:
  NewGraphFile() = default;
  std::string path_;
  UniqueFd fd_;  // the plain file, or the stub
  const GraphDisks* disks_ = nullptr;
  std::optional<StripeManifest> manifest_;
  std::optional<StripeMap> map_;
  std::vector<UniqueFd> parts_;
  uint64_t size_ = 0;
};

// The manifest of the stub at `path` when it is one (nullopt for anything else, also on errors
// reading it: callers use this for accounting and removal, where a non-stub is simply a file).
std::optional<StripeManifest> StubManifest(const std::string& path, const struct stat& st);
// The bytes a file keeps: a stub's parts (what they store), else its own size.
uint64_t StoredBytes(const std::string& path, const struct stat& st);
// The disk set of a graph's stubs for removing their parts, opened when first needed from the
// first of `registry_dirs` (graph directories) that has a registry.
class LazyDiskSet {
 public:
  explicit LazyDiskSet(std::vector<std::string> registry_dirs) : dirs_(std::move(registry_dirs)) {}
  Result<const DiskSet*> Get();

 private:
  std::vector<std::string> dirs_;
  std::optional<DiskSet> set_;
};
// Removes `path` (not a directory); when it is the last link of a stub, its parts first — so a
// kill in between leaves a stub whose parts are gone, which the next removal finishes, never
// parts no stub names. A stub whose disk set cannot be opened is kept and the error returned.
Status RemoveGraphFile(const std::string& path, LazyDiskSet& disks);
// Removes the directory `dir` and everything in it so (RemoveGraphFile for each file); a missing
// one is nothing to do.
Status RemoveGraphTree(const std::string& dir, LazyDiskSet& disks);

}  // namespace graphfs::volume
