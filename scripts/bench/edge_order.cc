// Does the order of a block's edges change what the push-style engines pay per edge?
// (docs/memory-as-cache.md, twenty-sixth part.) pagerank-delta adds each active edge's share
// into its target's sum through a window of the target partition (engines/core/target_sums.h):
// in a source-sorted block the targets are random within the window (2 MiB of doubles at
// scale 22 with 16 partitions). This times that loop — read the source's push, set the
// target's group bit, add into the window — over one block file in its own order, in
// "blocked" orders (stable by target >> B: the window cut into sub-windows of 2^B targets,
// each small enough for L2, sources ascending inside each) and in target order, and what a
// counting sort into sub-windows costs per edge (what a daemon would pay once per decode).
//
// Build and run (any block of a preprocessed grid; --weighted for 12-byte records):
//   g++ -O2 -march=native -o /tmp/edge_order scripts/bench/edge_order.cc
//   /tmp/edge_order --weighted GRAPH/block-3-5
// Several copies at once (one per block, `&`) share the caches as a job mix does.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct Edge {
  uint32_t source, target;
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  bool weighted = false;
  const char* path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--weighted") == 0) {
      weighted = true;
    } else {
      path = argv[i];
    }
  }
  if (path == nullptr) {
    std::fprintf(stderr, "usage: edge_order [--weighted] BLOCK_FILE\n");
    return 2;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "edge_order: cannot open %s\n", path);
    return 1;
  }
  const size_t record = weighted ? 12 : 8;
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t n = bytes.size() / record;
  if (n == 0) {
    std::fprintf(stderr, "edge_order: %s holds no whole %zu-byte record\n", path, record);
    return 1;
  }
  std::vector<Edge> edges(n);
  for (size_t k = 0; k < n; ++k) std::memcpy(&edges[k], bytes.data() + k * record, sizeof(Edge));
  uint32_t max_source = 0, first_target = UINT32_MAX, last_target = 0;
  for (const Edge& e : edges) {
    max_source = std::max(max_source, e.source);
    first_target = std::min(first_target, e.target);
    last_target = std::max(last_target, e.target);
  }
  const uint64_t window = uint64_t{last_target} - first_target + 1;
  std::vector<double> push(uint64_t{max_source} + 1, 1e-3), sums(window, 0.0);
  std::vector<uint64_t> groups(window / 512 + 1, 0);  // one bit per 8 targets, as TargetSums
  std::printf("%s: %zu edges, targets %u..%u (window %.2f MiB)\n", path, n, first_target, last_target,
              window * 8.0 / (1 << 20));

  auto time_order = [&](const std::vector<Edge>& order, const std::string& name) {
    std::vector<double> runs;
    for (int r = 0; r < 5; ++r) {
      const auto start = std::chrono::steady_clock::now();
      for (const Edge& e : order) {
        const uint64_t i = e.target - first_target;
        groups[i >> 9] |= uint64_t{1} << ((i >> 3) & 63);
        sums[i] += push[e.source];
      }
      runs.push_back(Seconds(start));
    }
    std::sort(runs.begin(), runs.end());
    std::printf("  %-22s %6.2f ns/edge (median of 5)\n", name.c_str(), runs[2] * 1e9 / n);
  };
  time_order(edges, "file order (by source)");
  for (int bits : {15, 14, 13, 12}) {
    std::vector<Edge> blocked = edges;
    std::stable_sort(blocked.begin(), blocked.end(), [&](const Edge& a, const Edge& b) {
      return ((a.target - first_target) >> bits) < ((b.target - first_target) >> bits);
    });
    time_order(blocked, "blocked by 2^" + std::to_string(bits) + " targets");
  }
  std::vector<Edge> by_target = edges;
  std::stable_sort(by_target.begin(), by_target.end(), [](const Edge& a, const Edge& b) { return a.target < b.target; });
  time_order(by_target, "target order");

  // What reordering costs: one counting sort into sub-windows of 2^15 targets.
  const auto start = std::chrono::steady_clock::now();
  const uint64_t buckets = (window >> 15) + 1;
  std::vector<size_t> next(buckets + 1, 0);
  for (const Edge& e : edges) ++next[((e.target - first_target) >> 15) + 1];
  for (uint64_t b = 1; b <= buckets; ++b) next[b] += next[b - 1];
  std::vector<Edge> sorted(n);
  for (const Edge& e : edges) sorted[next[(e.target - first_target) >> 15]++] = e;
  std::printf("  counting sort by 2^15   %6.2f ns/edge (once)\n", Seconds(start) * 1e9 / n);
  return sorted.size() == n ? 0 : 1;
}
