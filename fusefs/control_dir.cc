#include "fusefs/control_dir.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/shared_arena.h"
#include "fusefs/control_parse.h"
#include "fusefs/graphfs.h"
#include "fusefs/memory_peak.h"

namespace graphfs {

namespace {

using json = nlohmann::json;
const time_t kMountTime = std::time(nullptr);

}  // namespace

const std::vector<const char*>& ControlFileNames() {
  static const std::vector<const char*> names = {"stats", "fault", "disks"};
  return names;
}

void FillControlStat(const Inode& inode, struct stat* st) {
  if (inode.kind == Inode::Kind::kJobsDir || inode.kind == Inode::Kind::kJobDir ||
      inode.kind == Inode::Kind::kJobFile) {
    JobsDir::Stat(inode, st);
    st->st_atime = st->st_mtime = st->st_ctime = std::max(st->st_mtime, kMountTime);
    return;
  }
  std::memset(st, 0, sizeof *st);
  st->st_ino = reinterpret_cast<uintptr_t>(&inode);
  st->st_uid = 0;
  st->st_gid = 0;
  st->st_atime = st->st_mtime = st->st_ctime = kMountTime;
  if (inode.kind == Inode::Kind::kControlDir) {
    st->st_mode = S_IFDIR | 0555;
    st->st_nlink = 2;
  } else {
    st->st_mode = S_IFREG | (inode.control_name == "fault"   ? 0600
                             : inode.control_name == "disks" ? 0644
                                                             : 0444);
    st->st_nlink = 1;
    st->st_size = 0;  // generated at open; read until EOF
  }
}

// The daemon's CPU (getrusage: every thread, the I/O workers included) and, per read path, the
// READ handlers' CPU over the bytes they handed to readers; the LP path adds its loaders' CPU.
static json CpuJson(GraphFs& fs, const json& schedulers) {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  double loader_cpu = 0;
  uint64_t lp_handed = 0;
  for (const json& s : schedulers) {
    loader_cpu += s.value("loader_cpu_seconds", 0.0);
    lp_handed += s.value("bytes_delivered", uint64_t{0});
  }
  const char* names[kReadPaths] = {"lp", "striped", "mapped", "ordinary"};
  json paths = json::object();
  for (int p = 0; p < kReadPaths; ++p) {
    const bool lp = p == static_cast<int>(ReadPath::kLp);
    const uint64_t read_bytes = fs.counters.path_bytes[p].load();
    // LP views are handed to jobs that map them (no READ reaches the daemon) or read lp-SEQ
    // (each view once): what was delivered is the larger of the two counts.
    const uint64_t bytes = lp ? std::max(read_bytes, lp_handed) : read_bytes;
    const double read_cpu = static_cast<double>(fs.counters.path_cpu_ns[p].load()) * 1e-9;
    const double load_cpu = lp ? loader_cpu : 0;
    paths[names[p]] = {{"bytes", bytes},
                       {"read_bytes", read_bytes},
                       {"read_cpu_seconds", read_cpu},
                       {"load_cpu_seconds", load_cpu},
                       {"cpu_seconds_per_gb", bytes > 0 ? (read_cpu + load_cpu) / (static_cast<double>(bytes) / 1e9) : 0.0}};
  }
  return {{"user_seconds", secs(ru.ru_utime)}, {"system_seconds", secs(ru.ru_stime)}, {"by_path", paths}};
}

// The daemon's resident memory `rss` split by use — {"by_use", "lps"} — from the figures of the
// volume that hold memory: cache units admitted and staged, recycled unit buffers, compressed
// files' frames (admitted and loading) and their recycled buffers, the LPs live and loading
// (their own memory: the cached units they are made of are the cache's, except those the cache
// refused while LPs pinned them), the chunk indexes in memory, the LP loaders' read buffers,
// degraded files' rows' blocks kept for their other reads; `other` is the rest (allocator slack,
// threads' buffers, libraries). `figures` is the full stats or Volume::AddMemoryStats' (the
// same objects under the same names): this is the one pricing of memory, for `stats.memory` and
// for the sampler's split (MemoryByUseNow) alike, so the two cannot disagree.
static json MemoryByUse(const json& figures, uint64_t rss) {
  auto num = [](const json& o, const char* key) -> uint64_t {
    return o.is_object() && o.contains(key) && o[key].is_number() ? o[key].get<uint64_t>() : 0;
  };
  auto object = [](const json& o, const char* key) -> const json& {
    static const json kNone = json::object();
    return o.is_object() && o.contains(key) ? o[key] : kNone;
  };
  json by_use = json::object();
  const json& cache = object(figures, "cache");
  by_use["cache_admitted"] = num(cache, "used");
  by_use["cache_staged"] = num(cache, "staged");
  by_use["cache_idle_buffers"] = num(cache, "buffers_idle_bytes");
  // Compressed files' frames (the cache's first tier) and the buffers it keeps for the next.
  const json& frames = object(figures, "frames");
  by_use["frames"] = num(frames, "used") + num(frames, "staged");
  by_use["frames_idle_buffers"] = num(frames, "buffers_idle_bytes");
  // Degraded files' rows' blocks kept for their other reads (volume/internal/degraded_share.h).
  by_use["degraded_rows"] = num(object(figures, "degraded_share"), "held_bytes");
  uint64_t lps = num(cache, "held"), lp_idle = 0, index = 0, scratch = 0;
  // What `lps` is made of, summed over the graphs (the window counts LPs by footprint: their own
  // memory and the whole cached units they pin).
  uint64_t live_bytes = 0, loading_bytes = 0, unit_bytes = 0;
  for (const json& s : object(figures, "schedulers")) {
    const json& w = object(s, "window");
    const json& shared = object(s, "shared_memory");
    const uint64_t live = num(w, "live_bytes") + num(w, "loading_bytes");
    lps += live - std::min(live, num(w, "live_unit_bytes"));
    live_bytes += num(w, "live_bytes");
    loading_bytes += num(w, "loading_bytes");
    unit_bytes += num(w, "live_unit_bytes");
    lp_idle += num(shared, "resident_bytes") - std::min(num(shared, "resident_bytes"), num(shared, "used_bytes"));
    const json& m = object(s, "memory");
    index += num(m, "index_bytes");
    scratch += num(m, "scratch_bytes");
  }
  by_use["lps"] = lps;
  by_use["lp_memory_idle"] = lp_idle;
  by_use["indexes"] = index;
  by_use["lp_loader_buffers"] = scratch;
  uint64_t accounted = 0;
  for (const auto& [k, v] : by_use.items()) accounted += v.get<uint64_t>();
  by_use["other"] = rss > accounted ? rss - accounted : 0;
  return {{"by_use", std::move(by_use)},
          {"lps", {{"live_bytes", live_bytes},
                   {"loading_bytes", loading_bytes},
                   {"unit_bytes", unit_bytes},
                   {"held_bytes", num(cache, "held")}}}};
}

// `stats.memory`: the daemon's resident memory (/proc/self/status), its split by use
// (MemoryByUse) and what "other" may be.
static json MemoryJson(const json& stats) {
  const ProcessMemory process = ReadProcessMemory();
  json memory = MemoryByUse(stats, process.rss);
  // What "other" may be: the allocator's view of the heap (all arenas): bytes in live blocks,
  // and free bytes it keeps instead of giving them back to the kernel.
  const struct mallinfo2 heap = ::mallinfo2();
  const SharedArena::Churn churn = SharedArena::ProcessChurn();
  memory.update({{"rss", process.rss},
                 // The graphs' shared memory since the mount: fresh pages faulted in, pages punched out.
                 {"shared_churn", {{"populated_bytes", churn.populated_bytes},
                                   {"populated_lp_blocks_bytes", churn.populated_budgeted_bytes},
                                   {"punched_bytes", churn.punched_bytes}}},
                 {"heap", {{"in_use_bytes", heap.uordblks + heap.hblkhd},
                           {"free_kept_bytes", heap.fordblks},
                           {"mmapped_bytes", heap.hblkhd}}},
                 {"peak_rss", process.peak_rss},
                 {"rss_anon", process.anon},
                 {"rss_file", process.file},
                 {"rss_shmem", process.shmem}});
  return memory;
}

static json StatsJson(GraphFs& fs) {
  json j;
  j["source"] = fs.source;
  j["io_mode"] = volume::NameOf(fs.options.volume.io_queues);
  fs.volume->AddStats(j);  // disks, cache, indexes
  const MountCounters& m = fs.counters;
  j["requests"] = {{"striped_reads", m.striped_reads.load()},
                   {"striped_writes", m.striped_writes.load()},
                   {"plain_reads", m.plain_reads.load()},
                   {"plain_writes", m.plain_writes.load()},
                   {"bytes_read", m.bytes_read.load()},
                   {"bytes_written", m.bytes_written.load()},
                   {"errors", m.errors.load()}};
  // Every request the kernel sent, by opcode (the daemon's reply to this read not yet).
  json kernel = json::object();
  for (const auto& [name, count] : fs.channel.RequestCounts()) kernel[name] = count;
  j["kernel_requests"] = std::move(kernel);
  fs.passthrough.AddStats(fs.channel, j);
  nlohmann::json jobs = fs.jobs.StatsJson(fs);
  j["jobs"] = jobs["jobs"];
  j["schedulers"] = jobs["schedulers"];
  j["compute_turns"] = jobs["compute_turns"];
  j["cpu"] = CpuJson(fs, j["schedulers"]);
  j["memory"] = MemoryJson(j);
  j["inodes"] = fs.inodes.size();
  // Handles the kernel holds, not counting the one this read comes through (it is handed
  // over after the content is made).
  j["open_files"] = fs.handles.files();
  j["open_dirs"] = fs.handles.dirs();
  return j;
}

json MemoryByUseNow(GraphFs& fs) {
  // From the volume's memory figures alone, not the whole of `stats` (every job's and every
  // scheduler's counts, the disks, the versions' disk space, the heap's arenas walked): the
  // sampler asks four times a second and at every new peak, and built whole there the stats
  // took ~6% of the daemon's CPU (issue 42).
  json figures;
  fs.volume->AddMemoryStats(figures);
  json split = MemoryByUse(figures, ReadProcessMemory().rss);
  // With what the budget allowed at that moment (reservations and the tiers' capacities move as
  // graphs load their indexes and LPs), so a peak over the budget shows which part overran.
  split["memory_budget"] = std::move(figures["memory_budget"]);
  return split;
}

std::string RenderStats(GraphFs& fs) {
  json j = StatsJson(fs);
  j["memory"]["at_peak"] = fs.memory_peak.AtPeak();
  return j.dump(2) + "\n";
}

// `disks` is written by root or the mount's owner: at open for writing, and at each write (a
// descriptor may be passed on).
static Status MayStartDiskTasks(uid_t caller) {
  if (caller == 0 || caller == ::getuid()) return Status::Ok();
  return Error(EACCES, "disks: rebuild and scrub are for root or the mount's owner");
}

Result<std::string> OpenControlFile(GraphFs& fs, const Inode& inode, int flags, uid_t caller) {
  const bool writing = (flags & O_ACCMODE) != O_RDONLY;
  if (inode.control_name == "stats") {
    if (writing) return Error(EACCES, "stats is read-only");
    return RenderStats(fs);
  }
  if (inode.control_name == "fault") {
    if (caller != 0) return Error(EACCES, "fault injection is for root");
    std::ostringstream out;
    for (uint32_t d = 0; d < fs.volume->disk_count(); ++d) out << d << " " << fs.volume->fault(d) << "\n";
    return out.str();
  }
  if (inode.control_name == "disks") {
    if (writing) GRAPHFS_RETURN_IF_ERROR(MayStartDiskTasks(caller));
    return fs.volume->DisksJson().dump(2) + "\n";
  }
  return Error(ENOENT, "no such control file");
}

// `disks`: one line starts a rebuild or a scrub (control_parse.h); the write fails with the
// reason when it cannot start, and the log says why too.
static Status WriteDisks(GraphFs& fs, const std::string& data, uid_t caller) {
  GRAPHFS_RETURN_IF_ERROR(MayStartDiskTasks(caller));
  auto command = ParseDisksLine(data, fs.volume->disk_count());
  if (!command.ok()) {
    LogError(command.error().message());
    return command.error();
  }
  if (command->kind == DisksCommand::Kind::kRebuild)
    return fs.volume->StartRebuild(command->disk, command->dir, command->rate);
  return fs.volume->StartScrub(command->rate);
}

Status WriteControlFile(GraphFs& fs, const Inode& inode, const std::string& data, uid_t caller) {
  if (inode.control_name == "disks") return WriteDisks(fs, data, caller);
  if (inode.control_name != "fault") return Error(EACCES, "read-only control file");
  if (caller != 0) return Error(EACCES, "fault injection is for root");
  auto fault = ParseFaultLine(data, fs.volume->disk_count());
  if (!fault.ok()) return fault.error();
  fs.volume->InjectFault(fault->disk, fault->error);
  LogError("fault injection: disk " + std::to_string(fault->disk) + " now fails with errno " +
           std::to_string(fault->error));
  return Status::Ok();
}

}  // namespace graphfs
