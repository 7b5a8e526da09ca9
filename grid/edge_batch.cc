#include "grid/edge_batch.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "grid/posix_io.h"

namespace graphfs::grid {

namespace {

uint32_t SourceAt(const char* record) {
  int32_t s;
  std::memcpy(&s, record, sizeof s);
  return static_cast<uint32_t>(s);
}
uint32_t TargetAt(const char* record) {
  int32_t t;
  std::memcpy(&t, record + 4, sizeof t);
  return static_cast<uint32_t>(t);
}

}  // namespace

bool SortedBySource(std::string_view block, EdgeType type) {
  const size_t r = EdgeSize(type);
  for (size_t at = r; at + r <= block.size(); at += r)
    if (SourceAt(block.data() + at) < SourceAt(block.data() + at - r)) return false;
  return true;
}

Status EdgeBatch::Add(std::string_view bytes, bool deletion, const std::string& what, const PartitionRange& ranges,
                      uint64_t vertices) {
  const size_t r = EdgeSize(type_);
  if (bytes.size() % r != 0) {
    return Error(EINVAL, what + ": " + std::to_string(bytes.size()) + " bytes is not a whole number of " +
                             std::to_string(r) + "-byte edge records (the graph's edge type)");
  }
  for (size_t at = 0; at < bytes.size(); at += r) {
    const uint32_t s = SourceAt(bytes.data() + at), t = TargetAt(bytes.data() + at);
    if (s >= vertices || t >= vertices) {
      return Error(EINVAL, what + ": edge " + std::to_string(at / r) + " (" + std::to_string(static_cast<int32_t>(s)) +
                               " -> " + std::to_string(static_cast<int32_t>(t)) + ") has an id outside 0.." +
                               std::to_string(vertices - 1) +
                               " (the graph's vertices; to grow them, preprocess the whole edge list again)");
    }
    const uint64_t block = ranges.PartitionOf(s) * partitions_ + ranges.PartitionOf(t);
    (deletion ? remove_ : add_)[block].append(bytes.data() + at, r);
    ++(deletion ? deletions_ : additions_);
  }
  return Status::Ok();
}

Result<EdgeBatch> EdgeBatch::FromBytes(const GridMeta& meta, std::string_view add, std::string_view remove,
                                       const std::string& what) {
  EdgeBatch b(meta.edge_type, meta.partitions);
  const PartitionRange ranges(meta.vertices, meta.partitions);
  GRAPHFS_RETURN_IF_ERROR(b.Add(add, false, what + " (additions)", ranges, meta.vertices));
  GRAPHFS_RETURN_IF_ERROR(b.Add(remove, true, what + " (deletions)", ranges, meta.vertices));
  return b;
}

Result<EdgeBatch> EdgeBatch::Load(const GridMeta& meta, const std::string& add_path, const std::string& delete_path) {
  EdgeBatch b(meta.edge_type, meta.partitions);
  const PartitionRange ranges(meta.vertices, meta.partitions);
  for (const auto& [path, deletion] : {std::pair{add_path, false}, std::pair{delete_path, true}}) {
    if (path.empty()) continue;
    auto bytes = ReadRegularFile(path, uint64_t{1} << 40);
    if (!bytes.ok()) return bytes.error();
    GRAPHFS_RETURN_IF_ERROR(b.Add(*bytes, deletion, path, ranges, meta.vertices));
  }
  return b;
}

std::vector<uint64_t> EdgeBatch::TouchedBlocks() const {
  std::vector<uint64_t> out;
  for (const auto& [b, bytes] : add_) out.push_back(b);
  for (const auto& [b, bytes] : remove_)
    if (!add_.count(b)) out.push_back(b);
  std::sort(out.begin(), out.end());
  return out;
}

EdgeBatch::BlockResult EdgeBatch::Apply(uint64_t block, std::string_view old, bool sorted) const {
  const size_t r = EdgeSize(type_);
  BlockResult out;
  // Deletions: how many copies of each record go; the first ones in block order are dropped.
  std::unordered_map<std::string_view, uint64_t> gone;
  if (auto it = remove_.find(block); it != remove_.end()) {
    for (size_t at = 0; at < it->second.size(); at += r) ++gone[std::string_view(it->second).substr(at, r)];
  }
  std::string kept;
  kept.reserve(old.size());
  for (size_t at = 0; at + r <= old.size(); at += r) {
    const std::string_view rec = old.substr(at, r);
    if (!gone.empty()) {
      auto g = gone.find(rec);
      if (g != gone.end() && g->second > 0) {
        --g->second;
        ++out.deleted;
        continue;
      }
    }
    kept.append(rec);
  }
  for (const auto& [rec, left] : gone) out.missing += left;

  std::string_view added;
  if (auto it = add_.find(block); it != add_.end()) added = it->second;
  out.added = added.size() / r;
  if (!sorted || added.empty()) {
    out.bytes = std::move(kept);
    out.bytes.append(added);
    return out;
  }
  // Sorted: the additions stably sorted by source, merged after the old records of equal source.
  std::vector<uint32_t> order(added.size() / r);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return SourceAt(added.data() + a * r) < SourceAt(added.data() + b * r); });
  out.bytes.reserve(kept.size() + added.size());
  size_t k = 0;
  for (uint32_t a : order) {
    const uint32_t s = SourceAt(added.data() + a * r);
    while (k + r <= kept.size() && SourceAt(kept.data() + k) <= s) {
      out.bytes.append(kept, k, r);
      k += r;
    }
    out.bytes.append(added.data() + a * r, r);
  }
  out.bytes.append(kept, k, std::string::npos);
  return out;
}

bool EdgeBatch::SourceSpan(uint64_t block, uint32_t* low, uint32_t* high) const {
  const size_t r = EdgeSize(type_);
  bool any = false;
  for (const auto* bucket : {&add_, &remove_}) {
    auto it = bucket->find(block);
    if (it == bucket->end()) continue;
    for (size_t k = 0; k + r <= it->second.size(); k += r) {
      uint32_t s;
      std::memcpy(&s, it->second.data() + k, 4);
      if (!any || s < *low) *low = s;
      if (!any || s > *high) *high = s;
      any = true;
    }
  }
  return any;
}

}  // namespace graphfs::grid
