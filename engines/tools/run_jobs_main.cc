// run-jobs --graph DIR --jobs pagerank-delta,wcc,sssp:START,bfs:START
//          [--mem-cap SIZE] [--stagger SECONDS | --arrivals poisson:MEAN_SECONDS [--seed S] | --sequential]
//          [--mem-gb GB] [--bin-dir DIR] [--integrated [--partition SIZE]]
// --arrivals: starts with exponential gaps of mean MEAN_SECONDS (a Poisson process, GraphM's
// evaluation), the first job at 0, deterministic per seed (engines/jobs/arrivals.h). Any number
// of jobs. Every job's planned start is in the report's planned_s column.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "common/random_seed.h"
#include "common/size_parse.h"
#include "engines/graphfs_client.hpp"
#include "engines/jobs/arrivals.h"
#include "engines/jobs/job_runner.h"
#include "engines/jobs/job_spec.h"
#include "engines/tools/cli_util.h"

namespace {

std::string OwnDirectory() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "." : exe.parent_path().string();
}

}  // namespace

int main(int argc, char** argv) {
  graphfs::engine::RunJobsOptions options;
  std::string jobs, mem_cap, mem_gb, partition, arrivals;
  uint64_t seed = graphfs::kDefaultSeed;
  CLI::App cli("run-jobs: run graph jobs as concurrent processes and report times and bytes read per disk",
               "run-jobs");
  cli.add_option("--graph", options.graph_dir, "graph directory (plain or on a graphfs mount)")->required();
  cli.add_option("--jobs", jobs, graphfs::engine::JobListHelp())->required();
  cli.add_option("--mem-cap", mem_cap, "memory limit per job (cgroup v1), e.g. 2G; also the apps' MEM_GB");
  cli.add_option("--mem-gb", mem_gb, "MEM_GB passed to the apps (default: the apps' own, " + graphfs::engine::MemGbText(graphfs::engine::kDefaultMemGb) + " (kDefaultMemGb, engines/apps/apps.h), or the --mem-cap)");
  auto* stagger =
      cli.add_option("--stagger", options.stagger_seconds, "seconds between job starts")->check(CLI::NonNegativeNumber);
  auto* sequential = cli.add_flag("--sequential", options.sequential, "run the jobs one after another instead");
  auto* arrivals_option =
      cli.add_option("--arrivals", arrivals,
                     "poisson:MEAN_SECONDS: exponential gaps of that mean between job starts (first job at 0)")
          ->excludes(stagger, sequential);
  cli.add_option("--seed", seed, "seed of --arrivals; same seed, same start times")
      ->capture_default_str()
      ->needs(arrivals_option);
  cli.add_option("--bin-dir", options.bin_dir, "directory of the app binaries (default: run-jobs' own)");
  auto* integrated = cli.add_flag("--integrated", options.integrated,
                                  "integrated mode: pass --graphfs to every job (graph on a graphfs mount, indexed)");
  cli.add_option("--partition", partition, "logical partition size for integrated jobs, e.g. 64M (default: the apps', " +
                     graphfs::SizeText(graphfs_client::Job::kDefaultPartitionBytes) + ")")->needs(integrated);
  int reentry = -1;
  auto* reentry_option =
      cli.add_option("--reentry", reentry,
                     "pass --reentry N to the jobs whose app takes it (default: each app's own, " +
                         graphfs::engine::ReentryDefaults() +
                         ": kDefaultReentry and kDefaultPageRankDeltaReentry, engines/apps/apps.h)")
          ->check(CLI::Range(0, 1000000));
  cli.add_flag("--diagonal-first", options.diagonal_first, "pass --diagonal-first to every job");
  if (int rc = graphfs::engine::ParseCommandLine(cli, argc, argv); rc >= 0) return rc;
  if (reentry_option->count() > 0) options.reentry = reentry;
  if (!partition.empty()) {
    auto bytes = graphfs::ParseSize(partition);
    if (!bytes.ok() || *bytes == 0) {
      std::fprintf(stderr, "run-jobs: error: --partition: %s\n",
                   bytes.ok() ? "must be > 0" : bytes.error().message().c_str());
      return 2;
    }
    options.partition_bytes = *bytes;
  }

  auto specs = graphfs::engine::ParseJobList(jobs);
  if (!specs.ok()) {
    std::fprintf(stderr, "run-jobs: error: %s\n", specs.error().message().c_str());
    return 2;
  }
  options.jobs = *specs;
  if (*arrivals_option) {
    auto process = graphfs::engine::ParseArrivals(arrivals);
    if (!process.ok()) {
      std::fprintf(stderr, "run-jobs: error: %s\n", process.error().message().c_str());
      return 2;
    }
    options.start_offsets = graphfs::engine::ArrivalTimes(*process, options.jobs.size(), seed);
    char text[128];
    std::snprintf(text, sizeof(text), "poisson, mean gap %.6g s, seed %llu (planned_s: the drawn start times)",
                  process->mean_seconds, static_cast<unsigned long long>(seed));
    options.arrivals = text;
  }
  if (options.bin_dir.empty()) options.bin_dir = OwnDirectory();
  if (!mem_cap.empty()) {
    auto cap = graphfs::ParseSize(mem_cap);
    if (!cap.ok() || *cap == 0) {
      std::fprintf(stderr, "run-jobs: error: --mem-cap: %s\n", cap.ok() ? "must be > 0" : cap.error().message().c_str());
      return 2;
    }
    options.mem_cap = *cap;
    options.mem_gb = graphfs::engine::MemGbText(static_cast<double>(*cap) / (1u << 30));
  }
  if (!mem_gb.empty()) options.mem_gb = mem_gb;

  auto report = graphfs::engine::RunJobs(options);
  if (!report.ok()) {
    std::fprintf(stderr, "run-jobs: error: %s\n", report.error().message().c_str());
    return 1;
  }
  std::fputs(graphfs::engine::FormatReport(*report).c_str(), stdout);
  return report->all_ok() ? 0 : 1;
}
