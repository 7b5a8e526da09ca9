// common/crash_point.h: GRAPHFS_CRASH_AT arms one point of a tool's table, which then kills the
// process as kill -9 would; a name outside the table is refused; unarmed, points do nothing.
// Each case runs in a forked child, where arming is the child's alone.
#include "common/crash_point.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <functional>

namespace graphfs {
namespace {

constexpr std::array<CrashPointInfo, 2> kPoints = {{{"first", "the first step done"}, {"second", "the second one"}}};

// How `body` ended in a child with GRAPHFS_CRASH_AT=`value` (unset when null): its wait status.
int RunInChild(const char* value, const std::function<void()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (value == nullptr) {
      ::unsetenv(kCrashAtVariable);
    } else {
      ::setenv(kCrashAtVariable, value, 1);
    }
    body();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

// Arms from the environment and then passes `first` and `second`; exits 3 if arming failed.
void ArmAndPassBoth() {
  if (!ArmCrashPointFromEnvironment("tool", kPoints).ok()) ::_exit(3);
  CrashPoint("first");
  CrashPoint("second");
}

bool KilledBySigkill(int status) { return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL; }

TEST(CrashPoint, TheArmedPointKillsTheProcess) {
  EXPECT_TRUE(KilledBySigkill(RunInChild("first", ArmAndPassBoth)));
  // The second point kills too, and only it: a child that writes a mark between the two.
  int marks[2];
  ASSERT_EQ(::pipe(marks), 0);
  const int status = RunInChild("second", [&] {
    if (!ArmCrashPointFromEnvironment("tool", kPoints).ok()) ::_exit(3);
    CrashPoint("first");
    (void)!::write(marks[1], "1", 1);
    CrashPoint("second");
    (void)!::write(marks[1], "2", 1);
  });
  ::close(marks[1]);
  char got[4] = {};
  const ssize_t n = ::read(marks[0], got, sizeof(got));
  ::close(marks[0]);
  EXPECT_TRUE(KilledBySigkill(status));
  EXPECT_EQ(std::string(got, n > 0 ? n : 0), "1") << "the run went past the armed point, or stopped before it";
}

TEST(CrashPoint, NothingIsArmedWithoutTheVariableOrWithoutArming) {
  for (const char* value : {static_cast<const char*>(nullptr), ""}) {
    const int status = RunInChild(value, ArmAndPassBoth);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << (value == nullptr ? "unset" : "empty");
  }
  // A process that never arms (a test calling the library in process) ignores the variable.
  const int status = RunInChild("first", [] { CrashPoint("first"); });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(CrashPoint, AnUnknownNameIsAnErrorThatNamesThePoints) {
  const int status = RunInChild("thrid", [] {
    Status armed = ArmCrashPointFromEnvironment("tool", kPoints);
    if (armed.ok()) ::_exit(4);
    const std::string& m = armed.error().message();
    if (armed.error().code() != EINVAL || m.find("GRAPHFS_CRASH_AT=thrid") == std::string::npos ||
        m.find("tool") == std::string::npos || m.find("first, second") == std::string::npos)
      ::_exit(5);
    // Refused, it armed nothing: the points pass.
    CrashPoint("first");
    CrashPoint("second");
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status)) : "killed");
}

}  // namespace
}  // namespace graphfs
