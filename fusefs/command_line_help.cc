// What graphfs says of its command line: --help (Usage) and the manual page graphfs(1)
// (--help-man, ManPage), both made from the option table (mount_options.cc) and the two texts
// below, so that they cannot disagree.
#include <cstdio>
#include <string>
#include <utility>

#include "common/manpage.h"
#include "fusefs/command_line.h"

namespace graphfs {

namespace {

// What --help and the manual page (--help-man) both say besides the option table.
constexpr const char* kSummary =
    "Mounts the graph directory SOURCE at MOUNTPOINT. Striped files are read from their disks.";
constexpr const char* kFuseOptions =
    "FUSE options: allow_other, ro, fsname=..., max_threads via threads=N; -f foreground, -d debug,\n"
    "-s single-threaded. Unmount with `fusermount3 -u MOUNTPOINT` or `umount MOUNTPOINT`.";

}  // namespace

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

}  // namespace graphfs
