#include "engines/core/edge_stream.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include "grid/graph_file.h"

namespace graphfs::engine {

namespace {

// Maps the pages of [data, data + bytes) for reading in one call (Linux 5.14+; best effort:
// without it the reader faults them in as it goes).
void PrefaultForReading(const char* data, size_t bytes) {
#ifndef MADV_POPULATE_READ
  constexpr int MADV_POPULATE_READ = 22;
#endif
  const uintptr_t page = 4096;
  const uintptr_t from = reinterpret_cast<uintptr_t>(data) & ~(page - 1);
  const uintptr_t to = reinterpret_cast<uintptr_t>(data) + bytes;
  (void)::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_READ);
}

// Runs worker(0) here and worker(1..) on threads of their own, at most `threads` in all and
// no more than there are `tasks`; returns when every one has returned.
void OnWorkers(int threads, size_t tasks, const std::function<void(int)>& worker) {
  const int n = static_cast<int>(std::min<size_t>(static_cast<size_t>(threads), tasks));
  std::vector<std::thread> others;
  for (int t = 1; t < n; ++t) others.emplace_back(worker, t);
  worker(0);
  for (std::thread& t : others) t.join();
}

}  // namespace

using grid::AlignedBuffer;
using grid::EdgeOrder;
using grid::GridLayout;
using grid::IoPage;
using grid::kMaxIoBytes;
using grid::OpenForStreaming;
using grid::PartitionRange;
using grid::PreadUpTo;
using grid::VertexRange;

std::vector<ReadTask> PlanReads(const GridLayout& layout, EdgeOrder order, const std::vector<bool>& use_partition,
                                uint64_t first_partition, uint64_t end_partition) {
  const uint64_t p = layout.partitions();
  const uint64_t page = IoPage(layout.edge_type());
  std::vector<ReadTask> reads;
  // `offset` only moves forward: bytes already covered by a rounded-up read
  // are never read again, so every edge is seen exactly once.
  uint64_t offset = 0;
  auto add_block = [&](uint64_t i, uint64_t j) {
    const bool diagonal = i == j;
    const uint64_t begin = layout.BlockBegin(order, i, j);
    const uint64_t end = layout.BlockEnd(order, i, j);
    // Unlike GridGraph, an empty block costs nothing (GridGraph reads the
    // page around its position when that is not page-aligned).
    if (begin == end) return;
    if (begin >= offset + page) offset = begin / page * page;
    if (end <= offset) return;
    while (end - offset >= kMaxIoBytes) {
      reads.push_back({offset, kMaxIoBytes, diagonal});
      offset += kMaxIoBytes;
    }
    if (end > offset) {
      const uint64_t length = (end - offset + page - 1) / page * page;
      reads.push_back({offset, length, diagonal});
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

void DiagonalFirst(std::vector<ReadTask>& reads) {
  std::stable_partition(reads.begin(), reads.end(), [](const ReadTask& r) { return r.diagonal; });
}

uint64_t PartitionBatch(uint64_t partitions, uint64_t vertex_state_bytes, uint64_t memory_bytes) {
  const double usable = kSourceWindowShare * static_cast<double>(memory_bytes);
  if (vertex_state_bytes == 0 || usable <= 0) return vertex_state_bytes == 0 ? partitions : 1;
  const double windows = std::ceil(static_cast<double>(vertex_state_bytes) / usable);
  if (windows <= 1) return partitions;
  if (windows >= static_cast<double>(partitions)) return 1;
  return std::max<uint64_t>(1, partitions / static_cast<uint64_t>(windows));
}

std::vector<ReadTask> PlanPartitionReads(uint64_t bytes, uint64_t page, int threads) {
  constexpr uint64_t kMinPiece = 1 << 20;
  const uint64_t n = static_cast<uint64_t>(std::max(threads, 1));
  auto whole_pages = [page](uint64_t b) { return (b + page - 1) / page * page; };
  // kMaxIoBytes is a multiple of every I/O page, so the clamp keeps whole pages.
  const uint64_t piece = std::min(kMaxIoBytes, std::max(whole_pages((bytes + n - 1) / n), whole_pages(kMinPiece)));
  std::vector<ReadTask> reads;
  for (uint64_t offset = 0; offset < bytes; offset += piece) reads.push_back({offset, std::min(piece, bytes - offset)});
  return reads;
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
  // A graph version's extent map (graphfs-update) only reads as the graph through the mount.
  if (auto mapped = grid::IsExtentMap(layout_.OrderFile(options.order)); mapped.ok() && *mapped) {
    return Error(EINVAL, layout_.OrderFile(options.order) +
                             " is an extent map over other files (a graph version made by graphfs-update): run the "
                             "engine on the graph through the graphfs mount");
  }
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
    if (options.diagonal_first && options.order == EdgeOrder::kColumn) DiagonalFirst(pass.reads);
    if (!pass.reads.empty()) plan.passes.push_back(std::move(pass));
  }
  return plan;
}

void EdgeStream::BeginStream() {
  bad_sources_.store(0);
  bad_targets_.store(0);
  edges_read_.store(0);
  edges_active_.store(0);
  reentries_.store(0);
}

Status EdgeStream::EndStream(EdgeOrder order) {
  stats_.edges_read += edges_read_.load();
  stats_.edges_active += edges_active_.load();
  stats_.reentries += reentries_.load();
  const uint64_t bad_sources = bad_sources_.load(), bad_targets = bad_targets_.load();
  if (bad_sources != 0 || bad_targets != 0) {
    auto count = [](uint64_t n, const char* end) {
      return n == 0 ? std::string() : std::to_string(n) + (n == 1 ? " edge record has a " : " edge records have a ") + end;
    };
    std::string what = count(bad_sources, "source id");
    if (bad_targets != 0) what += (what.empty() ? "" : " and ") + count(bad_targets, "target id");
    const std::string v = std::to_string(layout_.vertices());
    return Error(EINVAL, layout_.OrderFile(order) + (integrated() && order == EdgeOrder::kColumn ? " (logical partitions)" : "") +
                             ": " + what + " outside [0, " + v + ") (meta says " + v +
                             " vertices); the graph is corrupt, or meta is wrong");
  }
  return Status::Ok();
}

Status EdgeStream::RunPasses(const StreamOptions& options, const BufferFn& on_buffer) {
  auto plan = MakePlan(options);
  if (!plan.ok()) return plan.error();
  for (const StreamPass& pass : plan->passes) {
    ++stats_.passes;
    GRAPHFS_RETURN_IF_ERROR(RunReads(plan->fd.get(), plan->path, pass.reads, layout_.FileBytes(),
                                     [&](int worker, const char* data, size_t bytes) {
                                       on_buffer(worker, data, bytes, pass.window);
                                     }));
  }
  return Status::Ok();
}

Status EdgeStream::RunPartitions(const StreamOptions& options, const BufferFn& on_buffer) {
  GRAPHFS_RETURN_IF_ERROR(source_->SetActive(options.active));
  ++stats_.streams;
  // No source windows: the whole vertex state is in memory in integrated mode.
  const VertexRange every_vertex{0, layout_.vertices()};
  const uint64_t edge = layout_.edge_size();
  using Clock = std::chrono::steady_clock;
  // A source that lets the job hold two LPs is asked for the next one on a thread of its own
  // while the reader threads process this one: the round trip (1-2 ms on a loaded 2-core
  // machine, ~17 an iteration at the demo's f = 1) is then off the stream's critical path.
  const bool ahead = source_->AsksAhead();
  auto timed = [&](auto&& get) {
    const Clock::time_point asked = Clock::now();
    Result<LogicalPartition> got = get();
    stats_.wait_seconds += std::chrono::duration<double>(Clock::now() - asked).count();
    return got;
  };
  Result<LogicalPartition> lp = timed([&] { return source_->Next(); });
  for (;;) {
    if (!lp.ok()) return lp.error();
    if (lp->end) return Status::Ok();
    ++stats_.partitions;
    // The bytes to process: the spans' (in memory) or the file's.
    uint64_t bytes = lp->bytes;
    if (!lp->spans.empty()) {
      bytes = 0;
      for (std::span<const char> s : lp->spans) bytes += s.size();
    }
    if (bytes % edge != 0) {
      return Error(EPROTO, lp->path + ": " + std::to_string(bytes) + " bytes is not a whole number of " +
                               std::to_string(edge) + "-byte edge records of " + layout_.dir());
    }
    auto feed = [&](int worker, const char* data, size_t bytes) { on_buffer(worker, data, bytes, every_vertex); };
    std::future<Result<LogicalPartition>> next;
    if (ahead) next = std::async(std::launch::async, [this] { return source_->Next(); });
    Status fed = Status::Ok();
    if (!lp->spans.empty()) {
      RunSpans(*lp, bytes, feed);
    } else {
      fed = RunReads(lp->fd, lp->path, PlanPartitionReads(lp->bytes, IoPage(layout_.edge_type()), threads_), lp->bytes,
                     feed);
    }
    // Our threads are done with it: another job may take the turn while we wait for the next.
    Status ended = lp->turn ? source_->EndTurn() : Status::Ok();
    if (ahead) {
      Result<LogicalPartition> got = timed([&] { return next.get(); });  // joined before any return
      if (!fed.ok()) return fed;
      if (!ended.ok()) return ended;
      lp = std::move(got);
      continue;
    }
    if (!fed.ok()) return fed;
    if (!ended.ok()) return ended;
    GRAPHFS_RETURN_IF_ERROR(source_->Done());
    lp = timed([&] { return source_->Next(); });
  }
}

void EdgeStream::RunSpans(const LogicalPartition& lp, uint64_t total,
                          const std::function<void(int, const char*, size_t)>& on_buffer) {
  // The view is the LP's spans one after another; an edge record may straddle two spans (the
  // daemon's memory of an LP is in blocks, cut where the disks' reads were). The view is cut
  // into tasks of about 1/(kTasksPerThread x threads) of its bytes (at most kMaxIoBytes, at
  // least 1 MiB), at record boundaries: the LP is done when its last task is, and with one task
  // a thread, a thread the daemon's threads took the core from (or given the denser half) kept
  // the other idle at every LP's end.
  constexpr uint64_t kTasksPerThread = 8;
  const uint64_t edge = layout_.edge_size();
  const uint64_t n = static_cast<uint64_t>(threads_);
  const uint64_t target = std::max(
      edge, std::clamp<uint64_t>((total + kTasksPerThread * n - 1) / (kTasksPerThread * n), uint64_t{1} << 20,
                                 kMaxIoBytes) / edge * edge);
  struct Task {
    std::vector<std::span<const char>> spans;
    uint64_t view_offset = 0;  // of its first byte
  };
  std::vector<Task> tasks;
  uint64_t at = 0;  // view offset
  for (std::span<const char> s : lp.spans) {
    while (!s.empty()) {
      if (tasks.empty() || at - tasks.back().view_offset == target) tasks.push_back(Task{{}, at});
      Task& task = tasks.back();
      const uint64_t take = std::min<uint64_t>(s.size(), target - (at - task.view_offset));
      if (!task.spans.empty() && task.spans.back().data() + task.spans.back().size() == s.data()) {  // adjacent
        task.spans.back() = std::span<const char>(task.spans.back().data(), task.spans.back().size() + take);
      } else {
        task.spans.push_back(s.first(take));
      }
      s = s.subspan(take);
      at += take;
    }
  }
  // Spans of at least kInPlaceBytes that hold whole records are handed to on_buffer where they
  // lie; the others are gathered into the worker's buffer first (edge_stream.h says why).
  for (AlignedBuffer& b : buffers_) {
    if (b.size() < target) b = AlignedBuffer(target);
  }
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> gathered{0};
  auto worker = [&](int id) {
    AlignedBuffer& buffer = buffers_[static_cast<size_t>(id)];
    uint64_t local_gathered = 0;
    for (size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < tasks.size();) {
      const Task& task = tasks[k];
      uint64_t filled = 0;  // a task holds at most `target` bytes: the buffer never overflows
      uint64_t view = task.view_offset;
      for (std::span<const char> s : task.spans) {
        const bool whole_records = view % edge == 0 && s.size() % edge == 0;
        if (whole_records && s.size() >= kInPlaceBytes && filled % edge == 0) {
          if (filled > 0) on_buffer(id, buffer.data(), filled);
          local_gathered += filled;
          filled = 0;
          // One call maps the span's pages (shared with the other jobs), not one fault per 64
          // KiB. Only the span's own: between an LP's blocks lie holes of the shared memory,
          // and a read fault in a hole of shmem allocates a page (charged to this job).
          PrefaultForReading(s.data(), s.size());
          on_buffer(id, s.data(), s.size());
        } else {
          std::memcpy(buffer.data() + filled, s.data(), s.size());
          filled += s.size();
        }
        view += s.size();
      }
      if (filled > 0) on_buffer(id, buffer.data(), filled);  // tasks end at a record boundary
      local_gathered += filled;
    }
    gathered.fetch_add(local_gathered);
  };
  OnWorkers(threads_, tasks.size(), worker);
  stats_.reads += tasks.size();
  stats_.bytes_mapped += total;
  stats_.bytes_gathered += gathered.load();
}

Status EdgeStream::RunReads(int fd, const std::string& path, const std::vector<ReadTask>& reads, uint64_t file_end,
                            const std::function<void(int, const char*, size_t)>& on_buffer) {
  if (reads.empty()) return Status::Ok();
  uint64_t longest = 0;
  for (const ReadTask& r : reads) longest = std::max(longest, r.length);
  for (AlignedBuffer& b : buffers_) {
    if (b.size() < longest) b = AlignedBuffer(longest);
  }
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
  OnWorkers(threads_, reads.size(), worker);

  stats_.reads += reads.size();
  stats_.bytes_read += bytes_read.load();
  if (error) return *error;
  return Status::Ok();
}

}  // namespace graphfs::engine
