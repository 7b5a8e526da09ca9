#include "common/log.h"

#include <ctime>
#include <mutex>

namespace graphfs {

namespace {
std::mutex g_log_mu;
FILE* g_log = stderr;
}  // namespace

void SetLogFile(FILE* f) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_log = f;
}

void LogError(const std::string& message) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  std::fprintf(g_log, "%s graphfs: %s\n", stamp, message.c_str());
  std::fflush(g_log);
}

}  // namespace graphfs
