// graphfs's mount options: the table (each option's name, value, default, help and kind:
// mount_option_kinds.h), parsing one option, and resolving the memory options against RAM.
#include "fusefs/mount_options.h"

#include <unistd.h>

#include <initializer_list>

#include "fusefs/mount_option_kinds.h"

namespace graphfs {

namespace mount_option {

namespace {

std::vector<Choice<std::string>> PolicyChoices() {
  std::vector<Choice<std::string>> c;
  for (const std::string& n : volume::CachePolicyNames()) c.push_back({n, n});
  return c;
}

std::string PolicyHelp() {
  std::string help = "eviction policy by name (`cache/eviction_policy.h`): ";
  bool first = true;
  for (const auto& [name, summary] : volume::CachePolicySummaries()) {
    help += (first ? "" : "; ") + std::string("`") + name + "`, " + summary;
    first = false;
  }
  return help;
}

const std::vector<Choice<PassthroughMode>> kPassthrough = {{"auto", PassthroughMode::kAuto}, {"off", PassthroughMode::kOff}};
// The volume's choices under their own names (volume::NameOf), the default first.
template <class T>
std::vector<Choice<T>> Named(std::initializer_list<T> values) {
  std::vector<Choice<T>> c;
  for (T v : values) c.push_back({volume::NameOf(v), v});
  return c;
}
const std::vector<Choice<volume::IoQueues>> kIo = Named({volume::IoQueues::kPerDisk, volume::IoQueues::kShared});
const std::vector<Choice<volume::LpGranularity>> kLp =
    Named({volume::LpGranularity::kVertex, volume::LpGranularity::kChunk});
const std::vector<Choice<volume::LpLoading>> kLpLoader =
    Named({volume::LpLoading::kDirect, volume::LpLoading::kThroughCache});

}  // namespace

// graphfs's options, in the order --help and README.md show them. Every one needs a value. A
// default is shown from the field (Handling::show) unless it is a rule, said here in words with
// the code that applies it.
const std::vector<OptionSpec>& Table() {
  static const std::vector<OptionSpec> table = {
      {"passthrough", Names(kPassthrough), "",
       "ordinary (not striped) files opened in FUSE passthrough: the kernel reads, writes and maps them from the "
       "backing file itself, no daemon round trip (Linux ≥ 6.9, daemon with `CAP_SYS_ADMIN`, i.e. mounted as root; "
       "otherwise one log line says why and the daemon serves them). Striped files, `.graphfs/` and job files never "
       "are. `off`: every byte through the daemon",
       OneOf(Own(&MountOptions::passthrough), kPassthrough)},
      {"io", Names(kIo), "",
       "one queue + io_uring worker(s) per disk, or one shared queue (the classic thread pool, for comparison)",
       OneOf(Vol(&VolumeOptions::io_queues), kIo)},
      {"io_workers", "N",
       std::to_string(volume::DefaultIoWorkersPerDisk()) +
           " per disk (`perdisk`), as many in all (`shared`): `kDefaultWorkersPerDisk`, `DefaultSharedWorkers`, "
           "`striping/io_engine.h`",
       "io_uring workers per disk (`perdisk`) or in the pool (`shared`)",
       Whole<unsigned>(Vol(&VolumeOptions::io_workers), 1, 256)},
      {"queue_depth", "N", "", "requests in flight per I/O worker",
       Whole<unsigned>(Vol(&VolumeOptions::queue_depth), 1, volume::MaxQueueDepth())},
      {"nice", "N", "",
       "the daemon's CPU priority, -20..19: its I/O workers and LP loaders wake ahead of the jobs' compute threads, "
       "so the disks do not idle while the jobs fill the cores (needs root or CAP_SYS_NICE; otherwise logged and left "
       "as inherited); `0`: as inherited",
       Whole<int>(Own(&MountOptions::nice), -20, 19)},
      {"compute_slots", "auto|N", "",
       "integrated jobs that compute on their LPs at once, at most: when more of them run, an LP's answer waits for "
       "a turn (the job says when it is done with the LP), so that the jobs computing keep their vertex state in the "
       "CPU's caches. `auto`: as many as the daemon's CPUs, handed out only while more than twice that many jobs "
       "take turns (with a few jobs a turn's round trips cost as much as or more than their caches lose: 4 jobs on 2 "
       "cores ran as fast or ~5% slower with turns; 16 jobs 8.5% faster with a 32 MiB L3, as fast with 260 MiB: "
       "docs/memory-as-cache.md, twenty-ninth and thirty-first parts). `N`: N turns whenever more than N jobs "
       "take them; `0`: every job computes as soon as its LP is ready",
       Custom(
           [](MountOptions& o, const std::string& key, const std::string& value) -> Status {
             if (value == "auto") {
               o.compute_slots.reset();
               return Status::Ok();
             }
             auto v = ParseWhole<unsigned>(key, value, 0, 4096);
             if (!v.ok()) return Expected(key, value, "auto or a whole number from 0 to 4096");
             o.compute_slots = *v;
             return Status::Ok();
           },
           [](MountOptions& o) { return Literal(o.compute_slots ? std::to_string(*o.compute_slots) : "auto"); })},
      {"readahead", "N", "each disk's depth (`ReadAhead`, `volume/read_ahead.h`)",
       "stripe units' worth of bytes read ahead of a sequential reader; `0` disables. By default a stream's window "
       "grows with what it has read, up to what keeps each disk busy for a reaction time (the rule: "
       "`ReadAhead::StreamWindow`, `volume/read_ahead.cc`)",
       Custom([](MountOptions& o, const std::string& key, const std::string& value) -> Status {
         auto v = ParseWhole<unsigned>(key, value, 0, 4096);
         if (!v.ok()) return v.error();
         o.volume.read_ahead.off = *v == 0;
         o.volume.read_ahead.units = *v;
         return Status::Ok();
       })},
      {"readahead_mem", "SIZE", "",
       "ceiling of the memory for units loaded ahead of their readers (the cache's staging area, outside "
       "`cache_size`): each stream gets an equal share, and beyond it only disks with nothing to do get read-ahead — "
       "so a small ceiling never leaves a disk idle and a large one is not used unless streams need it",
       Size([](MountOptions& o) -> uint64_t& { return o.volume.read_ahead.staging_limit; })},
      {"direct", "0|1", "", "`O_DIRECT` on part files for aligned reads (no double caching)",
       Flag(Vol(&VolumeOptions::direct))},
      {"kernel_readahead", "SIZE", "the kernel's, 128K",
       "the kernel's read-ahead window for buffered readers of the mount; larger windows did not read faster here "
       "(BENCHMARKS.md, issue 6)",
       Size(Own(&MountOptions::kernel_readahead), 0, 1ull << 30, "at most 1G")},
      {"disks", "D0:D1:...", "registry", "disk directories, overriding the registered paths (same order)",
       Custom([](MountOptions& o, const std::string& key, const std::string& value) -> Status {
         o.volume.disks = SplitList(value, ':');
         for (const auto& d : o.volume.disks)
           if (d.empty()) return Error(EINVAL, "option " + key + "=" + value + ": empty disk path");
         return Status::Ok();
       })},
      {"cache_size", "SIZE|N%", "none (`memory=` applies)",
       "a cache of striped files' units of this size (bytes or % of RAM; `0`: read-ahead only) instead of the one "
       "`memory=` budget: staging, LP windows and indexes then come on top of it",
       Budget(false)},
      {"memory", "SIZE|N%", Literal(kDefaultMemory.text),
       "the one budget for the graph bytes the daemon holds: staging (`readahead_mem`) and each graph's LP window "
       "(`lp_memory`), each capped at a share of it (`Budgeted`, `volume/internal/volume_core.cc`), each graph's chunk index and "
       "the memory its LPs own while it has jobs (not the cached units they are made of), and the cache, which gets "
       "the rest. The cache keeps compressed files' frames first, as the disks hold them (2-4x more of the graph per "
       "byte: what fits is read once), and decoded units in what the frames leave; the shares and the floors of both "
       "are `MemoryBudget`'s (`volume/internal/memory_budget.h`). `stats.memory_budget` shows the split, "
       "and `unaccounted`: the daemon's other resident memory beyond an allowance "
       "(`MemoryBudget::kUnaccountedAllowance`), which the cache makes room for",
       Budget(true)},
      {"cache_policy", Names(PolicyChoices()), "", PolicyHelp(),
       OneOf(Vol(&VolumeOptions::cache_policy), PolicyChoices())},
      {"cache_window", "SECONDS", "",
       "how long a read counts towards a unit's priority; must cover one iteration of the slowest job (a unit whose "
       "visits all left the window ranks lowest, and the cache then degrades to LRU)",
       Whole<unsigned>(Vol(&VolumeOptions::cache_window), 1, 86400)},
      {"cache_trace", "FILE", "none", "append every cache unit lookup to FILE (time pid file unit bytes; diagnostics)",
       Text(Vol(&VolumeOptions::cache_trace))},
      {"threads", "N", "",
       "FUSE worker threads at most (a reader blocked on a disk read holds one: four engines with 24 MiB `O_DIRECT` "
       "preads in flight are about 100 requests)",
       Whole<unsigned>(Own(&MountOptions::threads), 1, 1024)},
      {"timeout", "SECONDS", "", "attribute and entry cache timeout",
       Custom(
           [](MountOptions& o, const std::string& key, const std::string& value) -> Status {
             auto v = ParseWhole<unsigned>(key, value, 0, 3600);
             if (!v.ok()) return v.error();
             o.timeout = *v;
             return Status::Ok();
           },
           [](MountOptions& o) { return Literal(std::to_string(static_cast<unsigned>(o.timeout))); })},
      {"log", "FILE", "none", "daemon log (errors, fault injection); stderr in the foreground",
       Text(Own(&MountOptions::log_file))},
      {"lp", Names(kLp), "",
       "logical partitions of source-sorted graphs (`preprocess --sort-sources`) hold only the runs of the jobs' "
       "active sources' edges where the read-cost model favours it, and each job's `lp-SEQ` only its own active "
       "sources' edges; `chunk`: whole chunks (chunkindex/README.md, \"Vertex-granular logical partitions\")",
       OneOf(Vol(&VolumeOptions::lp_granularity), kLp)},
      {"lp_loader", Names(kLpLoader), "",
       "how the LP loader reads whole chunks that are not cached: straight from the disks in batches that each lie "
       "on one disk, several in flight, interleaved over the disks, then offered to the cache (its policy decides "
       "whether to keep them; `CopyRuns`, `volume/internal/lp_copies.cc`); or through the cache unit by unit with read-ahead "
       "(measured slower: BENCHMARKS.md, issue 16)",
       OneOf(Vol(&VolumeOptions::lp_loading), kLpLoader)},
      {"lp_diagonal", "0|1", "",
       "among chunks of equal priority, LPs take those of diagonal blocks (i, i) first — where the engines' "
       "loaded-data reentry gains most (`--reentry`, engines/README.md)",
       Flag(Vol(&VolumeOptions::lp_diagonal))},
      {"lp_memory", "SIZE", "",
       "memory for logical partitions loaded ahead and held by jobs, per graph: LPs load ahead while they fit (an LP "
       "counts its own bytes and the whole cached units it is made of); a job waits for a slower one only when the "
       "LPs that one holds or has queued fill it. How large one LP may be, and how much freed memory is kept for "
       "reuse, are shares of it the graph's schedule sets (`GraphSchedule`, `volume/internal/graph_schedule.cc`); under "
       "`memory=` it is capped at a share of the budget (`Budgeted`, `volume/internal/volume_core.cc`). The graph's "
       "shared LP memory that jobs map (`jobs/NAME/memory`) is address space of " +
           SizeText(volume::kSharedLpMemoryBytes) + " or " + std::to_string(volume::kSharedLpMemoryPerLpMemory) +
           " x lp_memory, whichever is more (`SharedLpMemoryBytes`, `volume/volume_options.h`): only what is in use "
           "is memory",
       Size(Vol(&VolumeOptions::lp_memory), volume::kMinLpMemory, UINT64_MAX,
            "at least " + SizeText(volume::kMinLpMemory) + " (" + std::to_string(volume::kLpsPerWindow) + " LPs of " +
                SizeText(volume::kMinLpMemory / volume::kLpsPerWindow) + ")")},
      {"disk_bandwidth", "SIZE", "`graphfs-calibrate`'s, else the read-cost model's (`ReadCost`, `chunkindex/read_cost.h`)",
       "read-cost model: sequential bytes per second of one disk",
       Custom([](MountOptions& o, const std::string& key, const std::string& value) -> Status {
         auto v = ParseSize(value);
         if (!v.ok()) return v.error().Wrap("option " + key);
         if (*v == 0) return Error(EINVAL, "option " + key + "=" + value + ": must be above 0");
         o.volume.seq_bytes_per_second = static_cast<double>(*v);
         return Status::Ok();
       })},
      {"request_cost_us", "N", "`graphfs-calibrate`'s, else the read-cost model's (`ReadCost`, `chunkindex/read_cost.h`)",
       "read-cost model: what one more read request costs, in µs (a gap between runs is read through when it costs "
       "less)",
       Custom([](MountOptions& o, const std::string& key, const std::string& value) -> Status {
         auto v = ParseWhole<unsigned>(key, value, 0, 10000000);
         if (!v.ok()) return v.error();
         o.volume.seconds_per_request = static_cast<double>(*v) * 1e-6;
         return Status::Ok();
       })},
  };
  return table;
}

// What the table shows as `spec`'s default: its rule, else its field's value in a MountOptions
// as constructed.
std::string DefaultOf(const OptionSpec& spec) {
  if (!spec.default_rule.empty()) return spec.default_rule;
  MountOptions defaults;
  return spec.handling.show(defaults);
}

}  // namespace mount_option

using mount_option::OptionSpec;
using mount_option::Table;

Result<bool> ApplyMountOption(MountOptions& o, const std::string& option) {
  const size_t eq = option.find('=');
  const std::string key = option.substr(0, eq);
  const bool has_value = eq != std::string::npos;
  const std::string value = has_value ? option.substr(eq + 1) : "";
  // libfuse needs these too; graphfs notes them.
  if (key == "ro" || key == "rw") {
    o.volume.read_only = key == "ro";
    return false;
  }
  for (const OptionSpec& spec : Table()) {
    if (key != spec.key) continue;
    if (!has_value || value.empty()) return Error(EINVAL, "option " + key + " needs a value (" + key + "=...)");
    GRAPHFS_RETURN_IF_ERROR(spec.handling.apply(o, key, value));
    return true;
  }
  return false;
}

Status ResolveMountOptions(MountOptions& o) {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  const uint64_t ram = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  o.volume.cache_bytes = o.cache_size_given ? o.cache_size.Of(ram) : 0;
  if (ram > 0 && o.volume.cache_bytes > ram)
    return Error(EINVAL, "option cache_size=" + o.cache_size.text + " is larger than RAM");
  o.volume.memory_bytes = 0;
  // One budget unless a cache size was given instead (kDefaultMemory, which the table shows).
  if (!o.memory && !o.cache_size_given) o.memory = kDefaultMemory;
  if (o.memory) {
    if (o.cache_size_given)
      return Error(EINVAL, "options memory= and cache_size= are two budgets for one cache: give one of them");
    const uint64_t m = o.memory->Of(ram);
    if (ram > 0 && m > ram) return Error(EINVAL, "option memory=" + o.memory->text + " is larger than RAM");
    if (m == 0) return Error(EINVAL, "option memory=" + o.memory->text + ": a budget of nothing");
    o.volume.memory_bytes = m;
  }
  return Status::Ok();
}

std::vector<std::string> MountOptionKeys() {
  std::vector<std::string> keys;
  for (const OptionSpec& spec : Table()) keys.push_back(spec.key);
  return keys;
}

std::string MountOptionValue(MountOptions options, const std::string& key) {
  for (const OptionSpec& spec : Table())
    if (spec.key == key && spec.handling.show) return spec.handling.show(options);
  return "";
}

}  // namespace graphfs
