#include "engines/core/rmat.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "grid/edge.h"
#include "grid/posix_io.h"

namespace graphfs::engine {

namespace {

constexpr uint64_t kBatchEdges = 1u << 20;

uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// SplitMix64: tiny, fast, and good enough for sampling quadrants.
class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : state_(seed) {}
  uint64_t Next() { return Mix(state_ += 0x9e3779b97f4a7c15ull); }

 private:
  uint64_t state_;
};

uint32_t Threshold(double p) {
  const double scaled = p * 4294967296.0;
  return scaled >= 4294967295.0 ? 0xffffffffu : static_cast<uint32_t>(scaled);
}

}  // namespace

VertexPermutation::VertexPermutation(int bits, uint64_t seed) {
  mask_ = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  shift_ = std::max(1, bits / 2);
  SplitMix rng(Mix(seed ^ 0x5eedbeefcafef00dull));
  for (int r = 0; r < 3; ++r) {
    mul_[r] = rng.Next() | 1;  // odd: invertible modulo 2^bits
    add_[r] = rng.Next();
  }
}

uint64_t VertexPermutation::operator()(uint64_t v) const {
  // Each step is a bijection on bits-bit integers: x*odd+c, and x ^ (x >> s).
  uint64_t x = v & mask_;
  for (int r = 0; r < 3; ++r) {
    x = (x * mul_[r] + add_[r]) & mask_;
    x ^= x >> shift_;
  }
  return x;
}

Result<RmatStats> GenerateRmat(const RmatOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (options.scale < 1 || options.scale > 31) {
    return Error(EINVAL, "scale must be in [1, 31] (vertex ids are int32), got " + std::to_string(options.scale));
  }
  if (options.edge_factor < 1) return Error(EINVAL, "edge factor must be >= 1");
  const double d = 1.0 - options.a - options.b - options.c;
  if (options.a < 0 || options.b < 0 || options.c < 0 || d < 0) {
    return Error(EINVAL, "R-MAT probabilities must be non-negative and sum to at most 1");
  }
  const uint64_t vertices = uint64_t{1} << options.scale;
  const uint64_t edges = vertices * static_cast<uint64_t>(options.edge_factor);
  const size_t edge_size = options.weighted ? sizeof(grid::WeightedEdge) : sizeof(grid::UnweightedEdge);
  const uint64_t batches = (edges + kBatchEdges - 1) / kBatchEdges;
  const uint32_t ta = Threshold(options.a);
  const uint32_t tab = Threshold(options.a + options.b);
  const uint32_t tabc = Threshold(options.a + options.b + options.c);
  const VertexPermutation permute(options.scale, options.seed);

  auto fd = grid::OpenFile(options.output, O_WRONLY | O_CREAT | O_TRUNC);
  if (!fd.ok()) return fd.error();
  if (::ftruncate(fd->get(), static_cast<off_t>(edges * edge_size)) != 0) {
    return Error::FromErrno("ftruncate " + options.output);
  }

  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_mu;
  std::optional<Error> error;
  auto worker = [&]() {
    std::vector<char> buffer(kBatchEdges * edge_size);
    while (!failed.load()) {
      const uint64_t k = next.fetch_add(1);
      if (k >= batches) break;
      SplitMix rng(Mix(options.seed * 0x9e3779b97f4a7c15ull + k) ^ Mix(k + 0x1234567ull));
      const uint64_t first = k * kBatchEdges;
      const uint64_t count = std::min(kBatchEdges, edges - first);
      char* out = buffer.data();
      for (uint64_t e = 0; e < count; ++e) {
        uint64_t src = 0, dst = 0;
        uint64_t bits = 0;
        for (int level = 0; level < options.scale; ++level) {
          if ((level & 1) == 0) bits = rng.Next();
          const uint32_t r = static_cast<uint32_t>(bits);
          bits >>= 32;
          src <<= 1;
          dst <<= 1;
          if (r < ta) {
          } else if (r < tab) {
            dst |= 1;
          } else if (r < tabc) {
            src |= 1;
          } else {
            src |= 1;
            dst |= 1;
          }
        }
        const int32_t s = static_cast<int32_t>(options.permute ? permute(src) : src);
        const int32_t t = static_cast<int32_t>(options.permute ? permute(dst) : dst);
        std::memcpy(out, &s, 4);
        std::memcpy(out + 4, &t, 4);
        if (options.weighted) {
          // 24 random bits -> k / 65536 in [0, 256), exactly representable.
          const float w = static_cast<float>(rng.Next() >> 40) * (1.0f / 65536.0f);
          std::memcpy(out + 8, &w, 4);
        }
        out += edge_size;
      }
      Status s = grid::PwriteAll(fd->get(), buffer.data(), count * edge_size, first * edge_size, options.output);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = s.error();
        failed.store(true);
      }
    }
  };
  const int threads =
      options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  if (error) return *error;
  if (::close(fd->release()) != 0) return Error::FromErrno("close " + options.output);

  RmatStats stats;
  stats.vertices = vertices;
  stats.edges = edges;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace graphfs::engine
