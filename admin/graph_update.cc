#include "admin/graph_update.h"
#include "admin/version_writer.h"
#include "admin/update_crash_points.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <filesystem>
#include <vector>

#include "chunkindex/chunk_index.h"
#include "chunkindex/index_builder.h"
#include "grid/edge_batch.h"
#include "grid/graph_file.h"
#include "grid/grid_layout.h"
#include "grid/posix_io.h"
#include "striping/disk_set.h"
#include "admin/graph_disks.h"
#include "striping/graph_files.h"
#include "volume/version_reclaim.h"

namespace graphfs::admin {

using namespace graphfs::volume;  // versions, keep and reclaim, removing graph files

using grid::BlockFileName;
using grid::GridLayout;


// When `old_dir` has an up-to-date chunk index, builds one of the same chunk size for `new_dir`.
// `stubs` reads both versions' striped files (null: a plain graph).
Status IndexLikeOld(const std::string& old_dir, const std::string& new_dir, const grid::StubFiles* stubs,
                    UpdateStats& st) {
  std::error_code ec;
  if (!std::filesystem::exists(chunkindex::IndexPath(old_dir), ec)) return Status::Ok();
  auto old = chunkindex::ChunkTable::Open(old_dir, stubs);
  if (!old.ok()) {
    std::fprintf(stderr, "graphfs-update: %s's chunk index is not used (%s): the new graph gets none\n",
                 old_dir.c_str(), old.error().message().c_str());
    return Status::Ok();
  }
  chunkindex::BuildOptions b;
  b.graph_dir = new_dir;
  b.chunk_size = old->chunk_size();
  b.reuse_from = old_dir;  // the source ranges the batch left alone are not scanned again
  b.stubs = stubs;
  auto report = chunkindex::BuildIndex(b);
  if (!report.ok()) return report.error().Wrap("indexing the updated graph");
  st.indexed = true;
  st.index_seconds = report->seconds;
  st.index_ranges_reused = report->ranges_reused;
  st.index_shared = report->shared;
  st.bytes_written += report->index_bytes_written;  // a shared index's linked files are the old one's
  return Status::Ok();
}

// ---- versions in place ----

namespace {

Status FsyncPath(const std::string& path) {
  auto fd = grid::OpenFile(path, O_RDONLY | O_DIRECTORY);
  if (!fd.ok()) return fd.error();
  if (::fsync(fd->get()) != 0) return Error::FromErrno("fsync " + path);
  return Status::Ok();
}

// What a killed run left in the staging directory: a swapped old version is renamed to
// NAME@N; an unswapped new one is removed (it carries its number, above the current one, from
// the start: UpdateInPlace writes it first). Returns what was done, for the log.
Result<std::string> Recover(const std::string& graph, const std::string& staging, const std::string& parent,
                            const std::string& name) {
  std::error_code ec;
  if (!std::filesystem::exists(staging, ec)) return std::string();
  const int64_t staged = VersionOf(staging), current = VersionOf(graph);
  if (staged >= 0 && current >= 0 && staged < current && std::filesystem::exists(staging + "/" + grid::kMetaFile)) {
    const std::string kept = parent + "/" + name + "@" + std::to_string(staged);
    if (std::filesystem::exists(kept, ec)) return Error(EEXIST, "both " + staging + " and " + kept + " hold version " +
                                                                    std::to_string(staged) + "; keep one by hand");
    if (::rename(staging.c_str(), kept.c_str()) != 0) return Error::FromErrno("rename " + staging + " to " + kept);
    GRAPHFS_RETURN_IF_ERROR(FsyncPath(parent));
    return "a killed update had swapped in version " + std::to_string(current) + "; version " +
           std::to_string(staged) + " is now " + kept;
  }
  // With the parts of what it wrote on a striped graph's disks (its own stubs are their last links).
  LazyDiskSet disks({staging, graph});
  GRAPHFS_RETURN_IF_ERROR(RemoveGraphTree(staging, disks));
  return "removed " + staging + " (an update killed before it was swapped in)";
}

Result<UpdateStats> UpdateInPlace(const GridLayout& g, const grid::EdgeBatch& batch, const UpdateOptions& o,
                                  const GraphDisks* disks) {
  const auto [parent, name] = ParentAndName(o.graph_dir);
  const std::string graph = parent + "/" + name, staging = parent + "/." + name + ".update";
  const int64_t version = VersionOf(graph);
  if (version < 0) return Error(EINVAL, graph + "/" + kVersionFile + " is damaged (not a version number)");
  const std::string kept = parent + "/" + name + "@" + std::to_string(version);
  std::error_code ec;
  if (std::filesystem::exists(kept, ec)) return Error(EEXIST, kept + " exists already: the old version would go there");
  if (::mkdir(staging.c_str(), 0755) != 0) return Error::FromErrno("create " + staging);
  UpdateStats st;
  auto fail = [&](const Error& e) {
    LazyDiskSet set({staging, graph});
    (void)RemoveGraphTree(staging, set);  // never swapped in: nothing else refers to it
    return e;
  };
  if (::mkdir((staging + "/.graphfs").c_str(), 0755) != 0) return fail(Error::FromErrno("create " + staging + "/.graphfs"));
  CrashPoint(kCrashStagingMade);
  // The new number first, before any file of the version: a staging directory without one
  // reads as version 0 (a graph never updated has no version file), and a run killed after
  // writing the meta but before the number left what Recover took for the old version 0
  // swapped out — it then renamed the half-built directory to NAME@0, or refused when NAME@0
  // existed (CI saw "both .g.update and g@0 hold version 0" in the versions kill test).
  const std::string number = std::to_string(version + 1) + "\n";
  Status numbered = grid::WriteWholeFile(staging + "/" + kVersionFile, number.data(), number.size());
  if (!numbered.ok()) return fail(numbered.error());
  CrashPoint(kCrashNumbered);
  if (disks != nullptr) {
    // A version of a striped graph names its disk set like the graph (the mount finds it so),
    // with the set's parity: its new files get that many parity units (NewGraphFile), the files
    // it links keep theirs.
    Status registered = WriteRegistry(staging, disks->disks().registry());
    if (!registered.ok()) return fail(registered.error());
  }
  Status written = WriteUpdated(g, batch, o, staging, /*link=*/true, version, disks, st);
  if (!written.ok()) return fail(written.error());
  // The rest of GRAPH (results of jobs, notes) stays with the version it was made on: linked
  // into the new one, a job's rewrite of its result file would change the old version's too.
  for (const auto& e : std::filesystem::directory_iterator(graph, ec)) {
    const std::string n = e.path().filename().string();
    if (!grid::IsGridFileName(n) && n.rfind(".", 0) != 0) st.left_behind.push_back(n);
  }
  if (ec) return fail(Error(ec.value(), "list " + graph + ": " + ec.message()));
  std::sort(st.left_behind.begin(), st.left_behind.end());
  Status indexed = IndexLikeOld(graph, staging, g.stubs(), st);
  if (!indexed.ok()) return fail(indexed.error());
  CrashPoint(kCrashIndexed);
  // The keep count goes with every version.
  auto remembered = KeepOf(graph);
  if (!remembered.ok()) return fail(remembered.error());
  const std::optional<uint64_t> keep = o.keep ? o.keep : *remembered;
  if (keep) {
    Status kept_count = WriteKeep(staging, *keep);
    if (!kept_count.ok()) return fail(kept_count.error());
  }
  // Durable before it becomes GRAPH.
  {
    auto fd = grid::OpenFile(staging, O_RDONLY | O_DIRECTORY);
    if (!fd.ok()) return fail(fd.error());
    if (::syncfs(fd->get()) != 0) return fail(Error::FromErrno("sync " + staging));
  }
  CrashPoint(kCrashSynced);
  // The switch: one atomic exchange; then the old version gets its name.
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, graph.c_str(), RENAME_EXCHANGE) != 0)
    return fail(Error::FromErrno("swap " + staging + " with " + graph));
  GRAPHFS_RETURN_IF_ERROR(FsyncPath(parent));
  CrashPoint(kCrashSwapped);
  if (::rename(staging.c_str(), kept.c_str()) != 0) return Error::FromErrno("rename " + staging + " to " + kept);
  GRAPHFS_RETURN_IF_ERROR(FsyncPath(parent));
  CrashPoint(kCrashOldNamed);
  st.version = static_cast<uint64_t>(version + 1);
  st.old_version = kept;
  if (keep) {
    auto reclaimed = ReclaimVersions(graph, *keep);
    if (reclaimed.ok()) {
      st.reclaim = std::move(*reclaimed);
    } else {
      st.reclaim_error = reclaimed.error().message();
    }
  }
  return st;
}

}  // namespace

Result<std::string> RecoverUpdate(const std::string& graph_dir) {
  const auto [parent, name] = ParentAndName(graph_dir);
  return Recover(parent + "/" + name, parent + "/." + name + ".update", parent, name);
}

Result<UpdateStats> UpdateGraph(const UpdateOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  // In place through a FUSE mount (graphfs's), the maps' marks would be refused (graphfs keeps
  // its xattrs to itself): update the graph in the source directory. (-o reads through it fine.)
  if (struct statfs fs; o.output_dir.empty() && ::statfs(o.graph_dir.c_str(), &fs) == 0 &&
                        fs.f_type == 0x65735546 /* FUSE_SUPER_MAGIC */) {
    return Error(EXDEV, o.graph_dir + " is on a FUSE mount: run graphfs-update on the graph in the mount's source "
                                      "directory (the mount shows the new version at once)");
  }
  if (o.output_dir.empty()) {
    // A killed run first: GRAPH is complete either way, and the staging name must be free.
    auto recovered = RecoverUpdate(o.graph_dir);
    if (!recovered.ok()) return recovered.error();
    if (!recovered->empty()) std::fprintf(stderr, "graphfs-update: %s\n", recovered->c_str());
  }
  // A striped graph (graphfs-stripe): its stubs are read through their parts — by this code and
  // by chunkindex/, which builds the new version's index (the layout carries them: g.stubs()) —
  // and its new bytes go to its disks.
  auto disks = GraphDisks::Open(o.graph_dir);
  if (!disks.ok()) return disks.error();
  const grid::StubFiles* stubs = *disks ? &(*disks)->stubs() : nullptr;
  auto g = GridLayout::Open(o.graph_dir, stubs);
  if (!g.ok()) return g.error();
  auto batch = grid::EdgeBatch::Load(g->meta(), o.add_file, o.delete_file);
  if (!batch.ok()) return batch.error();
  Result<UpdateStats> st = Error(EINVAL, "not run");
  if (o.output_dir.empty()) {
    st = UpdateInPlace(*g, *batch, o, disks->get());
  } else {
    if (::mkdir(o.output_dir.c_str(), 0755) != 0) {
      return Error::FromErrno(errno == EEXIST ? "output directory " + o.output_dir + " exists already"
                                              : "create output directory " + o.output_dir);
    }
    UpdateStats s;
    Status written = WriteUpdated(*g, *batch, o, o.output_dir, /*link=*/false, 0, nullptr, s);
    if (written.ok()) written = IndexLikeOld(o.graph_dir, o.output_dir, stubs, s);
    if (!written.ok()) {
      std::error_code ec;
      std::filesystem::remove_all(o.output_dir, ec);  // ours: nothing of it is a graph yet
      return written.error();
    }
    st = s;
  }
  if (st.ok()) st->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return st;
}

}  // namespace graphfs::admin
