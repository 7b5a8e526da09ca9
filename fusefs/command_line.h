// graphfs's command line: `graphfs [-f] [-d] [-s] [-o key=value,...] SOURCE MOUNTPOINT`, from a
// shell or from mount.fuse3 (`mount -t fuse.graphfs`, fstab), which call it in the same shape.
// graphfs's own -o options go through the option table (mount_options.h) into MountOptions; the
// rest are libfuse's and are handed on to it. --help and --help-man say what it takes, from the
// same table.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "fusefs/mount_options.h"

namespace graphfs {

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

// Splits argv into graphfs's options and libfuse's arguments, adding `default_permissions`, and
// `fsname=SOURCE` and `subtype=graphfs` unless given (command_line.cc). An error names the
// option or flag that is wrong.
Result<CommandLine> ParseCommandLine(int argc, char** argv);

// --help: the usage line, the option table and libfuse's flags (command_line_help.cc).
void Usage(const char* prog);
// --help-man: graphfs(1), the option table as .TP entries with what --help says around it
// (command_line_help.cc).
std::string ManPage();

}  // namespace graphfs
