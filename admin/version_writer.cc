#include "admin/version_writer.h"
#include "admin/update_crash_points.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <filesystem>
#include <vector>

#include "chunkindex/chunk_index.h"
#include "chunkindex/index_builder.h"
#include "grid/edge_batch.h"
#include "grid/graph_file.h"
#include "grid/grid_layout.h"
#include "grid/posix_io.h"
#include "striping/disk_set.h"
#include "admin/graph_disks.h"
#include "striping/graph_files.h"
#include "volume/version_reclaim.h"

namespace graphfs::admin {

using namespace graphfs::volume;  // versions, keep and reclaim, removing graph files

using grid::BlockFileName;
using grid::GridLayout;


namespace {

// A block's bytes (the file, or the extent map a spliced block of an earlier version is).
Result<std::string> ReadBlock(const GridLayout& g, uint64_t i, uint64_t j) {
  auto file = grid::GraphFile::Open(g.Path(BlockFileName(i, j)), g.stubs());
  if (!file.ok()) return file.error();
  std::string bytes(g.BlockBytes(i, j), '\0');
  GRAPHFS_RETURN_IF_ERROR(file->ReadExact(bytes.data(), bytes.size(), 0));
  return bytes;
}

// Whether the graph file at `path` is a striped file's stub.
bool IsStub(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && StubManifest(path, st).has_value();
}
bool IsMapFile(const std::string& path) {
  auto is = grid::IsExtentMap(path);
  return is.ok() && *is;
}

// How the new version gets a touched block of a sorted graph, in place: the old block's bytes
// before `lower` and from `upper` on stay where they are (the new files' maps read them from the
// old version's pieces); only the run between — every record whose source lies in the batch's
// span for the block — is rebuilt, `delta_length` bytes at `delta_offset` of the version's delta
// piece (.graphfs/pieces/delta@V).
struct Splice {
  bool spliced = false;
  uint64_t lower = 0, upper = 0;
  uint64_t delta_offset = 0, delta_length = 0;
};

// The first record of the sorted block `file` (`records` records of `r` bytes) whose source is at
// least `source`: a binary search that reads one source per step.
Result<uint64_t> FirstRecordFrom(const grid::GraphFile& file, uint64_t records, size_t r, uint64_t source) {
  uint64_t lo = 0, hi = records;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    uint32_t s = 0;
    GRAPHFS_RETURN_IF_ERROR(file.ReadExact(reinterpret_cast<char*>(&s), sizeof s, mid * r));
    if (s < source) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Whether every touched block is in source order: from the old index when it is fresh (each
// chunk says so), else by reading the blocks.
Result<bool> TouchedBlocksSorted(const GridLayout& g, const std::vector<uint64_t>& touched) {
  const uint64_t p = g.partitions();
  if (auto table = chunkindex::ChunkTable::Open(g.dir(), g.stubs()); table.ok()) {
    std::vector<bool> is_touched(p * p, false);
    for (uint64_t b : touched) is_touched[b] = true;
    for (const chunkindex::Chunk& c : table->chunks(chunkindex::ChunkFile::kRow))
      if (is_touched[c.block_i * p + c.block_j] && !c.sources_sorted) return false;
    return true;
  }
  for (uint64_t b : touched) {
    auto old = ReadBlock(g, b / p, b % p);
    if (!old.ok()) return old.error();
    if (!grid::SortedBySource(*old, g.edge_type())) return false;
  }
  return true;
}

// The old version's `name` as extents: its own map, or (an ordinary file) one extent over the
// piece it becomes in the new version, .graphfs/pieces/NAME@V. A block file the old map reads
// (a block written whole) becomes .graphfs/pieces/block-I-J@V too: the new version's file of
// that name may be another one. `sources` gets, per piece name, the old directory's file that a
// new version links to it.
Result<grid::ExtentMap> OldExtents(const GridLayout& g, const char* name, int64_t old_version,
                                   std::vector<std::pair<std::string, std::string>>& sources) {
  const std::string path = g.Path(name);
  auto map = grid::ReadExtentMap(path);
  if (!map.ok()) return map.error();
  if (*map) {
    std::vector<std::string> as;  // each piece's name in the new version
    for (const std::string& piece : (*map)->pieces()) {
      const bool block = piece.rfind(grid::kPiecesDir, 0) != 0;
      as.push_back(block ? std::string(grid::kPiecesDir) + "/" + piece + "@" + std::to_string(old_version) : piece);
      sources.emplace_back(as.back(), g.Path(piece));
    }
    grid::ExtentMap renamed;
    for (const grid::MapExtent& e : (*map)->extents()) renamed.Append(as[e.piece], e.offset, e.length);
    return renamed;
  }
  auto size = grid::GraphFileSize(path, g.stubs());  // a stub's (striped graph): the file it stands for
  if (!size.ok()) return size.error();
  grid::ExtentMap whole;
  const std::string piece = std::string(grid::kPiecesDir) + "/" + name + "@" + std::to_string(old_version);
  whole.Append(piece, 0, *size);
  sources.emplace_back(piece, path);
  return whole;
}

// `column` and `row` of the new version in `out` as extent maps: an untouched block's range is
// the old version's bytes, a touched one's its new block file or (spliced) the old bytes around
// its new run in the delta piece. Then every piece the new version's maps name is linked under
// its .graphfs/pieces/ (from `sources`, or the old version's own piece), so that each version
// holds what it reads. Only the maps are written.
Status WriteMaps(const GridLayout& g, const std::vector<bool>& is_touched, const std::vector<Splice>& splices,
                 const std::vector<uint64_t>& bytes, const grid::ExtentMap& old_column, const grid::ExtentMap& old_row,
                 const std::string& delta_piece, const std::vector<std::pair<std::string, std::string>>& sources,
                 const std::string& out, UpdateStats& st) {
  const uint64_t p = g.partitions();
  std::vector<std::string> needed;  // pieces the new version's maps read
  for (const char* name : {grid::kColumnFile, grid::kRowFile}) {
    const bool column = std::string(name) == grid::kColumnFile;
    const grid::ExtentMap& old = column ? old_column : old_row;
    const auto order = column ? grid::EdgeOrder::kColumn : grid::EdgeOrder::kRow;
    grid::ExtentMap map;
    for (uint64_t k = 0; k < p * p; ++k) {
      // File order: column holds (for j: for i), row (for i: for j).
      const uint64_t i = column ? k % p : k / p, j = column ? k / p : k % p, b = i * p + j;
      const uint64_t begin = g.BlockBegin(order, i, j), length = g.BlockEnd(order, i, j) - begin;
      if (splices[b].spliced) {
        const Splice& sp = splices[b];
        GRAPHFS_RETURN_IF_ERROR(map.AppendRange(old, begin, sp.lower));
        map.Append(delta_piece, sp.delta_offset, sp.delta_length);
        GRAPHFS_RETURN_IF_ERROR(map.AppendRange(old, begin + sp.upper, length - sp.upper));
        continue;
      }
      if (is_touched[b]) {
        map.Append(BlockFileName(i, j), 0, bytes[b]);
        continue;
      }
      Status s = map.AppendRange(old, begin, length);
      if (!s.ok()) return s.error().Wrap(g.Path(name));
    }
    // The old bytes are read from .graphfs/pieces/ only (OldExtents): a block name in a map is
    // this version's own file.
    needed.insert(needed.end(), map.pieces().begin(), map.pieces().end());
    GRAPHFS_RETURN_IF_ERROR(grid::WriteExtentMap(out + "/" + name, map));
    st.bytes_written += map.Encode().size();
    st.map_extents += map.extents().size();
  }
  // The blocks that are maps (spliced now, or linked from an earlier version) read pieces too.
  for (uint64_t b = 0; b < p * p; ++b) {
    auto map = grid::ReadExtentMap(out + "/" + BlockFileName(b / p, b % p));
    if (!map.ok()) return map.error();
    if (*map) needed.insert(needed.end(), (*map)->pieces().begin(), (*map)->pieces().end());
  }
  std::sort(needed.begin(), needed.end());
  needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
  const std::string pieces_dir = out + "/" + grid::kPiecesDir;
  if (::mkdir(pieces_dir.c_str(), 0755) != 0 && errno != EEXIST) return Error::FromErrno("create " + pieces_dir);
  for (const std::string& piece : needed) {
    if (piece.rfind(grid::kPiecesDir, 0) != 0 || piece == delta_piece) continue;
    std::string from = g.Path(piece);
    for (const auto& [name_of, path] : sources)
      if (name_of == piece) from = path;
    const std::string to = out + "/" + piece;
    if (::link(from.c_str(), to.c_str()) != 0) return Error::FromErrno("link " + from + " to " + to);
  }
  return Status::Ok();
}

// The bytes the version in `dir` keeps alive: every file its graph files read (the pieces of its
// maps, its plain files), each inode once.
Result<uint64_t> ReferencedBytes(const std::string& dir, uint64_t p) {
  std::set<std::pair<dev_t, ino_t>> seen;
  uint64_t total = 0;
  auto add = [&](const std::string& path) -> Status {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return Error::FromErrno("stat " + path);
    if (seen.insert({st.st_dev, st.st_ino}).second) total += StoredBytes(path, st);
    return Status::Ok();
  };
  std::vector<std::string> names = {grid::kColumnFile, grid::kRowFile};
  for (uint64_t b = 0; b < p * p; ++b) names.push_back(BlockFileName(b / p, b % p));
  for (const std::string& name : names) {
    auto map = grid::ReadExtentMap(dir + "/" + name);
    if (!map.ok()) return map.error();
    if (!*map) {
      GRAPHFS_RETURN_IF_ERROR(add(dir + "/" + name));
      continue;
    }
    for (const std::string& piece : (*map)->pieces()) GRAPHFS_RETURN_IF_ERROR(add(dir + "/" + piece));
  }
  return total;
}

// Rewrites the version in `out` compactly: its `column` bytes into one new piece
// (.graphfs/pieces/compact@V), and `column`, `row` and every block as extent maps into it — one
// copy of the graph, whatever pieces of older versions it read before (they are unlinked here;
// the older versions keep their own links).
Status Compact(const std::string& out, uint64_t p, uint64_t total, const std::vector<int64_t>& column_offset,
               const std::vector<int64_t>& row_offset, int64_t version, const GraphDisks* disks, UpdateStats& st) {
  const std::string piece = std::string(grid::kPiecesDir) + "/compact@" + std::to_string(version);
  {
    auto column = grid::GraphFile::Open(out + "/" + grid::kColumnFile, disks != nullptr ? &disks->stubs() : nullptr);
    if (!column.ok()) return column.error();
    auto file = NewGraphFile::Create(out + "/" + piece, disks);
    if (!file.ok()) return file.error();
    std::string buffer;
    for (uint64_t at = 0; at < total;) {
      const uint64_t n = std::min<uint64_t>(total - at, 64ull << 20);
      buffer.resize(n);
      GRAPHFS_RETURN_IF_ERROR(column->ReadExact(buffer.data(), n, at));
      GRAPHFS_RETURN_IF_ERROR((*file)->Write(buffer.data(), n, at));
      at += n;
    }
    GRAPHFS_RETURN_IF_ERROR((*file)->Finish());
    st.bytes_written += total;
  }
  // The staging directory is nobody's yet: its files are replaced one by one (a block written
  // whole in this run goes with its parts; links to older versions' files just go).
  LazyDiskSet set({out});
  auto replace = [&](const std::string& name, const grid::ExtentMap& map) -> Status {
    const std::string path = out + "/" + name;
    GRAPHFS_RETURN_IF_ERROR(RemoveGraphFile(path, set));
    GRAPHFS_RETURN_IF_ERROR(grid::WriteExtentMap(path, map));
    st.bytes_written += map.Encode().size();
    return Status::Ok();
  };
  grid::ExtentMap column, row;
  column.Append(piece, 0, total);
  for (uint64_t b = 0; b < p * p; ++b) {
    const uint64_t i = b / p, j = b % p, at = static_cast<uint64_t>(column_offset[j * p + i]);
    const uint64_t length = static_cast<uint64_t>(row_offset[b + 1] - row_offset[b]);
    row.Append(piece, at, length);
    grid::ExtentMap block;
    block.Append(piece, at, length);
    GRAPHFS_RETURN_IF_ERROR(replace(BlockFileName(i, j), block));
  }
  GRAPHFS_RETURN_IF_ERROR(replace(grid::kColumnFile, column));
  GRAPHFS_RETURN_IF_ERROR(replace(grid::kRowFile, row));
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(out + "/" + grid::kPiecesDir, ec)) {
    if (e.path().filename().string() == piece.substr(piece.rfind('/') + 1)) continue;
    GRAPHFS_RETURN_IF_ERROR(RemoveGraphFile(e.path().string(), set));
  }
  if (ec) return Error(ec.value(), "list " + out + "/" + grid::kPiecesDir + ": " + ec.message());
  st.compacted = true;
  return Status::Ok();
}

}  // namespace

// Writes the updated graph's files into `out`; the caller removes `out` if this fails. `link`:
// untouched blocks are hard links to the old ones (in place), else copies.
Status WriteUpdated(const GridLayout& g, const grid::EdgeBatch& batch, const UpdateOptions& o, const std::string& out,
                    bool link, int64_t old_version, const GraphDisks* disks, UpdateStats& st) {
  const uint64_t p = g.partitions();
  const std::vector<uint64_t> touched = batch.TouchedBlocks();
  std::vector<bool> is_touched(p * p, false);
  for (uint64_t b : touched) is_touched[b] = true;

  // The order: sorted blocks stay sorted.
  st.sorted = o.order == UpdateOptions::Order::kSorted;
  if (o.order == UpdateOptions::Order::kAuto) {
    auto sorted = TouchedBlocksSorted(g, touched);
    if (!sorted.ok()) return sorted.error();
    st.sorted = *sorted;
  }
  // In place, the old version's `column` and `row` as extents: what the new files' maps read.
  std::vector<std::pair<std::string, std::string>> sources;  // piece -> the old file it links
  std::optional<grid::ExtentMap> old_column, old_row;
  if (link) {
    auto c = OldExtents(g, grid::kColumnFile, old_version, sources);
    if (!c.ok()) return c.error();
    auto r = OldExtents(g, grid::kRowFile, old_version, sources);
    if (!r.ok()) return r.error();
    old_column = std::move(*c);
    old_row = std::move(*r);
  }
  const std::string delta_piece = std::string(grid::kPiecesDir) + "/delta@" + std::to_string(old_version + 1);
  // A striped graph's new bytes go to its disks (in place): the delta piece and the blocks
  // written whole that were striped before.
  std::unique_ptr<NewGraphFile> delta;
  uint64_t delta_end = 0;

  // 1. Blocks: the touched ones rebuilt (in place and sorted: only their changed run), the others
  // linked (in place) or copied.
  std::vector<uint64_t> bytes(p * p, 0);
  std::vector<Splice> splices(p * p);
  std::string buffer;
  auto count = [&](const grid::EdgeBatch::BlockResult& r, uint64_t i, uint64_t j) -> Status {
    st.added += r.added;
    st.deleted += r.deleted;
    st.missing += r.missing;
    if (r.missing > 0 && !o.allow_missing) {
      return Error(EINVAL, std::to_string(r.missing) + " deletion(s) in block (" + std::to_string(i) + ", " +
                               std::to_string(j) + ") match no edge of " + o.graph_dir +
                               " (--allow-missing counts them instead)");
    }
    return Status::Ok();
  };
  for (uint64_t b = 0; b < p * p; ++b) {
    const uint64_t i = b / p, j = b % p;
    const std::string to = out + "/" + BlockFileName(i, j);
    if (link && !is_touched[b]) {
      const std::string from = g.Path(BlockFileName(i, j));
      if (::link(from.c_str(), to.c_str()) != 0) return Error::FromErrno("link " + from + " to " + to);
      bytes[b] = g.BlockBytes(i, j);
      continue;
    }
    uint32_t low = 0, high = 0;
    if (link && st.sorted && batch.SourceSpan(b, &low, &high)) {
      auto file = grid::GraphFile::Open(g.Path(BlockFileName(i, j)), g.stubs());
      if (!file.ok()) return file.error();
      const size_t r = g.edge_size();
      const uint64_t records = g.BlockBytes(i, j) / r;
      auto lower = FirstRecordFrom(*file, records, r, low);
      if (!lower.ok()) return lower.error();
      auto upper = FirstRecordFrom(*file, records, r, uint64_t{high} + 1);
      if (!upper.ok()) return upper.error();
      // Splicing pays when the run is a small part of the block. When it is most of it (a random
      // batch), the block is written whole: a splice would keep the old block alive for a few
      // bytes around a run that replaces nearly all of it.
      if (2 * (*upper - *lower) <= records) {
        Splice& sp = splices[b];
        sp = {true, *lower * r, *upper * r, delta_end, 0};
        std::string run(sp.upper - sp.lower, '\0');
        GRAPHFS_RETURN_IF_ERROR(file->ReadExact(run.data(), run.size(), sp.lower));
        grid::EdgeBatch::BlockResult result = batch.Apply(b, run, /*sorted=*/true);
        GRAPHFS_RETURN_IF_ERROR(count(result, i, j));
        if (delta == nullptr) {
          const std::string pieces_dir = out + "/" + grid::kPiecesDir;
          if (::mkdir(pieces_dir.c_str(), 0755) != 0 && errno != EEXIST)
            return Error::FromErrno("create " + pieces_dir);
          auto created = NewGraphFile::Create(out + "/" + delta_piece, link ? disks : nullptr);
          if (!created.ok()) return created.error();
          delta = std::move(*created);
        }
        GRAPHFS_RETURN_IF_ERROR(delta->Write(result.bytes.data(), result.bytes.size(), delta_end));
        sp.delta_length = result.bytes.size();
        delta_end += sp.delta_length;
        st.delta_bytes += sp.delta_length;
        st.bytes_written += sp.delta_length;
        bytes[b] = g.BlockBytes(i, j) - (sp.upper - sp.lower) + sp.delta_length;
        st.touched_bytes += bytes[b];
        // The block file itself: the same bytes as an extent map over the old column's pieces.
        grid::ExtentMap map;
        const uint64_t begin = g.BlockBegin(grid::EdgeOrder::kColumn, i, j), old_bytes = g.BlockBytes(i, j);
        GRAPHFS_RETURN_IF_ERROR(map.AppendRange(*old_column, begin, sp.lower));
        map.Append(delta_piece, sp.delta_offset, sp.delta_length);
        GRAPHFS_RETURN_IF_ERROR(map.AppendRange(*old_column, begin + sp.upper, old_bytes - sp.upper));
        GRAPHFS_RETURN_IF_ERROR(grid::WriteExtentMap(to, map));
        st.bytes_written += map.Encode().size();
        continue;
      }
    }
    auto old = ReadBlock(g, i, j);
    if (!old.ok()) return old.error();
    std::string fresh;
    if (is_touched[b]) {
      grid::EdgeBatch::BlockResult r = batch.Apply(b, *old, st.sorted);
      GRAPHFS_RETURN_IF_ERROR(count(r, i, j));
      fresh = std::move(r.bytes);
      st.touched_bytes += fresh.size();
    } else {
      fresh = std::move(*old);
    }
    bytes[b] = fresh.size();
    // In a striped graph, a block whose old bytes were on the disks (a stub, or a map over the
    // striped pieces) stays there; a plain one stays plain.
    const std::string old_path = g.Path(BlockFileName(i, j));
    if (link && disks != nullptr && (IsStub(old_path) || IsMapFile(old_path))) {
      auto file = NewGraphFile::Create(to, disks);
      if (!file.ok()) return file.error();
      GRAPHFS_RETURN_IF_ERROR((*file)->Write(fresh.data(), fresh.size(), 0));
      GRAPHFS_RETURN_IF_ERROR((*file)->Finish());
    } else {
      GRAPHFS_RETURN_IF_ERROR(grid::WriteWholeFile(to, fresh.data(), fresh.size()));
    }
    st.bytes_written += fresh.size();
  }
  if (delta != nullptr) GRAPHFS_RETURN_IF_ERROR(delta->Finish());
  CrashPoint(kCrashBlocksWritten);
  st.blocks = p * p;
  st.blocks_touched = touched.size();

  // 2. Offsets and the two concatenations, as preprocess lays them out.
  std::vector<int64_t> column_offset(p * p + 1, 0), row_offset(p * p + 1, 0);
  for (uint64_t j = 0, k = 0; j < p; ++j)
    for (uint64_t i = 0; i < p; ++i, ++k) column_offset[k + 1] = column_offset[k] + static_cast<int64_t>(bytes[i * p + j]);
  for (uint64_t b = 0; b < p * p; ++b) row_offset[b + 1] = row_offset[b] + static_cast<int64_t>(bytes[b]);
  const uint64_t total = static_cast<uint64_t>(row_offset[p * p]);
  if (link) {
    // A version shares the old bytes: `column` and `row` become extent maps.
    GRAPHFS_RETURN_IF_ERROR(WriteMaps(g, is_touched, splices, bytes, *old_column, *old_row, delta_piece, sources, out, st));
  } else {
    for (const char* name : {grid::kColumnFile, grid::kRowFile}) {
      const bool column = std::string(name) == grid::kColumnFile;
      const std::string path = out + "/" + name;
      auto file = grid::OpenFile(path, O_WRONLY | O_CREAT | O_TRUNC);
      if (!file.ok()) return file.error();
      for (uint64_t b = 0; b < p * p; ++b) {
        const uint64_t i = b / p, j = b % p;
        if (bytes[b] == 0) continue;
        const std::string block_path = out + "/" + BlockFileName(i, j);
        auto in = grid::OpenRegularFile(block_path);
        if (!in.ok()) return in.error();
        buffer.resize(bytes[b]);
        GRAPHFS_RETURN_IF_ERROR(grid::PreadExact(in->get(), buffer.data(), bytes[b], 0, block_path));
        const int64_t at = column ? column_offset[j * p + i] : row_offset[b];
        GRAPHFS_RETURN_IF_ERROR(
            grid::PwriteAll(file->get(), buffer.data(), bytes[b], static_cast<uint64_t>(at), path));
      }
      if (::ftruncate(file->get(), static_cast<off_t>(total)) != 0) return Error::FromErrno("ftruncate " + path);
      if (::fsync(file->get()) != 0) return Error::FromErrno("fsync " + path);
      st.bytes_written += total;
    }
  }
  GRAPHFS_RETURN_IF_ERROR(grid::WriteWholeFile(out + "/" + grid::kColumnOffsetFile, column_offset.data(),
                                               column_offset.size() * sizeof(int64_t)));
  GRAPHFS_RETURN_IF_ERROR(grid::WriteWholeFile(out + "/" + grid::kRowOffsetFile, row_offset.data(),
                                               row_offset.size() * sizeof(int64_t)));
  st.bytes_written += 2 * (p * p + 1) * sizeof(int64_t);

  if (link) {
    // What the new version keeps alive on disk; past the threshold it is written compactly.
    auto referenced = ReferencedBytes(out, p);
    if (!referenced.ok()) return referenced.error();
    st.referenced_bytes = *referenced;
    const double footprint = 3.0 * static_cast<double>(total);  // blocks, column and row of a fresh graph
    if (o.compact || static_cast<double>(*referenced) > o.compact_above * footprint) {
      GRAPHFS_RETURN_IF_ERROR(Compact(out, p, total, column_offset, row_offset, old_version + 1, disks, st));
      auto after = ReferencedBytes(out, p);
      if (!after.ok()) return after.error();
      st.referenced_bytes = *after;
    }
  }

  CrashPoint(kCrashFilesWritten);

  // 3. meta last: the directory is complete.
  grid::GridMeta meta = g.meta();
  meta.edges = total / g.edge_size();
  st.edges = meta.edges;
  const std::string text = meta.Format();
  GRAPHFS_RETURN_IF_ERROR(grid::WriteWholeFile(out + "/" + grid::kMetaFile, text.data(), text.size()));
  st.bytes_written += text.size();
  CrashPoint(kCrashMetaWritten);
  return Status::Ok();
}

}  // namespace graphfs::admin
