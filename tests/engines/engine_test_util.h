// Helpers for the engine tests: temporary directories, in-memory edge lists
// written in the binary format, reading result files, running binaries.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "engines/core/preprocess.h"
#include "tests/testutil/file_bytes.h"
#include "tests/testutil/temp_dir.h"

namespace graphfs::engine::testing {

// Preprocesses the edge file `input` into the grid directory `output` (P partitions, two
// threads); a failure is a test failure, and false.
inline bool PreprocessGraph(const std::string& input, const std::string& output, uint32_t vertices,
                            uint32_t partitions, bool weighted, bool sort_sources = false) {
  PreprocessOptions options;
  options.input = input;
  options.output_dir = output;
  options.vertices = vertices;
  options.partitions = partitions;
  options.edge_type = weighted ? 1 : 0;
  options.sort_sources = sort_sources;
  options.threads = 2;
  auto stats = Preprocess(options);
  EXPECT_TRUE(stats.ok()) << stats.error().message();
  return stats.ok();
}

using graphfs::testing::ReadFile;
using graphfs::testing::TempDir;
using graphfs::testing::WriteFile;

struct TestEdge {
  int32_t source;
  int32_t target;
  float weight = 1.0f;
};

struct TestGraph {
  uint32_t vertices = 0;
  bool weighted = false;
  std::vector<TestEdge> edges;
};

inline std::string EdgeBytes(const TestGraph& g) {
  std::string bytes;
  for (const TestEdge& e : g.edges) {
    bytes.append(reinterpret_cast<const char*>(&e.source), 4);
    bytes.append(reinterpret_cast<const char*>(&e.target), 4);
    if (g.weighted) bytes.append(reinterpret_cast<const char*>(&e.weight), 4);
  }
  return bytes;
}

template <typename T>
std::vector<T> ReadArray(const std::string& path) {
  std::string bytes = ReadFile(path);
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

// Random graph: ids drawn from [0, used) with used <= vertices, so ids in
// [used, vertices) are isolated; small ranges produce duplicates and
// self-loops. Weights include exact zeros.
inline TestGraph RandomGraph(uint32_t vertices, uint32_t used, size_t edges, bool weighted, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(used) - 1);
  std::uniform_int_distribution<int> pick(0, 4);
  std::uniform_real_distribution<float> real(0.0f, 256.0f);
  TestGraph g;
  g.vertices = vertices;
  g.weighted = weighted;
  for (size_t k = 0; k < edges; ++k) {
    TestEdge e{id(rng), id(rng), 1.0f};
    if (weighted) {
      int p = pick(rng);
      e.weight = p == 0 ? 0.0f : p == 1 ? 1.0f : real(rng);
    }
    g.edges.push_back(e);
  }
  return g;
}

// `g` written as a binary edge list under `tmp` ("edges"), and the options that preprocess it into
// a grid of `p` x `p` blocks ("grid" under `tmp`) with 2 threads.
inline PreprocessOptions GridOptions(const TempDir& tmp, const TestGraph& g, uint32_t p) {
  WriteFile(tmp.File("edges"), EdgeBytes(g));
  PreprocessOptions options;
  options.input = tmp.File("edges");
  options.output_dir = tmp.File("grid");
  options.vertices = g.vertices;
  options.partitions = p;
  options.edge_type = g.weighted ? 1 : 0;
  options.threads = 2;
  return options;
}

// `g` preprocessed as GridOptions says (the grid's path is returned; a failure fails the test).
inline std::string BuildGrid(const TempDir& tmp, const TestGraph& g, uint32_t p) {
  const PreprocessOptions options = GridOptions(tmp, g, p);
  auto stats = Preprocess(options);
  EXPECT_TRUE(stats.ok()) << stats.error().message();
  return options.output_dir;
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout
};

// Runs a shell command line, capturing stdout (stderr goes to the test log).
inline CommandResult RunCommand(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

inline std::string Bin(const std::string& name) { return std::string(GRAPHFS_ENGINE_BIN_DIR) + "/" + name; }

}  // namespace graphfs::engine::testing
