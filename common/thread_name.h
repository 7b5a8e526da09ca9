// Names the calling thread as `ps -L`, `top -H`, /proc/PID/task/TID/comm and perf show it, so
// that a profile or a per-thread CPU count of the daemon says which of its threads spent what.
// Linux keeps 15 characters; longer names are cut there.
#pragma once

#include <pthread.h>

#include <string>

namespace graphfs {

inline void NameThisThread(const std::string& name) { ::pthread_setname_np(::pthread_self(), name.substr(0, 15).c_str()); }

}  // namespace graphfs
