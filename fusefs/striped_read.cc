#include "fusefs/striped_read.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <unordered_map>

#include "fusefs/file_handle.h"
#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

// Requests at least this large go through the cache even when they start a new stream:
// engines read partitions with multi-MiB preads that FUSE splits into 1 MiB requests.
// Smaller reads that do not continue a stream are served from the cache when it has the
// unit, else read from the disks around it (a 4 KiB random read must not load 16 MiB).
constexpr uint64_t kStreamingRequest = 256 << 10;

// FUSE tells the calling thread; the cache counts processes.
uint32_t ProcessOfThread(pid_t tid) {
  static std::mutex mu;
  static std::unordered_map<pid_t, pid_t> tgid_of;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = tgid_of.find(tid);
    if (it != tgid_of.end()) return static_cast<uint32_t>(it->second);
  }
  pid_t tgid = tid;
  std::ifstream status("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Tgid:", 0) == 0) {
      tgid = static_cast<pid_t>(std::strtol(line.c_str() + 5, nullptr, 10));
      break;
    }
  }
  std::lock_guard<std::mutex> lock(mu);
  if (tgid_of.size() > 8192) tgid_of.clear();  // thread ids get reused: do not trust old ones forever
  tgid_of[tid] = tgid;
  return static_cast<uint32_t>(tgid);
}

cache::UnitRequest RequestFor(const std::shared_ptr<StripedSource>& src, const cache::UnitLayout& layout,
                              uint64_t file_size, const cache::UnitExtent& u) {
  cache::UnitRequest r;
  r.file_units = layout.Count(file_size);
  r.key = {src->key(), u.index};
  r.offset = u.offset;
  r.length = u.length;
  r.weight = u.weight;
  r.source = src;
  return r;
}

// Serves [off, off + len) from cache units; false if the caller must read around the cache.
bool ServeFromCache(fuse_req_t req, GraphFs& fs, FileHandle& h, uint64_t off, uint64_t len, uint64_t stream) {
  cache::ChunkCache& cache = *fs.cache;
  const std::shared_ptr<StripedSource>& src = h.source;
  const std::shared_ptr<const cache::UnitLayout> layout = src->layout();
  const uint64_t file_size = h.striped->size();
  const uint32_t pid = ProcessOfThread(fuse_req_ctx(req)->pid);
  const bool through = stream > 0 || len >= kStreamingRequest;

  std::vector<cache::UnitRef> held;
  std::vector<iovec> iov;
  uint64_t at = off;
  cache::UnitExtent u = layout->Find(off, file_size);
  while (at < off + len && u.length > 0) {
    cache::UnitRef ref;
    if (through) {
      auto got = cache.Get(RequestFor(src, *layout, file_size, u), pid);
      if (!got.ok()) {
        LogError("read of " + h.striped->manifest().file_id + ": " + got.error().message());
        ReplyErr(req, got.error().code());
        return true;
      }
      ref = std::move(*got);
    } else {
      ref = cache.Peek(RequestFor(src, *layout, file_size, u), pid);
      if (!ref) {
        cache.NoteBypass(pid, len);
        return false;
      }
    }
    const uint64_t n = std::min(off + len, u.offset + u.length) - at;
    iov.push_back({const_cast<char*>(ref.data()) + (at - u.offset), n});
    ref.NoteServed(n);
    held.push_back(std::move(ref));
    at += n;
    u = layout->At(u.index + 1, file_size);
  }
  if (at < off + len) return false;  // the layout does not cover the file (it changed size)

  if (stream > 0 && !fs.options.readahead_off) {
    // Keep up to `readahead` stripe units' worth of bytes loading ahead of the stream, so
    // every disk has work although FUSE hands us 1 MiB at a time; but never more than the
    // stream has read so far: engines that skip inactive blocks jump, and a deep read-ahead
    // past the end of what they want only burns disk time (the kernel ramps up the same way).
    // Several streams split the staging area: each gets its nearest units rather than one
    // deep window leaving another reader to wait on a miss.
    const uint64_t units = fs.options.readahead_units != 0 ? fs.options.readahead_units : 2 * h.striped->map().disks();
    const uint64_t want = std::min({stream, units * h.striped->map().unit(), cache.ReadAheadShare()});
    for (uint64_t ahead = 0; u.length > 0 && ahead + u.length <= want; u = layout->At(u.index + 1, file_size)) {
      cache.Prefetch(RequestFor(src, *layout, file_size, u), pid);
      ahead += u.length;
    }
  }
  fs.counters.bytes_read.fetch_add(len, std::memory_order_relaxed);
  fuse_reply_iov(req, iov.data(), static_cast<int>(iov.size()));
  return true;  // `held` unpins after the reply has been written
}

// Units next to each other in the file sit on one disk (a stripe unit holds several). The
// indexes [begin, end) of `units` reordered one disk after another — the first unit of each
// disk, then the second of each, ... — so prefetches handed out in this order go to every
// disk at once, not all to the disk of the next stripe unit.
std::vector<size_t> InDiskTurns(const StripedSource& src, const std::vector<cache::UnitExtent>& units, size_t begin,
                                size_t end, size_t disks) {
  std::vector<std::pair<uint32_t, size_t>> order;  // (n-th unit of its disk, unit)
  std::vector<uint32_t> seen(disks, 0);
  std::vector<uint64_t> share(disks, 0);  // bytes of a unit per disk
  for (size_t i = begin; i < end; ++i) {
    std::fill(share.begin(), share.end(), 0);
    src.DiskShare(units[i].offset, units[i].length, share);
    const size_t disk = static_cast<size_t>(std::max_element(share.begin(), share.end()) - share.begin());
    order.push_back({seen[disk]++, i});
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<size_t> out;
  for (const auto& [turn, i] : order) out.push_back(i);
  return out;
}

}  // namespace

void StripedSource::DiskShare(uint64_t offset, uint64_t length, std::vector<uint64_t>& per_disk) const {
  for (const StripeExtent& e : file_->map().Split(offset, length))
    if (e.disk < per_disk.size()) per_disk[e.disk] += e.length;
}

void StripedSource::DropChunkLayout() {
  std::lock_guard<std::mutex> lock(mu_);
  written_ = true;
  if (std::string(layout_->kind()) == "block") return;
  layout_ = std::make_shared<cache::BlockLayout>(file_->map().unit());
  layout_note_ = "stripe-aligned blocks (written through the mount since it was indexed)";
}

bool StripedSource::SetLayout(std::shared_ptr<const cache::UnitLayout> layout, std::string note) {
  std::lock_guard<std::mutex> lock(mu_);
  layout_note_ = std::move(note);
  if (written_ || layout == layout_) return false;
  const bool both_blocks = std::string(layout->kind()) == "block" && std::string(layout_->kind()) == "block";
  layout_ = std::move(layout);
  return !both_blocks;  // blocks of the same unit size mean the same units
}

std::shared_ptr<StripedSource> MakeStripedSource(GraphFs& fs, std::shared_ptr<StripedFile> file,
                                                 const std::string& backing_path) {
  const std::string id = file->manifest().file_id;
  const uint64_t key = XXH3_64bits(id.data(), id.size());
  auto blocks = std::make_shared<cache::BlockLayout>(file->map().unit());
  auto source = std::make_shared<StripedSource>(file, key, blocks, "stripe-aligned blocks");
  RefreshLayout(fs, *source, *file, backing_path);
  return source;
}

void RefreshLayout(GraphFs& fs, StripedSource& source, const StripedFile& file, const std::string& backing_path) {
  const size_t slash = backing_path.rfind('/');
  if (slash == std::string::npos) return;
  std::string why;
  std::shared_ptr<const cache::ChunkLayout> chunks =
      fs.indexes.Find(fs, backing_path.substr(0, slash), backing_path.substr(slash + 1), &why);
  bool changed;
  if (chunks != nullptr && file.size() > 0 && chunks->Find(0, file.size()).length > 0) {
    changed = source.SetLayout(chunks, "chunks of the index (" + std::to_string(chunks->size()) + ")");
  } else {
    std::shared_ptr<const cache::UnitLayout> current = source.layout();
    if (std::string(current->kind()) == "block") return;
    changed = source.SetLayout(std::make_shared<cache::BlockLayout>(file.map().unit()),
                               why.empty() ? "stripe-aligned blocks" : "stripe-aligned blocks: " + why);
  }
  if (!changed) return;
  if (fs.cache != nullptr) fs.cache->Invalidate(source.key());
  LogError("cache: " + backing_path + " is now cached in " + source.layout_note());
}

void ReadStriped(fuse_req_t req, FileHandle& h, size_t size, off_t offset) {
  GraphFs& fs = Fs(req);
  StripedFile& f = *h.striped;
  const uint64_t file_size = f.size();
  const uint64_t off = static_cast<uint64_t>(offset);
  if (off >= file_size || size == 0) return (void)fuse_reply_buf(req, nullptr, 0);
  const uint64_t len = std::min<uint64_t>(size, file_size - off);
  fs.counters.striped_reads.fetch_add(1, std::memory_order_relaxed);

  const uint64_t stream = h.streams.Continues(off, len);
  if (fs.cache != nullptr && h.source != nullptr && ServeFromCache(req, fs, h, off, len, stream)) return;

  AlignedBuffer& buf = ThreadBuffer(len);
  if (!buf.ok()) return ReplyErr(req, ENOMEM);
  auto n = f.Read(off, len, buf.data());
  if (!n.ok()) {
    LogError(n.error().message());
    return ReplyErr(req, n.error().code());
  }
  fs.counters.bytes_read.fetch_add(*n, std::memory_order_relaxed);
  fuse_reply_buf(req, buf.data(), *n);
}

Status CopyThroughCache(GraphFs& fs, const std::shared_ptr<StripedSource>& src, uint64_t file_size,
                        const std::vector<CopyRange>& ranges, char* out, uint32_t pid, uint64_t window) {
  const std::shared_ptr<const cache::UnitLayout> layout = src->layout();
  // The units to copy, in order; a unit two ranges share is listed twice (the cache loads it once).
  std::vector<cache::UnitExtent> units;
  for (const CopyRange& r : ranges) {
    if (r.offset + r.length > file_size)
      return Error(EINVAL, "read of [" + std::to_string(r.offset) + ", " + std::to_string(r.offset + r.length) +
                               ") past the end (" + std::to_string(file_size) + " bytes)");
    uint64_t covered = r.offset;
    for (cache::UnitExtent u = layout->Find(r.offset, file_size); covered < r.offset + r.length && u.length > 0;
         u = layout->At(u.index + 1, file_size)) {
      units.push_back(u);
      covered = u.offset + u.length;
    }
    if (covered < r.offset + r.length) return Error(EIO, "the cache's unit layout does not cover the file");
  }
  size_t prefetched = 0;  // units [0, prefetched) were handed to the prefetchers (or are being copied)
  const size_t disks = fs.disks ? fs.disks->size() : 1;
  uint64_t ahead = 0;     // bytes of those not copied yet
  size_t k = 0;
  for (const CopyRange& r : ranges) {
    uint64_t at = r.offset;
    while (at < r.offset + r.length) {
      const cache::UnitExtent& u = units[k];
      if (prefetched <= k) {
        prefetched = k + 1;
        ahead = u.length;
      }
      size_t end = prefetched;
      while (end < units.size() && ahead + units[end].length <= window) ahead += units[end++].length;
      if (end > prefetched) {
        for (size_t i : InDiskTurns(*src, units, prefetched, end, disks))
          fs.cache->Prefetch(RequestFor(src, *layout, file_size, units[i]), pid);
        prefetched = end;
      }
      auto ref = fs.cache->Get(RequestFor(src, *layout, file_size, u), pid);
      if (!ref.ok()) return ref.error();
      const uint64_t n = std::min(r.offset + r.length, u.offset + u.length) - at;
      std::memcpy(out + r.out_offset + (at - r.offset), ref->data() + (at - u.offset), n);
      ref->NoteServed(n);
      at += n;
      if (at == u.offset + u.length || at == r.offset + r.length) {
        ahead -= std::min(ahead, u.length);
        ++k;
      }
    }
  }
  return Status::Ok();
}

void NoteStripedChange(GraphFs& fs, Inode& inode) {
  std::shared_ptr<StripedSource> src;
  {
    std::lock_guard<std::mutex> lock(inode.mu);
    src = inode.source;
  }
  if (src == nullptr) return;
  src->DropChunkLayout();
  if (fs.cache != nullptr) fs.cache->Invalidate(src->key());
}

}  // namespace graphfs
