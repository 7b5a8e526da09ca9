#include "engines/jobs/job_spec.h"

#include <cerrno>
#include <cstdlib>

namespace graphfs::engine {

namespace {

struct AppArg {
  const char* app;
  const char* default_arg;  // nullptr: takes no argument
  bool integer;             // argument is a non-negative integer (else a positive number)
};

constexpr AppArg kApps[] = {
    {"bfs", "0", true},           {"sssp", "0", true},          {"pagerank", "10", true},
    {"pagerank-delta", "0.01", false}, {"wcc", nullptr, false}, {"spmv", nullptr, false},
};

bool ValidArg(const AppArg& app, const std::string& arg) {
  if (arg.empty()) return false;
  char* end = nullptr;
  errno = 0;
  if (app.integer) {
    long long v = std::strtoll(arg.c_str(), &end, 10);
    return errno == 0 && *end == '\0' && v >= 0;
  }
  double v = std::strtod(arg.c_str(), &end);
  return errno == 0 && *end == '\0' && v > 0;
}

}  // namespace

Result<std::vector<JobSpec>> ParseJobList(const std::string& text) {
  std::vector<JobSpec> jobs;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string entry = text.substr(pos, comma - pos);
    pos = comma + 1;
    if (entry.empty()) return Error(EINVAL, "--jobs: empty entry in '" + text + "'");
    JobSpec job;
    size_t colon = entry.find(':');
    job.app = entry.substr(0, colon);
    const AppArg* known = nullptr;
    for (const AppArg& a : kApps) {
      if (job.app == a.app) known = &a;
    }
    if (known == nullptr) {
      return Error(EINVAL, "--jobs: unknown app '" + job.app + "' (bfs, wcc, sssp, pagerank, pagerank-delta, spmv)");
    }
    if (colon != std::string::npos) {
      job.arg = entry.substr(colon + 1);
      if (known->default_arg == nullptr) return Error(EINVAL, "--jobs: " + job.app + " takes no argument");
      if (!ValidArg(*known, job.arg)) return Error(EINVAL, "--jobs: bad argument '" + job.arg + "' for " + job.app);
    } else if (known->default_arg != nullptr) {
      job.arg = known->default_arg;
    }
    jobs.push_back(std::move(job));
  }
  if (jobs.empty()) return Error(EINVAL, "--jobs: no jobs given");
  return jobs;
}

std::vector<std::string> JobArgv(const JobSpec& job, const std::string& graph_dir, const std::string& mem_gb,
                                 const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {job.app, graph_dir};
  if (!job.arg.empty()) argv.push_back(job.arg);
  argv.push_back(mem_gb);
  argv.insert(argv.end(), flags.begin(), flags.end());
  return argv;
}

}  // namespace graphfs::engine
