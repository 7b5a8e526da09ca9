// Mounts graphfs for a test and guarantees it is unmounted: by the destructor on every
// path through a test (assertion failures included), and, if the test process itself
// dies, by the daemon, which gets SIGTERM when its parent goes (PR_SET_PDEATHSIG) and
// unmounts on the way out.
#pragma once

#include <string>
#include <vector>

#include "tests/testutil/file_bytes.h"  // ReadFile, WriteFile: the mount tests' too
#include "tests/testutil/temp_dir.h"

namespace graphfs::testing {

struct CommandResult {
  int status = -1;  // exit code, or -1
  std::string output;  // stdout + stderr
};

// Starts argv (no shell) with stdout and stderr on `out_fd`. With `die_with_parent` the
// child gets SIGTERM if the test process dies first.
int SpawnCommand(const std::vector<std::string>& argv, int out_fd, bool die_with_parent = false);

// Runs argv (no shell) and collects its output.
CommandResult RunCommand(const std::vector<std::string>& argv, int timeout_seconds = 120);

class GraphfsMount {
 public:
  GraphfsMount() = default;
  ~GraphfsMount() { Unmount(); }
  GraphfsMount(const GraphfsMount&) = delete;
  GraphfsMount& operator=(const GraphfsMount&) = delete;

  // Starts the daemon in the foreground (as a child) and waits until the mount is live.
  // Returns false (with `error` filled) if it exits or does not come up.
  bool Mount(const std::string& source, const std::string& mountpoint, const std::vector<std::string>& options = {});
  // Unmounts (lazily when it must), waits up to 5 s for the daemon to exit and kills it if it
  // has not (a test failure), and ends with nothing mounted at the mountpoint, whatever mounted
  // there meanwhile — or fails the test saying a stale mount was left behind.
  void Unmount();
  // Runs the daemon under `prefix` (e.g. setpriv ... --) from the next Mount on.
  void SetWrapper(std::vector<std::string> prefix) { wrapper_ = std::move(prefix); }
  // SIGKILLs the daemon and reaps it, leaving its mountpoint behind as a dead mount (as a
  // crash would); Unmount() (and the destructor) still detach it.
  void Kill();
  // Waits for the daemon to exit by itself (reaping it); false if it is still running.
  // Unmount() and this fail the test if the daemon exited unclean or a sanitizer reported.
  // `exit_status`: the status the daemon is expected to exit with.
  bool WaitForExit(int timeout_ms, int exit_status = 0);
  bool mounted() const { return pid_ > 0; }
  int pid() const { return pid_; }
  const std::string& error() const { return error_; }
  const std::string& log() const { return log_path_; }
  // What a failure message needs to explain a daemon that hangs or answers with errors: each of
  // its threads' name, state, wait channel and kernel stack (while it runs), and the tails of its
  // output and log (the temp dir that holds them is gone after the test).
  std::string Diagnostics() const;

 private:
  // Fails the running test if the daemon's wait status or output shows a crash or a
  // sanitizer report.
  void CheckExit(int status, int expected_exit = 0) const;

  int pid_ = -1;
  std::string mountpoint_;
  std::string error_;
  std::string log_path_;
  std::vector<std::string> wrapper_;
};

bool IsMountPoint(const std::string& path);
std::string GraphfsBinary();
std::string BinDir();

}  // namespace graphfs::testing
