// Helpers for the chunk index tests: small generated graphs (preprocessed by
// the engine library), and a brute-force reference computed straight from the
// graph's files, independently of the index code.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "engines/core/preprocess.h"
#include "tests/testutil/file_bytes.h"
#include "tests/testutil/temp_dir.h"

namespace graphfs::chunkindex::testing {

using graphfs::testing::ReadFile;
using graphfs::testing::TempDir;
using graphfs::testing::WriteFile;

struct Edge {
  int32_t source, target;
  float weight = 1.0f;
};

struct GraphSpec {
  uint32_t vertices = 1000;
  uint32_t partitions = 4;
  bool weighted = false;
  bool sorted = false;
  std::vector<Edge> edges;
};

// Skewed random graph: sources drawn from [0, used) with a few hubs, so there
// are isolated vertices, duplicate edges and self-loops.
inline std::vector<Edge> RandomEdges(uint32_t used, size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> any(0, static_cast<int32_t>(used) - 1);
  std::uniform_int_distribution<int32_t> hub(0, std::max<int32_t>(0, static_cast<int32_t>(used / 50)));
  std::uniform_real_distribution<float> w(0.0f, 10.0f);
  std::vector<Edge> edges;
  for (size_t k = 0; k < count; ++k) {
    int32_t s = (rng() % 4 == 0) ? hub(rng) : any(rng);
    edges.push_back({s, any(rng), w(rng)});
  }
  return edges;
}

// Writes the edge list and preprocesses it into `dir`. Returns "" or an error.
inline std::string MakeGraph(const GraphSpec& spec, const std::string& dir) {
  std::string bytes;
  for (const Edge& e : spec.edges) {
    bytes.append(reinterpret_cast<const char*>(&e.source), 4);
    bytes.append(reinterpret_cast<const char*>(&e.target), 4);
    if (spec.weighted) bytes.append(reinterpret_cast<const char*>(&e.weight), 4);
  }
  const std::string input = dir + ".edges";
  WriteFile(input, bytes);
  engine::PreprocessOptions o;
  o.input = input;
  o.output_dir = dir;
  o.vertices = spec.vertices;
  o.partitions = spec.partitions;
  o.edge_type = spec.weighted ? 1 : 0;
  o.sort_sources = spec.sorted;
  o.threads = 1;
  o.block_buffer_bytes = 4 << 20;
  auto r = engine::Preprocess(o);
  std::filesystem::remove(input);
  return r.ok() ? "" : r.error().message();
}

// Reference, from the files alone: block byte ranges from row_offset.
struct Reference {
  uint64_t p = 0, edge_size = 8, vertices = 0;
  std::string row, column;
  std::vector<int64_t> row_offset, column_offset;
  std::vector<uint32_t> degree;

  std::string Load(const std::string& dir) {
    std::string meta = ReadFile(dir + "/meta");
    int type = 0;
    long long v = 0, e = 0, parts = 0;
    if (std::sscanf(meta.c_str(), "%d %lld %lld %lld", &type, &v, &e, &parts) != 4) return "bad meta";
    p = static_cast<uint64_t>(parts);
    vertices = static_cast<uint64_t>(v);
    edge_size = type == 1 ? 12 : 8;
    row = ReadFile(dir + "/row");
    column = ReadFile(dir + "/column");
    auto load = [](const std::string& bytes) {
      std::vector<int64_t> out(bytes.size() / 8);
      std::memcpy(out.data(), bytes.data(), out.size() * 8);
      return out;
    };
    row_offset = load(ReadFile(dir + "/row_offset"));
    column_offset = load(ReadFile(dir + "/column_offset"));
    degree.assign(vertices, 0);
    for (size_t off = 0; off + edge_size <= row.size(); off += edge_size) {
      int32_t s;
      std::memcpy(&s, row.data() + off, 4);
      degree[static_cast<uint32_t>(s)]++;
    }
    return "";
  }
  const std::string& File(bool column_file) const { return column_file ? column : row; }
  // Block (i, j) as [begin, end) in `row` or `column`.
  std::pair<uint64_t, uint64_t> Block(bool column_file, uint64_t i, uint64_t j) const {
    size_t k = column_file ? j * p + i : i * p + j;
    const auto& o = column_file ? column_offset : row_offset;
    return {static_cast<uint64_t>(o[k]), static_cast<uint64_t>(o[k + 1])};
  }
  // Distinct sources and their counts in bytes [begin, end) of a file.
  std::map<uint32_t, uint32_t> Sources(bool column_file, uint64_t begin, uint64_t end) const {
    std::map<uint32_t, uint32_t> out;
    const std::string& f = File(column_file);
    for (uint64_t off = begin; off < end; off += edge_size) {
      int32_t s;
      std::memcpy(&s, f.data() + off, 4);
      out[static_cast<uint32_t>(s)]++;
    }
    return out;
  }
};

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

inline CommandResult RunShell(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

inline std::string Bin(const std::string& name) { return std::string(GRAPHFS_CHUNKINDEX_BIN_DIR) + "/" + name; }

}  // namespace graphfs::chunkindex::testing
