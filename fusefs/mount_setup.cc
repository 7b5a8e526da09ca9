// Before mounting (mount_setup.h): the options resolved, SOURCE opened, the volume opened with
// every disk checked, the log file, a stale mount at the mountpoint.
#include "fusefs/mount_setup.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "fusefs/graphfs.h"
#include "fusefs/stale_mount.h"

namespace graphfs {

int PrepareMount(GraphFs& fs, const CommandLine& cl, FILE** log) {
  fs.options = cl.options;
  Status resolved = ResolveMountOptions(fs.options);
  if (!resolved.ok()) {
    std::fprintf(stderr, "graphfs: %s\n", resolved.error().message().c_str());
    return 2;
  }
  fs.timeout = fs.options.timeout;

  char real[PATH_MAX];
  if (::realpath(cl.source.c_str(), real) == nullptr) {
    std::fprintf(stderr, "graphfs: source %s: %s\n", cl.source.c_str(), std::strerror(errno));
    return 1;
  }
  fs.source = real;
  UniqueFd root(::open(fs.source.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  struct stat st;
  if (!root.valid() || ::fstatat(root.get(), "", &st, AT_EMPTY_PATH) != 0) {
    std::fprintf(stderr, "graphfs: source %s is not a directory: %s\n", fs.source.c_str(), std::strerror(errno));
    return 1;
  }
  fs.inodes.SetRoot(std::move(root), st.st_dev, st.st_ino);
  fs.passthrough.Configure(fs.options.passthrough == PassthroughMode::kAuto, fs.source);

  // Everything that can be wrong with the disks (and io_uring) is found before mounting.
  fs.options.volume.source = fs.source;
  auto volume = volume::Volume::Open(fs.options.volume);
  if (!volume.ok()) {
    std::fprintf(stderr, "graphfs: %s\n", volume.error().message().c_str());
    return 1;
  }
  fs.volume = std::move(*volume);

  if (!fs.options.log_file.empty()) {
    *log = std::fopen(fs.options.log_file.c_str(), "a");
    if (*log == nullptr) {
      std::fprintf(stderr, "graphfs: log file %s: %s\n", fs.options.log_file.c_str(), std::strerror(errno));
      return 1;
    }
    SetLogFile(*log);
  }
  // A set missing up to its files' parity in disks is served degraded: said where the admin
  // mounting looks and in the log (opened only now, after the volume).
  for (const std::string& note : fs.volume->DegradedNotes()) {
    LogError(note);
    if (*log != nullptr) std::fprintf(stderr, "graphfs: %s\n", note.c_str());
  }

  bool cleaned = false;
  Status usable = CleanStaleMount(cl.mountpoint, &cleaned);
  if (!usable.ok()) {
    std::fprintf(stderr, "graphfs: %s\n", usable.error().message().c_str());
    return 1;
  }
  if (cleaned) {
    std::fprintf(stderr, "graphfs: detached the stale mount at %s left by a graphfs that died\n", cl.mountpoint.c_str());
    if (*log != nullptr) LogError("detached the stale mount at " + cl.mountpoint + " left by a graphfs that died");
  }
  return 0;
}

}  // namespace graphfs
