#include "engines/apps/app_common.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "engines/core/graphfs_partitions.h"

namespace graphfs::engine {

using grid::EdgeOrder;
using grid::GridLayout;
using grid::VertexId;

Result<std::unique_ptr<AppContext>> AppContext::Open(const AppConfig& config) {
  if (!(config.mem_gb > 0) || !std::isfinite(config.mem_gb)) {
    return Error(EINVAL, "MEM_GB must be a positive number");
  }
  std::unique_ptr<AppContext> context(new AppContext());
  context->start_ = std::chrono::steady_clock::now();
  context->config_ = config;
  auto layout = GridLayout::Open(config.graph_dir);
  if (!layout.ok()) return layout.error();
  context->layout_ = std::move(*layout);
  const uint64_t memory_bytes = static_cast<uint64_t>(config.mem_gb * 1073741824.0);
  context->stream_ = std::make_unique<EdgeStream>(context->layout_, memory_bytes, config.threads);
  if (config.graphfs) {
    // Registered once for the whole run; removed when the context goes.
    if (config.partition_bytes == 0) return Error(EINVAL, "the logical partition size must be > 0");
    auto source = config.partition_source ? config.partition_source(context->layout_, config.partition_bytes)
                                          : OpenGraphfsPartitions(context->layout_, config.partition_bytes,
                                                                  config.reentry > 0 ? kReentryWholeChunksAfter : 0);
    if (!source.ok()) return source.error();
    context->stream_->SetPartitionSource(std::move(*source));
  }
  return context;
}

StreamOptions AppContext::ColumnOptions(uint64_t vertex_state_bytes, const Bitmap* updated) const {
  StreamOptions options;
  options.order = grid::EdgeOrder::kColumn;
  options.vertex_state_bytes = vertex_state_bytes;
  options.diagonal_first = config_.diagonal_first;
  if (updated != nullptr) {
    options.reentry = config_.reentry;
    options.reentry_active = updated;
  }
  return options;
}

Status AppContext::RefuseReentry(const char* app, const char* why) const {
  if (config_.reentry == 0) return Status::Ok();
  return Error(EINVAL, std::string("--reentry does not apply to ") + app + ": " + why);
}

AppResult AppContext::Finish(std::string line, std::string result_file, uint64_t iterations) const {
  AppResult result;
  result.seconds = Elapsed();
  const StreamStats& streamed = stream_->stats();
  char timing[96];
  std::snprintf(timing, sizeof(timing), ", %" PRIu64 " passes in %.2f s", streamed.streams, result.seconds);
  result.line = std::move(line) + timing;
  result.passes = streamed.streams;
  result.reentries = streamed.reentries;
  result.result_file = std::move(result_file);
  result.iterations = iterations;
  const StreamStats& stats = stream_->stats();
  result.bytes_read = stats.bytes_read;
  result.direct_streams = stats.direct_streams;
  result.edges_read = stats.edges_read;
  result.edges_active = stats.edges_active;
  result.integrated = stream_->integrated();
  result.partitions = stats.partitions;
  result.wait_seconds = stats.wait_seconds;
  return result;
}

void AppContext::Progress(const char* app, uint64_t iteration, uint64_t active) {
  if (!config_.verbose) return;
  const StreamStats& now = stream_->stats();
  std::string integrated;
  if (config_.reentry > 0) {
    char text[96];
    std::snprintf(text, sizeof(text), ", %" PRIu64 " reentries", now.reentries - reported_.reentries);
    integrated = text;
  }
  if (stream_->integrated()) {
    char text[128];
    std::snprintf(text, sizeof(text), ", %" PRIu64 " partitions, waited %.3f s", now.partitions - reported_.partitions,
                  now.wait_seconds - reported_.wait_seconds);
    integrated += text;
  }
  std::fprintf(stderr, "%s: iteration %" PRIu64 ", %" PRIu64 " active, %.2f s; %" PRIu64 " bytes, %" PRIu64
                       " edges read, %" PRIu64 " of active sources%s\n",
               config_.state_tag.empty() ? app : (std::string(app) + "[" + config_.state_tag + "]").c_str(), iteration,
               active, Elapsed(), now.bytes_read - reported_.bytes_read,
               now.edges_read - reported_.edges_read, now.edges_active - reported_.edges_active, integrated.c_str());
  reported_ = now;
}

Error AppContext::StartOutOfRange(int64_t start) const {
  return Error(EINVAL, "start vertex " + std::to_string(start) + " is out of range [0, " +
                           std::to_string(vertices()) + ") of " + layout_.dir());
}

Result<VertexArray<uint32_t>> ComputeOutDegrees(AppContext& context, const std::string& file,
                                                VertexArray<uint32_t>* diagonal, const std::string& diagonal_file) {
  auto degree = VertexArray<uint32_t>::Create(context.StatePath(file), context.vertices());
  if (!degree.ok()) return degree.error();
  uint32_t* in_partition = nullptr;
  if (diagonal != nullptr) {
    auto created = VertexArray<uint32_t>::Create(context.StatePath(diagonal_file), context.vertices());
    if (!created.ok()) return created.error();
    *diagonal = std::move(*created);
    in_partition = diagonal->data();
  }
  StreamOptions options;
  options.order = EdgeOrder::kRow;
  uint32_t* d = degree->data();
  const grid::PartitionRange ranges = context.layout().ranges();
  auto done = context.stream().Stream<uint64_t>(options, [&](VertexId s, VertexId t, float) -> uint64_t {
    AtomicAdd(d[s], 1u);
    if (in_partition != nullptr && ranges.PartitionOf(s) == ranges.PartitionOf(t)) AtomicAdd(in_partition[s], 1u);
    return 0;
  });
  if (!done.ok()) return done.error();
  context.ResetProgress();
  return degree;
}

}  // namespace graphfs::engine
