#include "volume/internal/graph_index.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "chunkindex/chunk_index.h"
#include "chunkindex/fingerprint.h"
#include "common/log.h"
#include "volume/internal/volume_core.h"

namespace graphfs::volume {

namespace {

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// What a graph file looks like through the mount.
Result<chunkindex::FileFingerprint> MountedFingerprint(VolumeCore& core, const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + name;
  auto file = OpenMountedGraphFile(core, path, /*direct_io=*/false);
  if (!file.ok()) return file.error();
  // An ordinary file or an extent map (whose pieces may be striped: read through the core).
  if (file->plain) return chunkindex::FingerprintOf(name, *file->plain);
  const std::shared_ptr<StripedFile>& f = file->striped;
  // A compressed file's bytes are its decoded units.
  std::shared_ptr<PackedFile> packed;
  if (f->manifest().packed) {
    auto opened = PackedFile::Open(f, &core.packed_counters());
    if (!opened.ok()) return opened.error();
    packed = *opened;
  }
  const uint64_t size = packed ? packed->size() : f->size();
  return chunkindex::FingerprintFrom(name, size, MtimeNs(file->st), [&](uint64_t off, uint64_t len, char* buf) {
    auto n = packed ? packed->Read(off, len, buf) : f->Read(off, len, buf);
    if (!n.ok()) return Status(n.error());
    if (*n != len) return Status(Error(EIO, "short read of " + path));
    return Status::Ok();
  });
}

Result<std::shared_ptr<const cache::ChunkLayout>> LayoutOf(const chunkindex::ChunkTable& table,
                                                           chunkindex::ChunkFile file) {
  std::vector<cache::ChunkLayout::Chunk> chunks;
  for (const chunkindex::Chunk& c : table.chunks(file))
    chunks.push_back({c.offset, c.length, c.mean_source_degree()});
  return cache::ChunkLayout::Create(std::move(chunks), table.meta().edges * table.edge_size());
}

}  // namespace

Result<MountedGraphFile> OpenMountedGraphFile(VolumeCore& core, const std::string& path, bool direct_io) {
  MountedGraphFile file;
  // O_NONBLOCK: a FIFO put where a graph file belongs must not hang a daemon thread.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return Error::FromErrno("open " + path);
  if (::fstat(fd.get(), &file.st) != 0) return Error::FromErrno("stat " + path);
  if (!S_ISREG(file.st.st_mode)) return Error(EINVAL, path + " is not a regular file");
  std::optional<StripeManifest> manifest;
  if (S_ISREG(file.st.st_mode) && static_cast<uint64_t>(file.st.st_size) <= kMaxStubSize) {
    auto m = ReadManifestFd(fd.get());
    if (!m.ok()) return m.error();
    manifest = std::move(*m);
  }
  if (!manifest) {
    auto plain = grid::GraphFile::Open(path, &core.stub_files());
    if (!plain.ok()) return plain.error();
    file.plain = std::make_shared<const grid::GraphFile>(std::move(*plain));
    return file;
  }
  if (core.disk_set() == nullptr || core.io() == nullptr)
    return Error(EIO, path + " is striped but no disk set is open");
  auto f = core.OpenFile(std::move(fd), *manifest, /*writable=*/false, direct_io);
  if (!f.ok()) return f.error();
  file.striped = *f;
  return file;
}

std::vector<int64_t> FilesStamp(std::initializer_list<std::string> paths) {
  std::vector<int64_t> s;
  for (const std::string& path : paths) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      s.insert(s.end(), {-1, -1, -1});
      continue;
    }
    s.insert(s.end(), {static_cast<int64_t>(st.st_ino), st.st_size, MtimeNs(st)});
  }
  return s;
}

Result<chunkindex::ChunkTable> OpenMountedTable(VolumeCore& core, const std::string& dir) {
  return chunkindex::ChunkTable::Open(dir, [&](const std::string& name) { return MountedFingerprint(core, dir, name); });
}

GraphIndexes::Stamp GraphIndexes::TakeStamp(const std::string& dir) {
  return Stamp{FilesStamp({chunkindex::IndexPath(dir), dir + "/column", dir + "/row"})};
}

GraphIndexes::Loaded GraphIndexes::Load(VolumeCore& core, const std::string& dir) {
  Loaded l;
  l.stamp = TakeStamp(dir);
  struct stat st;
  if (::stat(chunkindex::IndexPath(dir).c_str(), &st) != 0) return l;  // not indexed: nothing to say
  auto table = OpenMountedTable(core, dir);
  if (!table.ok()) {
    l.error = table.error().message();
    return l;
  }
  auto column = LayoutOf(*table, chunkindex::ChunkFile::kColumn);
  auto row = LayoutOf(*table, chunkindex::ChunkFile::kRow);
  if (!column.ok() || !row.ok()) {
    l.error = "chunk index of " + dir + " does not tile its files (" +
              (column.ok() ? row.error() : column.error()).message() + "); re-run graphfs-index";
    return l;
  }
  l.column = *column;
  l.row = *row;
  return l;
}

std::shared_ptr<const cache::ChunkLayout> GraphIndexes::Find(VolumeCore& core, const std::string& dir,
                                                             const std::string& name, std::string* why) {
  why->clear();
  if (name != "column" && name != "row") return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_dir_.find(dir);
  if (it == by_dir_.end() || !(it->second.stamp == TakeStamp(dir))) {
    Loaded l = Load(core, dir);
    if (!l.error.empty()) LogError("cache: " + l.error + " (its files are cached in stripe-aligned blocks)");
    it = by_dir_.insert_or_assign(dir, std::move(l)).first;
  }
  *why = it->second.error;
  return name == "column" ? it->second.column : it->second.row;
}

std::vector<GraphIndexes::IndexState> GraphIndexes::List() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<IndexState> out;
  for (const auto& [dir, l] : by_dir_) {
    IndexState s;
    s.dir = dir;
    s.loaded = l.column != nullptr;
    s.error = l.error;
    s.column_chunks = l.column ? l.column->size() : 0;
    s.row_chunks = l.row ? l.row->size() : 0;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace graphfs::volume
