#include "engines/apps/app_common.h"

#include <cmath>
#include <cstdio>

namespace graphfs::engine {

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
  return context;
}

AppResult AppContext::Finish(std::string line, std::string result_file, uint64_t iterations) const {
  AppResult result;
  result.seconds = Elapsed();
  char timing[64];
  std::snprintf(timing, sizeof(timing), " in %.2f s", result.seconds);
  result.line = std::move(line) + timing;
  result.result_file = std::move(result_file);
  result.iterations = iterations;
  result.bytes_read = stream_->stats().bytes_read;
  result.direct_streams = stream_->stats().direct_streams;
  return result;
}

void AppContext::Progress(const char* app, uint64_t iteration, uint64_t active) const {
  if (!config_.verbose) return;
  std::fprintf(stderr, "%s: iteration %lu, %lu active, %.2f s\n", app, static_cast<unsigned long>(iteration),
               static_cast<unsigned long>(active), Elapsed());
}

Error AppContext::StartOutOfRange(int64_t start) const {
  return Error(EINVAL, "start vertex " + std::to_string(start) + " is out of range [0, " +
                           std::to_string(vertices()) + ") of " + layout_.dir());
}

Result<VertexArray<uint32_t>> ComputeOutDegrees(AppContext& context, const std::string& file) {
  auto degree = VertexArray<uint32_t>::Create(context.StatePath(file), context.vertices());
  if (!degree.ok()) return degree.error();
  StreamOptions options;
  options.order = EdgeOrder::kRow;
  uint32_t* d = degree->data();
  auto done = context.stream().Stream<uint64_t>(options, [d](VertexId s, VertexId, float) -> uint64_t {
    AtomicAdd(d[s], 1u);
    return 0;
  });
  if (!done.ok()) return done.error();
  return degree;
}

}  // namespace graphfs::engine
