// What the admin tests compare versions of a graph by: each graph file's bytes, read through its
// extent map or its parts as the mount reads them (graph_update_test.cc, update_crash_test.cc).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "grid/graph_file.h"
#include "grid/grid_layout.h"

namespace graphfs::admin {

// A graph file's bytes, through its extent map if it is one.
inline std::string GraphBytes(const std::string& path, const grid::StubFiles* stubs = nullptr) {
  auto f = grid::GraphFile::Open(path, stubs);
  if (!f.ok()) return "unreadable: " + f.error().message();
  std::string bytes(f->size(), '\0');
  Status s = f->ReadExact(bytes.data(), bytes.size(), 0);
  return s.ok() ? bytes : "unreadable: " + s.error().message();
}

// The graph files of a grid of P x P blocks.
inline std::vector<std::string> GraphFiles(uint32_t p) {
  std::vector<std::string> names = {"meta", "column", "row", "column_offset", "row_offset"};
  for (uint32_t i = 0; i < p; ++i)
    for (uint32_t j = 0; j < p; ++j) names.push_back(grid::BlockFileName(i, j));
  return names;
}

// Whether every graph file of `a` equals `b`'s.
// `stubs` reads striped versions through their parts.
inline bool SameGraph(const std::string& a, const std::string& b, uint32_t p, const grid::StubFiles* stubs = nullptr) {
  for (const std::string& name : GraphFiles(p))
    if (GraphBytes(a + "/" + name, stubs) != GraphBytes(b + "/" + name, stubs)) return false;
  return std::filesystem::exists(a + "/meta");
}

}  // namespace graphfs::admin
