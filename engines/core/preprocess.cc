#include "engines/core/preprocess.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "grid/edge.h"
#include "grid/grid_layout.h"
#include "grid/partition_range.h"
#include "grid/posix_io.h"

namespace graphfs::engine {

using grid::BlockFileName;
using grid::EdgeSize;
using grid::EdgeType;
using grid::FileSize;
using grid::GridMeta;
using grid::kColumnFile;
using grid::kColumnOffsetFile;
using grid::kMaxIoBytes;
using grid::kMetaFile;
using grid::kRowFile;
using grid::kRowOffsetFile;
using grid::OpenFile;
using grid::OpenRegularFile;
using grid::PartitionRange;
using grid::PreadExact;
using grid::PwriteAll;
using grid::UnweightedEdge;
using grid::WeightedEdge;
using grid::WriteAll;
using grid::WriteWholeFile;

namespace {

constexpr uint64_t kChunkBytes = kMaxIoBytes;  // multiple of 8 and 12
constexpr int64_t kMaxPartitions = 1024;       // P*P block files

// Buffered appenders for the P*P block files. Not thread-safe: the scatter
// pass calls it from one committing thread at a time.
class BlockWriters {
 public:
  BlockWriters(std::string dir, uint64_t partitions, size_t edge_size, uint64_t total_buffer_bytes)
      : dir_(std::move(dir)), p_(partitions), bytes_(partitions * partitions, 0), buffers_(partitions * partitions) {
    uint64_t per_block = total_buffer_bytes / (p_ * p_);
    per_block = std::clamp<uint64_t>(per_block, 4096, 4ull << 20);
    capacity_ = per_block / (edge_size * 4096) * (edge_size * 4096);  // whole records and pages
    if (capacity_ == 0) capacity_ = edge_size * 4096;
    // Keep every block open when the fd limit allows; otherwise reopen per flush.
    struct rlimit limit;
    keep_open_ = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && p_ * p_ + 64 < limit.rlim_cur && p_ * p_ <= 16384;
    if (keep_open_) fds_.resize(p_ * p_);
  }

  Status CreateAll() {
    for (uint64_t b = 0; b < p_ * p_; ++b) {
      auto fd = OpenFile(Path(b), O_WRONLY | O_CREAT | O_TRUNC);
      if (!fd.ok()) return fd.error();
      if (keep_open_) fds_[b] = std::move(*fd);
    }
    return Status::Ok();
  }

  Status Append(uint64_t block, const char* data, size_t bytes) {
    bytes_[block] += bytes;
    std::vector<char>& buffer = buffers_[block];
    if (buffer.size() + bytes > capacity_) {
      GRAPHFS_RETURN_IF_ERROR(Flush(block));
      if (bytes >= capacity_) return Write(block, data, bytes);
    }
    if (buffer.capacity() == 0) buffer.reserve(capacity_);
    buffer.insert(buffer.end(), data, data + bytes);
    return Status::Ok();
  }

  Status FlushAll() {
    for (uint64_t b = 0; b < p_ * p_; ++b) GRAPHFS_RETURN_IF_ERROR(Flush(b));
    buffers_.clear();
    fds_.clear();
    return Status::Ok();
  }

  const std::vector<uint64_t>& block_bytes() const { return bytes_; }

 private:
  std::string Path(uint64_t block) const { return dir_ + "/" + BlockFileName(block / p_, block % p_); }

  Status Flush(uint64_t block) {
    std::vector<char>& buffer = buffers_[block];
    if (buffer.empty()) return Status::Ok();
    GRAPHFS_RETURN_IF_ERROR(Write(block, buffer.data(), buffer.size()));
    buffer.clear();
    return Status::Ok();
  }

  Status Write(uint64_t block, const char* data, size_t bytes) {
    if (keep_open_) return WriteAll(fds_[block].get(), data, bytes, Path(block));
    auto fd = OpenFile(Path(block), O_WRONLY | O_APPEND);
    if (!fd.ok()) return fd.error();
    return WriteAll(fd->get(), data, bytes, Path(block));
  }

  std::string dir_;
  uint64_t p_;
  size_t capacity_ = 0;
  bool keep_open_ = false;
  std::vector<uint64_t> bytes_;
  std::vector<std::vector<char>> buffers_;
  std::vector<UniqueFd> fds_;
};

// Pass 1 writes the blocks here, inside the output directory (same filesystem,
// so they can be renamed into place): a graph already in the directory is
// removed only once the whole input has been read and found valid.
constexpr const char* kStagingDir = ".preprocess-staging";

// Creates the output directory and an empty staging directory in it (a killed
// run's staging is swept).
Status PrepareStaging(const std::string& dir, const std::string& staging) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error(ec.value(), "creating " + dir + ": " + ec.message());
  std::filesystem::remove_all(staging, ec);
  if (ec) return Error(ec.value(), "removing " + staging + ": " + ec.message());
  if (::mkdir(staging.c_str(), 0755) != 0) return Error::FromErrno("creating " + staging);
  return Status::Ok();
}

// Removes grid files a previous run may have left (e.g. with another P),
// `meta` first, so that an interruption leaves a directory marked incomplete.
Status ClearGridFiles(const std::string& dir) {
  const std::string meta = dir + "/" + kMetaFile;
  if (::unlink(meta.c_str()) != 0 && errno != ENOENT) return Error::FromErrno("removing " + meta);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (grid::IsGridFileName(entry.path().filename().string()) && ::unlink(entry.path().c_str()) != 0) {
      return Error::FromErrno("removing " + entry.path().string());
    }
  }
  if (ec) return Error(ec.value(), "listing " + dir + ": " + ec.message());
  return Status::Ok();
}

// Moves the staged blocks into the output directory and removes the staging.
Status PublishBlocks(const std::string& staging, const std::string& dir, uint64_t p) {
  for (uint64_t b = 0; b < p * p; ++b) {
    const std::string name = "/" + BlockFileName(b / p, b % p);
    if (::rename((staging + name).c_str(), (dir + name).c_str()) != 0) {
      return Error::FromErrno("rename " + staging + name + " -> " + dir + name);
    }
  }
  if (::rmdir(staging.c_str()) != 0) return Error::FromErrno("removing " + staging);
  return Status::Ok();
}

struct FirstError {
  std::mutex mu;
  std::optional<Error> error;
  std::atomic<bool> failed{false};
  void Set(const Error& e) {
    std::lock_guard<std::mutex> lock(mu);
    if (!error) error = e;
    failed.store(true);
  }
};

template <typename Record>
void StableSortBySource(char* data, size_t bytes) {
  Record* begin = reinterpret_cast<Record*>(data);
  std::stable_sort(begin, begin + bytes / sizeof(Record),
                   [](const Record& a, const Record& b) { return a.source < b.source; });
}

int ThreadCount(int requested) {
  return requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

Result<PreprocessStats> Preprocess(const PreprocessOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (options.edge_type != 0 && options.edge_type != 1) {
    return Error(EINVAL, "edge type must be 0 (unweighted) or 1 (weighted), got " + std::to_string(options.edge_type));
  }
  if (options.vertices < 1 || options.vertices > INT_MAX) {
    return Error(EINVAL, "vertices must be in [1, " + std::to_string(INT_MAX) + "], got " +
                             std::to_string(options.vertices));
  }
  if (options.partitions < 1 || options.partitions > kMaxPartitions) {
    return Error(EINVAL, "partitions must be in [1, " + std::to_string(kMaxPartitions) + "], got " +
                             std::to_string(options.partitions));
  }
  const EdgeType type = static_cast<EdgeType>(options.edge_type);
  const size_t edge_size = EdgeSize(type);
  const uint64_t p = static_cast<uint64_t>(options.partitions);
  const uint64_t vertices = static_cast<uint64_t>(options.vertices);
  const PartitionRange ranges(vertices, p);

  auto input_fd = OpenRegularFile(options.input, O_RDONLY);  // a FIFO would block, a directory read EISDIR
  if (!input_fd.ok()) return input_fd.error();
  auto input_size = FileSize(options.input);
  if (!input_size.ok()) return input_size.error();
  if (*input_size % edge_size != 0) {
    return Error(EINVAL, options.input + ": size " + std::to_string(*input_size) + " bytes is not a multiple of the " +
                             std::to_string(edge_size) + "-byte edge record of edge type " +
                             std::to_string(options.edge_type) + " (wrong -t?)");
  }
  const uint64_t edges = *input_size / edge_size;
  const std::string staging = options.output_dir + "/" + kStagingDir;
  GRAPHFS_RETURN_IF_ERROR(PrepareStaging(options.output_dir, staging));

  // Pass 1: scatter into block files (staged).
  BlockWriters writers(staging, p, edge_size, options.block_buffer_bytes);
  FirstError first_error;
  if (Status created = writers.CreateAll(); !created.ok()) first_error.Set(created.error());
  const uint64_t chunks = (*input_size + kChunkBytes - 1) / kChunkBytes;
  const int threads = ThreadCount(options.threads);
  std::atomic<uint64_t> next_chunk{0};
  std::mutex commit_mu;
  std::condition_variable commit_cv;
  uint64_t committed = 0;  // chunks appended so far, guarded by commit_mu

  auto scatter_worker = [&]() {
    const size_t buffer_bytes = static_cast<size_t>(std::min<uint64_t>(kChunkBytes, *input_size));
    std::vector<char> in(buffer_bytes), out(buffer_bytes);
    std::vector<uint32_t> block_of(buffer_bytes / edge_size);
    std::vector<uint64_t> cursor(p * p + 1);
    while (!first_error.failed.load()) {
      const uint64_t k = next_chunk.fetch_add(1);
      if (k >= chunks) break;
      const uint64_t offset = k * kChunkBytes;
      const size_t bytes = static_cast<size_t>(std::min<uint64_t>(kChunkBytes, *input_size - offset));
      Status read = PreadExact(input_fd->get(), in.data(), bytes, offset, options.input);
      if (!read.ok()) {
        first_error.Set(read.error());
        break;
      }
      // Bucket by block with a counting sort (stable: keeps input order).
      std::fill(cursor.begin(), cursor.end(), 0);
      const size_t n = bytes / edge_size;
      bool bad = false;
      for (size_t e = 0; e < n; ++e) {
        int32_t src, dst;
        std::memcpy(&src, in.data() + e * edge_size, 4);
        std::memcpy(&dst, in.data() + e * edge_size + 4, 4);
        if (src < 0 || dst < 0 || static_cast<uint64_t>(src) >= vertices || static_cast<uint64_t>(dst) >= vertices) {
          first_error.Set(Error(EINVAL, options.input + ": edge " + std::to_string(offset / edge_size + e) +
                                            " (byte offset " + std::to_string(offset + e * edge_size) + ") is " +
                                            std::to_string(src) + " -> " + std::to_string(dst) +
                                            ", but vertex ids must be in [0, " + std::to_string(vertices) + ")"));
          bad = true;
          break;
        }
        const uint32_t block = static_cast<uint32_t>(ranges.PartitionOf(static_cast<uint64_t>(src)) * p +
                                                     ranges.PartitionOf(static_cast<uint64_t>(dst)));
        block_of[e] = block;
        ++cursor[block + 1];
      }
      if (bad) break;
      for (uint64_t b = 1; b <= p * p; ++b) cursor[b] += cursor[b - 1];
      std::vector<uint64_t> start(cursor.begin(), cursor.end());
      for (size_t e = 0; e < n; ++e) {
        std::memcpy(out.data() + cursor[block_of[e]]++ * edge_size, in.data() + e * edge_size, edge_size);
      }
      // Append in chunk order.
      std::unique_lock<std::mutex> lock(commit_mu);
      commit_cv.wait(lock, [&] { return committed == k || first_error.failed.load(); });
      if (first_error.failed.load()) break;
      for (uint64_t b = 0; b < p * p; ++b) {
        if (start[b + 1] == start[b]) continue;
        Status s = writers.Append(b, out.data() + start[b] * edge_size, (start[b + 1] - start[b]) * edge_size);
        if (!s.ok()) {
          first_error.Set(s.error());
          break;
        }
      }
      ++committed;
      commit_cv.notify_all();
      if (options.progress && (committed % 16 == 0 || committed == chunks)) {
        std::fprintf(stderr, "preprocess: scatter %.1f%%\r", 100.0 * static_cast<double>(committed) / chunks);
      }
    }
    commit_cv.notify_all();
  };
  {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(scatter_worker);
    for (std::thread& t : pool) t.join();
  }
  Status scattered = first_error.error ? Status(*first_error.error) : writers.FlushAll();
  if (!scattered.ok()) {
    std::error_code ec;
    std::filesystem::remove_all(staging, ec);  // the directory's previous graph stays as it was
    return scattered.error();
  }
  if (options.progress) std::fprintf(stderr, "\npreprocess: scatter done\n");
  // The input was good: only now does the previous graph go.
  GRAPHFS_RETURN_IF_ERROR(ClearGridFiles(options.output_dir));
  GRAPHFS_RETURN_IF_ERROR(PublishBlocks(staging, options.output_dir, p));

  // Offsets of each block in `column` (j-major) and `row` (i-major).
  const std::vector<uint64_t>& block_bytes = writers.block_bytes();
  std::vector<int64_t> column_offset(p * p + 1, 0), row_offset(p * p + 1, 0);
  for (uint64_t j = 0, k = 0; j < p; ++j) {
    for (uint64_t i = 0; i < p; ++i, ++k) column_offset[k + 1] = column_offset[k] + static_cast<int64_t>(block_bytes[i * p + j]);
  }
  for (uint64_t b = 0; b < p * p; ++b) row_offset[b + 1] = row_offset[b] + static_cast<int64_t>(block_bytes[b]);

  // Pass 2: every block once into `column` and `row`.
  const std::string column_path = options.output_dir + "/" + kColumnFile;
  const std::string row_path = options.output_dir + "/" + kRowFile;
  auto column_fd = OpenFile(column_path, O_WRONLY | O_CREAT | O_TRUNC);
  if (!column_fd.ok()) return column_fd.error();
  auto row_fd = OpenFile(row_path, O_WRONLY | O_CREAT | O_TRUNC);
  if (!row_fd.ok()) return row_fd.error();
  if (::ftruncate(column_fd->get(), static_cast<off_t>(*input_size)) != 0) return Error::FromErrno("ftruncate " + column_path);
  if (::ftruncate(row_fd->get(), static_cast<off_t>(*input_size)) != 0) return Error::FromErrno("ftruncate " + row_path);

  std::atomic<uint64_t> next_block{0};
  std::atomic<uint64_t> blocks_done{0};
  auto concat_worker = [&]() {
    std::vector<char> buffer;
    while (!first_error.failed.load()) {
      const uint64_t b = next_block.fetch_add(1);
      if (b >= p * p) break;
      const uint64_t i = b / p, j = b % p;
      const uint64_t size = block_bytes[b];
      const std::string path = options.output_dir + "/" + BlockFileName(i, j);
      auto fd = OpenFile(path, options.sort_sources ? O_RDWR : O_RDONLY);
      if (!fd.ok()) {
        first_error.Set(fd.error());
        break;
      }
      const uint64_t piece = options.sort_sources ? size : std::min<uint64_t>(size, kChunkBytes);
      if (buffer.size() < piece) buffer.resize(piece);
      for (uint64_t done = 0; done < size;) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(piece, size - done));
        Status s = PreadExact(fd->get(), buffer.data(), n, done, path);
        if (s.ok() && options.sort_sources) {
          if (type == EdgeType::kWeighted) {
            StableSortBySource<WeightedEdge>(buffer.data(), n);
          } else {
            StableSortBySource<UnweightedEdge>(buffer.data(), n);
          }
          s = PwriteAll(fd->get(), buffer.data(), n, 0, path);
        }
        if (s.ok()) s = PwriteAll(column_fd->get(), buffer.data(), n, column_offset[j * p + i] + done, column_path);
        if (s.ok()) s = PwriteAll(row_fd->get(), buffer.data(), n, row_offset[b] + done, row_path);
        if (!s.ok()) {
          first_error.Set(s.error());
          return;
        }
        done += n;
      }
      uint64_t finished = blocks_done.fetch_add(1) + 1;
      if (options.progress && (finished % 64 == 0 || finished == p * p)) {
        std::fprintf(stderr, "preprocess: concatenate %.1f%%\r", 100.0 * static_cast<double>(finished) / (p * p));
      }
    }
  };
  {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(concat_worker);
    for (std::thread& t : pool) t.join();
  }
  if (first_error.error) return *first_error.error;
  if (options.progress) std::fprintf(stderr, "\n");
  if (::close(column_fd->release()) != 0) return Error::FromErrno("close " + column_path);
  if (::close(row_fd->release()) != 0) return Error::FromErrno("close " + row_path);

  GRAPHFS_RETURN_IF_ERROR(WriteWholeFile(options.output_dir + "/" + kColumnOffsetFile, column_offset.data(),
                                         column_offset.size() * sizeof(int64_t)));
  GRAPHFS_RETURN_IF_ERROR(
      WriteWholeFile(options.output_dir + "/" + kRowOffsetFile, row_offset.data(), row_offset.size() * sizeof(int64_t)));
  GridMeta meta;
  meta.edge_type = type;
  meta.vertices = vertices;
  meta.edges = edges;
  meta.partitions = p;
  const std::string meta_text = meta.Format();
  GRAPHFS_RETURN_IF_ERROR(WriteWholeFile(options.output_dir + "/" + kMetaFile, meta_text.data(), meta_text.size()));

  PreprocessStats stats;
  stats.edges = edges;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace graphfs::engine
