// What the admin tests compare versions of a graph by: each graph file's bytes, read through its
// extent map or its parts as the mount reads them (graph_update_test.cc, update_crash_test.cc).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "grid/graph_file.h"
#include "grid/grid_layout.h"
#include "striping/graph_files.h"

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

// The file ids of the parts on `disks` (each id on every disk), and their bytes (sums included).
// A file with parity also has its sums (ID.sums) and row journal (ID.journal).
inline std::set<std::string> PartIds(const std::vector<std::string>& disks, uint64_t* bytes = nullptr) {
  std::set<std::string> ids;
  if (bytes != nullptr) *bytes = 0;
  for (const std::string& d : disks) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(d + "/parts", ec)) {
      const std::string name = e.path().filename().string();
      ids.insert(name.substr(0, name.find('.')));
      if (bytes != nullptr) *bytes += e.file_size();
    }
  }
  return ids;
}

// The file ids the stubs under `dir` name (each inode once).
inline std::set<std::string> StubIds(const std::string& dir) {
  std::set<std::string> ids;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    struct stat st;
    if (::lstat(e.path().c_str(), &st) != 0) continue;
    if (auto m = StubManifest(e.path().string(), st)) ids.insert(m->file_id);
  }
  return ids;
}

}  // namespace graphfs::admin
