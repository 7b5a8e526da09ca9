// gen-update --graph G --fraction F [--kind random|clustered] [--seed S] --add ADD --delete DEL
// (An admin tool, not an engine: it reads a striped graph's stubs through their parts,
// admin/graph_disks.h. It is packaged with the engines' generators all the same.)
// A batch for graphfs-update of F x E edges in all: half additions, half deletions of edges the
// graph has (so the edge count stays). random: deletions sampled uniformly from `row`, additions
// with uniform ids. clustered (by source): the sources of the whole batch lie in one narrow range
// of ids [lo, hi] inside one source range (block row) — grown around the source of a random edge
// until its vertices have enough edges —, deletions are their edges (in `row` order), additions
// have sources in [lo, hi] and uniform targets. (So every block of that row changes, but only
// where its sources are in [lo, hi].)
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "admin/graph_disks.h"
#include "common/cli_manpage.h"
#include "common/cli_size.h"
#include "common/random_seed.h"
#include "grid/edge.h"
#include "grid/graph_file.h"
#include "grid/grid_layout.h"
#include "grid/posix_io.h"

int main(int argc, char** argv) {
  std::string graph, add_path, delete_path, kind = "random";
  double fraction = 0.01;
  uint64_t seed = graphfs::kDefaultSeed;
  CLI::App cli("gen-update: a batch of edge additions and deletions for graphfs-update", "gen-update");
  cli.add_option("--graph", graph, "the graph directory")->required();
  cli.add_option("--fraction", fraction, "batch size as a share of the graph's edges (half added, half deleted)")
      ->required()
      ->check(CLI::Range(1e-9, 1.0));
  cli.add_option("--kind", kind, "random or clustered (by source)")
      ->check(CLI::IsMember({"random", "clustered"}))
      ->capture_default_str();
  cli.add_option("--seed", seed, "random seed; same seed, same batch")->capture_default_str();
  cli.add_option("--add", add_path, "output: edges to add")->required();
  cli.add_option("--delete", delete_path, "output: edges to delete")->required();
  graphfs::AddManPageFlag(cli);  // --help-man: the manual page (packaging/)
  // --help: 0; a usage error: 2 (common/cli_size.h).
  if (auto status = graphfs::ParseCommandLine(cli, argc, argv)) return *status;
  // A striped graph's stubs are read through their parts (its disk set, .graphfs/disks.json).
  auto disks = graphfs::admin::GraphDisks::Open(graph);
  if (!disks.ok()) {
    std::fprintf(stderr, "gen-update: error: %s\n", disks.error().message().c_str());
    return 1;
  }
  auto g = graphfs::grid::GridLayout::Open(graph, *disks ? &(*disks)->stubs() : nullptr);
  if (!g.ok()) {
    std::fprintf(stderr, "gen-update: error: %s\n", g.error().message().c_str());
    return 1;
  }
  const size_t r = g->edge_size();
  const uint64_t edges = g->edges(), half = std::max<uint64_t>(1, static_cast<uint64_t>(fraction * edges / 2));
  if (half > edges) {
    std::fprintf(stderr, "gen-update: error: the graph has only %lu edges\n", static_cast<unsigned long>(edges));
    return 1;
  }
  std::mt19937_64 rng(seed);
  // `row` may be an extent map (a graph version made by graphfs-update).
  auto row = graphfs::grid::GraphFile::Open(g->OrderFile(graphfs::grid::EdgeOrder::kRow), g->stubs());
  if (!row.ok()) {
    std::fprintf(stderr, "gen-update: error: %s\n", row.error().message().c_str());
    return 1;
  }
  // Deletions: which records of `row`.
  std::vector<uint64_t> picked;
  uint32_t window_low = 0, window_high = 0;
  if (kind == "clustered") {
    // The source range (block row) of a random edge, streamed twice: counts per source, then the
    // edges of the window.
    const uint64_t at = rng() % edges;
    int32_t s0 = 0;
    if (auto s = row->ReadExact(reinterpret_cast<char*>(&s0), 4, at * r); !s.ok()) {
      std::fprintf(stderr, "gen-update: error: %s\n", s.error().message().c_str());
      return 1;
    }
    const uint64_t p = g->partitions();
    const uint64_t i = g->ranges().PartitionOf(static_cast<uint64_t>(s0));
    const graphfs::grid::VertexRange range = g->ranges().Range(i);
    const uint64_t begin = g->BlockBegin(graphfs::grid::EdgeOrder::kRow, i, 0);
    const uint64_t end = g->BlockEnd(graphfs::grid::EdgeOrder::kRow, i, p - 1);
    std::vector<uint64_t> per_source(range.size(), 0);
    std::string buffer;
    auto stream = [&](auto&& visit) -> bool {
      for (uint64_t pos = begin; pos < end;) {
        const uint64_t n = std::min<uint64_t>(end - pos, (64u << 20) / r * r);
        buffer.resize(n);
        if (auto s = row->ReadExact(buffer.data(), n, pos); !s.ok()) {
          std::fprintf(stderr, "gen-update: error: %s\n", s.error().message().c_str());
          return false;
        }
        for (uint64_t k = 0; k < n; k += r) {
          uint32_t s;
          std::memcpy(&s, buffer.data() + k, 4);
          visit((pos + k) / r, s);
        }
        pos += n;
      }
      return true;
    };
    if (!stream([&](uint64_t, uint32_t s) { ++per_source[s - range.begin]; })) return 1;
    // Grow [lo, hi] around s0, each step to the side whose next vertex has fewer edges.
    uint64_t lo = static_cast<uint64_t>(s0) - range.begin, hi = lo, have = per_source[lo];
    while (have < half && (lo > 0 || hi + 1 < per_source.size())) {
      const bool down = hi + 1 >= per_source.size() || (lo > 0 && per_source[lo - 1] <= per_source[hi + 1]);
      have += down ? per_source[--lo] : per_source[++hi];
    }
    window_low = static_cast<uint32_t>(range.begin + lo);
    window_high = static_cast<uint32_t>(range.begin + hi);
    if (!stream([&](uint64_t record, uint32_t s) {
          if (s >= window_low && s <= window_high && picked.size() < half) picked.push_back(record);
        }))
      return 1;
    if (picked.size() < half)
      std::fprintf(stderr, "gen-update: source range %lu has only %zu edges: the batch deletes those\n",
                   static_cast<unsigned long>(i), picked.size());
  } else {
    picked.reserve(half);
    for (uint64_t k = 0; k < half; ++k) picked.push_back(rng() % edges);
    std::sort(picked.begin(), picked.end());
    picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
  }
  std::string dels(picked.size() * r, '\0');
  uint32_t low = UINT32_MAX, high = 0;
  {
    // Read `row` in runs of consecutive picks.
    size_t k = 0;
    while (k < picked.size()) {
      size_t e = k + 1;
      while (e < picked.size() && picked[e] == picked[e - 1] + 1 && e - k < (64u << 20) / r) ++e;
      auto st = row->ReadExact(dels.data() + k * r, (e - k) * r, picked[k] * r);
      if (!st.ok()) {
        std::fprintf(stderr, "gen-update: error: %s\n", st.error().message().c_str());
        return 1;
      }
      k = e;
    }
    for (size_t at = 0; at < dels.size(); at += r) {
      int32_t s;
      std::memcpy(&s, dels.data() + at, 4);
      low = std::min(low, static_cast<uint32_t>(s));
      high = std::max(high, static_cast<uint32_t>(s));
    }
  }
  // Additions: uniform, or with sources in the deleted run's range.
  const uint64_t v = g->vertices();
  std::string adds;
  adds.reserve(half * r);
  for (uint64_t k = 0; k < half; ++k) {
    const int32_t s = static_cast<int32_t>(kind == "clustered" ? window_low + rng() % (window_high - window_low + 1)
                                                               : rng() % v);
    const int32_t t = static_cast<int32_t>(rng() % v);
    adds.append(reinterpret_cast<const char*>(&s), 4);
    adds.append(reinterpret_cast<const char*>(&t), 4);
    if (r == 12) {
      const float w = static_cast<float>(rng() % 1000) / 10.0f;
      adds.append(reinterpret_cast<const char*>(&w), 4);
    }
  }
  for (const auto& [path, bytes] : {std::pair{add_path, &adds}, std::pair{delete_path, &dels}}) {
    auto st = graphfs::grid::WriteWholeFile(path, bytes->data(), bytes->size());
    if (!st.ok()) {
      std::fprintf(stderr, "gen-update: error: %s\n", st.error().message().c_str());
      return 1;
    }
  }
  std::printf("gen-update: %lu additions, %zu deletions (%s, sources %u..%u of the deletions)\n",
              static_cast<unsigned long>(half), picked.size(), kind.c_str(), low, high);
  return 0;
}
