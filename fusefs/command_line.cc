// Parsing graphfs's command line (command_line.h): graphfs's own -o options go through the
// option table, everything else to libfuse, with the options every graphfs mount needs added.
#include "fusefs/command_line.h"

#include <cerrno>
#include <string>
#include <vector>

#include "common/size_parse.h"

namespace graphfs {

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

}  // namespace graphfs
