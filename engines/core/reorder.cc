#include "engines/core/reorder.h"

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <new>
#include <random>

#include "engines/core/replace_file.h"
#include "grid/posix_io.h"

namespace graphfs::engine {

namespace {

constexpr size_t kChunkRecords = size_t{1} << 20;  // 8 or 12 MiB per read

// The one reader of every pass: streams the edge file a chunk at a time and checks
// every id, so whichever pass sees a bad edge first names it.
class EdgeFile {
 public:
  static Result<EdgeFile> Open(const std::string& path, uint64_t vertices, bool weighted) {
    auto fd = grid::OpenRegularFile(path, O_RDONLY);  // a FIFO would block, a directory read EISDIR
    if (!fd.ok()) return fd.error();
    auto size = grid::FileSize(path);
    if (!size.ok()) return size.error();
    const size_t record = weighted ? 12 : 8;
    if (*size % record != 0) {
      return Error(EINVAL, path + ": size " + std::to_string(*size) + " bytes is not a whole number of " +
                               std::to_string(record) + "-byte " + (weighted ? "weighted" : "unweighted") +
                               " edge records (truncated, or " +
                               (weighted ? "not weighted?)" : "--weighted missing?)"));
    }
    return EdgeFile(path, std::move(*fd), vertices, record, *size / record);
  }

  uint64_t edges() const { return edges_; }
  size_t record() const { return record_; }

  // fn(char* records, size_t count) for each chunk in file order; the records may be
  // changed in place (the relabelling pass does).
  template <typename Fn>
  Status ForEachChunk(Fn&& fn) {
    std::vector<char> buffer(static_cast<size_t>(std::min<uint64_t>(kChunkRecords, std::max<uint64_t>(edges_, 1))) *
                             record_);
    for (uint64_t first = 0; first < edges_; first += kChunkRecords) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunkRecords, edges_ - first));
      GRAPHFS_RETURN_IF_ERROR(grid::PreadExact(fd_.get(), buffer.data(), n * record_, first * record_, path_));
      for (size_t e = 0; e < n; ++e) {
        int32_t src, dst;
        std::memcpy(&src, buffer.data() + e * record_, 4);
        std::memcpy(&dst, buffer.data() + e * record_ + 4, 4);
        if (src < 0 || dst < 0 || static_cast<uint64_t>(src) >= vertices_ || static_cast<uint64_t>(dst) >= vertices_) {
          return Error(EINVAL, path_ + ": edge " + std::to_string(first + e) + " (byte offset " +
                                   std::to_string((first + e) * record_) + ") is " + std::to_string(src) + " -> " +
                                   std::to_string(dst) + ", but vertex ids must be in [0, " +
                                   std::to_string(vertices_) + ") (--vertices)");
        }
      }
      GRAPHFS_RETURN_IF_ERROR(fn(buffer.data(), n));
    }
    return Status::Ok();
  }

 private:
  EdgeFile(std::string path, UniqueFd fd, uint64_t vertices, size_t record, uint64_t edges)
      : path_(std::move(path)), fd_(std::move(fd)), vertices_(vertices), record_(record), edges_(edges) {}
  std::string path_;
  UniqueFd fd_;
  uint64_t vertices_;
  size_t record_;
  uint64_t edges_;
};

// Reads the source and target of record e of a chunk (already checked to be in range).
inline void Ends(const char* records, size_t record, size_t e, uint32_t* src, uint32_t* dst) {
  int32_t s, d;
  std::memcpy(&s, records + e * record, 4);
  std::memcpy(&d, records + e * record + 4, 4);
  *src = static_cast<uint32_t>(s);
  *dst = static_cast<uint32_t>(d);
}

Result<std::vector<uint64_t>> OutDegrees(EdgeFile& in, uint64_t vertices) {
  std::vector<uint64_t> degree(vertices, 0);
  Status s = in.ForEachChunk([&](const char* records, size_t n) -> Status {
    for (size_t e = 0; e < n; ++e) {
      uint32_t src, dst;
      Ends(records, in.record(), e, &src, &dst);
      ++degree[src];
    }
    return Status::Ok();
  });
  if (!s.ok()) return s.error();
  return degree;
}

// Old ids by decreasing out-degree, ties by id: a total order, so std::sort is deterministic.
std::vector<int32_t> ByDegree(const std::vector<uint64_t>& degree) {
  std::vector<int32_t> order(degree.size());
  for (size_t v = 0; v < order.size(); ++v) order[v] = static_cast<int32_t>(v);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const uint64_t da = degree[static_cast<size_t>(a)], db = degree[static_cast<size_t>(b)];
    return da != db ? da > db : a < b;
  });
  return order;
}

std::vector<int32_t> PermutationOf(const std::vector<int32_t>& old_of_new) {
  std::vector<int32_t> perm(old_of_new.size());
  for (size_t i = 0; i < old_of_new.size(); ++i) perm[static_cast<size_t>(old_of_new[i])] = static_cast<int32_t>(i);
  return perm;
}

Result<std::vector<int32_t>> DegreePermutation(EdgeFile& in, uint64_t vertices, ReorderStats* stats) {
  auto degree = OutDegrees(in, vertices);
  if (!degree.ok()) return degree.error();
  stats->memory_bytes = vertices * (8 + 4 + 4);  // degrees, the order, the permutation
  const std::vector<int32_t> order = ByDegree(*degree);
  return PermutationOf(order);
}

// A uniform draw from [0, n) by rejection: the bias of a plain `% n` is removed by
// dropping the lowest (2^64 mod n) values.
uint64_t Below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t reject_below = (0 - n) % n;
  for (;;) {
    const uint64_t r = rng();
    if (r >= reject_below) return r % n;
  }
}

std::vector<int32_t> RandomPermutation(uint64_t vertices, uint64_t seed, ReorderStats* stats) {
  std::vector<int32_t> perm(vertices);
  for (size_t v = 0; v < perm.size(); ++v) perm[v] = static_cast<int32_t>(v);
  std::mt19937_64 rng(seed);
  for (uint64_t i = vertices; i > 1; --i) std::swap(perm[i - 1], perm[Below(rng, i)]);
  stats->memory_bytes = vertices * 4;
  return perm;
}

Result<std::vector<int32_t>> BfsPermutation(EdgeFile& in, uint64_t vertices, ReorderStats* stats) {
  // Pass 1: out-degrees (for the start and the restarts) and undirected degrees, the
  // latter counted into offsets[v + 1]. Self-loops never change a BFS: left out.
  std::vector<uint64_t> offsets(vertices + 1, 0);
  std::vector<int32_t> by_degree;
  {
    std::vector<uint64_t> out_degree(vertices, 0);
    Status s = in.ForEachChunk([&](const char* records, size_t n) -> Status {
      for (size_t e = 0; e < n; ++e) {
        uint32_t src, dst;
        Ends(records, in.record(), e, &src, &dst);
        ++out_degree[src];
        if (src != dst) {
          ++offsets[src + 1];
          ++offsets[dst + 1];
        }
      }
      return Status::Ok();
    });
    if (!s.ok()) return s.error();
    by_degree = ByDegree(out_degree);
  }
  for (uint64_t v = 0; v < vertices; ++v) offsets[v + 1] += offsets[v];
  const uint64_t entries = offsets[vertices];
  stats->memory_bytes = entries * 4 + (vertices + 1) * 8 + vertices * 12;

  // Pass 2: fill, offsets[v] serving as v's cursor (it ends at v + 1's start).
  std::vector<int32_t> adjacency;
  try {
    adjacency.resize(entries);
  } catch (const std::bad_alloc&) {
    return Error(ENOMEM, "reorder --order bfs: no memory for the undirected adjacency (" + std::to_string(entries) +
                             " entries, " + std::to_string(entries * 4) + " bytes); --order degree needs none");
  }
  Status s = in.ForEachChunk([&](const char* records, size_t n) -> Status {
    for (size_t e = 0; e < n; ++e) {
      uint32_t src, dst;
      Ends(records, in.record(), e, &src, &dst);
      if (src == dst) continue;
      // Only a file changed between the passes could overrun a vertex's slots.
      if (offsets[src] >= offsets[src + 1] || offsets[dst] >= offsets[dst + 1]) {
        return Error(EIO, "the edge file changed between reorder's two passes over it");
      }
      adjacency[offsets[src]++] = static_cast<int32_t>(dst);
      adjacency[offsets[dst]++] = static_cast<int32_t>(src);
    }
    return Status::Ok();
  });
  if (!s.ok()) return s.error();
  for (uint64_t v = vertices; v > 0; --v) offsets[v] = offsets[v - 1];
  offsets[0] = 0;

  // The queue is the order itself: queue[i] is the old id of new vertex i.
  std::vector<int32_t> perm(vertices, -1), queue(vertices);
  size_t head = 0, tail = 0;
  for (const int32_t root : by_degree) {
    if (perm[static_cast<size_t>(root)] >= 0) continue;
    if (tail == 0) stats->bfs_root = root;
    ++stats->bfs_starts;
    perm[static_cast<size_t>(root)] = static_cast<int32_t>(tail);
    queue[tail++] = root;
    while (head < tail) {
      const size_t u = static_cast<size_t>(queue[head++]);
      for (uint64_t k = offsets[u]; k < offsets[u + 1]; ++k) {
        const size_t w = static_cast<size_t>(adjacency[k]);
        if (perm[w] >= 0) continue;
        perm[w] = static_cast<int32_t>(tail);
        queue[tail++] = static_cast<int32_t>(w);
      }
    }
  }
  return perm;
}

}  // namespace

Result<VertexOrder> ParseVertexOrder(const std::string& name) {
  if (name == "bfs") return VertexOrder::kBfs;
  if (name == "degree") return VertexOrder::kDegree;
  if (name == "random") return VertexOrder::kRandom;
  return Error(EINVAL, "unknown order '" + name + "' (bfs, degree, random)");
}

Result<ReorderStats> Reorder(const ReorderOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (options.vertices < 1 || options.vertices > static_cast<uint64_t>(INT32_MAX)) {
    return Error(EINVAL, "vertices must be in [1, " + std::to_string(INT32_MAX) + "] (ids are int32), got " +
                             std::to_string(options.vertices));
  }
  ReorderStats stats;
  stats.vertices = options.vertices;
  stats.permutation = options.permutation.empty() ? options.output + ".perm" : options.permutation;
  if (stats.permutation == options.output || stats.permutation == options.input) {
    return Error(EINVAL, "the permutation file " + stats.permutation + " would overwrite the " +
                             (stats.permutation == options.output ? "output" : "input") + " edge file");
  }
  auto in = EdgeFile::Open(options.input, options.vertices, options.weighted);
  if (!in.ok()) return in.error();
  stats.edges = in->edges();

  Result<std::vector<int32_t>> perm = std::vector<int32_t>{};
  switch (options.order) {
    case VertexOrder::kBfs:
      perm = BfsPermutation(*in, options.vertices, &stats);
      break;
    case VertexOrder::kDegree:
      perm = DegreePermutation(*in, options.vertices, &stats);
      break;
    case VertexOrder::kRandom:
      perm = RandomPermutation(options.vertices, options.seed, &stats);
      break;
  }
  if (!perm.ok()) return perm.error();

  // Last pass: the edges in input order, relabelled in the read buffer and written out.
  auto out = FileReplacement::Create(options.output);
  if (!out.ok()) return out.error();
  const std::vector<int32_t>& p = *perm;
  Status relabelled = in->ForEachChunk([&](char* records, size_t n) -> Status {
    for (size_t e = 0; e < n; ++e) {
      uint32_t src, dst;
      Ends(records, in->record(), e, &src, &dst);
      std::memcpy(records + e * in->record(), &p[src], 4);
      std::memcpy(records + e * in->record() + 4, &p[dst], 4);
    }
    return grid::WriteAll(out->fd(), records, n * in->record(), out->partial_path());
  });
  if (!relabelled.ok()) return relabelled.error();
  auto perm_out = FileReplacement::Create(stats.permutation);
  if (!perm_out.ok()) return perm_out.error();
  GRAPHFS_RETURN_IF_ERROR(grid::WriteAll(perm_out->fd(), p.data(), p.size() * 4, perm_out->partial_path()));
  // The permutation first: an edge file in place always has its permutation beside it.
  GRAPHFS_RETURN_IF_ERROR(perm_out->Commit());
  GRAPHFS_RETURN_IF_ERROR(out->Commit());
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

Result<Permutation> ReadPermutationFile(const std::string& path) {
  auto size = grid::RegularFileSize(path);
  if (!size.ok()) return size.error();
  if (*size == 0 || *size % 4 != 0 || *size / 4 > static_cast<uint64_t>(INT32_MAX)) {
    return Error(EINVAL, path + ": size " + std::to_string(*size) +
                             " bytes is not that of a permutation file (1 to 2^31 - 1 int32 entries)");
  }
  auto bytes = grid::ReadRegularFile(path, *size);
  if (!bytes.ok()) return bytes.error();
  if (bytes->size() != *size) return Error(EIO, path + ": changed while being read");
  const size_t vertices = bytes->size() / 4;
  Permutation perm;
  perm.new_of_old.resize(vertices);
  std::memcpy(perm.new_of_old.data(), bytes->data(), bytes->size());
  perm.old_of_new.assign(vertices, -1);
  for (size_t v = 0; v < vertices; ++v) {
    const int32_t id = perm.new_of_old[v];
    if (id < 0 || static_cast<size_t>(id) >= vertices) {
      return Error(EINVAL, path + ": entry " + std::to_string(v) + " is " + std::to_string(id) +
                               ", outside [0, " + std::to_string(vertices) + "): not a permutation");
    }
    int32_t& old = perm.old_of_new[static_cast<size_t>(id)];
    if (old >= 0) {
      return Error(EINVAL, path + ": new id " + std::to_string(id) + " is given to both vertex " +
                               std::to_string(old) + " and vertex " + std::to_string(v) + ": not a permutation");
    }
    old = static_cast<int32_t>(v);
  }
  return perm;
}

}  // namespace graphfs::engine
