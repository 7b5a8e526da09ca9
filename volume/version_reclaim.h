// Kept graph versions (graphfs-update's GRAPH@N, admin/graph_update.h): which there are, what disk
// space each holds, and reclaiming the ones nothing uses any more.
//
// A version is *held* while it is one of the `keep` newest kept versions (`graphfs-update --keep
// N`, remembered in GRAPH/.graphfs/keep and carried to every later version; without it every
// version is held). A version that is not held is marked (`GRAPH@N/.graphfs/reclaim`) and
// reclaimed as soon as no process uses it: no descriptor (other than O_PATH), mapping or working
// directory inside it. The daemon's open files and registered jobs are descriptors of the daemon,
// so a version stays while a job or an open file through the mount uses it; the daemon reclaims
// it when the last of them goes (VersionReclaimer), and graphfs-update does at every run.
//
// Reclaiming removes a version's graph files (meta, offsets, blocks, column, row, .graphfs/ with
// its index and pieces); what else lies in the directory — results jobs wrote there — stays, in a
// directory of the same name that is no longer a graph. It is crash-safe: the version is first
// renamed `.NAME@N.reclaiming` (one atomic step: it is no longer a version), and a run that finds
// such a directory finishes it.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <optional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/result.h"

namespace graphfs::volume {

inline constexpr const char* kVersionFile = ".graphfs/version";
inline constexpr const char* kKeepFile = ".graphfs/keep";
inline constexpr const char* kReclaimMark = ".graphfs/reclaim";

// GRAPH split into its parent directory and its name (no trailing slash; "." for a bare name).
std::pair<std::string, std::string> ParentAndName(const std::string& graph_dir);
// A graph directory's version number (0 without a version file); -1 if it cannot be read.
int64_t VersionOf(const std::string& dir);

struct VersionSpace {
  std::string path;
  int64_t number = -1;          // N of NAME@N; the current version's own number for GRAPH
  bool current = false;         // GRAPH itself
  bool held = true;             // within --keep (always for the current version)
  uint64_t bytes = 0;           // allocated bytes of every file reachable in it (each inode once)
  uint64_t exclusive_bytes = 0; // of files no other directory links: what reclaiming it frees
  std::vector<std::string> users;  // processes using it ("PID (name)"), when asked
};

// GRAPH and its kept versions (siblings NAME@N with a `meta`), newest first, with their space.
Result<std::vector<VersionSpace>> ListVersions(const std::string& graph_dir, bool with_users = false);

// The keep count of GRAPH (GRAPH/.graphfs/keep); nullopt when none was ever given.
Result<std::optional<uint64_t>> KeepOf(const std::string& graph_dir);
Status WriteKeep(const std::string& dir, uint64_t keep);

struct ReclaimReport {
  std::vector<std::string> reclaimed;      // versions whose graph files are gone
  std::vector<std::string> in_use;         // marked, kept until their users leave ("PATH: users")
  std::vector<std::string> results_left;   // reclaimed versions whose other files stayed
  uint64_t bytes_freed = 0;
};

// Marks every kept version of GRAPH beyond the `keep` newest and reclaims those nothing uses.
// Also finishes reclaims a kill interrupted.
Result<ReclaimReport> ReclaimVersions(const std::string& graph_dir, uint64_t keep);

// Reclaims the marked version `version_dir` if nothing uses it; false if it is in use (or not a
// marked version). What the daemon runs when a user of a version leaves.
Result<bool> ReclaimIfUnused(const std::string& version_dir, ReclaimReport* report = nullptr);

// The processes other than this one with a descriptor (not O_PATH), a mapping or their working
// directory inside `dir`, as "PID (comm)".
std::vector<std::string> DirectoryUsers(const std::string& dir);

// The kept version a backing path lies in (a file of GRAPH@N, of GRAPH@N/.graphfs/pieces, or the
// directory itself) when that version is marked for reclaiming; "" otherwise. Cheap for paths
// outside versions (a string test).
std::string MarkedVersionOf(const std::string& path);

// The daemon's reclaimer: told when a user of a marked version may have left (a file released, a
// job gone), it reclaims the version once nothing uses it, looking again every few seconds while
// something does. `before_check` runs first each time (the volume drops schedules no job holds).
class VersionReclaimer {
 public:
  explicit VersionReclaimer(std::function<void()> before_check) : before_check_(std::move(before_check)) {}
  ~VersionReclaimer() { Stop(); }
  void Start();
  void Stop();
  // `path`: a backing path just released; ignored unless it lies in a marked version.
  void Nudge(const std::string& path);
  uint64_t reclaimed() const;
  uint64_t bytes_freed() const;
  std::vector<std::string> pending() const;

 private:
  void Run();

  std::function<void()> before_check_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::set<std::string> pending_;
  bool stop_ = false;
  bool started_ = false;
  uint64_t reclaimed_ = 0, bytes_freed_ = 0;
  std::thread thread_;
};

}  // namespace graphfs::volume
