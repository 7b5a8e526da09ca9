#include "engines/core/graph_update.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <vector>

#include "grid/edge_batch.h"
#include "grid/grid_layout.h"
#include "grid/posix_io.h"

namespace graphfs::engine {

using grid::BlockFileName;
using grid::GridLayout;

namespace {

Result<std::string> ReadBlock(const GridLayout& g, uint64_t i, uint64_t j) {
  const std::string path = g.Path(BlockFileName(i, j));
  auto fd = grid::OpenRegularFile(path);
  if (!fd.ok()) return fd.error();
  std::string bytes(g.BlockBytes(i, j), '\0');
  GRAPHFS_RETURN_IF_ERROR(grid::PreadExact(fd->get(), bytes.data(), bytes.size(), 0, path));
  return bytes;
}

// Writes OUTPUT's files; the caller removes OUTPUT if this fails.
Status WriteUpdated(const GridLayout& g, const grid::EdgeBatch& batch, const UpdateOptions& o, UpdateStats& st) {
  const uint64_t p = g.partitions();
  const std::vector<uint64_t> touched = batch.TouchedBlocks();
  std::vector<bool> is_touched(p * p, false);
  for (uint64_t b : touched) is_touched[b] = true;

  // The order: sorted blocks stay sorted.
  st.sorted = o.order == UpdateOptions::Order::kSorted;
  if (o.order == UpdateOptions::Order::kAuto) {
    st.sorted = true;
    for (uint64_t b : touched) {
      auto old = ReadBlock(g, b / p, b % p);
      if (!old.ok()) return old.error();
      if (!grid::SortedBySource(*old, g.edge_type())) {
        st.sorted = false;
        break;
      }
    }
  }

  // 1. Blocks: the touched ones rebuilt, the others copied.
  std::vector<uint64_t> bytes(p * p, 0);
  std::string buffer;
  for (uint64_t b = 0; b < p * p; ++b) {
    const uint64_t i = b / p, j = b % p;
    auto old = ReadBlock(g, i, j);
    if (!old.ok()) return old.error();
    std::string fresh;
    if (is_touched[b]) {
      grid::EdgeBatch::BlockResult r = batch.Apply(b, *old, st.sorted);
      st.added += r.added;
      st.deleted += r.deleted;
      st.missing += r.missing;
      if (r.missing > 0 && !o.allow_missing) {
        return Error(EINVAL, std::to_string(r.missing) + " deletion(s) in block (" + std::to_string(i) + ", " +
                                 std::to_string(j) + ") match no edge of " + o.graph_dir +
                                 " (--allow-missing counts them instead)");
      }
      fresh = std::move(r.bytes);
      st.touched_bytes += fresh.size();
    } else {
      fresh = std::move(*old);
    }
    bytes[b] = fresh.size();
    GRAPHFS_RETURN_IF_ERROR(grid::WriteWholeFile(o.output_dir + "/" + BlockFileName(i, j), fresh.data(), fresh.size()));
    st.bytes_written += fresh.size();
  }
  st.blocks = p * p;
  st.blocks_touched = touched.size();

  // 2. Offsets and the two concatenations, as preprocess lays them out.
  std::vector<int64_t> column_offset(p * p + 1, 0), row_offset(p * p + 1, 0);
  for (uint64_t j = 0, k = 0; j < p; ++j)
    for (uint64_t i = 0; i < p; ++i, ++k) column_offset[k + 1] = column_offset[k] + static_cast<int64_t>(bytes[i * p + j]);
  for (uint64_t b = 0; b < p * p; ++b) row_offset[b + 1] = row_offset[b] + static_cast<int64_t>(bytes[b]);
  const uint64_t total = static_cast<uint64_t>(row_offset[p * p]);
  for (const char* name : {grid::kColumnFile, grid::kRowFile}) {
    const bool column = std::string(name) == grid::kColumnFile;
    const std::string path = o.output_dir + "/" + name;
    auto out = grid::OpenFile(path, O_WRONLY | O_CREAT | O_TRUNC);
    if (!out.ok()) return out.error();
    for (uint64_t b = 0; b < p * p; ++b) {
      const uint64_t i = b / p, j = b % p;
      if (bytes[b] == 0) continue;
      const std::string block_path = o.output_dir + "/" + BlockFileName(i, j);
      auto in = grid::OpenRegularFile(block_path);
      if (!in.ok()) return in.error();
      buffer.resize(bytes[b]);
      GRAPHFS_RETURN_IF_ERROR(grid::PreadExact(in->get(), buffer.data(), bytes[b], 0, block_path));
      const int64_t at = column ? column_offset[j * p + i] : row_offset[b];
      GRAPHFS_RETURN_IF_ERROR(grid::PwriteAll(out->get(), buffer.data(), bytes[b], static_cast<uint64_t>(at), path));
    }
    if (::ftruncate(out->get(), static_cast<off_t>(total)) != 0) return Error::FromErrno("ftruncate " + path);
    if (::fsync(out->get()) != 0) return Error::FromErrno("fsync " + path);
    st.bytes_written += total;
  }
  GRAPHFS_RETURN_IF_ERROR(grid::WriteWholeFile(o.output_dir + "/" + grid::kColumnOffsetFile, column_offset.data(),
                                               column_offset.size() * sizeof(int64_t)));
  GRAPHFS_RETURN_IF_ERROR(grid::WriteWholeFile(o.output_dir + "/" + grid::kRowOffsetFile, row_offset.data(),
                                               row_offset.size() * sizeof(int64_t)));
  st.bytes_written += 2 * (p * p + 1) * sizeof(int64_t);

  // 3. meta last: the directory is complete.
  grid::GridMeta meta = g.meta();
  meta.edges = total / g.edge_size();
  st.edges = meta.edges;
  const std::string text = meta.Format();
  GRAPHFS_RETURN_IF_ERROR(grid::WriteWholeFile(o.output_dir + "/" + grid::kMetaFile, text.data(), text.size()));
  st.bytes_written += text.size();
  return Status::Ok();
}

}  // namespace

Result<UpdateStats> UpdateGraph(const UpdateOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  auto g = GridLayout::Open(o.graph_dir);
  if (!g.ok()) return g.error();
  auto batch = grid::EdgeBatch::Load(g->meta(), o.add_file, o.delete_file);
  if (!batch.ok()) return batch.error();
  if (o.output_dir.empty()) return Error(EINVAL, "no output directory");
  if (::mkdir(o.output_dir.c_str(), 0755) != 0) {
    return Error::FromErrno(errno == EEXIST ? "output directory " + o.output_dir + " exists already"
                                            : "create output directory " + o.output_dir);
  }
  UpdateStats st;
  Status written = WriteUpdated(*g, *batch, o, st);
  if (!written.ok()) {
    std::error_code ec;
    std::filesystem::remove_all(o.output_dir, ec);  // ours: nothing of it is a graph yet
    return written.error();
  }
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return st;
}

}  // namespace graphfs::engine
