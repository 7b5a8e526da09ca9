// A job's `active` (a bitmap of the graph's vertices) and `active.list` (vertex ids as text)
// (jobs_dir.h): committed at close as the job's active set for its next iteration, which the
// graph's schedule turns into active chunks.
#include "fusefs/jobs_dir.h"

#include "fusefs/control_parse.h"
#include "fusefs/graphfs.h"

namespace graphfs {

Status JobsDir::CommitActive(ControlJob& job, const std::string& bytes, bool as_list) {
  volume::JobGraph schedule = job.Schedule();
  if (!schedule) return Error(EINVAL, "active: write the graph directory to `graph` first");
  const uint64_t v = schedule.vertices();
  auto parsed = as_list ? ParseActiveList(bytes, v) : ParseActiveBitmap(bytes, v);
  if (!parsed.ok()) return parsed.error();
  bool whole_chunks;
  {
    std::lock_guard<std::mutex> lock(job.mu);
    whole_chunks = job.whole_chunks;
  }
  auto counts = schedule.SetActive(job.id, std::move(*parsed), whole_chunks);
  if (!counts.ok()) return counts.error().Wrap("active");
  std::lock_guard<std::mutex> lock(job.mu);
  job.active_vertices = counts->vertices;
  job.active_chunks = counts->chunks;
  return Status::Ok();
}

}  // namespace graphfs
