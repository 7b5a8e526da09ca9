// A graph's schedule as `.graphfs/stats` shows it: the scheduler's counts, the loader's, the
// LPs' granularity and the read-cost model's choices, the window, the shared LP memory.
#include <nlohmann/json.hpp>

#include "chunkindex/lp_scheduler.h"
#include "chunkindex/source_runs.h"
#include "volume/internal/graph_schedule.h"
#include "volume/internal/run_grains.h"
#include "volume/internal/volume_core.h"

namespace graphfs::volume {

namespace {

using json = nlohmann::json;

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

json GraphSchedule::GranularityJson(const chunkindex::SchedulerStats& s) const {
  // (chunkindex/read_cost.h: the model that chose between runs and whole chunks.)
  // (runs_ is loaded exactly for vertex-granular LPs.)
  json granularity = {{"mode", NameOf(core_->options().lp_granularity)}};
  if (runs_ == nullptr) return granularity;
  granularity["sorted_chunks"] = runs_->sorted_chunks();
  granularity["unsorted_chunks"] = runs_->chunk_count() - runs_->sorted_chunks();
  granularity["runs_index_bytes"] = runs_->memory_bytes();
  granularity["chunks_whole"] = s.chunks_whole;
  granularity["chunks_partial"] = s.chunks_partial;
  granularity["chunks_unsorted"] = s.chunks_unsorted;
  granularity["bytes_skipped"] = s.bytes_skipped;
  granularity["model_seconds"] = s.model_seconds;
  granularity["model_whole_seconds"] = s.model_whole_seconds;
  granularity["planned_disk_bytes"] = s.planned_disk_bytes;
  granularity["offline_disk_bytes"] = s.offline_disk_bytes;
  granularity["offline_unshared_disk_bytes"] = s.offline_unshared_disk_bytes;
  granularity["gap_read_through_bytes"] = core_->read_cost().cost.GapWorthReading();
  if (runs_->sorted_chunks() < runs_->chunk_count())
    granularity["note"] = "chunks not in source order (preprocess without --sort-sources) are loaded whole";
  return granularity;
}

// The objects of a graph's stats that say what memory it holds, written here alone: StatsJson
// starts from them and the memory sampler reads nothing else, so the front end prices one set
// of names and values in either (fusefs/control_dir.cc).
json GraphSchedule::MemoryStatsJson(const chunkindex::SchedulerStats& s) const {
  return {{"graph", dir()},
          // The window of LPs loaded ahead (-o lp_memory).
          {"window", {{"bytes", s.window_bytes},
                      {"live_lps", s.live_lps},
                      {"live_bytes", s.live_bytes},
                      {"live_unit_bytes", s.live_unit_bytes},
                      {"peak_bytes", s.live_bytes_peak},
                      {"lps_in_flight", s.lps_in_flight},
                      {"loading_bytes", s.loading_bytes}}},
          {"memory", {{"index_bytes", index_bytes()}, {"owned_bytes", owned_bytes()}, {"scratch_bytes", scratch_bytes()}}},
          {"shared_memory", SharedMemoryJson(memory())}};
}

json GraphSchedule::MemoryStatsJson() const { return MemoryStatsJson(scheduler_->Stats()); }

json GraphSchedule::StatsJson() const {
  const chunkindex::SchedulerStats s = scheduler_->Stats();
  const LoaderStats l = loader_stats();
  const json granularity = GranularityJson(s);
  json j = MemoryStatsJson(s);  // graph, window, memory, shared_memory
  j.update({{"granularity", granularity},
            {"loader", {{"whole_bytes", l.whole_bytes},
                        {"run_bytes", l.run_bytes},
                        {"run_bytes_cached", l.run_bytes_cached},
                        {"run_disk_bytes", l.run_disk_bytes},
                        {"run_requests", l.run_requests},
                        {"busiest_disk_bytes", l.busiest_disk_bytes},
                        // What the runs cost in units (a compressed file's frames, decoded
                        // whole) against blocks of run_block_bytes (frames cut into blocks).
                        {"run_units", l.run_units},
                        {"run_unit_bytes", l.run_unit_bytes},
                        {"run_blocks", l.run_blocks},
                        {"run_block_bytes", kRunGrainBlock},
                        // The LPs' memory against their sizes: runs stay in the blocks
                        // the disks read them into, gaps between them included.
                        {"lp_bytes", l.lp_bytes},
                        {"memory_bytes", l.memory_bytes},
                        {"borrowed_bytes", l.borrowed_bytes},
                        {"seconds", l.seconds},  // the loaders' time, summed (they overlap)
                        {"bytes_per_second", l.seconds > 0 ? (l.whole_bytes + l.run_bytes) / l.seconds : 0.0}}},
            {"extents_loaded", s.extents_loaded},
            // Each LP's chunks balanced over the disks (chunkindex/lp_scheduler.h).
            {"disk_balance", {{"chunks_deferred", s.chunks_deferred},
                              {"planned_busiest_disk_bytes", s.planned_busiest_disk_bytes}}},
            {"chunks", scheduler_->chunk_count()},
            {"striped", striped()},
            {"jobs", s.jobs},
            {"active_set_queries", finds()},
            {"find_seconds", find_seconds()},
            {"finder_inverted_form", finder_->has_inverted()},
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
            {"plans_made", s.plans_made},
            {"plans_reused", s.plans_reused},
            {"runs_cut", s.runs_cut},
            {"runs_reused", s.runs_reused},
            {"resident_chunks", s.resident_chunks},
            {"resident_whole", s.resident_whole},
            {"load_seconds", s.load_seconds},
            {"loader_cpu_seconds", s.loader_cpu_seconds},
            {"load_errors", s.load_errors},
            {"last_error", s.last_error},
            // The loaders' busy time, and the seconds jobs waited with no LP loading for them.
            {"loader_busy_seconds", s.busy_seconds},
            {"loader_idle_while_waiting_seconds", s.loader_idle_while_waiting_seconds},
            {"window_full_while_waiting_seconds", s.window_full_while_waiting_seconds}});
  return j;
}

}  // namespace graphfs::volume
