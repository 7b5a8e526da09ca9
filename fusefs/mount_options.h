// graphfs's own mount options, given as -o key=value on the command line or in fstab. One
// table (mount_options.cc) gives each its name, the shape of its value, its default, its help
// and its parser; the parser stores straight into the field that uses it — the volume's
// options for what the volume does, the daemon's own below — so nothing is copied by hand.
// --help, README.md's option table (`graphfs --help-markdown`, checked by a test), the manual page
// (`graphfs --help-man`, command_line_help.cc) and the fuzzer's list of keys all come from the table, and so
// do the defaults they show: each is its field's initial value, written once (the volume's in
// volume/volume_options.h, the daemon's below).
// Everything else (allow_other, ro, fsname, ...) goes to libfuse unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/size_parse.h"
#include "volume/volume_options.h"

namespace graphfs {

enum class PassthroughMode { kAuto, kOff };

// The daemon's defaults, each written once.
// The one memory budget when neither `memory=` nor `cache_size=` is given (ResolveMountOptions).
inline const SizeOrPercent kDefaultMemory = SizeOrPercent::Percent(25);
// FUSE worker threads at most. A reader blocked on a miss holds one: four engines each with a
// 24 MiB O_DIRECT pread in flight are 96 requests of 1 MiB (max_background is 128), and 16
// threads left whole readers unserved while the disks idled (BENCHMARKS.md, issue 30).
inline constexpr unsigned kDefaultThreads = 128;
// The daemon's nice value: its I/O workers and LP loaders wake ahead of the jobs' compute threads.
inline constexpr int kDefaultNice = -5;

struct MountOptions {
  // Handed to volume::Volume::Open as it is (mount_setup.cc sets `source`). Its cache_bytes and
  // memory_bytes come from the budgets below, resolved against RAM by ResolveMountOptions.
  volume::VolumeOptions volume;
  SizeOrPercent cache_size;                // a cache alone, instead of the one budget (cache_size=)
  bool cache_size_given = false;           // on the command line (memory= then conflicts)
  std::optional<SizeOrPercent> memory;     // one budget for all graph bytes (kDefaultMemory unless cache_size=)
  // The daemon's own.
  unsigned threads = kDefaultThreads;  // FUSE worker threads at most
  PassthroughMode passthrough = PassthroughMode::kAuto;
  int nice = kDefaultNice;        // the daemon's CPU priority (0: as inherited)
  // Jobs that compute on LPs at once, at most (volume/compute_turns.h); 0: no turns; unset
  // (default, `auto`): the daemon's CPUs, once more than twice that many jobs take turns.
  std::optional<unsigned> compute_slots;
  uint64_t kernel_readahead = 0;  // the kernel's read-ahead window on this mount; 0 = its own (128K)
  std::string log_file;
  double timeout = 1.0;           // attribute/entry cache seconds
};

// Parses one "key=value" (or bare "key") option. Returns true if the key is graphfs's,
// false if it belongs to libfuse; an error for a graphfs key with a bad value.
Result<bool> ApplyMountOption(MountOptions& options, const std::string& option);

// Resolves the memory options into the volume's bytes: `memory=` (kDefaultMemory when neither is
// given) into `memory_bytes`, which the volume then divides (`Budgeted` in
// volume/internal/volume_core.cc, and volume/internal/memory_budget.h: the cache's share is
// decided there alone), or `cache_size=` into `cache_bytes`, a cache of that size; N% is of RAM.
// Both given is an error.
Status ResolveMountOptions(MountOptions& options);

// The table's keys, in its order.
std::vector<std::string> MountOptionKeys();

// Help text for graphfs's own options (--help).
std::string MountOptionsHelp();

// The option table of README.md: "| option | meaning | default |" and one row per option.
std::string MountOptionsMarkdown();

// The table's texts, in its order, for other renderers (the manual page): the value's shape
// (SIZE, N, or the choices a|b), and the default and the help as markdown (`literal`s).
struct MountOptionDoc {
  std::string key;
  std::string value;
  std::string default_value;
  std::string help;
  bool default_is_value = false;  // the default is a value the option takes (`512M`), not a rule
};
std::vector<MountOptionDoc> MountOptionDocs();

// The value option `key` has in `options` as the table shows it (markdown, `512M`), "" for an
// option whose default is a rule or unset (log=, disks=, memory=, ...).
std::string MountOptionValue(MountOptions options, const std::string& key);

}  // namespace graphfs
