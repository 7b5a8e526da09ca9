#include "common/crash_point.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace graphfs {
namespace {

// Set once by ArmCrashPointFromEnvironment before the tool starts threads, only read after.
std::string armed_point;
std::string armed_tool;

}  // namespace

Status ArmCrashPointFromEnvironment(std::string_view tool, std::span<const CrashPointInfo> points) {
  const char* value = std::getenv(kCrashAtVariable);
  if (value == nullptr || *value == '\0') return Status::Ok();
  const std::string_view wanted(value);
  for (const CrashPointInfo& p : points) {
    if (p.name == wanted) {
      armed_point = std::string(wanted);
      armed_tool = std::string(tool);
      return Status::Ok();
    }
  }
  std::string known;
  for (const CrashPointInfo& p : points) known += (known.empty() ? "" : ", ") + std::string(p.name);
  return Error(EINVAL, std::string(kCrashAtVariable) + "=" + std::string(wanted) + " names no crash point of " +
                           std::string(tool) + " (its points: " + (known.empty() ? "none" : known) + ")");
}

std::optional<int> ArmCrashPointOrUsageError(std::string_view tool, std::span<const CrashPointInfo> points) {
  const Status armed = ArmCrashPointFromEnvironment(tool, points);
  if (armed.ok()) return std::nullopt;
  std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(tool.size()), tool.data(), armed.error().message().c_str());
  return 2;
}

void CrashPoint(std::string_view name) {
  if (armed_point.empty() || name != armed_point) return;
  // write(2), not stdio: nothing buffered of the tool's own output is flushed on the way, as
  // nothing would be under kill -9.
  const std::string line = armed_tool + ": " + kCrashAtVariable + "=" + armed_point + ": killed here\n";
  (void)!::write(STDERR_FILENO, line.data(), line.size());
  ::kill(::getpid(), SIGKILL);
  // SIGKILL cannot be caught or blocked; should the kernel still be delivering it, wait for it
  // rather than go on with the run.
  for (;;) ::pause();
}

}  // namespace graphfs
