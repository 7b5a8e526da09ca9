// The --jobs list of run-jobs: "pagerank-delta,wcc,sssp:START,bfs:START".
// Each entry is APP[:ARG]; ARG defaults per app (START 0, ITERATIONS 10,
// EPSILON 0.01); wcc and spmv take none.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace graphfs::engine {

struct JobSpec {
  std::string app;  // binary name: bfs, wcc, sssp, pagerank, pagerank-delta, spmv
  std::string arg;  // the app's argument between PATH and MEM_GB; empty for wcc/spmv
};

Result<std::vector<JobSpec>> ParseJobList(const std::string& text);

// argv for the app binary: APP PATH [ARG] MEM_GB [FLAGS...] (e.g. --graphfs).
std::vector<std::string> JobArgv(const JobSpec& job, const std::string& graph_dir, const std::string& mem_gb,
                                 const std::vector<std::string>& flags = {});

}  // namespace graphfs::engine
