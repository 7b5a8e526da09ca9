// graphfs [-f] [-d] [-s] [-o key=value,...] SOURCE MOUNTPOINT
//
// Also usable as `mount -t fuse.graphfs SOURCE MOUNTPOINT -o ...` and from /etc/fstab:
// mount.fuse3 calls this program with the same shape. Everything that can be wrong with
// the source or its disks is checked before mounting, so a bad mount fails with a message
// and a non-zero exit instead of serving wrong bytes.
//
// The steps, one file each: the command line (command_line.cc, its --help and manual page in
// command_line_help.cc), the checks before mounting (mount_setup.cc), the session from mount to
// unmount (session.cc, session_start.cc, session_end.cc).
#include <malloc.h>

#include <cstdio>

#include "common/manpage.h"
#include "fusefs/command_line.h"
#include "fusefs/graphfs.h"
#include "fusefs/mount_setup.h"
#include "fusefs/session.h"

namespace graphfs {

namespace {

int Run(int argc, char** argv) {
  auto cl = ParseCommandLine(argc, argv);
  if (!cl.ok()) {
    std::fprintf(stderr, "graphfs: %s\n", cl.error().message().c_str());
    return 2;
  }
  if (cl->help) {
    Usage(argv[0]);
    return 0;
  }
  if (cl->help_markdown) {
    std::printf("%s", MountOptionsMarkdown().c_str());
    return 0;
  }
  if (cl->help_man) {
    std::printf("%s", ManPage().c_str());
    return 0;
  }
  if (cl->version) {
    std::printf("graphfs %s (libfuse %s)\n", man::Version(), fuse_pkgversion());
    return 0;
  }
  GraphFs fs;
  FILE* log = nullptr;
  if (int status = PrepareMount(fs, *cl, &log); status != 0) return status;
  const int status = ServeMount(fs, cl->fuse_args);
  if (log != nullptr) {
    SetLogFile(stderr);
    std::fclose(log);
  }
  return status;
}

}  // namespace
}  // namespace graphfs

int main(int argc, char** argv) {
  // Blocks of 1 MiB and more (active bitmaps, a job's written `active`, selections, gathered
  // replies) are mapped and unmapped by the allocator instead of cut from its arenas: with its
  // default, adaptive threshold it kept 0.5-0.7 GB of such freed blocks in per-thread arenas
  // (stats.memory.heap.free_kept_bytes) — a fifth of the daemon's peak doing nothing. LP and
  // cache memory does not come from malloc.
  ::mallopt(M_MMAP_THRESHOLD, 1 << 20);
  return graphfs::Run(argc, argv);
}
