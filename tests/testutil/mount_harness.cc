#include "tests/testutil/mount_harness.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/engines/run_binary.h"

namespace graphfs::testing {

std::string BinDir() { return GRAPHFS_BIN_DIR; }
std::string GraphfsBinary() { return BinDir() + "/graphfs"; }

bool IsMountPoint(const std::string& path) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string id, parent, devno, root, mp;
    ss >> id >> parent >> devno >> root >> mp;
    if (mp == path) return true;
  }
  return false;
}

int SpawnCommand(const std::vector<std::string>& argv, int out_fd, bool die_with_parent) {
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    if (die_with_parent) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(1);
    }
    ::dup2(out_fd, 1);
    ::dup2(out_fd, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

CommandResult RunCommand(const std::vector<std::string>& argv, int timeout_seconds) {
  BinaryRun run = RunBinary(argv, timeout_seconds);
  CommandResult r;
  r.status = run.exited ? run.exit_code : -1;
  r.output = std::move(run.output);
  if (run.timed_out) r.output += "\n[timed out]";
  return r;
}

bool GraphfsMount::Mount(const std::string& source, const std::string& mountpoint,
                         const std::vector<std::string>& options) {
  mountpoint_ = mountpoint;
  log_path_ = mountpoint + ".log";
  std::vector<std::string> argv = wrapper_;
  for (const std::string& a : {GraphfsBinary(), std::string("-f"), source, mountpoint, std::string("-o"), "log=" + log_path_})
    argv.push_back(a);
  bool names_passthrough = false;
  for (const auto& o : options) {
    argv.push_back("-o");
    argv.push_back(o);
    names_passthrough |= o.find("passthrough=") != std::string::npos;
  }
  // The suite runs a second time with passthrough=off (tests/CMakeLists.txt); a test that
  // names the mode keeps its own.
  if (const char* mode = std::getenv("GRAPHFS_TEST_PASSTHROUGH"); mode != nullptr && !names_passthrough) {
    argv.push_back("-o");
    argv.push_back(std::string("passthrough=") + mode);
  }
  const std::string out_path = mountpoint + ".out";
  int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  pid_ = SpawnCommand(argv, out, /*die_with_parent=*/true);
  ::close(out);
  for (int i = 0; i < 200; ++i) {
    // A dead mount left at the mountpoint (a killed daemon) answers statfs with ENOTCONN
    // until the daemon detaches it and mounts anew. Between the two the directory under it
    // answers: a FUSE file system's magic is what says the new mount is there (read after the
    // mount table, the detach in between, statfs alone let a test read the empty directory
    // under the mountpoint while the daemon was still starting: the flake of the crash tests).
    struct statfs sfs;
    if (IsMountPoint(mountpoint) && ::statfs(mountpoint.c_str(), &sfs) == 0 && sfs.f_type == FUSE_SUPER_MAGIC)
      return true;
    int status;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      error_ = ReadFile(out_path);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  error_ = "mount did not come up in 5 s:\n" + Diagnostics();
  Unmount();
  return false;
}

void GraphfsMount::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void GraphfsMount::CheckExit(int status, int expected_exit) const {
  // A daemon that crashed, or that a sanitizer stopped (or only reported, when not told to
  // halt), fails the test that mounted it, even if every operation of the test passed.
  const std::string out = ReadFile(mountpoint_ + ".out");
  const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == expected_exit;
  const bool sanitizer_report = out.find("Sanitizer") != std::string::npos || out.find("runtime error:") != std::string::npos;
  if (!clean || sanitizer_report) {
    ADD_FAILURE() << "the graphfs daemon of " << mountpoint_ << " "
                  << (WIFSIGNALED(status) ? "died of signal " + std::to_string(WTERMSIG(status))
                                          : "exited with status " + std::to_string(WEXITSTATUS(status)))
                  << (sanitizer_report ? " after a sanitizer report" : "") << "; its output:\n"
                  << out;
  }
}

bool GraphfsMount::WaitForExit(int timeout_ms, int exit_status) {
  for (int waited = 0; pid_ > 0; waited += 25) {
    int status;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      CheckExit(status, exit_status);
      pid_ = -1;
    }
    else if (waited >= timeout_ms) return false;
    else std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return true;
}

namespace {

// The last `n` bytes of the file at `path`.
std::string Tail(const std::string& path, size_t n) {
  const std::string all = ReadFile(path);
  return all.size() <= n ? all : "[...]" + all.substr(all.size() - n);
}

// One line per thread of `pid`: its name, state and wait channel, then its kernel stack
// (readable as root), which says where a stuck thread waits (a FUSE request, a lock, the disk).
std::string ThreadStates(int pid) {
  std::ostringstream out;
  std::error_code ec;
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& t : std::filesystem::directory_iterator(task, ec)) {
    const std::string dir = t.path().string();
    const std::string stat = ReadFile(dir + "/stat");
    // "TID (name) S ...": the name may hold spaces, the state follows its last ')'.
    const size_t close = stat.rfind(')');
    const std::string name = stat.substr(0, close == std::string::npos ? 0 : close + 1);
    const char state = close != std::string::npos && close + 2 < stat.size() ? stat[close + 2] : '?';
    out << "  " << name << " " << state << " wchan=" << ReadFile(dir + "/wchan") << "\n";
    std::istringstream stack(ReadFile(dir + "/stack"));
    for (std::string frame; std::getline(stack, frame);) out << "      " << frame << "\n";
  }
  return out.str();
}

// Detaches whatever is mounted at `mountpoint`, stacked mounts included: fusermount3 -u first
// (a live daemon sees its unmount and exits), then lazily — umount2(MNT_DETACH) where we may (as
// root), fusermount3 -u -z otherwise — for a mount still busy or one whose daemon is dead.
// Returns whether nothing is mounted there any more.
bool DetachMount(const std::string& mountpoint) {
  for (int attempt = 0; attempt < 4 && IsMountPoint(mountpoint); ++attempt) {
    RunCommand({"fusermount3", "-u", mountpoint}, 30);
    if (!IsMountPoint(mountpoint)) break;
    if (::umount2(mountpoint.c_str(), MNT_DETACH) != 0) RunCommand({"fusermount3", "-u", "-z", mountpoint}, 30);
  }
  return !IsMountPoint(mountpoint);
}

}  // namespace

std::string GraphfsMount::Diagnostics() const {
  std::ostringstream out;
  if (pid_ > 0) out << "daemon " << pid_ << "'s threads:\n" << ThreadStates(pid_);
  out << "its output (" << mountpoint_ << ".out):\n" << Tail(mountpoint_ + ".out", 4096) << "\n";
  out << "its log (" << log_path_ << "):\n" << Tail(log_path_, 8192) << "\n";
  return out.str();
}

void GraphfsMount::Unmount() {
  if (mountpoint_.empty()) return;
  // Also a mount whose daemon was killed, or one another process put there.
  DetachMount(mountpoint_);
  // The daemon leaves its loop once unmounted; make sure it is gone either way.
  if (pid_ > 0 && !WaitForExit(5000)) {
    ADD_FAILURE() << "the graphfs daemon of " << mountpoint_ << " did not exit within 5 s of the unmount\n"
                  << Diagnostics();
    Kill();
  }
  // Every path ends with nothing mounted: a daemon can mount after the detach above — one slow
  // to start, whose Mount gave up at 5 s and called this, or one that mounted again — and, killed
  // here, leave a dead mount that outlives the test (and answers ENOTCONN to the next one).
  if (!DetachMount(mountpoint_)) {
    ADD_FAILURE() << mountpoint_ << " is still mounted after the daemon's end, fusermount3 -u and a lazy unmount "
                  << "(umount2 MNT_DETACH, fusermount3 -u -z): a stale mount is left behind";
  }
}

}  // namespace graphfs::testing
