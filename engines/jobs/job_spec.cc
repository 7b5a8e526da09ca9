#include "engines/jobs/job_spec.h"

#include <cerrno>
#include <cstdlib>

#include "engines/apps/app_registry.h"

namespace graphfs::engine {

namespace {

// run-jobs checks an argument before starting any job: a non-negative integer, or a
// positive number.
bool ValidArg(const AppArg& spec, const std::string& arg) {
  if (arg.empty()) return false;
  char* end = nullptr;
  errno = 0;
  if (spec.type == AppArgType::kInteger) {
    long long v = std::strtoll(arg.c_str(), &end, 10);
    return errno == 0 && *end == '\0' && v >= 0;
  }
  double v = std::strtod(arg.c_str(), &end);
  return errno == 0 && *end == '\0' && v > 0;
}

// "bfs, wcc, sssp, pagerank, pagerank-delta, spmv"
std::string AppNames() {
  std::string names;
  for (const AppSpec& app : Apps()) names += (names.empty() ? "" : ", ") + std::string(app.name);
  return names;
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
    const AppSpec* known = FindApp(job.app);
    if (known == nullptr) return Error(EINVAL, "--jobs: unknown app '" + job.app + "' (" + AppNames() + ")");
    const AppArg& spec = known->arg;
    if (colon != std::string::npos) {
      job.arg = entry.substr(colon + 1);
      if (spec.type == AppArgType::kNone) return Error(EINVAL, "--jobs: " + job.app + " takes no argument");
      if (!ValidArg(spec, job.arg)) return Error(EINVAL, "--jobs: bad argument '" + job.arg + "' for " + job.app);
    } else if (spec.type != AppArgType::kNone) {
      job.arg = spec.job_default;
    }
    jobs.push_back(std::move(job));
  }
  if (jobs.empty()) return Error(EINVAL, "--jobs: no jobs given");
  return jobs;
}

std::string JobListHelp() {
  // Apps with an argument first ("bfs:START"), then those without.
  std::string help = "comma-separated APP[:ARG]:";
  for (const AppSpec& app : Apps()) {
    if (app.arg.type != AppArgType::kNone) help += " " + std::string(app.name) + ":" + app.arg.name;
  }
  for (const AppSpec& app : Apps()) {
    if (app.arg.type == AppArgType::kNone) help += " " + std::string(app.name);
  }
  // What an entry without ARG gets (the registry's job_default), each argument's name once.
  std::string defaults;
  for (const AppSpec& app : Apps()) {
    if (app.arg.type == AppArgType::kNone) continue;
    const std::string said = std::string(app.arg.name) + " " + app.arg.job_default;
    if (defaults.find(said) == std::string::npos) defaults += (defaults.empty() ? "" : ", ") + said;
  }
  return help + "; without ARG: " + defaults;
}

std::string ReentryDefaults() {
  std::string text;
  for (const AppSpec& app : Apps()) {
    if (app.reentry == AppReentry::kNone) continue;
    text += (text.empty() ? "" : ", ") + std::string(app.name) + " " + std::to_string(app.default_reentry);
  }
  return text;
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
