#include "volume/graph_schedule.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "volume/striped_source.h"
#include "volume/volume.h"

namespace graphfs::volume {

namespace {

// The cache counts readers by process; the LP loader is the daemon itself.
const uint32_t kLoaderPid = static_cast<uint32_t>(::getpid());

}  // namespace

std::vector<int64_t> GraphSchedule::Stamp(const std::string& dir) {
  return FilesStamp({chunkindex::IndexPath(dir), dir + "/column"});
}

bool GraphSchedule::Fresh() const { return Stamp(dir_) == stamp_; }

Result<std::shared_ptr<GraphSchedule>> GraphSchedule::Open(Volume& volume, const std::string& dir) {
  std::shared_ptr<GraphSchedule> g(new GraphSchedule());
  g->volume_ = &volume;
  g->dir_ = dir;
  g->stamp_ = Stamp(dir);
  struct stat st;
  if (::stat((dir + "/meta").c_str(), &st) != 0)
    return Error(ENOENT, dir + " is not a graph directory (no meta file)");
  if (::stat(chunkindex::IndexPath(dir).c_str(), &st) != 0)
    return Error(ENOENT, dir + " has no chunk index; run `graphfs-index " + dir + "` first");
  auto table = OpenMountedTable(volume, dir);
  if (!table.ok()) return table.error();
  g->table_ = std::make_unique<chunkindex::ChunkTable>(std::move(*table));
  auto finder = chunkindex::ActiveChunkFinder::Load(*g->table_);
  if (!finder.ok()) return finder.error();
  g->finder_ = std::make_unique<chunkindex::ActiveChunkFinder>(std::move(*finder));

  const std::string column = dir + "/column";
  auto file = OpenMountedGraphFile(volume, column, volume.options().direct);
  if (!file.ok()) return file.error();
  if (file->striped) {
    if (volume.cache() == nullptr) return Error(EIO, column + " is striped but the mount has no cache yet");
    g->striped_ = file->striped;
    g->source_ = volume.MakeSource(g->striped_, column);
  } else {
    g->plain_ = std::move(file->plain);
  }

  const uint64_t p = g->table_->partitions();
  std::vector<chunkindex::ChunkInfo> catalog;
  for (const chunkindex::Chunk& c : g->table_->chunks(chunkindex::ChunkFile::kColumn))
    catalog.push_back({c.offset, c.length, static_cast<uint32_t>(c.block_i * p + c.block_j), c.mean_source_degree()});
  GraphSchedule* self = g.get();
  g->scheduler_ = std::make_unique<chunkindex::LpScheduler>(
      std::move(catalog), [self](const chunkindex::LogicalPartition& lp, char* out) { return self->Load(lp, out); });
  return g;
}

GraphSchedule::~GraphSchedule() { scheduler_.reset(); }

Status GraphSchedule::Load(const chunkindex::LogicalPartition& lp, char* out) {
  // Chunks adjacent in the file and in the LP are read as one range.
  std::vector<CopyRange> ranges;
  for (size_t i = 0; i < lp.chunks.size();) {
    const chunkindex::LpChunk& first = lp.chunks[i];
    uint64_t length = first.length;
    size_t k = i + 1;
    while (k < lp.chunks.size() && lp.chunks[k].file_offset == first.file_offset + length &&
           lp.chunks[k].lp_offset == first.lp_offset + length) {
      length += lp.chunks[k].length;
      ++k;
    }
    char* to = out + first.lp_offset;
    if (striped_) {
      ranges.push_back({first.file_offset, length, first.lp_offset});
    } else {
      for (uint64_t done = 0; done < length;) {
        const ssize_t n = ::pread(plain_.get(), to + done, length - done, static_cast<off_t>(first.file_offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Error::FromErrno("read " + dir_ + "/column");
        if (n == 0) return Error(EIO, dir_ + "/column is shorter than its chunk index says; re-run graphfs-index");
        done += static_cast<uint64_t>(n);
      }
    }
    i = k;
  }
  if (!ranges.empty()) {
    Status s = volume_->CopyRanges(source_, striped_->size(), ranges, out, kLoaderPid);
    if (!s.ok()) return s.error().Wrap("chunks of " + dir_ + "/column");
  }
  return Status::Ok();
}

Result<uint64_t> GraphSchedule::SetActive(uint64_t job, std::span<const uint64_t> words) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<chunkindex::ActiveChunk> active;
  GRAPHFS_RETURN_IF_ERROR(finder_->Find(chunkindex::ChunkFile::kColumn, words, &active));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  {
    std::lock_guard<std::mutex> lock(mu_);
    find_seconds_ += seconds;
    ++finds_;
  }
  GRAPHFS_RETURN_IF_ERROR(scheduler_->SetActive(job, active, seconds));
  return static_cast<uint64_t>(active.size());
}

double GraphSchedule::find_seconds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return find_seconds_;
}

uint64_t GraphSchedule::finds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return finds_;
}

Result<std::shared_ptr<GraphSchedule>> GraphSchedules::Get(Volume& volume, const std::string& dir) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_dir_.find(dir);
  if (it != by_dir_.end() && it->second->Fresh()) return it->second;
  // A stale schedule stays with the jobs that use it; new jobs get a fresh one.
  auto g = GraphSchedule::Open(volume, dir);
  if (!g.ok()) return g.error();
  by_dir_[dir] = *g;
  return *g;
}

std::vector<std::shared_ptr<GraphSchedule>> GraphSchedules::List() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<GraphSchedule>> out;
  for (const auto& [dir, g] : by_dir_) out.push_back(g);
  return out;
}

void GraphSchedules::Clear() {
  std::map<std::string, std::shared_ptr<GraphSchedule>> gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    gone.swap(by_dir_);
  }
}

}  // namespace graphfs::volume
