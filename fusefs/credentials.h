// The credentials of a FUSE request, and a scope that takes them on for the calling thread
// (fsuid, fsgid, groups): the daemon runs as root, and acts as the caller where the caller's
// rights must decide (creating files, checking that a job may read its graph).
#pragma once

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse_lowlevel.h>
#include <sys/types.h>

#include <vector>

namespace graphfs {

// Who sent a request: uid, gid and supplementary groups.
struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  static Credentials Of(fuse_req_t req);
};

// Runs a creation call with the caller's fsuid, fsgid and groups, so new files belong to
// the caller and the backing filesystem applies its own rules (setgid directories); and
// access checks the daemon makes for a caller later (a job's graph).
class CallerCredentials {
 public:
  explicit CallerCredentials(fuse_req_t req) : CallerCredentials(Credentials::Of(req)) {}
  explicit CallerCredentials(const Credentials& who);
  ~CallerCredentials();
  CallerCredentials(const CallerCredentials&) = delete;
  CallerCredentials& operator=(const CallerCredentials&) = delete;

 private:
  bool switched_ = false;
};

}  // namespace graphfs
