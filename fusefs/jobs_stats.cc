// Jobs and graph schedules as `.graphfs/stats` and a job's `status` show them.
#include <nlohmann/json.hpp>

#include "fusefs/graphfs.h"
#include "fusefs/jobs_dir.h"

namespace graphfs {

using json = nlohmann::json;

json JobsDir::JobJson(ControlJob& job) {
  json j;
  std::shared_ptr<GraphSchedule> schedule;
  {
    std::lock_guard<std::mutex> lock(job.mu);
    j = {{"name", job.name},
         {"uid", job.uid},
         {"graph", job.graph},
         {"partition_size", job.partition_bytes},
         {"granularity", job.whole_chunks ? "chunk" : "vertex"},
         {"leases", job.leases},
         {"active_vertices", job.active_vertices},
         {"active_chunks", job.active_chunks},
         {"errors", job.errors},
         {"last_error", job.last_error}};
    schedule = job.schedule;
  }
  j["vertices"] = schedule ? schedule->vertices() : 0;
  if (!schedule) {
    j["state"] = "unconfigured";
    return j;
  }
  auto view = schedule->scheduler().View(job.id);
  if (!view.ok()) return j;
  auto cost = [](const volume::IterationCost& c) {
    return json{{"iteration", c.iteration},       {"active_chunks", c.active_chunks},
                {"active_bytes", c.active_bytes}, {"find_seconds", c.find_seconds},
                {"select_seconds", c.select_seconds}, {"load_seconds", c.load_seconds},
                {"wait_seconds", c.wait_seconds}, {"lps", c.lps},
                {"bytes_delivered", c.bytes_delivered}, {"bytes_reused", c.bytes_reused},
                {"lp_bytes", c.lp_bytes},         {"whole_chunks", c.whole_chunks},
                {"partial_chunks", c.partial_chunks}, {"finished", c.finished}};
  };
  j["state"] = view->state;
  j["iteration"] = view->iteration;
  j["remaining_chunks"] = view->remaining_chunks;
  j["remaining_bytes"] = view->remaining_bytes;
  j["lp"] = view->holding_seq;
  j["queued_lps"] = view->queued;
  j["queued_bytes"] = view->queued_bytes;
  j["waiting_seconds"] = view->waiting_seconds;
  json recent = json::array();
  for (const auto& c : view->recent) recent.push_back(cost(c));
  j["iterations"] = recent;
  j["total"] = cost(view->total);
  return j;
}

namespace {

// The graph's LP memory, which jobs map (`jobs/NAME/memory`): LPs' bytes in use, and those kept
// resident for the next LPs (RssShmem of the daemon).
json SharedMemoryJson(const std::shared_ptr<SharedArena>& memory) {
  if (!memory) return {{"active", false}};
  const SharedArena::Stats m = memory->stats();
  return {{"active", true},
          {"virtual_bytes", m.virtual_bytes},
          {"used_bytes", m.used_bytes},
          {"peak_used_bytes", m.peak_used_bytes},
          {"resident_bytes", m.resident_bytes},
          {"punched_bytes", m.punched_bytes},
          {"slices", m.slices},
          {"heap_fallbacks", m.take_failures}};
}

}  // namespace

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
  json graphs = json::array();
  for (const auto& g : fs.volume->schedules().List()) {
    const volume::SchedulerStats s = g->scheduler().Stats();
    const volume::GraphSchedule::LoaderStats l = g->loader_stats();
    const json granularity = g->GranularityJson(s);
    graphs.push_back({{"graph", g->dir()},
                      {"granularity", granularity},
                      {"loader", {{"whole_bytes", l.whole_bytes},
                                  {"run_bytes", l.run_bytes},
                                  {"run_bytes_cached", l.run_bytes_cached},
                                  {"run_disk_bytes", l.run_disk_bytes},
                                  {"run_requests", l.run_requests},
                                  {"busiest_disk_bytes", l.busiest_disk_bytes},
                                  // The LPs' memory against their sizes: runs stay in the blocks
                                  // the disks read them into, gaps between them included.
                                  {"lp_bytes", l.lp_bytes},
                                  {"memory_bytes", l.memory_bytes},
                                  {"borrowed_bytes", l.borrowed_bytes},
                                  {"bytes_per_second", l.seconds > 0 ? (l.whole_bytes + l.run_bytes) / l.seconds : 0.0}}},
                      {"extents_loaded", s.extents_loaded},
                      // Each LP's chunks balanced over the disks (chunkindex/lp_scheduler.h).
                      {"disk_balance", {{"chunks_deferred", s.chunks_deferred},
                                        {"planned_busiest_disk_bytes", s.planned_busiest_disk_bytes}}},
                      {"chunks", g->scheduler().chunk_count()},
                      {"striped", g->striped()},
                      {"jobs", s.jobs},
                      {"active_set_queries", g->finds()},
                      {"find_seconds", g->find_seconds()},
                      {"lps_built", s.lps_built},
                      {"lps_preloaded", s.lps_preloaded},
                      {"lps_guessed", s.lps_guessed},
                      {"lp_handouts", s.lp_handouts},
                      {"chunks_loaded", s.chunks_loaded},
                      {"bytes_loaded", s.bytes_loaded},
                      {"bytes_reused", s.bytes_reused},
                      {"bytes_discarded", s.bytes_discarded},
                      {"bytes_delivered", s.bytes_delivered},
                      {"select_seconds", s.select_seconds},
                      {"load_seconds", s.load_seconds},
                      {"loader_cpu_seconds", s.loader_cpu_seconds},
                      {"load_errors", s.load_errors},
                      {"last_error", s.last_error},
                      // The window of LPs loaded ahead (-o lp_memory), and the seconds jobs waited
                      // with no LP loading for them.
                      {"window", {{"bytes", s.window_bytes},
                                  {"live_lps", s.live_lps},
                                  {"live_bytes", s.live_bytes},
                                  {"live_unit_bytes", s.live_unit_bytes},
                                  {"peak_bytes", s.live_bytes_peak},
                                  {"lps_in_flight", s.lps_in_flight},
                                  {"loading_bytes", s.loading_bytes}}},
                      {"memory", {{"index_bytes", g->index_bytes()}, {"scratch_bytes", g->scratch_bytes()}}},
                      {"shared_memory", SharedMemoryJson(g->memory())},
                      {"loader_busy_seconds", s.busy_seconds},
                      {"loader_idle_while_waiting_seconds", s.loader_idle_while_waiting_seconds},
                      {"window_full_while_waiting_seconds", s.window_full_while_waiting_seconds}});
  }
  out["schedulers"] = graphs;
  return out;
}

}  // namespace graphfs
