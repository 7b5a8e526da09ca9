// libfuse's session for one mount (session.h): INIT's answers, the operation table made of the
// ops_*.cc families, the signal handlers, mounting, and the loop (one thread, or up to
// `threads=`).
#include "fusefs/session.h"

#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fusefs/graphfs.h"

namespace graphfs {

namespace {

void Init(void* userdata, fuse_conn_info* conn) {
  GraphFs& fs = *static_cast<GraphFs*>(userdata);
  if (conn->capable & FUSE_CAP_SPLICE_WRITE) conn->want |= FUSE_CAP_SPLICE_WRITE;
  if (conn->capable & FUSE_CAP_SPLICE_MOVE) conn->want |= FUSE_CAP_SPLICE_MOVE;
  // Cached pages of a file stay across opens, and are dropped when the kernel sees the
  // file's mtime or size change (see keep_cache in ops_open.cc).
  if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA) conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
  // Clearing setuid/setgid on write and truncate: the daemon does it (KillSetidBits) when
  // the kernel agrees to HANDLE_KILLPRIV_V2, which the channel asks for in the INIT reply
  // (libfuse 3.14 cannot); the kernel then stops asking for security.capability before
  // every write. Version 1 of the flag would not stop that. Without v2 the kernel does it.
  conn->want &= ~FUSE_CAP_HANDLE_KILLPRIV;
  // FUSE passthrough: offered or not, logged once (fusefs/passthrough.h).
  fs.passthrough.OnInit(fs.channel);
  // The kernel applies the caller's umask before create/mkdir reach us.
  conn->want &= ~FUSE_CAP_DONT_MASK;
  conn->max_write = 1u << 20;
  // The kernel sends at most max_background asynchronous requests (read-ahead, async
  // direct I/O) at once; its default of 12 starves several disks streaming together.
  conn->max_background = 128;
  conn->congestion_threshold = 96;
}

// One family per file (graphfs.h, "Operation tables").
fuse_lowlevel_ops Operations() {
  fuse_lowlevel_ops ops;
  std::memset(&ops, 0, sizeof ops);
  ops.init = Init;
  AddEntryOps(ops);
  AddAttrOps(ops);
  AddCreateOps(ops);
  AddRemoveOps(ops);
  AddDirOps(ops);
  AddOpenOps(ops);
  AddReadOps(ops);
  AddWriteOps(ops);
  AddXattrOps(ops);
  return ops;
}

}  // namespace

int ServeMount(GraphFs& fs, std::vector<std::string>& libfuse_args) {
  std::vector<char*> args;
  for (auto& a : libfuse_args) args.push_back(a.data());
  fuse_args fargs = FUSE_ARGS_INIT(static_cast<int>(args.size()), args.data());
  fuse_cmdline_opts opts;
  if (fuse_parse_cmdline(&fargs, &opts) != 0) return 2;
  const fuse_lowlevel_ops ops = Operations();

  ::umask(0);  // modes arrive with the caller's umask already applied
  int ret = 1;
  fuse_session* se = fuse_session_new(&fargs, &ops, sizeof ops, &fs);
  if (se != nullptr) {
    fs.session = se;
    if (fuse_set_signal_handlers(se) == 0) {
      const bool mounted = fuse_session_mount(se, opts.mountpoint) == 0;
      // Requests and replies pass the channel's hooks from the first one (INIT) on.
      const Status attached = mounted ? fs.channel.Attach(se, fs.passthrough.wants()) : Status::Ok();
      if (!attached.ok()) {
        std::fprintf(stderr, "graphfs: %s\n", attached.error().message().c_str());
        fuse_session_unmount(se);
      } else if (mounted) {
        char real_mp[PATH_MAX];
        if (::realpath(opts.mountpoint, real_mp) != nullptr) {
          fs.mountpoint = real_mp;
        }
        fuse_daemonize(opts.foreground);
        const Status started = StartServing(fs);
        if (!started.ok()) {
          LogError(started.error().message());
          fuse_session_exit(se);
          ret = 1;
        } else if (opts.singlethread) {
          ret = fuse_session_loop(se);
        } else {
          fuse_loop_config* cfg = fuse_loop_cfg_create();
          fuse_loop_cfg_set_clone_fd(cfg, 0);
          fuse_loop_cfg_set_max_threads(cfg, fs.options.threads);
          fuse_loop_cfg_set_idle_threads(cfg, std::min(10u, fs.options.threads));
          ret = fuse_session_loop_mt(se, cfg);
          fuse_loop_cfg_destroy(cfg);
        }
        ret = EndSession(fs, se, ret);
      } else {
        std::fprintf(stderr, "graphfs: could not mount at %s\n", opts.mountpoint);
      }
      fuse_remove_signal_handlers(se);
    }
    fuse_session_destroy(se);
  }
  free(opts.mountpoint);
  fuse_opt_free_args(&fargs);
  return ret == 0 ? 0 : 1;
}

}  // namespace graphfs
