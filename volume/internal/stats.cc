// The volume's part of `.graphfs/stats`: its disks, its cache, its graphs' indexes and versions;
// and, alone, the part that says what memory it holds (AddMemoryStats: the daemon's memory sampler).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "striping/disk_health.h"
#include "volume/version_reclaim.h"
#include "volume/internal/volume_core.h"

namespace graphfs::volume {

namespace {

using json = nlohmann::json;

// The versioned graphs (with GRAPH/.graphfs/version) at most two levels under the source: each
// version's disk space, and what reclaiming it would free.
json GraphVersionsStats(const std::string& source, const VersionReclaimer& reclaimer) {
  namespace fs = std::filesystem;
  json graphs = json::array();
  std::vector<std::string> dirs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(source, ec)) {
    if (!e.is_directory(ec) || e.is_symlink(ec)) continue;
    dirs.push_back(e.path().string());
    std::error_code sub_ec;
    for (const auto& f : fs::directory_iterator(e.path(), sub_ec))
      if (f.is_directory(sub_ec) && !f.is_symlink(sub_ec)) dirs.push_back(f.path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const std::string& dir : dirs) {
    if (!fs::exists(dir + "/" + kVersionFile, ec)) continue;
    auto versions = ListVersions(dir);
    if (!versions.ok()) {
      graphs.push_back({{"graph", dir}, {"error", versions.error().message()}});
      continue;
    }
    json list = json::array();
    uint64_t kept_bytes = 0;
    for (const VersionSpace& v : *versions) {
      list.push_back({{"version", v.number}, {"path", v.path}, {"current", v.current}, {"held", v.held},
                      {"bytes", v.bytes}, {"exclusive_bytes", v.exclusive_bytes}});
      if (!v.current) kept_bytes += v.exclusive_bytes;
    }
    graphs.push_back({{"graph", dir}, {"versions", list}, {"kept_versions_exclusive_bytes", kept_bytes}});
  }
  return {{"graphs", graphs},
          {"reclaimed", reclaimer.reclaimed()},
          {"bytes_freed", reclaimer.bytes_freed()},
          {"waiting_for_users", reclaimer.pending()}};
}

std::string ProcessName(uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  if (!std::getline(in, name)) return "(exited)";
  return name;
}

// The figures of a cache that hold memory, as `stats.cache` and `stats.frames` name them. The
// full stats and the memory sampler's (VolumeCore::AddMemoryStats) both write them here, so
// the front end prices the same names and values in either (fusefs/control_dir.cc).
json CacheMemoryJson(const cache::CacheMemory& m) {
  return {{"used", m.used}, {"staged", m.staged}, {"buffers_idle_bytes", m.buffers_idle_bytes}, {"held", m.held}};
}

// The memory the cache's two tiers get: with memory=, what the budget sets aside and leaves.
json MemoryBudgetJson(const MemoryBudget& budget, uint64_t lp_memory) {
  const MemoryBudget::State b = budget.state();
  return {{"enabled", budget.enabled()},
          {"total", b.total},
          {"staging", b.staging},
          {"staging_ceiling", b.staging_ceiling},
          {"reserved", b.reserved},
          {"reservations", b.reservations},
          {"unaccounted", b.unaccounted},
          {"cache_capacity", b.cache_capacity},
          {"frames_capacity", b.frames_capacity},
          {"frames_used", b.frames_used},
          {"standing", b.standing},
          {"units_capacity", b.units_capacity},
          {"lent", b.lent},
          {"lp_memory", lp_memory}};
}

// Degraded files' rows' blocks kept for each other's reads (degraded_share.h): the pool's
// capacity, what it holds now and at most since the mount, and what the budget set aside.
json DegradedShareJson(const DegradedShare& degraded) {
  const DegradedShare::State share = degraded.state();
  return {{"capacity", share.pool.capacity},
          {"held_bytes", share.pool.held_bytes},
          {"peak_held_bytes", share.pool.peak_held_bytes},
          {"files", share.pool.shares},
          {"reserved", share.reserved}};
}

json RenderCache(const cache::CacheStats& c) {
  auto ratio = [](uint64_t part, uint64_t whole) {
    return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
  };
  json procs = json::array();
  for (const cache::ProcessStats& p : c.processes) {
    procs.push_back({{"pid", p.pid},
                     {"name", ProcessName(p.pid)},
                     {"hits", p.hits},
                     {"misses", p.misses},
                     {"bypassed", p.bypassed},
                     {"bytes_served", p.bytes_served},
                     {"bytes_from_cache", p.bytes_from_cache},
                     {"bytes_loaded", p.bytes_loaded},
                     {"bytes_loaded_per_disk", p.disk_bytes},
                     {"bytes_bypassed", p.bytes_bypassed}});
  }
  const uint64_t lookups = c.hits + c.misses;
  // Of the bytes handed to readers from the cache, the share that cost no disk read.
  const double byte_hit_ratio =
      c.bytes_served == 0 ? 0.0 : 1.0 - std::min(1.0, static_cast<double>(c.bytes_loaded) / static_cast<double>(c.bytes_served));
  json j = CacheMemoryJson(c);  // used, staged, buffers_idle_bytes, held
  j.update({{"policy", c.policy},
            {"capacity", c.capacity},
            {"units", c.units},
            {"staged_units", c.staged_units},
            {"hits", c.hits},
            {"misses", c.misses},
            {"hit_ratio", lookups == 0 ? 0.0 : static_cast<double>(c.hits) / static_cast<double>(lookups)},
            {"bypassed", c.bypassed},
            {"admissions", c.admissions},
            {"rejections", c.rejections},
            {"evictions", c.evictions},
            {"capacity_evictions", c.capacity_evictions},
            {"capacity_evicted_bytes", c.capacity_evicted_bytes},
            {"prefetches", c.prefetches},
            {"prefetches_skipped", c.prefetches_skipped},
            {"reader_room_waits", c.reader_room_waits},
            {"reader_room_timeouts", c.reader_room_timeouts},
            {"offers", c.offers},
            {"offers_admitted", c.offers_admitted},
            {"buffers_reused", c.buffers_reused},
            // Of "held" (units LPs took out of staging that the policy refused: kept by the LPs'
            // pins alone), the units.
            {"held_units", c.held_units},
            // Units their holders dropped: frames whose decoded units the cache keeps.
            {"dropped", c.dropped},
            {"buffers_created", c.buffers_created},
            {"load_errors", c.load_errors},
            {"byte_hit_ratio", byte_hit_ratio},
            {"bytes_served", c.bytes_served},
            {"bytes_from_cache", c.bytes_from_cache},
            {"bytes_loaded", c.bytes_loaded},
            // Of them, units loaded before: what memory did not keep (or two loads of one unit at once).
            {"bytes_reloaded", c.bytes_reloaded},
            // Per lookup: the bytes in memory when asked for, against an LRU of the same capacity.
            {"lookup_bytes", c.lookup_bytes},
            {"lookup_hit_ratio", ratio(c.lookup_hit_bytes, c.lookup_bytes)},
            {"lru_lookup_hit_ratio", ratio(c.lru_hit_bytes, c.lookup_bytes)},
            {"prefetched_unused_bytes", c.prefetched_unused_bytes},
            {"bytes_bypassed", c.bytes_bypassed},
            {"processes", procs}});
  return j;
}

}  // namespace

void VolumeCore::AddStats(json& j, const VersionReclaimer& reclaimer) {
  json disks = json::array(), degraded = json::array(), stale = json::array();
  std::vector<uint64_t> bounds(kRequestSizeBounds.begin(), kRequestSizeBounds.end());
  // One reading of the disks' activity for both the per-disk times and the readers' wait.
  const DiskActivity::Totals activity = io_ ? io_->activity().Read() : DiskActivity::Totals{};
  if (io_ && disks_) {
    for (uint32_t d = 0; d < io_->disks(); ++d) {
      const DiskCounters& c = io_->counters(d);
      std::vector<uint64_t> sizes;
      for (const auto& n : c.read_sizes) sizes.push_back(n.load());
      disks.push_back({{"index", d},
                       {"busy_seconds", activity.busy_seconds[d]},
                       {"idle_while_waiting_seconds", activity.idle_while_waiting_seconds[d]},
                       {"request_sizes", {{"le_bytes", bounds}, {"counts", sizes}}},
                       {"path", disks_->path(d)},
                       {"bytes_read", c.bytes_read.load()},
                       {"bytes_written", c.bytes_written.load()},
                       {"reads", c.reads.load()},
                       {"writes", c.writes.load()},
                       {"errors", c.errors.load()},
                       {"queued", c.queued.load()},
                       {"fault", io_->fault(d)},
                       // Files with parity (docs/parity.md, "Reads"): the disk's health, and
                       // what reads found wrong on it and put right.
                       {"state", DiskStateName(CurrentDiskState(*disks_, *io_, d))},
                       {"checksum_errors", c.checksum_errors.load()},
                       {"rebuilt_bytes", c.rebuilt_bytes.load()},
                       {"healed_blocks", c.healed_blocks.load()},
                       {"sum_repairs", c.sum_repairs.load()}});
      if (disks_->state(d) == DiskState::kMissing) degraded.push_back(d);
      if (disks_->state(d) == DiskState::kStale) stale.push_back(d);
    }
  }
  j["disks"] = disks;
  j["degraded"] = degraded;  // the disks missing since the mount, read through parity
  // The disks back but behind: files written while they were lost read them through parity
  // until graphfs-scrub resyncs them (striping/stale_rows.h).
  j["stale"] = stale;
  // The read path: how long readers blocked on misses, and its coarse disk reads of cache units.
  if (io_) {
    json rp = {{"reader_wait_seconds", activity.reader_wait_seconds}, {"waits", activity.waits}};
    if (extents_) {
      const ExtentReads::Stats e = extents_->stats();
      rp["extents"] = e.extents;
      rp["extent_bytes"] = e.bytes;
      rp["extent_units"] = e.units;
      rp["extents_urgent"] = e.urgent;
      rp["extents_hurried"] = e.hurried;
      rp["extents_cancelled"] = e.cancelled;
      // Per disk queue: extents and bytes started, and the most in flight at once.
      rp["extent_disks"] = {{"extents", e.disk_extents}, {"bytes", e.disk_bytes}, {"peak_in_flight", e.disk_peak_in_flight}};
    }
    rp["disk_bytes_per_second"] = read_ahead_.disk_bytes_per_second();
    rp["disk_in_flight_bytes"] = read_ahead_.InFlightDepth();
    j["read_path"] = rp;
  }
  j["graph_versions"] = GraphVersionsStats(options_.source, reclaimer);
  // Reads of compressed files: frame bytes from the disks against the bytes they decoded to.
  const PackedCounters& p = *packed_counters_;
  const uint64_t frame_bytes = p.frame_bytes.load(), decoded = p.bytes_decoded.load();
  // Frames: what the frame tier gave without a disk read, against what came from the disks.
  const uint64_t from_memory = p.frame_bytes_from_memory.load();
  j["compressed"] = {{"units_decoded", p.units_decoded.load()},
                     {"bytes_from_disks", frame_bytes},
                     {"frame_bytes_from_memory", from_memory},
                     {"bytes_decoded", decoded},
                     {"ratio", decoded > 0 ? static_cast<double>(frame_bytes + from_memory) / static_cast<double>(decoded) : 0.0},
                     {"decode_seconds", static_cast<double>(p.decode_ns.load()) / 1e9},
                     {"checksum_errors", p.checksum_errors.load()},
                     // LPs' runs decoded from their frames' blocks alone (frames of version 2)
                     {"run_blocks_decoded", p.run_blocks_decoded.load()},
                     {"run_block_bytes_decoded", p.run_block_bytes_decoded.load()},
                     {"run_blocks_read", p.run_blocks_read.load()},
                     {"run_block_bytes_read", p.run_block_bytes_read.load()},
                     {"layouts_read", p.layouts_read.load()},
                     {"layout_bytes_read", p.layout_bytes_read.load()}};
  if (cache_) j["cache"] = RenderCache(cache_->Stats());
  if (frames_) {
    json frames = RenderCache(frames_->cache().Stats());
    frames.erase("processes");  // the daemon's alone: readers are counted on the decoded units
    frames["dropped_for_decoded"] = frames_->dropped_for_decoded();  // of "dropped": a kept decoded unit stands for them
    // Decoded units standing for their frames, and of them those of files held decoded in place
    // of their frames (frame_tier.h, DecodedKept).
    frames["standing_bytes"] = frames_->standing_bytes();
    frames["in_place_bytes"] = frames_->in_place_bytes();
    j["frames"] = frames;
  }
  j["memory_budget"] = MemoryBudgetJson(budget_, options_.lp_memory);
  j["degraded_share"] = DegradedShareJson(*degraded_share_);
  json indexes = json::array();
  for (const GraphIndexes::IndexState& s : indexes_->List())
    indexes.push_back({{"graph", s.dir},
                       {"in_use", s.loaded},
                       {"column_chunks", s.column_chunks},
                       {"row_chunks", s.row_chunks},
                       {"error", s.error}});
  j["indexes"] = indexes;
  // The read-cost model of vertex-granular LPs and where its numbers come from.
  json calibrated = json::array();
  for (const DiskCalibration& c : read_cost_->disks)
    calibrated.push_back({{"path", c.path},
                          {"bytes_per_second", c.bytes_per_second},
                          {"seconds_per_request", c.seconds_per_request},
                          {"random_read_seconds", c.random_read_seconds},
                          {"direct", c.direct},
                          {"measured_unix", c.measured_unix}});
  j["read_cost"] = {{"lp_granularity", NameOf(options_.lp_granularity)},
                    {"bytes_per_second", read_cost_->cost.bytes_per_second},
                    {"seconds_per_request", read_cost_->cost.seconds_per_request},
                    {"gap_read_through_bytes", read_cost_->cost.GapWorthReading()},
                    {"source", read_cost_->source},
                    {"calibrated_disks", calibrated},
                    {"uncalibrated_disks", read_cost_->missing},
                    {"damaged_calibrations", read_cost_->damaged}};
}

// What AddStats gives of the memory the volume holds, and nothing else: the cache's and the
// frames' resident bytes (CacheMemory, not their counters and processes), the memory budget,
// the degraded share. In the order AddStats takes their locks, one at a time.
void VolumeCore::AddMemoryStats(json& j) {
  if (cache_) j["cache"] = CacheMemoryJson(cache_->Memory());
  if (frames_) j["frames"] = CacheMemoryJson(frames_->cache().Memory());
  j["memory_budget"] = MemoryBudgetJson(budget_, options_.lp_memory);
  j["degraded_share"] = DegradedShareJson(*degraded_share_);
}

std::vector<std::string> VolumeCore::DegradedNotes() const {
  return disks_ ? disks_->DegradedNotes() : std::vector<std::string>{};
}

}  // namespace graphfs::volume
