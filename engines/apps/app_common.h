// Shared plumbing of the apps: an opened graph with its edge stream, parallel
// loops over vertices, and atomic updates of mmap'd vertex state.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "engines/apps/apps.h"
#include "engines/core/edge_stream.h"
#include "engines/core/mapped_file.h"
#include "grid/grid_layout.h"

namespace graphfs::engine {

class AppContext {
 public:
  static Result<std::unique_ptr<AppContext>> Open(const AppConfig& config);

  const grid::GridLayout& layout() const { return layout_; }
  EdgeStream& stream() { return *stream_; }
  uint64_t vertices() const { return layout_.vertices(); }
  // Vertex state files live in the graph directory; with a state tag T, "T.NAME", so several
  // instances of one app can run on the same graph.
  std::string StatePath(const std::string& name) const {
    return layout_.Path(config_.state_tag.empty() ? name : config_.state_tag + "." + name);
  }
  const AppConfig& config() const { return config_; }
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  // Fills the common AppResult fields.
  AppResult Finish(std::string line, std::string result_file, uint64_t iterations) const;
  // With --verbose, one line on stderr: the iteration, its active vertices,
  // and what the streams did since the previous line.
  void Progress(const char* app, uint64_t iteration, uint64_t active);
  // Leaves the streams so far (e.g. the out-degree pass) out of the next Progress line.
  void ResetProgress() { reported_ = stream_->stats(); }
  Error StartOutOfRange(int64_t start) const;
  // A column stream's options for this app: the order, --diagonal-first and, for relaxations,
  // --reentry from the vertices in `updated` (the iteration's next active set).
  StreamOptions ColumnOptions(uint64_t vertex_state_bytes, const Bitmap* updated = nullptr) const;
  // The error for --reentry given to an app that cannot re-enter loaded edges, with the reason.
  Status RefuseReentry(const char* app, const char* why) const;

  // Calls fn(v) -> T for every vertex on all threads; returns the sum.
  template <typename T, typename Fn>
  T ForEachVertex(Fn&& fn) const {
    const uint64_t n = vertices();
    const int threads = static_cast<int>(std::min<uint64_t>(static_cast<uint64_t>(stream_->threads()), std::max<uint64_t>(1, n / 4096)));
    std::vector<T> partial(static_cast<size_t>(threads), T{});
    auto body = [&](int t) {
      const uint64_t begin = n * static_cast<uint64_t>(t) / static_cast<uint64_t>(threads);
      const uint64_t end = n * static_cast<uint64_t>(t + 1) / static_cast<uint64_t>(threads);
      T sum{};
      for (uint64_t v = begin; v < end; ++v) sum += fn(static_cast<grid::VertexId>(v));
      partial[static_cast<size_t>(t)] = sum;
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(body, t);
    body(0);
    for (std::thread& th : pool) th.join();
    T total{};
    for (const T& p : partial) total += p;
    return total;
  }

 private:
  AppContext() = default;
  AppConfig config_;
  grid::GridLayout layout_;
  std::unique_ptr<EdgeStream> stream_;
  std::chrono::steady_clock::time_point start_;
  StreamStats reported_;  // stream counters at the last Progress line
};

template <typename T>
T AtomicLoad(const T& slot) {
  return std::atomic_ref<const T>(slot).load(std::memory_order_relaxed);
}

// Lowers `slot` to `value` if that is smaller; true if this call lowered it.
template <typename T>
bool WriteMin(T& slot, T value) {
  std::atomic_ref<T> ref(slot);
  T current = ref.load(std::memory_order_relaxed);
  while (value < current) {
    if (ref.compare_exchange_weak(current, value, std::memory_order_relaxed)) return true;
  }
  return false;
}

template <typename T>
void AtomicAdd(T& slot, T value) {
  std::atomic_ref<T>(slot).fetch_add(value, std::memory_order_relaxed);
}

// Compute the out-degree of every vertex with one source-oriented (row) pass; with `diagonal`,
// also how many of those edges stay in the vertex's partition (blocks (i, i)) into *diagonal, a
// state file named `diagonal_file`.
Result<VertexArray<uint32_t>> ComputeOutDegrees(AppContext& context, const std::string& file,
                                                VertexArray<uint32_t>* diagonal = nullptr,
                                                const std::string& diagonal_file = "");

}  // namespace graphfs::engine
