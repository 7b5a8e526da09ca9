#include "volume/internal/disk_tasks.h"

#include "common/log.h"
#include "striping/disk_set.h"
#include "striping/rebuild.h"
#include "striping/scrub.h"
#include "striping/striped_file.h"
#include "volume/internal/volume_core.h"

namespace graphfs::volume {

namespace {

using json = nlohmann::json;

json ScrubJson(const ScrubReport& r) {
  json files = json::array();
  for (const ScrubFile& f : r.files) {
    json one = {{"path", f.path}, {"rows", f.rows}, {"counts", ScrubCountsJson(f.counts)}};
    if (!f.damage.empty()) one["damage"] = f.damage;
    files.push_back(std::move(one));
  }
  return {{"files", files},          {"skipped", r.skipped},       {"missing", r.missing},
          {"resynced", r.resynced},    {"stale", r.stale},
          {"total", ScrubCountsJson(r.total)}, {"damage_left", r.damage_left()}};
}

}  // namespace

Status DiskTasks::Claim(json what) {
  std::unique_lock<std::mutex> lock(mu_);
  // A disk being taken back: the task starts with the set as it is after (a moment).
  taken_back_.wait(lock, [this] { return !taking_back_; });
  if (busy_) {
    const std::string kind = task_.value("kind", std::string("task"));
    const uint64_t done = progress_ ? progress_->done.load() : 0, total = progress_ ? progress_->total.load() : 0;
    return Error(EBUSY, "a " + kind + " is running already (" + std::to_string(done) + " of " + std::to_string(total) +
                            " bytes read): wait for it to end");
  }
  if (thread_.joinable()) thread_.join();  // the last task's thread, ended
  busy_ = true;
  task_ = std::move(what);
  task_["state"] = "starting";
  progress_ = std::make_shared<SetTaskProgress>();
  started_ = std::chrono::steady_clock::now();
  return Status::Ok();
}

Status DiskTasks::Refused(const Error& e) {
  std::lock_guard<std::mutex> lock(mu_);
  busy_ = false;
  task_["state"] = "refused";
  task_["error"] = e.message();
  LogError("disks: " + task_.value("kind", std::string("task")) + " refused: " + e.message());
  return e;
}

void DiskTasks::Launch(std::function<Result<json>()> work) {
  std::lock_guard<std::mutex> lock(mu_);
  task_["state"] = "running";
  thread_ = std::thread([this, work = std::move(work)] { Ended(work()); });
}

void DiskTasks::Ended(const Result<json>& outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  busy_ = false;
  task_["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  task_["done_bytes"] = progress_->done.load();
  task_["total_bytes"] = progress_->total.load();
  const std::string kind = task_.value("kind", std::string("task"));
  if (outcome.ok()) {
    task_["state"] = "done";
    task_["report"] = *outcome;
    LogError("disks: " + kind + " done: " + outcome->dump());
  } else {
    task_["state"] = outcome.error().code() == ECANCELED ? "stopped" : "failed";
    task_["error"] = outcome.error().message();
    LogError("disks: " + kind + " " + task_["state"].get<std::string>() + ": " + outcome.error().message());
  }
}

Status DiskTasks::StartRebuild(uint32_t disk, const std::string& dir, uint64_t rate) {
  const DiskSet* set = core_.disk_set();
  if (set == nullptr) return Error(EINVAL, "rebuild: nothing under the source is striped");
  GRAPHFS_RETURN_IF_ERROR(Claim({{"kind", "rebuild"}, {"disk", disk}, {"to", dir}, {"rate", rate}}));
  if (disk >= set->size())
    return Refused(Error(EINVAL, "rebuild " + std::to_string(disk) + ": the set has disks 0.." +
                                     std::to_string(set->size() - 1)));
  RebuildRequest req;
  req.paths = {core_.source()};
  req.disk = disk;
  req.to = dir;
  req.rate = rate;
  req.progress = false;
  req.live = set;
  req.task = progress_.get();
  // Every unit is on the new disk and read back, the registries name it: the mount reads it, and
  // the writes held for the switch go on onto it.
  req.switch_in = [this, disk](const std::string& to) { return core_.SwitchDisk(disk, to); };
  auto prepared = PrepareRebuild(req);
  if (!prepared.ok()) return Refused(prepared.error().Wrap("rebuild of disk " + std::to_string(disk)));
  LogError("disks: rebuilding disk " + std::to_string(disk) + " onto " + dir + " (" + std::to_string(rate) +
           " bytes/s, 0: no limit)");
  std::shared_ptr<PreparedRebuild> prep(prepared->release(), PreparedRebuildDeleter());
  Launch([prep]() -> Result<json> {
    // Writes of files that lost the disk go on while it runs (striping/rebuild_watch.h).
    auto report = RunRebuild(*prep);
    if (!report.ok()) return report.error();
    return json{{"to", report->to},
                {"files", report->files},
                {"bytes", report->bytes},
                {"bad_source_blocks", report->bad_source_blocks},
                {"redone_rows", report->redone_rows},
                {"held_rows", report->held_rows},
                {"holds_given_up", report->holds_given_up},
                {"longest_hold_seconds", report->longest_hold_seconds},
                {"resumed", report->resumed},
                {"registries", report->registries}};
  });
  return Status::Ok();
}

Status DiskTasks::StartScrub(uint64_t rate) {
  const DiskSet* set = core_.disk_set();
  if (set == nullptr) return Error(EINVAL, "scrub: nothing under the source is striped");
  GRAPHFS_RETURN_IF_ERROR(Claim({{"kind", "scrub"}, {"rate", rate}}));
  ScrubRequest req;
  req.paths = {core_.source()};
  req.rate = rate;
  req.progress = false;
  req.live = set;
  req.task = progress_.get();
  auto prepared = PrepareScrub(req);
  if (!prepared.ok()) return Refused(prepared.error().Wrap("scrub"));
  LogError("disks: scrubbing (" + std::to_string(rate) + " bytes/s, 0: no limit)");
  std::shared_ptr<PreparedScrub> prep(prepared->release(), PreparedScrubDeleter());
  Launch([prep]() -> Result<json> {
    auto report = RunScrub(*prep);
    if (!report.ok()) return report.error();
    return ScrubJson(*report);
  });
  return Status::Ok();
}

json DiskTasks::Json() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (task_.is_null()) return nullptr;
  json j = task_;
  if (busy_ && progress_) {
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const uint64_t done = progress_->done.load();
    j["done_bytes"] = done;
    j["total_bytes"] = progress_->total.load();
    j["seconds"] = secs;
    j["bytes_per_second"] = secs > 0 ? static_cast<double>(done) / secs : 0.0;
  } else if (j.contains("seconds") && j["seconds"].get<double>() > 0) {
    j["bytes_per_second"] = static_cast<double>(j.value("done_bytes", uint64_t{0})) / j["seconds"].get<double>();
  }
  return j;
}

void DiskTasks::Stop() {
  std::thread t, probe;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (progress_) progress_->cancel.store(true);
    t = std::move(thread_);
    probe_stop_ = true;
    probe = std::move(probe_);
  }
  probe_wake_.notify_all();
  if (probe.joinable()) probe.join();
  if (t.joinable()) t.join();
}

void DiskTasks::StartProbe(std::chrono::milliseconds every) {
  const DiskSet* set = core_.disk_set();
  if (set == nullptr || !set->degraded()) return;  // a disk is missing only from the mount on
  std::lock_guard<std::mutex> lock(mu_);
  if (probe_.joinable() || probe_stop_) return;
  refused_.assign(set->size(), std::string());
  probe_ = std::thread([this, every] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!probe_stop_) {
      probe_wake_.wait_for(lock, every, [this] { return probe_stop_; });
      if (probe_stop_) break;
      lock.unlock();
      ProbeMissing();
      lock.lock();
    }
  });
}

void DiskTasks::ProbeMissing() {
  const DiskSet* set = core_.disk_set();
  for (uint32_t d = 0; d < set->size(); ++d) {
    if (set->state(d) != DiskState::kMissing) continue;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (busy_ || probe_stop_) return;  // the next probe, once the task has ended
      taking_back_ = true;
    }
    const Status s = core_.TakeBackDisk(d);
    {
      std::lock_guard<std::mutex> lock(mu_);
      taking_back_ = false;
    }
    taken_back_.notify_all();
    if (s.ok() || s.error().code() == ENOENT || s.error().code() == EBUSY) {
      refused_[d].clear();  // nothing there (yet), or taken: a refusal later is news again
      continue;
    }
    if (s.error().message() == refused_[d]) continue;
    refused_[d] = s.error().message();
    LogError("disks: " + s.error().message() + " — not taken back; disk " + std::to_string(d) + " stays missing");
  }
}

}  // namespace graphfs::volume
