// chunkindex-bench GRAPH_DIR [--densities 0.0001,0.001,0.01,0.1,1] [--reps 21] [--no-read] [--runs]
// Times the active-chunk query (ActiveChunkFinder::Find on `column`) for random
// active sets — uniform and contiguous — in each in-memory form, and compares
// with reading the active chunks (page cache as it is: warm if recently used).
// With --runs, times cutting the active sources' byte runs out of every sorted chunk of
// `column` (SourceRuns::ActiveRuns, what the LP scheduler does per chunk it plans) with
// every chunk in the list form, the forms chosen per chunk, and every chunk in the bitmap form.
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "chunkindex/active_chunk_finder.h"
#include "chunkindex/chunk_index.h"
#include "chunkindex/source_runs.h"
#include "common/cli_size.h"
#include "common/size_parse.h"

namespace {

using graphfs::chunkindex::ActiveChunk;
using graphfs::chunkindex::ActiveChunkFinder;
using graphfs::chunkindex::ChunkFile;
using graphfs::chunkindex::ChunkTable;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<uint64_t> MakeActive(uint64_t vertices, double density, bool contiguous, uint32_t seed) {
  std::vector<uint64_t> words((vertices + 63) / 64, 0);
  std::mt19937_64 rng(seed);
  uint64_t n = static_cast<uint64_t>(density * static_cast<double>(vertices));
  if (density > 0 && n == 0) n = 1;
  if (contiguous) {
    uint64_t start = n >= vertices ? 0 : rng() % (vertices - n);
    for (uint64_t v = start; v < start + n && v < vertices; ++v) words[v / 64] |= uint64_t{1} << (v % 64);
  } else if (density >= 1.0) {
    for (uint64_t v = 0; v < vertices; ++v) words[v / 64] |= uint64_t{1} << (v % 64);
  } else {
    for (uint64_t k = 0; k < n; ++k) {
      uint64_t v = rng() % vertices;
      words[v / 64] |= uint64_t{1} << (v % 64);
    }
  }
  return words;
}

// --runs: the runs of every sorted chunk for each active set in each choice of forms; all must
// give the same runs.
int BenchRuns(const ChunkTable& table, const std::vector<double>& densities, int reps) {
  using graphfs::chunkindex::ByteRun;
  using graphfs::chunkindex::SourceRuns;
  std::vector<SourceRuns> forms;
  const SourceRuns::Forms kinds[] = {SourceRuns::Forms::kList, SourceRuns::Forms::kChosen, SourceRuns::Forms::kBitmap};
  const char* const names[] = {"list", "chosen", "bitmap"};
  for (size_t k = 0; k < std::size(kinds); ++k) {
    const double t0 = Now();
    auto runs = SourceRuns::Load(table, ChunkFile::kColumn, kinds[k]);
    if (!runs.ok()) {
      std::fprintf(stderr, "chunkindex-bench: %s\n", runs.error().message().c_str());
      return 1;
    }
    std::printf("runs %-6s load %.3f s, memory %s (%llu sorted chunks, %llu in the bitmap form)\n",
                names[k], Now() - t0, graphfs::FormatSize(runs->memory_bytes()).c_str(),
                static_cast<unsigned long long>(runs->sorted_chunks()),
                static_cast<unsigned long long>(runs->bitmap_chunks()));
    forms.push_back(std::move(*runs));
  }
  std::printf("\n%-10s %-8s %12s %14s %10s %10s %10s %8s\n", "pattern", "density", "runs", "run bytes", "list ms",
              "chosen ms", "bitmap ms", "list/chosen");
  std::vector<ByteRun> out;
  for (bool contiguous : {false, true}) {
    for (double d : densities) {
      const std::vector<uint64_t> active = MakeActive(table.vertices(), d, contiguous, 42);
      const uint64_t* bits = active.data();
      const std::span<const uint64_t* const> bitmaps(&bits, 1);
      double ms[3] = {0, 0, 0};
      uint64_t runs[3] = {0, 0, 0}, bytes[3] = {0, 0, 0};
      for (size_t f = 0; f < forms.size(); ++f) {
        std::vector<double> times;
        for (int r = 0; r < reps; ++r) {
          runs[f] = bytes[f] = 0;
          const double s = Now();
          for (uint64_t c = 0; c < forms[f].chunk_count(); ++c) {
            if (!forms[f].sorted(c)) continue;
            forms[f].ActiveRuns(c, bitmaps, &out);
            runs[f] += out.size();
            for (const ByteRun& run : out) bytes[f] += run.length;
          }
          times.push_back(Now() - s);
        }
        ms[f] = Median(times) * 1e3;
      }
      if (runs[0] != runs[1] || bytes[0] != bytes[1] || runs[0] != runs[2] || bytes[0] != bytes[2]) {
        std::fprintf(stderr, "chunkindex-bench: the forms disagree at density %g\n", d);
        return 1;
      }
      std::printf("%-10s %-8g %12llu %14s %10.3f %10.3f %10.3f %10.2fx\n", contiguous ? "contiguous" : "uniform", d,
                  static_cast<unsigned long long>(runs[1]), graphfs::FormatSize(bytes[1]).c_str(), ms[0], ms[1], ms[2],
                  ms[1] > 0 ? ms[0] / ms[1] : 0.0);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Micro-benchmark of the active-chunk query against reading the active chunks."};
  std::string graph, densities_text = "0.0001,0.001,0.01,0.1,1";
  int reps = 21;
  bool no_read = false, runs = false;
  app.add_option("graph", graph, "indexed graph directory")->required();
  app.add_option("--densities", densities_text, "fractions of active vertices, comma-separated");
  app.add_option("--reps", reps, "query repetitions per point (median reported)");
  app.add_flag("--no-read", no_read, "do not time reading the active chunks");
  app.add_flag("--runs", runs, "time cutting the active sources' runs out of the sorted chunks instead");
  // --help: 0; a usage error: 2 (common/cli_size.h).
  if (auto status = graphfs::ParseCommandLine(app, argc, argv)) return *status;
  std::vector<double> densities;
  for (const std::string& d : graphfs::SplitList(densities_text, ',')) densities.push_back(std::atof(d.c_str()));

  double t0 = Now();
  auto table = ChunkTable::Open(graph);
  if (!table.ok()) {
    std::fprintf(stderr, "chunkindex-bench: %s\n", table.error().message().c_str());
    return 1;
  }
  std::printf("graph %s: %llu vertices, %zu chunks per file, chunk size %s; table open %.3f s\n", graph.c_str(),
              static_cast<unsigned long long>(table->vertices()), table->chunks(ChunkFile::kColumn).size(),
              graphfs::FormatSize(table->chunk_size()).c_str(), Now() - t0);
  if (runs) return BenchRuns(*table, densities, reps);

  using Path = ActiveChunkFinder::Path;
  struct Variant {
    const char* name;
    ActiveChunkFinder::Form form;
    std::vector<Path> paths;  // measured with one loaded finder
  };
  // auto: the per-chunk choice of forms plus the inverted form, cheapest path per query;
  // also forced forward / inverted; list and bitmap: every chunk in one form, forward only.
  const Variant variants[] = {{"auto", ActiveChunkFinder::Form::kAuto, {Path::kCheapest, Path::kForward, Path::kInverted}},
                              {"list", ActiveChunkFinder::Form::kList, {Path::kForward}},
                              {"bitmap", ActiveChunkFinder::Form::kBitmap, {Path::kForward}}};
  const char* const columns[] = {"auto ms", "forward ms", "inverted ms", "list ms", "bitmap ms"};
  struct Point {
    bool contiguous;
    double density;
    std::vector<uint64_t> active;
    double ms[5] = {0, 0, 0, 0, 0};
    std::vector<ActiveChunk> result;
  };
  std::vector<Point> points;
  for (bool contiguous : {false, true}) {
    for (double d : densities) points.push_back({contiguous, d, MakeActive(table->vertices(), d, contiguous, 42)});
  }
  // One form in memory at a time (at scale 24 with small chunks a form can take hundreds of MiB).
  size_t column = 0;
  for (size_t k = 0; k < std::size(variants); ++k) {
    t0 = Now();
    auto f = ActiveChunkFinder::Load(*table, variants[k].form, /*inverted=*/k == 0);
    if (!f.ok()) {
      std::fprintf(stderr, "chunkindex-bench: %s\n", f.error().message().c_str());
      return 1;
    }
    std::printf("form %-6s load %.3f s, memory %s (range %llu, bitmap %llu, list %llu contents)%s\n", variants[k].name,
                Now() - t0, graphfs::FormatSize(f->memory_bytes()).c_str(),
                static_cast<unsigned long long>(f->count(ActiveChunkFinder::Form::kAuto)),
                static_cast<unsigned long long>(f->count(ActiveChunkFinder::Form::kBitmap)),
                static_cast<unsigned long long>(f->count(ActiveChunkFinder::Form::kList)),
                k == 0 ? " + inverted form" : "");
    std::vector<ActiveChunk> out;
    for (Path path : variants[k].paths) {
      f->set_path(path);
      for (Point& p : points) {
        std::vector<double> times;
        for (int r = 0; r < reps; ++r) {
          double s = Now();
          graphfs::Status st = f->Find(ChunkFile::kColumn, p.active, &out);
          times.push_back(Now() - s);
          if (!st.ok()) {
            std::fprintf(stderr, "chunkindex-bench: %s\n", st.error().message().c_str());
            return 1;
          }
        }
        p.ms[column] = Median(times) * 1e3;
        if (column == 0) {
          p.result = out;
        } else if (out.size() != p.result.size()) {
          std::fprintf(stderr, "chunkindex-bench: forms disagree\n");
          return 1;
        }
      }
      ++column;
    }
  }

  int fd = ::open((graph + "/column").c_str(), O_RDONLY);
  std::vector<char> buffer(16 << 20);
  std::printf("\n%-10s %-8s %8s %14s %10s %10s %11s %10s %10s %10s %10s\n", "pattern", "density", "active",
              "active bytes", columns[0], columns[1], columns[2], columns[3], columns[4], "read ms", "read/auto");
  for (const Point& p : points) {
    uint64_t bytes = 0;
    for (const ActiveChunk& a : p.result) bytes += table->chunks(ChunkFile::kColumn)[a.id].length;
    double read_ms = 0;
    if (!no_read && fd >= 0) {
      double s = Now();
      for (const ActiveChunk& a : p.result) {
        const auto& c = table->chunks(ChunkFile::kColumn)[a.id];
        for (uint64_t off = 0; off < c.length;) {
          size_t n = static_cast<size_t>(std::min<uint64_t>(buffer.size(), c.length - off));
          ssize_t got = ::pread(fd, buffer.data(), n, static_cast<off_t>(c.offset + off));
          if (got <= 0) break;
          off += static_cast<uint64_t>(got);
        }
      }
      read_ms = (Now() - s) * 1e3;
    }
    std::printf("%-10s %-8g %8zu %14s %10.3f %10.3f %11.3f %10.3f %10.3f %10.1f %9.0fx\n",
                p.contiguous ? "contiguous" : "uniform", p.density, p.result.size(), graphfs::FormatSize(bytes).c_str(),
                p.ms[0], p.ms[1], p.ms[2], p.ms[3], p.ms[4], read_ms, p.ms[0] > 0 ? read_ms / p.ms[0] : 0.0);
  }
  if (fd >= 0) ::close(fd);
  return 0;
}
