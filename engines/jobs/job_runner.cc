#include "engines/jobs/job_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "common/size_parse.h"
#include "engines/apps/app_registry.h"
#include "engines/jobs/memory_cgroup.h"
#include "grid/posix_io.h"

namespace graphfs::engine {

namespace {

volatile sig_atomic_t g_interrupted = 0;
void OnSignal(int) { g_interrupted = 1; }

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct RunningJob {
  pid_t pid = -1;
  Clock::time_point started;
  std::string stdout_path;
  MemoryCgroup cgroup;
  bool done = false;
};

std::string LastLine(const std::string& text) {
  size_t end = text.size();
  while (end > 0) {
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
    size_t begin = text.rfind('\n', end == 0 ? 0 : end - 1);
    begin = begin == std::string::npos ? 0 : begin + 1;
    std::string line = text.substr(begin, end - begin);
    if (line.find_first_not_of(" \t") != std::string::npos) return line;
    end = begin;
  }
  return "";
}

// Disk counters of everything the graph's I/O may reach.
struct Snapshot {
  std::map<std::string, uint64_t> devices;
  std::vector<GraphfsDiskCounters> graphfs;
};

Snapshot TakeSnapshot(const std::string& graph_dir, const std::optional<std::string>& mount) {
  Snapshot snap;
  std::set<std::string> names;
  if (auto dev = BlockDeviceOf(graph_dir)) names.insert(*dev);
  if (mount) {
    auto text = grid::ReadWholeFile(*mount + "/.graphfs/stats");
    if (text.ok()) {
      auto disks = ParseGraphfsStats(*text);
      if (disks.ok()) {
        snap.graphfs = *disks;
        for (const auto& d : snap.graphfs) {
          if (d.path.empty()) continue;
          if (auto dev = BlockDeviceOf(d.path)) names.insert(*dev);
        }
      }
    }
  }
  for (const std::string& name : names) {
    auto bytes = DeviceBytesRead(name);
    if (bytes.ok()) snap.devices[name] = *bytes;
  }
  return snap;
}

std::optional<uint64_t> Delta(std::optional<uint64_t> before, std::optional<uint64_t> after) {
  if (!before || !after || *after < *before) return after;
  return *after - *before;
}

Status StartJob(const RunJobsOptions& options, size_t index, JobOutcome& outcome, RunningJob& job) {
  char path_template[] = "/tmp/graphfs-run-jobs-XXXXXX";
  int out_fd = ::mkstemp(path_template);
  if (out_fd < 0) return Error::FromErrno("mkstemp");
  job.stdout_path = path_template;
  if (options.mem_cap) {
    const std::string name = "graphfs-job-" + std::to_string(::getpid()) + "-" + std::to_string(index);
    auto group = MemoryCgroup::Create(name, *options.mem_cap, options.cgroup_root);
    if (!group.ok()) {
      ::close(out_fd);
      ::unlink(job.stdout_path.c_str());
      return group.error();
    }
    job.cgroup = std::move(*group);
    outcome.cgroup_limit = *options.mem_cap;
  }
  const std::string binary = options.bin_dir + "/" + outcome.spec.app;
  std::vector<char*> argv;
  for (std::string& a : outcome.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string procs = job.cgroup.path().empty() ? "" : job.cgroup.ProcsFile();

  job.started = Clock::now();
  pid_t pid = ::fork();
  if (pid < 0) {
    Error error = Error::FromErrno("fork");
    ::close(out_fd);
    ::unlink(job.stdout_path.c_str());
    return error;
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    if (!procs.empty()) {
      char buf[32];
      int n = std::snprintf(buf, sizeof(buf), "%d\n", static_cast<int>(::getpid()));
      int fd = ::open(procs.c_str(), O_WRONLY);
      if (fd < 0 || ::write(fd, buf, static_cast<size_t>(n)) != n) {
        static const char msg[] = "run-jobs: could not join memory cgroup\n";
        (void)!::write(2, msg, sizeof(msg) - 1);
        ::_exit(126);
      }
      ::close(fd);
    }
    ::dup2(out_fd, 1);
    ::close(out_fd);
    ::execv(binary.c_str(), argv.data());
    const char* err = std::strerror(errno);
    (void)!::write(2, "run-jobs: exec ", 15);
    (void)!::write(2, binary.c_str(), binary.size());
    (void)!::write(2, ": ", 2);
    (void)!::write(2, err, std::strlen(err));
    (void)!::write(2, "\n", 1);
    ::_exit(127);
  }
  ::close(out_fd);
  job.pid = pid;
  return Status::Ok();
}

void FinishJob(JobOutcome& outcome, RunningJob& job, int status, const struct rusage& usage) {
  outcome.wall_seconds = Since(job.started);
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  auto text = grid::ReadWholeFile(job.stdout_path);
  if (text.ok()) outcome.result_line = LastLine(*text);
  ::unlink(job.stdout_path.c_str());
  outcome.max_rss = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  outcome.cgroup = job.cgroup.path();
  outcome.cgroup_peak = job.cgroup.MaxUsage();
  Status removed = job.cgroup.Remove();
  if (!removed.ok()) std::fprintf(stderr, "run-jobs: warning: %s\n", removed.error().message().c_str());
  job.done = true;
}

}  // namespace

std::string MemGbText(double gib) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.6g", gib);
  return text;
}

std::vector<std::string> ModeFlags(const RunJobsOptions& options) {
  if (!options.integrated) return {};
  std::vector<std::string> flags = {"--graphfs"};
  if (options.partition_bytes) {
    flags.push_back("--graphfs-partition");
    flags.push_back(std::to_string(*options.partition_bytes));
  }
  return flags;
}

bool RunReport::all_ok() const {
  return std::all_of(jobs.begin(), jobs.end(), [](const JobOutcome& j) { return j.ok(); });
}

Result<RunReport> RunJobs(const RunJobsOptions& options) {
  if (options.jobs.empty()) return Error(EINVAL, "no jobs");
  if (!options.start_offsets.empty()) {
    if (options.sequential) return Error(EINVAL, "planned start times and sequential runs exclude each other");
    if (options.start_offsets.size() != options.jobs.size()) {
      return Error(EINVAL, std::to_string(options.start_offsets.size()) + " planned start times for " +
                               std::to_string(options.jobs.size()) + " jobs");
    }
    for (size_t i = 0; i < options.start_offsets.size(); ++i) {
      const double t = options.start_offsets[i];
      if (!std::isfinite(t) || t < 0 || (i > 0 && t < options.start_offsets[i - 1])) {
        return Error(EINVAL, "planned start times must be finite, >= 0 and non-decreasing (job " + std::to_string(i) +
                                 ")");
      }
    }
  }
  for (const JobSpec& spec : options.jobs) {
    const std::string binary = options.bin_dir + "/" + spec.app;
    if (::access(binary.c_str(), X_OK) != 0) return Error::FromErrno("app binary " + binary);
  }
  RunReport report;
  report.graph_dir = options.graph_dir;
  report.integrated = options.integrated;
  report.partition_bytes = options.partition_bytes;
  report.arrivals = options.arrivals;
  report.graphfs_mount = FindGraphfsMount(options.graph_dir);
  report.jobs.resize(options.jobs.size());
  std::vector<RunningJob> running(options.jobs.size());
  for (size_t i = 0; i < options.jobs.size(); ++i) {
    report.jobs[i].spec = options.jobs[i];
    if (!options.sequential) {
      report.jobs[i].planned_start_seconds = options.start_offsets.empty()
                                                 ? options.stagger_seconds * static_cast<double>(i)
                                                 : options.start_offsets[i];
    }
    std::vector<std::string> flags = ModeFlags(options);
    const AppSpec* app = FindApp(options.jobs[i].app);
    if (options.reentry && app != nullptr && app->reentry != AppReentry::kNone) {
      flags.push_back("--reentry");
      flags.push_back(std::to_string(*options.reentry));
    }
    if (options.diagonal_first) flags.push_back("--diagonal-first");
    // Instances of the same app would share their state files: each gets its own tag.
    const auto same = std::count_if(options.jobs.begin(), options.jobs.end(),
                                    [&](const JobSpec& s) { return s.app == options.jobs[i].app; });
    if (same > 1) {
      flags.push_back("--state-tag");
      flags.push_back("job" + std::to_string(i));
    }
    report.jobs[i].argv = JobArgv(options.jobs[i], options.graph_dir, options.mem_gb, flags);
  }

  struct sigaction action = {}, old_int = {}, old_term = {};
  action.sa_handler = OnSignal;
  ::sigaction(SIGINT, &action, &old_int);
  ::sigaction(SIGTERM, &action, &old_term);
  g_interrupted = 0;

  const Snapshot before = TakeSnapshot(options.graph_dir, report.graphfs_mount);
  const Clock::time_point run_start = Clock::now();
  size_t started = 0, finished = 0;
  std::optional<Error> start_error;
  while (finished < options.jobs.size()) {
    // Start the next job when its time has come.
    const bool previous_done = started == 0 || running[started - 1].done;
    if (started < options.jobs.size() && !start_error && !g_interrupted &&
        (options.sequential ? previous_done : Since(run_start) >= *report.jobs[started].planned_start_seconds)) {
      report.jobs[started].start_seconds = Since(run_start);
      Status s = StartJob(options, started, report.jobs[started], running[started]);
      if (!s.ok()) {
        start_error = s.error();
      } else {
        ++started;
        continue;
      }
    }
    if ((start_error || g_interrupted) && started == finished) break;
    if (g_interrupted) {
      for (size_t i = 0; i < started; ++i) {
        if (!running[i].done) ::kill(running[i].pid, SIGTERM);
      }
    }
    for (size_t i = 0; i < started; ++i) {
      if (running[i].done) continue;
      int status = 0;
      struct rusage usage = {};
      pid_t r = ::wait4(running[i].pid, &status, WNOHANG, &usage);
      if (r == running[i].pid) {
        FinishJob(report.jobs[i], running[i], status, usage);
        ++finished;
      }
    }
    std::this_thread::sleep_for(kJobPollInterval);
  }
  report.total_seconds = Since(run_start);
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  if (start_error) return *start_error;
  if (g_interrupted) return Error(EINTR, "interrupted; jobs stopped and cgroups removed");

  const Snapshot after = TakeSnapshot(options.graph_dir, report.graphfs_mount);
  for (const auto& [name, bytes] : after.devices) {
    auto it = before.devices.find(name);
    report.devices.push_back({name, it == before.devices.end() || bytes < it->second ? bytes : bytes - it->second});
  }
  for (const GraphfsDiskCounters& disk : after.graphfs) {
    GraphfsDiskCounters delta = disk;
    for (const GraphfsDiskCounters& old : before.graphfs) {
      if (old.index == disk.index) {
        delta.bytes_read = Delta(old.bytes_read, disk.bytes_read);
        delta.bytes_written = Delta(old.bytes_written, disk.bytes_written);
      }
    }
    report.graphfs_disks.push_back(delta);
  }
  return report;
}

std::string FormatReport(const RunReport& report) {
  std::string out;
  char line[1024];
  std::snprintf(line, sizeof(line), "%-4s %-15s %-16s %9s %8s %8s %10s %-9s %s\n", "job", "app", "args", "planned_s",
                "start_s", "wall_s", "max_rss", "status", "result");
  out += line;
  for (size_t i = 0; i < report.jobs.size(); ++i) {
    const JobOutcome& job = report.jobs[i];
    // The app's own arguments; the mode's flags are said once, below the table.
    std::string args;
    for (size_t a = 2; a < job.argv.size() && job.argv[a].rfind("--", 0) != 0; ++a) {
      args += (a > 2 ? " " : "") + job.argv[a];
    }
    std::string status = job.ok() ? "ok"
                         : job.signal != 0 ? "signal " + std::to_string(job.signal)
                                           : "exit " + std::to_string(job.exit_code);
    char planned[32] = "-";  // sequential: a job starts when the previous one ends
    if (job.planned_start_seconds) std::snprintf(planned, sizeof(planned), "%.2f", *job.planned_start_seconds);
    std::snprintf(line, sizeof(line), "%-4zu %-15s %-16s %9s %8.2f %8.2f %10s %-9s %s\n", i, job.spec.app.c_str(),
                  args.c_str(), planned, job.start_seconds, job.wall_seconds, FormatSize(job.max_rss).c_str(),
                  status.c_str(), job.result_line.empty() ? "-" : job.result_line.c_str());
    out += line;
  }
  for (size_t i = 0; i < report.jobs.size(); ++i) {
    const JobOutcome& job = report.jobs[i];
    if (job.cgroup.empty()) continue;
    std::snprintf(line, sizeof(line), "job %zu memory cgroup %s: limit %s, peak %s (incl. page cache)\n", i,
                  job.cgroup.c_str(), FormatSize(job.cgroup_limit).c_str(), FormatSize(job.cgroup_peak).c_str());
    out += line;
  }
  std::snprintf(line, sizeof(line), "total wall time: %.2f s\n", report.total_seconds);
  out += line;
  if (!report.integrated) {
    out += "mode: unmodified (the apps read column and row)\n";
  } else {
    out += "mode: integrated (--graphfs: the apps read graphfs's logical partitions of " +
           (report.partition_bytes ? FormatSize(*report.partition_bytes) : std::string("the apps' default size")) +
           ")\n";
  }
  if (!report.arrivals.empty()) out += "arrivals: " + report.arrivals + "\n";
  for (const DiskDelta& d : report.devices) {
    std::snprintf(line, sizeof(line), "disk %-12s bytes read %" PRIu64 " (%s)\n", d.name.c_str(), d.bytes_read,
                  FormatSize(d.bytes_read).c_str());
    out += line;
  }
  if (report.graphfs_mount) {
    for (const GraphfsDiskCounters& d : report.graphfs_disks) {
      std::string read = d.bytes_read ? std::to_string(*d.bytes_read) + " (" + FormatSize(*d.bytes_read) + ")" : "?";
      std::string written =
          d.bytes_written ? std::to_string(*d.bytes_written) + " (" + FormatSize(*d.bytes_written) + ")" : "?";
      std::snprintf(line, sizeof(line), "graphfs disk %" PRId64 " %s bytes read %s, bytes written %s\n", d.index,
                    d.path.empty() ? "-" : d.path.c_str(), read.c_str(), written.c_str());
      out += line;
    }
    if (report.graphfs_disks.empty()) out += "graphfs " + *report.graphfs_mount + ": no per-disk counters\n";
  }
  return out;
}

}  // namespace graphfs::engine
