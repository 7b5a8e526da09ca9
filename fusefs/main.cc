// graphfs [-f] [-d] [-s] [-o key=value,...] SOURCE MOUNTPOINT
//
// Also usable as `mount -t fuse.graphfs SOURCE MOUNTPOINT -o ...` and from /etc/fstab:
// mount.fuse3 calls this program with the same shape. Everything that can be wrong with
// the source or its disks is checked before mounting, so a bad mount fails with a message
// and a non-zero exit instead of serving wrong bytes.
#include <malloc.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/manpage.h"
#include "common/size_parse.h"
#include "fusefs/control_dir.h"
#include "fusefs/graphfs.h"
#include "fusefs/stale_mount.h"

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

struct CommandLine {
  std::string source;
  std::string mountpoint;
  std::vector<std::string> fuse_args;  // passed on to libfuse (mountpoint last)
  MountOptions options;
  bool help = false;
  bool help_markdown = false;
  bool help_man = false;
  bool version = false;
};

// What --help and the manual page (--help-man) both say besides the option table.
constexpr const char* kSummary =
    "Mounts the graph directory SOURCE at MOUNTPOINT. Striped files are read from their disks.";
constexpr const char* kFuseOptions =
    "FUSE options: allow_other, ro, fsname=..., max_threads via threads=N; -f foreground, -d debug,\n"
    "-s single-threaded. Unmount with `fusermount3 -u MOUNTPOINT` or `umount MOUNTPOINT`.";

void Usage(const char* prog) {
  std::printf("usage: %s [-f] [-d] [-s] [-o opt,...] SOURCE MOUNTPOINT\n\n", prog);
  std::printf("%s\n\n", kSummary);
  std::printf("%s\n", MountOptionsHelp().c_str());
  std::printf("%s\n", kFuseOptions);
}

// graphfs(1): the option table (mount_options.cc) as .TP entries, with what --help says around it.
std::string ManPage() {
  using man::FromMarkdown, man::Lines, man::Literal;
  std::string p = man::TitleLine("graphfs", 1);
  p += ".SH NAME\ngraphfs \\- FUSE filesystem for out\\-of\\-core graph processing over striped disks\n";
  p += ".SH SYNOPSIS\n.B graphfs\n"
       "[\\fB\\-f\\fR] [\\fB\\-d\\fR] [\\fB\\-s\\fR] [\\fB\\-o\\fR \\fIkey\\fR=\\fIvalue\\fR[,...]] "
       "\\fISOURCE\\fR \\fIMOUNTPOINT\\fR\n.br\n.B mount \\-t fuse.graphfs\n\\fISOURCE\\fR \\fIMOUNTPOINT\\fR "
       "[\\fB\\-o\\fR \\fIkey\\fR=\\fIvalue\\fR[,...]]\n";
  p += ".SH DESCRIPTION\n" + Lines(FromMarkdown(kSummary)) + ".PP\n" +
       Lines(FromMarkdown(
           "Graph engines read the partition files of SOURCE through MOUNTPOINT as they are; files that "
           "`graphfs-stripe` striped over several disks are read from all their disks at once, one request queue "
           "per disk, through one shared cache. `MOUNTPOINT/.graphfs/stats` reports bytes per disk, the cache and "
           "the jobs. Everything that can be wrong with SOURCE and its disks is checked before mounting."));
  p += ".SH OPTIONS\n.TP\n\\fB\\-o\\fR \\fIkey\\fR=\\fIvalue\\fR[,...]\n"
       "graphfs's own options below, and FUSE's; also the fourth field of an fstab line.\n";
  p += ".TP\n\\fB\\-f\\fR, \\fB\\-d\\fR, \\fB\\-s\\fR\nforeground, debug (foreground, every request logged), "
       "single-threaded.\n";
  p += ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR, \\fB\\-\\-help\\-markdown\\fR, \\fB\\-\\-help\\-man\\fR, "
       "\\fB\\-V\\fR, \\fB\\-\\-version\\fR\nthe options as text, as README.md's table, as this page; the version.\n";
  p += ".SS graphfs's options\n";
  for (const MountOptionDoc& o : MountOptionDocs())
    p += ".TP\n\\fB" + Literal(o.key) + "=\\fR\\fI" + man::Escape(o.value) + "\\fR\n" +
         Lines(FromMarkdown(o.help + " (default: " + o.default_value + ")"));
  p += ".SS FUSE options\n" + Lines(FromMarkdown(kFuseOptions)) +
       Lines(FromMarkdown("graphfs always adds `default_permissions`: the kernel checks permissions as ext4 "
                          "would, and files are created with the caller's uid, gid and umask."));
  p += ".SH FSTAB\n" +
       Lines(FromMarkdown("For `mount -t fuse.graphfs` and fstab lines of type `fuse.graphfs`, mount(8) runs fuse3's "
                          "helper `/sbin/mount.fuse` (`mount.fuse3`(8)), which drops `nofail`, `noauto`, `_netdev`, "
                          "`user` and `users` and runs `graphfs SOURCE MOUNTPOINT -o OPTIONS` from PATH:")) +
       ".PP\n.nf\n" +
       Literal("/srv/graphs  /mnt/graphs  fuse.graphfs  allow_other,io=perdisk,readahead=8,nofail  0  0") + "\n.fi\n";
  p += ".SH EXIT STATUS\n" +
       Lines(FromMarkdown("0 once unmounted cleanly; 1 when SOURCE or one of its disks cannot be used (a missing "
                          "disk, a disk of another set, disks in the wrong order: the message names the disk) or "
                          "the connection was aborted; 2 for a bad option (the message names it)."));
  p += ".SH FILES\n";
  const std::pair<const char*, const char*> files[] = {
      {"SOURCE/GRAPH/.graphfs/disks.json",
       "the disk set a graph is striped over (`graphfs-stripe`); `disks=` overrides its paths"},
      {"DISK/.graphfs-disk, DISK/parts/", "a disk's identity and the striped files' parts"},
      {"DISK/.graphfs-calibration.json", "the disk's read costs (`graphfs-calibrate`), read at mount"},
      {"SOURCE/GRAPH/.graphfs/index/", "a graph's chunk index (`graphfs-index`)"},
      {"MOUNTPOINT/.graphfs/stats", "the mount's statistics (JSON)"},
      {"MOUNTPOINT/.graphfs/jobs/",
       "the jobs protocol of integrated engines (`/usr/include/graphfs/graphfs_client.hpp`)"},
  };
  for (const auto& [file, what] : files) p += ".TP\n\\fI" + Literal(file) + "\\fR\n" + Lines(FromMarkdown(what));
  p += ".SH SEE ALSO\n\\fBgraphfs\\-stripe\\fR(1), \\fBgraphfs\\-unstripe\\fR(1), \\fBgraphfs\\-index\\fR(1), "
       "\\fBgraphfs\\-update\\fR(1), \\fBgraphfs\\-calibrate\\fR(1), \\fBrun\\-jobs\\fR(1), "
       "\\fBmount.fuse3\\fR(8), \\fBfusermount3\\fR(1), \\fBfstab\\fR(5)\n";
  return p;
}

Result<CommandLine> ParseCommandLine(int argc, char** argv) {
  CommandLine cl;
  cl.fuse_args.push_back(argv[0]);
  std::vector<std::string> positional;
  std::vector<std::string> fuse_opts;
  auto take_options = [&](const std::string& list) -> Status {
    for (const std::string& opt : SplitList(list, ',')) {
      if (opt.empty()) continue;
      auto ours = ApplyMountOption(cl.options, opt);
      if (!ours.ok()) return ours.error();
      if (!*ours) fuse_opts.push_back(opt);
    }
    return Status::Ok();
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-o") {
      if (i + 1 >= argc) return Error(EINVAL, "-o needs a list of options");
      GRAPHFS_RETURN_IF_ERROR(take_options(argv[++i]));
    } else if (a.rfind("-o", 0) == 0) {
      GRAPHFS_RETURN_IF_ERROR(take_options(a.substr(2)));
    } else if (a == "-h" || a == "--help") {
      cl.help = true;
    } else if (a == "--help-markdown") {  // README.md's option table
      cl.help_markdown = true;
    } else if (a == "--help-man") {  // the manual page, graphfs(1)
      cl.help_man = true;
    } else if (a == "-V" || a == "--version") {
      cl.version = true;
    } else if (a == "-f" || a == "-d" || a == "-s" || a == "--debug" || a == "--foreground") {
      cl.fuse_args.push_back(a);
    } else if (!a.empty() && a[0] == '-') {
      return Error(EINVAL, "unknown flag " + a + " (see --help)");
    } else {
      positional.push_back(a);
    }
  }
  if (cl.help || cl.help_markdown || cl.help_man || cl.version) return cl;
  if (positional.size() != 2)
    return Error(EINVAL, "expected SOURCE and MOUNTPOINT, got " + std::to_string(positional.size()) + " arguments");
  cl.source = positional[0];
  cl.mountpoint = positional[1];
  // The kernel checks permissions as ext4 would; without this, allow_other would let
  // every user act with the daemon's (root's) rights.
  fuse_opts.push_back("default_permissions");
  bool has_fsname = false, has_subtype = false;
  for (const auto& o : fuse_opts) {
    has_fsname |= o.rfind("fsname=", 0) == 0;
    has_subtype |= o.rfind("subtype=", 0) == 0;
  }
  if (!has_fsname) {
    std::string escaped;  // libfuse splits -o on commas; a comma in a path needs a backslash
    for (char c : cl.source) {
      if (c == ',' || c == '\\') escaped += '\\';
      escaped += c;
    }
    fuse_opts.push_back("fsname=" + escaped);
  }
  if (!has_subtype) fuse_opts.push_back("subtype=graphfs");
  std::string joined;
  for (const auto& o : fuse_opts) joined += (joined.empty() ? "" : ",") + o;
  cl.fuse_args.push_back("-o");
  cl.fuse_args.push_back(joined);
  cl.fuse_args.push_back(cl.mountpoint);
  return cl;
}

// Linux nice values are per thread: every thread the process has now (a sanitizer's own among
// them) gets it, and every thread started later inherits it.
Status SetDaemonNice(int nice) {
  std::vector<pid_t> tids{0};
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') tids.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
    ::closedir(d);
  }
  for (pid_t tid : tids)
    if (::setpriority(PRIO_PROCESS, static_cast<id_t>(tid), nice) != 0)
      return Error::FromErrno("nice=" + std::to_string(nice) +
                              " (a lower value needs CAP_SYS_NICE); the daemon keeps the priority it inherited");
  return Status::Ok();
}

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
  fs.options = cl->options;
  Status resolved = ResolveMountOptions(fs.options);
  if (!resolved.ok()) {
    std::fprintf(stderr, "graphfs: %s\n", resolved.error().message().c_str());
    return 2;
  }
  fs.timeout = fs.options.timeout;

  char real[PATH_MAX];
  if (::realpath(cl->source.c_str(), real) == nullptr) {
    std::fprintf(stderr, "graphfs: source %s: %s\n", cl->source.c_str(), std::strerror(errno));
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

  FILE* log = nullptr;
  if (!fs.options.log_file.empty()) {
    log = std::fopen(fs.options.log_file.c_str(), "a");
    if (log == nullptr) {
      std::fprintf(stderr, "graphfs: log file %s: %s\n", fs.options.log_file.c_str(), std::strerror(errno));
      return 1;
    }
    SetLogFile(log);
  }

  bool cleaned = false;
  Status usable = CleanStaleMount(cl->mountpoint, &cleaned);
  if (!usable.ok()) {
    std::fprintf(stderr, "graphfs: %s\n", usable.error().message().c_str());
    return 1;
  }
  if (cleaned) {
    std::fprintf(stderr, "graphfs: detached the stale mount at %s left by a graphfs that died\n", cl->mountpoint.c_str());
    if (log != nullptr) LogError("detached the stale mount at " + cl->mountpoint + " left by a graphfs that died");
  }

  std::vector<char*> args;
  for (auto& a : cl->fuse_args) args.push_back(a.data());
  fuse_args fargs = FUSE_ARGS_INIT(static_cast<int>(args.size()), args.data());
  fuse_cmdline_opts opts;
  if (fuse_parse_cmdline(&fargs, &opts) != 0) return 2;
  fuse_lowlevel_ops ops;
  std::memset(&ops, 0, sizeof ops);
  ops.init = Init;
  AddEntryOps(ops);
  AddDirOps(ops);
  AddOpenOps(ops);
  AddReadOps(ops);
  AddWriteOps(ops);
  AddXattrOps(ops);

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
        if (fs.options.nice != 0) {
          const Status niced = SetDaemonNice(fs.options.nice);
          if (!niced.ok()) LogError(niced.error().message());
        }
        // The volume's threads (I/O workers, prefetchers) must start after the fork.
        Status started = fs.volume->Start();
        if (!started.ok()) {
          LogError(started.error().message());
          fuse_session_exit(se);
        }
        // The memory nothing in the split accounts for is charged to the budget (memory=).
        if (started.ok())
          fs.memory_peak.Start([&fs] { return MemoryByUseNow(fs); }, std::chrono::milliseconds(100),
                               [&fs](uint64_t other) { fs.volume->budget().SetUnaccounted(other); });
        if (!started.ok()) {
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
        fuse_session_unmount(se);
        // The loop ends the same way when an unmount ended the connection and when it was
        // aborted (/sys/fs/fuse/connections/N/abort); libfuse then takes the mount for gone.
        // Only an aborted one is still attached, dead: detach it, and the exit is an error.
        bool detached = false;
        if (Status s = CleanStaleMount(fs.mountpoint, &detached); !s.ok()) {
          LogError("the connection was aborted: " + s.error().message());
          ret = -ECONNABORTED;
        } else if (detached) {
          LogError("the connection was aborted; detached the dead mount at " + fs.mountpoint);
          ret = -ECONNABORTED;
        } else if (ret == -ECONNABORTED) {
          // The kernel says so to a read that was copying a request when an unmount ended
          // the connection (libfuse printed "reading device: Software caused connection abort").
          LogError("the kernel ended the connection as " + fs.mountpoint + " was unmounted; a clean end");
          ret = 0;
        }
        if (size_t left = ReleaseLeftHandles(fs); left > 0) {
          LogError("released " + std::to_string(left) + " handle(s) the kernel left open at unmount");
        }
        DisposeUnlinkedAtUnmount(fs);
        fs.memory_peak.Stop();  // it reads the volume's and the jobs' stats
        fs.jobs.Shutdown();   // answers waiting jobs; no new LP loads
        fs.volume->Stop();    // schedules, then cache, then I/O: before the inodes (and their files) go
      } else {
        std::fprintf(stderr, "graphfs: could not mount at %s\n", opts.mountpoint);
      }
      fuse_remove_signal_handlers(se);
    }
    fuse_session_destroy(se);
  }
  free(opts.mountpoint);
  fuse_opt_free_args(&fargs);
  if (log != nullptr) {
    SetLogFile(stderr);
    std::fclose(log);
  }
  return ret == 0 ? 0 : 1;
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
