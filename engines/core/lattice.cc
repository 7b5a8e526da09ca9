#include "engines/core/lattice.h"

#include <fcntl.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "grid/posix_io.h"

namespace graphfs::engine {

namespace {

uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A uniform double in [0, 1) from (seed, stream, n): every decision is a pure function of
// its inputs, so the output does not depend on the order of generation.
double Uniform(uint64_t seed, uint64_t stream, uint64_t n) {
  return static_cast<double>(Mix(Mix(seed ^ (stream * 0x9e3779b97f4a7c15ull)) + n) >> 11) * 0x1.0p-53;
}

constexpr uint64_t kJitterX = 1, kJitterY = 2, kKeepRight = 3, kKeepDown = 4, kLongFrom = 5, kLongTo = 6;

class Writer {
 public:
  Writer(int fd, bool weighted, std::string path) : fd_(fd), weighted_(weighted), path_(std::move(path)) {
    buffer_.reserve(kFlushBytes + 12);
  }
  Status Edge(uint64_t src, uint64_t dst, double weight) {
    const int32_t s = static_cast<int32_t>(src), t = static_cast<int32_t>(dst);
    const size_t at = buffer_.size();
    buffer_.resize(at + (weighted_ ? 12 : 8));
    std::memcpy(buffer_.data() + at, &s, 4);
    std::memcpy(buffer_.data() + at + 4, &t, 4);
    if (weighted_) {
      const float w = static_cast<float>(weight);
      std::memcpy(buffer_.data() + at + 8, &w, 4);
    }
    ++edges_;
    return buffer_.size() >= kFlushBytes ? Flush() : Status::Ok();
  }
  Status Flush() {
    Status s = grid::WriteAll(fd_, buffer_.data(), buffer_.size(), path_);
    buffer_.clear();
    return s;
  }
  uint64_t edges() const { return edges_; }

 private:
  static constexpr size_t kFlushBytes = 1 << 20;
  int fd_;
  bool weighted_;
  std::string path_;
  std::vector<char> buffer_;
  uint64_t edges_ = 0;
};

}  // namespace

Result<LatticeStats> GenerateLattice(const LatticeOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  if (o.width == 0 || o.height == 0) return Error(EINVAL, "the lattice needs a width and a height of at least 1");
  if (o.width > (uint64_t{1} << 31) || o.height > (uint64_t{1} << 31) ||
      o.width * o.height > static_cast<uint64_t>(INT32_MAX))
    return Error(EINVAL, "a " + std::to_string(o.width) + " x " + std::to_string(o.height) +
                             " lattice has more vertices than 32-bit ids can name (2^31 - 1)");
  if (!(o.drop >= 0.0 && o.drop < 1.0)) return Error(EINVAL, "--drop must be in [0, 1)");
  const uint64_t vertices = o.width * o.height;
  if (o.long_edges > 0 && vertices < 2) return Error(EINVAL, "long edges need at least two vertices");

  auto fd = grid::OpenFile(o.output, O_WRONLY | O_CREAT | O_TRUNC);
  if (!fd.ok()) return fd.error();
  Writer out(fd->get(), o.weighted, o.output);
  auto position = [&](uint64_t v, double* x, double* y) {
    *x = static_cast<double>(v % o.width) + (Uniform(o.seed, kJitterX, v) - 0.5) * 0.5;
    *y = static_cast<double>(v / o.width) + (Uniform(o.seed, kJitterY, v) - 0.5) * 0.5;
  };
  auto length = [&](uint64_t a, uint64_t b) {
    double ax, ay, bx, by;
    position(a, &ax, &ay);
    position(b, &bx, &by);
    return std::hypot(ax - bx, ay - by);
  };
  auto both = [&](uint64_t a, uint64_t b) -> Status {
    const double w = length(a, b);
    GRAPHFS_RETURN_IF_ERROR(out.Edge(a, b, w));
    return out.Edge(b, a, w);
  };
  for (uint64_t v = 0; v < vertices; ++v) {
    const uint64_t x = v % o.width, y = v / o.width;
    if (x + 1 < o.width && Uniform(o.seed, kKeepRight, v) >= o.drop) GRAPHFS_RETURN_IF_ERROR(both(v, v + 1));
    if (y + 1 < o.height && Uniform(o.seed, kKeepDown, v) >= o.drop) GRAPHFS_RETURN_IF_ERROR(both(v, v + o.width));
  }
  for (uint64_t i = 0; i < o.long_edges; ++i) {
    const uint64_t a = static_cast<uint64_t>(Uniform(o.seed, kLongFrom, i) * static_cast<double>(vertices));
    uint64_t b = static_cast<uint64_t>(Uniform(o.seed, kLongTo, i) * static_cast<double>(vertices - 1));
    if (b >= a) ++b;  // never a loop
    GRAPHFS_RETURN_IF_ERROR(both(a, b));
  }
  GRAPHFS_RETURN_IF_ERROR(out.Flush());
  LatticeStats stats;
  stats.vertices = vertices;
  stats.edges = out.edges();
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace graphfs::engine
