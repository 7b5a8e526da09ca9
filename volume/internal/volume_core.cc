// The volume's core (volume_core.h): opening and checking the disk set, the read-cost model, the
// I/O engine and the cache's two tiers started and stopped, striped files opened with their cache
// units (an index's chunks or stripe-aligned blocks), parts removed, faults. Its read path is
// read_path.cc, the LP loader's copies lp_copies.cc, its stats stats.cc.
#include "volume/internal/volume_core.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <set>

#include "cache/chunk_cache.h"
#include "common/log.h"
#include "striping/disk_set.h"
#include "striping/io_engine.h"
#include "striping/manifest.h"
#include "striping/row_journal.h"
#include "striping/stale_rows.h"
#include "striping/striped_file.h"
#include "striping/unit_sums.h"
#include "volume/internal/extent_reads.h"
#include "volume/internal/graph_index.h"
#include "volume/internal/mapped_piece.h"
#include "volume/internal/packed_file.h"
#include "volume/internal/read_cost_model.h"
#include "volume/internal/striped_source.h"
#include "volume/internal/unpack_journal.h"
#include "volume/internal/stub_manifest.h"
#include "volume/internal/volume_file.h"

namespace graphfs::volume {

namespace {

// Finds the disk set of the striped graphs under `source` and verifies every disk.
Result<std::unique_ptr<DiskSet>> OpenDisks(const VolumeOptions& options) {
  const std::string& source = options.source;
  std::vector<std::string> graphs = FindRegistries(source, 6);
  std::set<std::string> sets;
  DiskRegistry registry;
  for (const auto& g : graphs) {
    auto r = ReadRegistry(g);
    if (!r.ok()) return r.error();
    if (!sets.empty() && !sets.count(r->set_id))
      return Error(EINVAL, "graphs under " + source + " are striped over different disk sets (" + g +
                               " uses " + r->set_id + ", another uses " + *sets.begin() +
                               "); mount them separately");
    // The set may miss as many disks as the graph with the fewest parity units survives.
    const uint32_t parity = sets.empty() ? r->parity : std::min(registry.parity, r->parity);
    sets.insert(r->set_id);
    registry = *r;
    registry.parity = parity;
  }
  if (sets.empty()) {
    if (!options.disks.empty())
      std::fprintf(stderr, "graphfs: note: disks= given, but nothing under %s is striped yet\n", source.c_str());
    return std::unique_ptr<DiskSet>();
  }
  if (!options.disks.empty()) {
    if (options.disks.size() != registry.disks.size())
      return Error(EINVAL, "disks= lists " + std::to_string(options.disks.size()) + " disks, the registered set has " +
                               std::to_string(registry.disks.size()));
    registry.disks = options.disks;
  }
  auto set = DiskSet::Open(registry);
  if (!set.ok()) return set.error();
  return std::make_unique<DiskSet>(std::move(*set));
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The read-cost model: the median of the disks' calibrations (the disks of one set are
// normally alike; the median ignores one odd disk), then the mount options on top.
ReadCostModel LoadReadCost(const VolumeOptions& options, const DiskSet* disks) {
  ReadCostModel m;
  std::vector<std::string> dirs;
  if (disks != nullptr) {
    for (uint32_t d = 0; d < disks->size(); ++d) dirs.push_back(disks->path(d));
  } else {
    dirs.push_back(options.source);
  }
  std::vector<double> bandwidth, request;
  for (const std::string& dir : dirs) {
    auto c = LoadCalibration(dir);
    if (!c.ok()) {
      (c.error().code() == ENOENT ? m.missing : m.damaged).push_back(c.error().code() == ENOENT ? dir : c.error().message());
      continue;
    }
    bandwidth.push_back(c->bytes_per_second);
    request.push_back(c->seconds_per_request);
    m.disks.push_back(*c);
  }
  if (!m.disks.empty()) {
    m.cost.bytes_per_second = Median(bandwidth);
    m.cost.seconds_per_request = Median(request);
    m.source = "graphfs-calibrate (median of " + std::to_string(m.disks.size()) + " of " +
               std::to_string(dirs.size()) + " disks)";
  } else {
    m.source = "defaults (no disk is calibrated: run graphfs-calibrate " + options.source + ")";
  }
  if (options.seq_bytes_per_second > 0 || options.seconds_per_request >= 0) {
    if (options.seq_bytes_per_second > 0) m.cost.bytes_per_second = options.seq_bytes_per_second;
    if (options.seconds_per_request >= 0) m.cost.seconds_per_request = options.seconds_per_request;
    m.source = "mount options over " + m.source;
  }
  return m;
}

// With a memory budget: staging and each LP window at most 1/kBudgetShare of it each (the cache
// is where the graph stays across passes: a frame evicted to make room for a window that LPs of
// cached units hardly use is read from the disks again). The cache's size is the budget's
// (Start: it begins with what staging leaves; graphs reserve their index and their LPs' own
// memory as they get jobs), not an option.
constexpr uint64_t kBudgetShare = 8;
VolumeOptions Budgeted(VolumeOptions o) {
  if (o.memory_bytes == 0) return o;
  o.read_ahead.staging_limit = std::min(o.read_ahead.staging_limit, o.memory_bytes / kBudgetShare);
  o.lp_memory = std::max<uint64_t>(kMinLpMemory, std::min(o.lp_memory, o.memory_bytes / kBudgetShare));
  return o;
}

// Freed unit buffers kept for the next loads (cache/chunk_cache.h): a sixteenth of the cache,
// at most the cache's own default — they are memory the budget does not see, so they stay small
// beside it.
uint64_t RecycleBytes(uint64_t cache_bytes) { return std::min<uint64_t>(cache::kDefaultRecycleBytes, cache_bytes / 16); }

// Lookups of one frame this close together are one visit of the frame tier (Start).
constexpr int64_t kFrameVisitNs = 100'000'000;

}  // namespace

VolumeCore::VolumeCore(const VolumeOptions& options)
    : options_(Budgeted(options)),
      budget_(options_.memory_bytes, options_.read_ahead.staging_limit, options_.cache_bytes),
      degraded_share_(std::make_unique<DegradedShare>(budget_, options_.read_ahead.staging_limit)),
      read_cost_(std::make_unique<ReadCostModel>()),
      io_options_(std::make_unique<IoEngineOptions>()),
      read_ahead_(options_.read_ahead),
      packed_counters_(std::make_unique<PackedCounters>()),
      stub_files_(std::make_unique<VolumeStubFiles>(*this)),
      indexes_(std::make_unique<GraphIndexes>()) {}

const grid::StubFiles& VolumeCore::stub_files() const { return *stub_files_; }

VolumeCore::~VolumeCore() { Stop(); }

Result<std::unique_ptr<VolumeCore>> VolumeCore::Open(const VolumeOptions& options) {
  std::unique_ptr<VolumeCore> v(new VolumeCore(options));
  auto disks = OpenDisks(options);
  if (!disks.ok()) return disks.error().Wrap("cannot mount " + options.source);
  v->disks_ = std::move(*disks);
  if (v->disks_ && !options.read_only) {
    // Writes with a disk lost mark rows an offline graphfs-rebuild beside the mount would miss
    // and then clear (striping/set_hold.h): the set is held for the mount's life, and such a run
    // refused; one under way refuses the mount. A read-only mount writes no row and holds nothing.
    auto hold = SetHold::Serve(*v->disks_);
    if (!hold.ok()) return hold.error().Wrap("cannot mount " + options.source);
    v->disk_hold_ = std::move(*hold);
  }
  if (v->disks_) {
    // Unpacks a killed daemon left half done (volume/internal/unpack_journal.h).
    FinishPendingUnpacks(*v->disks_, [&](const std::string& file_id) {
      v->RemoveParts(file_id);
    });
  }
  *v->read_cost_ = LoadReadCost(options, v->disks_.get());
  v->read_ahead_.set_disk_model(v->read_cost_->cost.bytes_per_second, v->read_cost_->cost.seconds_per_request);
  for (const std::string& why : v->read_cost_->damaged) LogError("read cost: " + why);
  IoEngineOptions& io = *v->io_options_;
  io.disks = v->disks_ ? v->disks_->size() : 1;
  io.mode = options.io_queues == IoQueues::kShared ? IoEngineOptions::Mode::kShared : IoEngineOptions::Mode::kPerDisk;
  // io_workers=, when given; else the engine's defaults (striping/io_engine.h: kDefaultWorkersPerDisk
  // per disk, DefaultSharedWorkers(disks) in the shared pool).
  if (options.io_workers != 0) io.workers_per_disk = io.shared_workers = options.io_workers;
  io.queue_depth = options.queue_depth;
  // Try the engine once, so a machine without io_uring fails here with a message. The real
  // one starts in Start(): a daemon forks in between, and threads do not survive a fork.
  auto probe = IoEngine::Start(io);
  if (!probe.ok()) return probe.error();
  const std::vector<std::string>& policies = CachePolicyNames();
  if (std::find(policies.begin(), policies.end(), options.cache_policy) == policies.end())
    return Error(EINVAL, "unknown cache policy '" + options.cache_policy + "'");
  return v;
}

Status VolumeCore::Start() {
  auto engine = IoEngine::Start(*io_options_);
  if (!engine.ok()) return engine.error();
  io_ = std::move(*engine);
  // The cache alone (cache_size=), or under a budget what staging leaves of it (no graph has
  // reserved any yet): the budget's to say, not an option's.
  const uint64_t cache_bytes = budget_.enabled() ? budget_.CacheCapacity(0) : options_.cache_bytes;
  cache::CacheOptions co;
  co.capacity = cache_bytes;
  co.policy = options_.cache_policy;
  co.staging_limit = options_.read_ahead.staging_limit;
  co.reader_window_ns = static_cast<int64_t>(options_.cache_window) * 1'000'000'000;
  co.prefetch_threads = std::max<uint32_t>(4, 2 * io_options_->disks);
  co.disks = io_options_->disks;
  co.trace_path = options_.cache_trace;
  // Streams of exited jobs predict nothing (signal 0 only checks the process exists).
  co.process_alive = [](uint32_t pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; };
  co.recycle_bytes = RecycleBytes(cache_bytes);
  // The frames of compressed files: the same policy without streams (below), no read-ahead of their own (the decoded
  // units' prefetches read them), few idle buffers (frames vary in size).
  cache::CacheOptions fo;
  fo.capacity = MemoryBudget::FramesCapacity(cache_bytes);
  fo.policy = options_.cache_policy;
  fo.reader_window_ns = co.reader_window_ns;
  // The daemon reads every frame, for whichever job: its one stream predicts nothing.
  fo.predict_streams = false;
  // Its one reader also makes "one visit per pass of a process" meaningless: a frame the daemon
  // decodes every 0.4 s stayed at one visit forever (one process's reads less than 2 s apart
  // are one visit), as did the frames of a file read once, so a job's column never outranked the
  // row its degree pass left in the tier and was read again for ten iterations
  // (docs/memory-as-cache.md, 21st part). Here a visit is one decode: lookups of a frame this
  // close are the runs of one LP load.
  fo.same_pass_ns = kFrameVisitNs;
  // Frames are only loaded for a reader, never prefetched: no ceiling has anything to bound.
  fo.staging_limit = UINT64_MAX;
  fo.prefetch_threads = 1;
  fo.disks = co.disks;
  fo.recycle_bytes = RecycleBytes(cache_bytes) / 4;
  // ... kept even when the tier is full: the budget resizes it at every change of staging's
  // charge, and a full tier gave its idle buffers up each time, so nearly every frame from the
  // disks was read into fresh pages (5,322 buffers made, 137 reused, in a 40 s run).
  fo.idle_reserve_bytes = fo.recycle_bytes;
  frames_ = std::make_shared<FrameTier>(fo, &budget_);
  // A decoded unit the cache keeps may stand for its frame (the cache holds the tier: it
  // outlives the volume's pointer to it while prefetches finish).
  co.on_kept = [frames = frames_](const cache::UnitKey& unit, uint64_t bytes, int64_t admitted_for_ns) {
    return frames->DecodedKept(unit, bytes, admitted_for_ns);
  };
  co.on_left = [frames = frames_](const cache::UnitKey& unit) { frames->DecodedLeft(unit); };
  // Staging is charged what it holds: past its charge, the frames make room before the unit is read.
  if (budget_.enabled()) co.on_staged = [this](uint64_t staged) { budget_.StagingGrew(staged); };
  // The slices that units (and LPs' blocks) freed in the graphs' shared memory and that it keeps
  // for the next loads are the decoded units' idle memory: counted inside their capacity, as the
  // cache's own idle buffers are, not beside it.
  if (budget_.enabled()) {
    shared_idle_ = std::make_shared<std::atomic<uint64_t>>(0);
    co.outside_idle_bytes = [idle = shared_idle_] { return idle->load(std::memory_order_relaxed); };
  }
  cache_ = std::make_unique<cache::ChunkCache>(co);
  budget_.Attach(cache_.get(), &frames_->cache());
  extents_ = std::make_unique<ExtentReads>(*cache_, io_options_->disks, read_ahead_.InFlightDepth());
  return Status::Ok();
}

void VolumeCore::Stop() {
  if (frames_) frames_->Detach();
  budget_.Attach(nullptr);
  frames_.reset();     // files still open keep it, and read on by themselves
  extents_.reset();    // queued extents fail, those in flight finish into the cache
  cache_.reset();      // cancels prefetches, then the queues drain
  io_.reset();         // before the files that use it go
}

Result<std::shared_ptr<StripedSource>> VolumeCore::MakeSource(std::shared_ptr<StripedFile> file,
                                                             const std::string& backing_path, const std::string& key_scope) {
  const std::string id = file->manifest().file_id + key_scope;
  const uint64_t key = XXH3_64bits(id.data(), id.size());
  if (file->manifest().packed) {
    auto packed = PackedFile::Open(file, packed_counters_.get());
    if (!packed.ok()) return packed.error().Wrap(backing_path);
    if (frames_) {
      const std::string frames_id = id + ":frames";
      (*packed)->UseFrames(frames_, XXH3_64bits(frames_id.data(), frames_id.size()), key);
    }
    return std::make_shared<StripedSource>(*packed, file, key);
  }
  auto blocks = std::make_shared<cache::BlockLayout>(file->map().unit());
  auto source = std::make_shared<StripedSource>(file, key, blocks, "stripe-aligned blocks");
  RefreshSourceLayout(*source, backing_path);
  return source;
}

void VolumeCore::RefreshLayout(StripedVolumeFile& file, const std::string& backing_path) {
  RefreshSourceLayout(*file.shared_source(), backing_path);
}

// Units are the chunks of the graph's index when it has a fresh one, else stripe-unit
// blocks. Called at every open, so an index built (or rebuilt, or gone stale) while the
// file was open takes effect at the next open; the file's cached units go when their
// meaning changes.
void VolumeCore::RefreshSourceLayout(StripedSource& source, const std::string& backing_path) {
  const StripedFile& file = source.file();
  const size_t slash = backing_path.rfind('/');
  if (slash == std::string::npos) return;
  std::string why;
  std::shared_ptr<const cache::ChunkLayout> chunks =
      indexes_->Find(*this, backing_path.substr(0, slash), backing_path.substr(slash + 1), &why);
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
  if (cache_ != nullptr) cache_->Invalidate(source.key());
  LogError("cache: " + backing_path + " is now cached in " + source.layout_note());
}

void VolumeCore::Invalidate(StripedSource& source) {
  if (cache_ != nullptr) cache_->Invalidate(source.key());
}

Result<std::shared_ptr<StripedVolumeFile>> VolumeCore::OpenStriped(UniqueFd stub, const StripedStub& info,
                                                                    const std::string& backing_path) {
  const StripeManifest& manifest = info.manifest();
  if (disks_ == nullptr)
    return Error(EIO, "striped file " + manifest.file_id +
                          " found, but no disk set is registered under the source directory");
  auto f = OpenFile(std::move(stub), manifest, !options_.read_only);
  if (!f.ok()) return f.error();
  auto source = MakeSource(*f, backing_path);
  if (!source.ok()) return source.error();
  return std::make_shared<StripedVolumeFile>(*this, *f, std::move(*source), backing_path);
}

void VolumeCore::HoldDiskBack(const std::string& label, const std::string& dir) {
  if (options_.read_only) return;
  if (Status s = disk_hold_.ServeDisk(dir); !s.ok())
    LogError(label + " back, but not held against offline rebuilds: " + s.error().message());
}

void VolumeCore::ReleaseDegradedShareWhenWhole() {
  degraded_share_->Release([this] {
    if (disks_->degraded()) return true;
    const auto open = disks_->OpenFiles();
    return std::any_of(open.begin(), open.end(), [](const std::shared_ptr<StripedFile>& f) { return f->degraded(); });
  });
}

Status VolumeCore::SwitchDisk(uint32_t disk, const std::string& dir) {
  if (!disks_) return Error(EINVAL, "nothing under the source is striped");
  GRAPHFS_RETURN_IF_ERROR(disks_->Replace(disk, dir));
  HoldDiskBack("disk " + std::to_string(disk), dir);
  uint64_t switched = 0;
  std::vector<std::string> failed;
  for (const std::shared_ptr<StripedFile>& f : disks_->OpenFiles()) {
    if (Status s = f->AdoptDisk(disk, *disks_); s.ok()) {
      ++switched;
    } else {
      failed.push_back(s.error().message());
    }
  }
  LogError("disk " + std::to_string(disk) + " back: " + dir + " (" + std::to_string(switched) + " open file" +
           (switched == 1 ? "" : "s") + " took it)");
  for (const std::string& why : failed) LogError("disk " + std::to_string(disk) + " back, but not yet for a file: " + why);
  ReleaseDegradedShareWhenWhole();
  return Status::Ok();
}

Status VolumeCore::TakeBackDisk(uint32_t disk) {
  if (!disks_) return Error(EINVAL, "nothing under the source is striped");
  GRAPHFS_RETURN_IF_ERROR(disks_->TakeBack(disk));
  const std::string dir = disks_->path(disk);
  const std::string label = "disk " + std::to_string(disk) + " (" + dir + ")";
  HoldDiskBack(label, dir);
  uint64_t whole = 0, stale = 0;
  std::vector<std::string> failed;
  for (const std::shared_ptr<StripedFile>& f : disks_->OpenFiles()) {
    bool file_stale = false;
    if (Status s = f->TakeBackDisk(disk, *disks_, &file_stale); !s.ok()) {
      failed.push_back(s.error().message());
    } else {
      ++(file_stale ? stale : whole);
    }
  }
  // The records are the truth (a file opened since may have marked rows): the disk stays stale
  // while any names it, until the scrub resyncs them (DiskSet::ClearStale there).
  const bool missed = AnyStaleRecordFor(*disks_, disk);
  if (!missed) disks_->ClearStale(disk);
  LogError(label + " is back under the mount (this set's disk " + std::to_string(disk) + "): " +
           (missed ? "stale: files were written while it was missing; they read the rows it missed through parity "
                     "until `scrub` (.graphfs/disks, or graphfs-scrub) resyncs it"
                   : "in step: no file was written while it was missing") +
           "; open files: " + std::to_string(whole) + " took it whole, " + std::to_string(stale) +
           " read the rows it missed through parity, " + std::to_string(failed.size()) + " did not take it");
  for (const std::string& why : failed) LogError(label + " back, but a file still reads it through parity: " + why);
  ReleaseDegradedShareWhenWhole();
  return Status::Ok();
}

Result<std::shared_ptr<StripedFile>> VolumeCore::OpenFile(UniqueFd stub, const StripeManifest& manifest,
                                                          bool writable, std::optional<bool> direct_io) {
  if (disks_ == nullptr) return Error(EIO, "striped file " + manifest.file_id + ", but no disk set is open");
  StripedFileOptions o;
  o.writable = writable;
  o.direct_io = direct_io.value_or(options_.direct);
  o.row_share = degraded_share_->pool();
  auto f = StripedFile::Open(*disks_, io_.get(), std::move(stub), manifest, o);
  if (f.ok()) degraded_share_->Opened(**f);
  return f;
}

void VolumeCore::RemoveParts(const std::string& file_id) {
  if (disks_ == nullptr) return;
  // Before the parts go: a rebuild run now drops the file rather than fail on it.
  disks_->NoteRemoved(file_id);
  // A file with parity also has its sums and its row journal beside each part, and the
  // write-intent records of the disks it lost (striping/stale_rows.h).
  std::vector<std::string> names = {file_id, UnitSums::FileName(file_id), RowJournal::FileName(file_id)};
  for (uint32_t l = 0; l < disks_->size(); ++l) names.push_back(StaleRecordName(file_id, l));
  for (const std::string& name : names) {
    for (uint32_t d = 0; d < disks_->size(); ++d) {
      const std::string path = disks_->PartPath(d, name);
      if (::unlink(path.c_str()) != 0 && errno != ENOENT)
        LogError("could not remove part " + path + ": " + std::strerror(errno));
    }
  }
}

uint32_t VolumeCore::disk_count() const { return io_ == nullptr ? 0 : io_->disks(); }
int VolumeCore::fault(uint32_t disk) const { return io_ == nullptr ? 0 : io_->fault(disk); }
void VolumeCore::InjectFault(uint32_t disk, int error) {
  if (io_ != nullptr) io_->InjectFault(disk, error);
}

}  // namespace graphfs::volume
