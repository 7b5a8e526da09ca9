// The --jobs list of run-jobs: "pagerank-delta,wcc,sssp:START,bfs:START".
// Each entry is APP[:ARG]; which apps there are, which argument each takes and
// its default (AppArg::job_default; wcc and spmv take none)
// come from the app registry (engines/apps/app_registry.h).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace graphfs::engine {

struct JobSpec {
  std::string app;  // binary name: an app of the registry
  std::string arg;  // the app's argument between PATH and MEM_GB; empty if it takes none
};

Result<std::vector<JobSpec>> ParseJobList(const std::string& text);

// The help text of run-jobs' --jobs: the entries the registry allows, and the argument each
// gets when its entry gives none.
std::string JobListHelp();

// The apps that take --reentry N, each with the N it runs with when given none (the registry's
// default_reentry): "bfs 5, wcc 5, sssp 5, pagerank-delta 0", for run-jobs' --reentry help.
std::string ReentryDefaults();

// argv for the app binary: APP PATH [ARG] MEM_GB [FLAGS...] (e.g. --graphfs).
std::vector<std::string> JobArgv(const JobSpec& job, const std::string& graph_dir, const std::string& mem_gb,
                                 const std::vector<std::string>& flags = {});

}  // namespace graphfs::engine
