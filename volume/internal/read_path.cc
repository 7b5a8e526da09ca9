// The striped read path of the volume's core: FUSE-sized reads served from pinned cache units — a miss
// of a plain striped file read with the rest of its stripe unit in one request, the stream's
// read-ahead queued in such extents before the reader blocks (extent_reads.h) —, and small random
// reads around the cache. The LP loader's bulk copies are lp_copies.cc.
#include <algorithm>
#include <unordered_map>
#include <tuple>
#include <cstring>
#include <optional>

#include "common/clock.h"

#include "volume/internal/striped_source.h"
#include "volume/internal/unit_request.h"
#include "volume/internal/volume_core.h"
#include "volume/internal/volume_file.h"

namespace graphfs::volume {

namespace {

// Requests at least this large go through the cache even when they start a new stream:
// engines read partitions with multi-MiB preads that FUSE splits into 1 MiB requests.
// Smaller reads that do not continue a stream are served from the cache when it has the
// unit, else read from the disks around it (a 4 KiB random read must not load 16 MiB).
constexpr uint64_t kStreamingRequest = 256 << 10;

// Tells the disks' activity that a reader blocks on a miss, for as long as it lives.
class ReaderWait {
 public:
  explicit ReaderWait(DiskActivity& activity) : activity_(activity) { activity_.ReaderWaits(); }
  ~ReaderWait() { activity_.ReaderDone(); }
  ReaderWait(const ReaderWait&) = delete;
  ReaderWait& operator=(const ReaderWait&) = delete;

 private:
  DiskActivity& activity_;
};

// Where most of the file's bytes [offset, offset + length) lie: the disk of its middle byte. A
// cache unit may start a few bytes before its stripe unit (a chunk index's units end on edges, not
// on stripe units: 2,097,144-byte units over 2 MiB stripe units start 8 bytes earlier per unit)
// and is read mostly from the next disk, whose queue (extent_reads.h) it belongs in.
uint64_t Middle(uint64_t offset, uint64_t length) { return offset + length / 2; }

}  // namespace

// Units a read reserved for itself but will not take (an error, or the file changed size): their
// pins go once their loads finish, and the units stay for whoever comes.
void VolumeCore::DropReserved(std::vector<cache::UnitLoad>& loads, size_t from, uint32_t pid) {
  for (size_t j = from; j < loads.size(); ++j)
    if (loads[j]) (void)cache_->Await(std::move(loads[j]), pid);
}

cache::UnitLoad VolumeCore::StartCoarse(const std::shared_ptr<StripedSource>& src, const cache::UnitLayout& layout,
                                    uint64_t generation, uint64_t file_size, const cache::UnitExtent& u, uint32_t pid) {
  cache::ChunkCache& cache = *cache_;
  const cache::UnitRequest r = RequestFor(src, layout, generation, file_size, u);
  switch (cache.Find(r.key)) {
    case cache::ChunkCache::Presence::kReady:
      return cache::UnitLoad();
    case cache::ChunkCache::Presence::kLoading:
      extents_->Hurry(r.key);  // read ahead, maybe still queued behind others: it is wanted now
      return cache::UnitLoad();
    case cache::ChunkCache::Presence::kAbsent:
      break;
  }
  cache::UnitLoad load = cache.Reserve(r, pid, cache::ChunkCache::ReserveFor::kReader);
  if (load) QueueExtent(src, layout, generation, file_size, u, load, pid, /*urgent=*/true, /*over_limit=*/true, 0);
  return load;  // empty: another reader's load since, or a request of an older file (Get loads it)
}

uint64_t VolumeCore::QueueExtent(const std::shared_ptr<StripedSource>& src, const cache::UnitLayout& layout,
                             uint64_t generation, uint64_t file_size, const cache::UnitExtent& u,
                             cache::UnitLoad first, uint32_t pid, bool urgent, bool over_limit, int64_t due_ns) {
  const StripeMap& map = src->file().map();
  const uint64_t stripe_end = (u.offset / map.unit() + 1) * map.unit();
  ExtentReads::Extent e;
  e.source = src;
  e.urgent = urgent;
  e.due_ns = due_ns;
  e.units.push_back(std::move(first));
  uint64_t end = u.offset + u.length;
  for (cache::UnitExtent next = layout.At(u.index + 1, file_size);
       next.length > 0 && next.offset < stripe_end && end + next.length - u.offset <= kMaxExtent;
       next = layout.At(next.index + 1, file_size)) {
    cache::UnitLoad load = cache_->Reserve(RequestFor(src, layout, generation, file_size, next), pid,
                                           cache::ChunkCache::ReserveFor::kPrefetch, over_limit);
    if (!load) break;  // in memory already, or no room: the extent ends here
    e.units.push_back(std::move(load));
    end = next.offset + next.length;
  }
  const uint64_t middle = Middle(u.offset, end - u.offset);
  e.disk = map.Locate(middle).disk;
  // A lost disk's unit: rebuilt from D units of its row, on as many disks.
  e.spread = src->file().Rebuilt(middle) ? map.data_units() : 1;
  extents_->Queue(std::move(e));
  return end;
}

uint64_t VolumeCore::ReadAheadExtents(const std::shared_ptr<StripedSource>& src, const cache::UnitLayout& layout,
                                  uint64_t generation, uint64_t file_size, uint64_t read_end, uint64_t from,
                                  uint64_t to, uint64_t share, uint32_t pid) {
  const StripeMap& map = src->file().map();
  // When the stream gets to a unit, reading at every disk's rate: the extents' order on a disk.
  const double bytes_per_ns = read_ahead_.disk_bytes_per_second() * map.disks() / 1e9;
  const int64_t now = NowNs();
  uint64_t reached = from;  // read-ahead covers [from, reached) without a gap
  bool gap = false;
  cache::UnitExtent u = layout.Find(from, file_size);
  while (u.length > 0 && u.offset < to) {
    const cache::UnitRequest r = RequestFor(src, layout, generation, file_size, u);
    if (cache_->Find(r.key) != cache::ChunkCache::Presence::kAbsent) {
      if (!gap) reached = u.offset + u.length;
      u = layout.At(u.index + 1, file_size);
      continue;
    }
    // Within the stream's share of staging, what the staging area allows; beyond it, or when
    // staging is full, only the extents of disks that have nothing to do (they would idle).
    const bool idle = extents_->Idle(map.Locate(Middle(u.offset, u.length)).disk);
    const bool within = u.offset + u.length <= read_end + share;
    cache::UnitLoad load;
    if (within || idle) load = cache_->Reserve(r, pid, cache::ChunkCache::ReserveFor::kPrefetch, /*over_limit=*/idle);
    if (!load) {
      // This disk has enough to do: the next stripe unit may be on one that has not. (A unit that
      // starts in the stripe unit before the one it mostly lies in would find itself again there.)
      gap = true;
      const uint64_t next_stripe = (Middle(u.offset, u.length) / map.unit() + 1) * map.unit();
      u = layout.Find(std::max(next_stripe, u.offset + u.length), file_size);
      continue;
    }
    const int64_t due = now + static_cast<int64_t>(static_cast<double>(u.offset - read_end) / bytes_per_ns);
    const uint64_t end = QueueExtent(src, layout, generation, file_size, u, std::move(load), pid, /*urgent=*/false,
                                     /*over_limit=*/idle, due);
    if (!gap) reached = end;
    u = layout.Find(end, file_size);
  }
  return reached;
}

bool VolumeCore::ServeFromCache(StripedVolumeFile& file, uint64_t off, uint64_t len, const ReadStreams::Position& stream,
                            ReadStreams& streams, uint32_t pid, PinnedRead* out, Status* error) {
  cache::ChunkCache& cache = *cache_;
  const std::shared_ptr<StripedSource> src = file.shared_source();
  const std::shared_ptr<const cache::UnitLayout> layout = src->layout();
  const uint64_t generation = src->Generation();  // before the size
  const uint64_t file_size = file.size();
  // A compressed file's units are decoded whole: a read that needs one might as well keep it.
  const bool through = stream.run > 0 || len >= kStreamingRequest || src->compressed();
  // Plain striped files are read in extents (coarse requests, per-disk queues); a compressed
  // file's units are decoded on the cache's prefetch threads, each its own frame read.
  const bool coarse = src->AlignedLoads() && extents_ != nullptr;
  read_ahead_.NoteReader(src->key(), pid);

  const StripeMap& map = src->file().map();
  const uint64_t want = read_ahead_.StreamWindow(stream.run, map.unit(), map.disks());
  std::vector<cache::UnitLoad> misses;  // per unit of the read: its own load, if it missed
  if (through && coarse) {
    // Every unit the read needs is on its way (a miss: its extent queued, urgent), and so is the
    // read-ahead, before the reader blocks on any of them: the disks work while it waits.
    for (cache::UnitExtent m = layout->Find(off, file_size); m.length > 0 && m.offset < off + len;
         m = layout->At(m.index + 1, file_size))
      misses.push_back(StartCoarse(src, *layout, generation, file_size, m, pid));
    const uint64_t read_end = off + len;
    const uint64_t from = std::max(read_end, stream.ahead);
    if (want > 0 && from < read_end + want) {
      streams.NoteAhead(stream.slot, ReadAheadExtents(src, *layout, generation, file_size, read_end, from,
                                                      read_end + want, read_ahead_.Share(), pid));
    }
  }

  uint64_t at = off;
  cache::UnitExtent u = layout->Find(off, file_size);
  for (size_t k = 0; at < off + len && u.length > 0; ++k) {
    cache::UnitRef ref;
    if (through) {
      const cache::UnitRequest r = RequestFor(src, *layout, generation, file_size, u);
      Result<cache::UnitRef> got = Error(EIO, "");
      if (k < misses.size() && misses[k]) {
        ReaderWait wait(io_->activity());
        got = cache.Await(std::move(misses[k]), pid);
      } else {
        std::optional<ReaderWait> wait;
        if (cache.Find(r.key) != cache::ChunkCache::Presence::kReady) wait.emplace(io_->activity());
        got = cache.Get(r, pid);
      }
      if (!got.ok()) {
        DropReserved(misses, k + 1, pid);
        *error = Error(got.error().code(), "read of " + file.id() + ": " + got.error().message());
        return true;
      }
      ref = std::move(*got);
    } else {
      ref = cache.Peek(RequestFor(src, *layout, generation, file_size, u), pid);
      if (!ref) {
        cache.NoteBypass(pid, len);
        return false;
      }
    }
    const uint64_t n = std::min(off + len, u.offset + u.length) - at;
    out->pieces_.push_back({const_cast<char*>(ref.data()) + (at - u.offset), n});
    ref.NoteServed(n);
    out->units_.push_back(PinnedUnit{std::move(ref)});
    at += n;
    u = layout->At(u.index + 1, file_size);
  }
  if (at < off + len) {  // the layout does not cover the file (it changed size)
    DropReserved(misses, 0, pid);
    return false;
  }
  out->bytes_ = len;
  if (want == 0 || coarse) return true;  // coarse: read ahead above, before the wait
  const uint64_t window = std::min(want, read_ahead_.Share());
  for (uint64_t ahead = 0; u.length > 0 && ahead + u.length <= window; u = layout->At(u.index + 1, file_size)) {
    cache.Prefetch(RequestFor(src, *layout, generation, file_size, u), pid);
    ahead += u.length;
  }
  return true;
}

PinnedRead::PinnedRead() = default;
PinnedRead::~PinnedRead() = default;
PinnedRead::PinnedRead(PinnedRead&&) noexcept = default;
PinnedRead& PinnedRead::operator=(PinnedRead&&) noexcept = default;

Result<PinnedRead> VolumeCore::Read(StripedVolumeFile& file, ReadStreams& streams, uint64_t offset, uint64_t length, uint32_t pid,
                                AlignedBuffer& scratch) {
  PinnedRead out;
  const uint64_t file_size = file.size();
  if (offset >= file_size || length == 0) return out;
  const uint64_t len = std::min<uint64_t>(length, file_size - offset);
  const ReadStreams::Position stream = streams.Continues(offset, len);
  if (cache_ != nullptr) {
    Status error = Status::Ok();
    if (ServeFromCache(file, offset, len, stream, streams, pid, &out, &error)) {
      if (!error.ok()) return error.error();
      return out;
    }
    out = PinnedRead();  // units of a partial attempt go; the disks serve the read
  }
  if (scratch.size() < len) scratch = AlignedBuffer((len + kDirectAlign - 1) / kDirectAlign * kDirectAlign);
  if (!scratch.ok()) return Error(ENOMEM, "no memory for a read of " + std::to_string(len) + " bytes");
  auto n = file.shared_source()->Load(offset, len, scratch.data());  // decoded, for a compressed file
  if (!n.ok()) return n.error();
  out.pieces_.push_back({scratch.data(), *n});
  out.bytes_ = *n;
  return out;
}

}  // namespace graphfs::volume
