#include "engines/core/edge_stream.h"

#include <fcntl.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>
#include <thread>

namespace graphfs::engine {

std::vector<ReadTask> PlanReads(const GridLayout& layout, EdgeOrder order, const std::vector<bool>& use_partition,
                                uint64_t first_partition, uint64_t end_partition) {
  const uint64_t p = layout.partitions();
  const uint64_t page = IoPage(layout.edge_type());
  std::vector<ReadTask> reads;
  // `offset` only moves forward: bytes already covered by a rounded-up read
  // are never read again, so every edge is seen exactly once.
  uint64_t offset = 0;
  auto add_block = [&](uint64_t i, uint64_t j) {
    const uint64_t begin = layout.BlockBegin(order, i, j);
    const uint64_t end = layout.BlockEnd(order, i, j);
    // Unlike GridGraph, an empty block costs nothing (GridGraph reads the
    // page around its position when that is not page-aligned).
    if (begin == end) return;
    if (begin >= offset + page) offset = begin / page * page;
    if (end <= offset) return;
    while (end - offset >= kMaxIoBytes) {
      reads.push_back({offset, kMaxIoBytes});
      offset += kMaxIoBytes;
    }
    if (end > offset) {
      const uint64_t length = (end - offset + page - 1) / page * page;
      reads.push_back({offset, length});
      offset += length;
    }
  };
  if (order == EdgeOrder::kColumn) {
    for (uint64_t j = 0; j < p; ++j) {
      for (uint64_t i = first_partition; i < end_partition; ++i) {
        if (use_partition[i]) add_block(i, j);
      }
    }
  } else {
    for (uint64_t i = first_partition; i < end_partition; ++i) {
      if (!use_partition[i]) continue;
      for (uint64_t j = 0; j < p; ++j) add_block(i, j);
    }
  }
  return reads;
}

uint64_t PartitionBatch(uint64_t partitions, uint64_t vertex_state_bytes, uint64_t memory_bytes) {
  const double usable = 0.8 * static_cast<double>(memory_bytes);
  if (vertex_state_bytes == 0 || usable <= 0) return vertex_state_bytes == 0 ? partitions : 1;
  const double windows = std::ceil(static_cast<double>(vertex_state_bytes) / usable);
  if (windows <= 1) return partitions;
  if (windows >= static_cast<double>(partitions)) return 1;
  return std::max<uint64_t>(1, partitions / static_cast<uint64_t>(windows));
}

EdgeStream::EdgeStream(const GridLayout& layout, uint64_t memory_bytes, int threads)
    : layout_(layout), memory_bytes_(memory_bytes) {
  threads_ = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  buffers_.resize(static_cast<size_t>(threads_));
}

Result<EdgeStream::Plan> EdgeStream::MakePlan(const StreamOptions& options) {
  const uint64_t p = layout_.partitions();
  const PartitionRange ranges = layout_.ranges();
  std::vector<bool> use(p, true);
  uint64_t active_bytes = 0;
  for (uint64_t i = 0; i < p; ++i) {
    if (options.active != nullptr) {
      VertexRange r = ranges.Range(i);
      use[i] = options.active->AnyInRange(r.begin, r.end);
    }
    if (!use[i]) continue;
    for (uint64_t j = 0; j < p; ++j) active_bytes += layout_.BlockBytes(i, j);
  }

  Plan plan;
  bool direct = false;
  auto fd = OpenForStreaming(layout_.OrderFile(options.order), memory_bytes_ < active_bytes, &direct);
  if (!fd.ok()) return fd.error();
  plan.fd = std::move(*fd);
  plan.path = layout_.OrderFile(options.order);
  ::posix_fadvise(plan.fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  ++stats_.streams;
  if (direct) ++stats_.direct_streams;

  const uint64_t batch =
      options.order == EdgeOrder::kColumn ? PartitionBatch(p, options.vertex_state_bytes, memory_bytes_) : p;
  for (uint64_t first = 0; first < p; first += batch) {
    const uint64_t end = std::min(p, first + batch);
    StreamPass pass;
    pass.window = {ranges.Range(first).begin, end == p ? layout_.vertices() : ranges.Range(end).begin};
    pass.reads = PlanReads(layout_, options.order, use, first, end);
    if (!pass.reads.empty()) plan.passes.push_back(std::move(pass));
  }
  return plan;
}

Status EdgeStream::RunReads(int fd, const std::string& path, const std::vector<ReadTask>& reads,
                            const std::function<void(int, const char*, size_t)>& on_buffer) {
  if (reads.empty()) return Status::Ok();
  uint64_t longest = 0;
  for (const ReadTask& r : reads) longest = std::max(longest, r.length);
  for (AlignedBuffer& b : buffers_) {
    if (b.size() < longest) b = AlignedBuffer(longest);
  }
  const uint64_t file_end = layout_.FileBytes();
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::atomic<uint64_t> bytes_read{0};
  std::mutex error_mu;
  std::optional<Error> error;

  auto worker = [&](int id) {
    AlignedBuffer& buffer = buffers_[static_cast<size_t>(id)];
    uint64_t local_bytes = 0;
    while (!failed.load(std::memory_order_relaxed)) {
      size_t k = next.fetch_add(1, std::memory_order_relaxed);
      if (k >= reads.size()) break;
      auto got = PreadUpTo(fd, buffer.data(), reads[k].length, reads[k].offset, file_end, path);
      if (!got.ok()) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = got.error();
        failed.store(true);
        break;
      }
      local_bytes += *got;
      on_buffer(id, buffer.data(), *got);
    }
    bytes_read.fetch_add(local_bytes);
  };
  const int n = static_cast<int>(std::min<size_t>(static_cast<size_t>(threads_), reads.size()));
  std::vector<std::thread> threads;
  for (int t = 1; t < n; ++t) threads.emplace_back(worker, t);
  worker(0);
  for (std::thread& t : threads) t.join();

  ++stats_.passes;
  stats_.reads += reads.size();
  stats_.bytes_read += bytes_read.load();
  if (error) return *error;
  return Status::Ok();
}

}  // namespace graphfs::engine
