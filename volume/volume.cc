// The volume's face (volume.h): what fusefs calls, handed to the core (volume/internal/
// volume_core.h) — which owns the disks, the I/O engine, the cache and the rest — and to the
// graphs' schedules above it (the jobs API is graph_jobs.cc). The face owns the order of
// starting and stopping: the schedules load through the core's cache, so they stop first.
#include "volume/volume.h"

#include <nlohmann/json.hpp>

#include "striping/disk_health.h"
#include "volume/internal/disk_tasks.h"
#include "volume/internal/frame_tier.h"
#include "volume/internal/graph_schedule.h"
#include "volume/internal/volume_core.h"
#include "volume/internal/volume_file.h"

namespace graphfs::volume {

Volume::Volume(std::unique_ptr<VolumeCore> core)
    : core_(std::move(core)),
      tasks_(std::make_unique<DiskTasks>(*core_)),
      schedules_(std::make_unique<GraphSchedules>()),
      reclaimer_([this] { schedules_->Prune(); }) {}

Volume::~Volume() { Stop(); }

Result<std::unique_ptr<Volume>> Volume::Open(const VolumeOptions& options) {
  auto core = VolumeCore::Open(options);
  if (!core.ok()) return core.error();
  return std::unique_ptr<Volume>(new Volume(std::move(*core)));
}

Status Volume::Start() {
  GRAPHFS_RETURN_IF_ERROR(core_->Start());
  reclaimer_.Start();
  tasks_->StartProbe(DiskTasks::kProbeEvery);  // a disk missing since the mount may come back
  return Status::Ok();
}

void Volume::Stop() {
  tasks_->Stop();  // a rebuild or scrub reads the disks: it stops before the engine does
  reclaimer_.Stop();
  schedules_->Clear();  // their LP loaders stop before the cache goes
  core_->Stop();
}

bool Volume::has_disks() const { return core_->has_disks(); }

Result<std::shared_ptr<VolumeFile>> Volume::OpenStriped(UniqueFd stub, const StripedStub& info,
                                                        const std::string& backing_path) {
  auto f = core_->OpenStriped(std::move(stub), info, backing_path);
  if (!f.ok()) return f.error();
  return std::shared_ptr<VolumeFile>(std::move(*f));
}

void Volume::RefreshLayout(VolumeFile& file, const std::string& backing_path) {
  core_->RefreshLayout(StripedVolumeFile::Of(file), backing_path);
}

Result<PinnedRead> Volume::Read(VolumeFile& file, ReadStreams& streams, uint64_t offset, uint64_t length, uint32_t pid,
                                AlignedBuffer& scratch) {
  return core_->Read(StripedVolumeFile::Of(file), streams, offset, length, pid, scratch);
}

void Volume::RemoveParts(const StripedStub& stub) { core_->RemoveParts(stub.file_id()); }

uint32_t Volume::disk_count() const { return core_->disk_count(); }
int Volume::fault(uint32_t disk) const { return core_->fault(disk); }
void Volume::InjectFault(uint32_t disk, int error) { core_->InjectFault(disk, error); }

void Volume::SetUnaccountedMemory(uint64_t resident_bytes) {
  core_->budget().SetUnaccounted(resident_bytes);
  core_->budget().FollowStaging();  // the same samples: staging's charge follows what it holds
  if (FrameTier* frames = core_->frames()) frames->Settle();
}

void Volume::AddStats(nlohmann::json& j) {
  core_->AddStats(j, reclaimer_);
  j["disk_task"] = tasks_->Json();
}

void Volume::AddMemoryStats(nlohmann::json& j) {
  core_->AddMemoryStats(j);  // the core first, then the schedules: the order of the full stats
  nlohmann::json graphs = nlohmann::json::array();
  for (const auto& g : schedules_->List()) graphs.push_back(g->MemoryStatsJson());
  j["schedulers"] = std::move(graphs);
}

Status Volume::StartRebuild(uint32_t disk, const std::string& dir, uint64_t rate) {
  return tasks_->StartRebuild(disk, dir, rate);
}

Status Volume::StartScrub(uint64_t rate) { return tasks_->StartScrub(rate); }

nlohmann::json Volume::DisksJson() {
  nlohmann::json j;
  const DiskSet* set = core_->disk_set();
  nlohmann::json disks = nlohmann::json::array(), degraded = nlohmann::json::array(), stale = nlohmann::json::array();
  if (set != nullptr) {
    j["set"] = set->set_id();
    for (uint32_t d = 0; d < set->size(); ++d) {
      const DiskState state = core_->io() ? CurrentDiskState(*set, *core_->io(), d) : set->state(d);
      disks.push_back({{"index", d}, {"path", set->path(d)}, {"state", DiskStateName(state)}});
      if (set->state(d) == DiskState::kMissing) degraded.push_back(d);
      if (set->state(d) == DiskState::kStale) stale.push_back(d);
    }
  }
  j["disks"] = disks;
  j["degraded"] = degraded;
  j["stale"] = stale;
  j["task"] = tasks_->Json();
  return j;
}
std::vector<std::string> Volume::DegradedNotes() const { return core_->DegradedNotes(); }

}  // namespace graphfs::volume
