// run-jobs: start graph jobs as separate processes (fork/exec of the app
// binaries), all at once, staggered, at planned times (e.g. Poisson arrivals,
// arrivals.h) or one after another; optionally each in its own memory cgroup;
// wait; report planned and actual starts, wall times, result lines and the
// bytes each disk read meanwhile.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "engines/apps/apps.h"
#include "engines/jobs/disk_stats.h"
#include "engines/jobs/job_spec.h"

namespace graphfs::engine {

// GiB as the apps' MEM_GB argument takes it (up to 6 significant digits: 8, 0.25).
std::string MemGbText(double gib);

// How often run-jobs looks for jobs that are due to start and jobs that have ended: a job starts
// at most this late (start_s against planned_s), and waiting costs no measurable CPU.
inline constexpr std::chrono::milliseconds kJobPollInterval{5};

struct RunJobsOptions {
  std::string graph_dir;
  std::vector<JobSpec> jobs;
  std::string bin_dir;                // where the app binaries are
  std::string mem_gb = MemGbText(kDefaultMemGb);  // MEM_GB passed to every app (the apps' own default)
  std::optional<uint64_t> mem_cap;    // per-job cgroup memory limit
  std::string cgroup_root = "/sys/fs/cgroup/memory";
  double stagger_seconds = 0;         // delay between starts
  // Planned start of each job in seconds since the run began (one per job, non-decreasing);
  // replaces stagger_seconds when set. `arrivals` says how they were drawn, for the report.
  std::vector<double> start_offsets;
  std::string arrivals;
  bool sequential = false;            // one job after another
  bool integrated = false;            // pass --graphfs: jobs read graphfs's logical partitions
  std::optional<uint64_t> partition_bytes;  // integrated: --graphfs-partition (else the apps' default)
  std::optional<int> reentry;         // --reentry N for the apps that take it (bfs, sssp, wcc, pagerank-delta; else their default)
  bool diagonal_first = false;        // --diagonal-first for every app
};

// The flags run-jobs adds to every job's command line for the mode.
std::vector<std::string> ModeFlags(const RunJobsOptions& options);

struct JobOutcome {
  JobSpec spec;
  std::vector<std::string> argv;
  std::optional<double> planned_start_seconds;  // since the run began; none when sequential
  double start_seconds = 0;  // since the run began (the planned time, or a little after)
  double wall_seconds = 0;
  int exit_code = -1;        // when it exited
  int signal = 0;            // when it was killed
  std::string result_line;   // last non-empty stdout line
  uint64_t max_rss = 0;      // peak resident set (getrusage of the child)
  std::string cgroup;        // the job's memory cgroup, when capped
  uint64_t cgroup_limit = 0;
  uint64_t cgroup_peak = 0;  // memory.max_usage_in_bytes (includes page cache)
  bool ok() const { return signal == 0 && exit_code == 0; }
};

struct DiskDelta {
  std::string name;  // e.g. loop3
  uint64_t bytes_read = 0;
};

struct RunReport {
  std::string graph_dir;
  bool integrated = false;
  std::optional<uint64_t> partition_bytes;
  std::string arrivals;  // RunJobsOptions::arrivals
  std::vector<JobOutcome> jobs;
  double total_seconds = 0;
  std::vector<DiskDelta> devices;
  std::optional<std::string> graphfs_mount;
  std::vector<GraphfsDiskCounters> graphfs_disks;  // deltas over the run
  bool all_ok() const;
};

Result<RunReport> RunJobs(const RunJobsOptions& options);
std::string FormatReport(const RunReport& report);

}  // namespace graphfs::engine
