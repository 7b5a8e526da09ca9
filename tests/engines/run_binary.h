// Runs a real binary (no shell) the way a bad-input test needs: stdout and stderr
// captured together, and how it ended told apart — a normal exit with its code, death
// by a signal (a crash: SIGSEGV, SIGBUS, SIGABRT), or a hang (killed at the deadline).
// popen-based helpers fold all three into one number.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace graphfs::testing {

struct BinaryRun {
  bool exited = false;     // a normal exit (WIFEXITED)
  int exit_code = -1;      // when exited
  int signal = 0;          // when killed by a signal (not by us)
  bool timed_out = false;  // still running at the deadline: a hang
  std::string output;      // stdout + stderr

  // For assertion messages: "exit 1", "signal 7 (Bus error)", "hung".
  std::string How() const {
    if (timed_out) return "hung (killed at the deadline)";
    if (exited) return "exit " + std::to_string(exit_code);
    return "signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  }
};

inline BinaryRun RunBinary(const std::vector<std::string>& argv, int timeout_seconds = 60) {
  BinaryRun r;
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) {
    r.output = "pipe2 failed";
    return r;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipefd[1], 1);
    ::dup2(pipefd[1], 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipefd[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{pipefd[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::read(pipefd[0], buf, sizeof buf);
    if (n <= 0) break;  // EOF: the child (and anything it started) closed the pipe
    r.output.append(buf, static_cast<size_t>(n));
  }
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!r.timed_out && WIFEXITED(status)) {
    r.exited = true;
    r.exit_code = WEXITSTATUS(status);
  } else if (!r.timed_out && WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  return r;
}

// Starts argv with output to /dev/null and SIGKILLs it after `delay` (kill -9 tests of tools
// that must resume); true if it had already finished by itself (then `status` is its wait status).
inline bool RunAndKill(const std::vector<std::string>& argv, std::chrono::microseconds delay, int* status) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  std::this_thread::sleep_for(delay);
  if (::waitpid(pid, status, WNOHANG) == pid) return true;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, status, 0);
  return false;
}

}  // namespace graphfs::testing
