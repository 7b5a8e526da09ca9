// Jobs and graph schedules as `.graphfs/stats` and a job's `status` show them.
#include <nlohmann/json.hpp>

#include "fusefs/graphfs.h"
#include "fusefs/jobs_dir.h"

namespace graphfs {

using json = nlohmann::json;

json JobsDir::JobJson(ControlJob& job) {
  json j;
  volume::JobGraph schedule;
  {
    std::lock_guard<std::mutex> lock(job.mu);
    j = {{"name", job.name},
         {"uid", job.uid},
         {"graph", job.graph},
         {"partition_size", job.partition_bytes},
         {"granularity", job.whole_chunks ? "chunk" : "vertex"},
         {"hold", job.hold},
         {"yields", job.yields},
         {"leases", job.leases},
         {"active_vertices", job.active_vertices},
         {"active_chunks", job.active_chunks},
         {"errors", job.errors},
         {"last_error", job.last_error}};
    schedule = job.schedule;
  }
  j["vertices"] = schedule ? schedule.vertices() : 0;
  if (!schedule) {
    j["state"] = "unconfigured";
    return j;
  }
  schedule.AddJobStatus(job.id, j);
  return j;
}

json JobsDir::StatsJson(GraphFs& fs) {
  std::vector<std::shared_ptr<ControlJob>> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, job] : jobs_) jobs.push_back(job);
  }
  json out;
  json list = json::array();
  for (const auto& job : jobs) list.push_back(JobJson(*job));  // with its recent iterations' costs
  out["jobs"] = list;
  out["schedulers"] = fs.volume->SchedulesJson();
  // The turns at the cores (volume/compute_turns.h): slots 0 when there are none.
  json turns = {{"slots", 0}};
  if (turns_) {
    const volume::ComputeTurns::Stats t = turns_->stats();
    turns = {{"slots", t.slots},         {"engage_above", t.engage_above},
             {"jobs", t.jobs},
             {"computing", t.computing}, {"waiting", t.waiting},
             {"turns", t.turns},         {"free", t.free},
             {"waited", t.waited},       {"wait_seconds", t.wait_seconds},
             {"overdue", t.overdue},     {"stray_yields", t.stray_yields}};
  }
  out["compute_turns"] = turns;
  return out;
}

}  // namespace graphfs
