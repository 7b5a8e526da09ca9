#include "chunkindex/chunk_size.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <thread>

#include "common/size_parse.h"

namespace graphfs::chunkindex {

namespace {

std::string ReadTrimmed(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

Result<uint64_t> ParseCacheSize(const std::string& text) {
  if (text.empty()) return Error(EINVAL, "empty cache size");
  return ParseSize(text);
}

MachineCache ProbeMachine(const std::string& sysfs_cpu0) {
  MachineCache m;
  long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  m.cores = online > 0 ? static_cast<int>(online) : std::max(1u, std::thread::hardware_concurrency());
  int best_level = 0;
  for (int index = 0; index < 16; ++index) {
    std::string dir = sysfs_cpu0 + "/cache/index" + std::to_string(index);
    std::string level = ReadTrimmed(dir + "/level");
    if (level.empty()) continue;
    std::string type = ReadTrimmed(dir + "/type");
    if (type != "Unified" && type != "Data") continue;
    auto size = ParseCacheSize(ReadTrimmed(dir + "/size"));
    int lv = std::atoi(level.c_str());
    if (size.ok() && *size > 0 && lv > best_level) {
      best_level = lv;
      m.llc_bytes = *size;
      m.llc_source = "sysfs " + dir + " (L" + level + ")";
    }
  }
  if (m.llc_bytes == 0) {
    long l3 = ::sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l3 > 0) {
      m.llc_bytes = static_cast<uint64_t>(l3);
      m.llc_source = "sysconf(_SC_LEVEL3_CACHE_SIZE)";
    } else {
      m.llc_bytes = 8ull << 20;
      m.llc_source = "not found in sysfs or sysconf; assumed 8 MiB";
    }
  }
  return m;
}

ChunkSizeChoice ChooseChunkSize(const ChunkSizeInputs& in) {
  ChunkSizeChoice c;
  const uint64_t es = std::max<uint64_t>(in.edge_size, 1);
  const uint64_t n = static_cast<uint64_t>(std::max(in.cores, 1));
  c.reserved = in.llc_bytes / 8;
  const uint64_t budget = in.llc_bytes - c.reserved;
  const uint64_t vertex_bytes = in.vertices * in.vertex_value_bytes;
  // |C|·N·(1 + Nv·|V|/|G|) <= budget  =>  |C| = budget·|G| / (N·(|G| + Nv·|V|)).
  if (in.graph_bytes == 0) {
    c.formula_bytes = budget / n;
  } else {
    unsigned __int128 num = static_cast<unsigned __int128>(budget) * in.graph_bytes;
    unsigned __int128 den = static_cast<unsigned __int128>(n) * (in.graph_bytes + vertex_bytes);
    c.formula_bytes = static_cast<uint64_t>(num / den);
  }
  c.bytes = c.formula_bytes / es * es;
  const uint64_t floor_bytes = (kMinChunkBytes + es - 1) / es * es;
  if (c.bytes < floor_bytes) {
    c.bytes = floor_bytes;
    c.floored = true;
  }
  c.explanation = "chunk size " + std::to_string(c.bytes) + " B (" + FormatSize(c.bytes) +
                  ") from |C|*N + (|C|*N/|G|)*Nv*|V| + s <= |LLC| with |LLC| = " + FormatSize(in.llc_bytes) +
                  ", N = " + std::to_string(n) + " cores, |G| = " + FormatSize(in.graph_bytes) +
                  " (one partition file), Nv = " + std::to_string(in.vertices) + " vertices, |V| = " +
                  std::to_string(in.vertex_value_bytes) + " B, s = |LLC|/8 = " + FormatSize(c.reserved) +
                  ": formula gives " + std::to_string(c.formula_bytes) + " B, rounded down to a multiple of the " +
                  std::to_string(es) + "-byte edge";
  if (c.floored) c.explanation += ", then raised to the floor of " + FormatSize(floor_bytes);
  return c;
}

ChunkSizeChoice OverrideChunkSize(uint64_t requested, uint64_t edge_size) {
  ChunkSizeChoice c;
  const uint64_t es = std::max<uint64_t>(edge_size, 1);
  c.overridden = true;
  c.formula_bytes = requested;
  c.bytes = std::max(requested / es * es, es);
  c.explanation = "chunk size " + std::to_string(c.bytes) + " B (" + FormatSize(c.bytes) + ") from --chunk-size " +
                  std::to_string(requested) + " B";
  if (c.bytes != requested) c.explanation += ", rounded down to a multiple of the " + std::to_string(es) + "-byte edge";
  return c;
}

}  // namespace graphfs::chunkindex
