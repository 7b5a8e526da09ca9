// A striped graph's files for the offline tools (graphfs-update, gen-update): the graph's disk
// set (its registry, `.graphfs/disks.json`), opened with an I/O engine of its own; its stubs read
// as the files they stand for (grid::StubFiles: graph versions' extent maps read pieces that are
// stubs, and chunkindex/ reads `row` through them); new files written as striped files over the
// same disks. Removing files with their parts and what a file keeps on the disks are the mount's
// too: striping/graph_files.h. Plain graphs need none of it: GraphDisks::Open says so (nullptr).
//
//   auto disks = GraphDisks::Open(graph_dir);          // nullptr: not striped
//   auto layout = grid::GridLayout::Open(graph_dir, *disks ? &(*disks)->stubs() : nullptr);
//   auto out = NewGraphFile::Create(path, disks->get(), "column");  // striped when disks
#pragma once

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
#include "striping/stripe_parity.h"

namespace graphfs::admin {

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
  // The parity new files get: the set's (disks.json's `parity`, the fewest of its files), so a
  // mount that starts with that many disks missing reads every file of a new version too.
  uint32_t parity() const { return parity_; }
  // Their checksum block (with parity): `column`'s, else the default.
  uint64_t sum_block() const { return sum_block_; }

 private:
  GraphDisks(DiskSet disks, std::unique_ptr<IoEngine> io);
  DiskSet disks_;
  std::unique_ptr<IoEngine> io_;
  std::unique_ptr<grid::StubFiles> stubs_;
  uint64_t unit_ = 16ull << 20;
  uint32_t parity_ = 0;
  uint64_t sum_block_ = kDefaultSumBlock;
};

// A new graph file written at increasing or any offsets, then made durable: a plain file, or
// (with `disks`) a striped file over the graph's disk set — its stub (text and manifest) is
// written and made durable before any part exists, so whoever finds the stub finds the parts
// to remove; the parts hold the bytes, the manifest's size is set at Finish. With the set's
// parity (GraphDisks::parity() > 0) the file gets it as graphfs-stripe gives it
// (StripeParityWriter: parity units and block sums coded row by row from the bytes written), and
// must then be written in order, each write where the last ended (EINVAL otherwise): a row's
// parity is coded once its data units are all there.
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
  // With parity: the writer, and the bytes of the row not yet whole (from row_start_).
  std::unique_ptr<StripeParityWriter> parity_;
  std::string row_;
  uint64_t row_start_ = 0;
  Status WriteRows(const char* data, uint64_t length);
};

}  // namespace graphfs::admin
