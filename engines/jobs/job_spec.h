// The --jobs list of run-jobs: "pagerank-delta,wcc,sssp:START,bfs:START".
// Each entry is APP[:ARG]; which apps there are, which argument each takes and
// its default (START 0, ITERATIONS 10, EPSILON 0.01; wcc and spmv take none)
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

// The help text of run-jobs' --jobs: the entries the registry allows.
std::string JobListHelp();

// argv for the app binary: APP PATH [ARG] MEM_GB [FLAGS...] (e.g. --graphfs).
std::vector<std::string> JobArgv(const JobSpec& job, const std::string& graph_dir, const std::string& mem_gb,
                                 const std::vector<std::string>& flags = {});

}  // namespace graphfs::engine
