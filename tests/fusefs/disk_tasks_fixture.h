// A striped mount whose tests drive the daemon's disk tasks through MOUNTPOINT/.graphfs/disks
// (rebuild, scrub): the control file read as JSON, a task awaited, the daemon's scrub expected to
// find nothing. The fixture of the online parity tests.
#pragma once

#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "striping/manifest.h"
#include "striping/rebuild.h"
#include "tests/fusefs/control_file.h"
#include "tests/fusefs/striped_fixture.h"

namespace graphfs::testing {

class DiskTasksMount : public StripedMount {
 protected:
  // `name` written with `bytes`, compressed (zstd:1, units of 50000 bytes) with one parity unit
  // per row over the three disks, and a plain twin of it beside the source (`twin(name)`).
  StripeManifest CompressWithParity(const std::string& name, const std::string& bytes) {
    const std::string path = graph + "/" + name;
    WriteFile(path, bytes);
    WriteFile(twin(name), bytes);
    StripeRequest req = TestStripeRequest(path, disks);
    req.compress = "zstd:1";
    req.compress_unit = 50000;
    req.parity = 1;
    const StripeManifest m = StripeAndRead(req, path);
    EXPECT_TRUE(m.packed.has_value()) << name << " was not compressed";
    EXPECT_EQ(m.layout.parity, 1u);
    return m;
  }
  std::string twin(const std::string& name) const { return tmp.path() + "/plain-" + name; }
  StripeManifest ManifestOf(const std::string& name) {
    auto m = ReadManifest(graph + "/" + name);
    EXPECT_TRUE(m.ok() && m->has_value()) << name;
    return m.ok() && m->has_value() ? **m : StripeManifest{};
  }
  std::string DisksFile() const { return mnt + "/.graphfs/disks"; }
  nlohmann::json Disks() { return nlohmann::json::parse(ReadFile(DisksFile())); }
  // Waits until the task is no longer running; its status.
  nlohmann::json WaitForTask(int seconds = 120) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    nlohmann::json task;
    while (std::chrono::steady_clock::now() < until) {
      task = Disks()["task"];
      if (task.is_object() && task["state"] != "running" && task["state"] != "starting") return task;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "the task did not end: " << task.dump();
    return task;
  }
  // Waits (at most a minute) until the rebuild onto `to` has passed the file `file_id`: its
  // record names the file and has moved on to another. False if it never did.
  static bool WaitUntilRebuildPassed(const std::string& to, const std::string& file_id) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const std::string record = ReadFile(to + "/" + kRebuildRecordFile);
      if (!record.empty() && record.find(file_id) != std::string::npos &&
          nlohmann::json::parse(record)["file"] != file_id)
        return true;
    }
    return false;
  }
  // The daemon's scrub over every disk finds nothing to repair (`what` says after what).
  void ExpectScrubFindsNothing(const std::string& what) {
    ASSERT_EQ(WriteControl(DisksFile(), "scrub\n"), 0) << what;
    const nlohmann::json task = WaitForTask();
    ASSERT_EQ(task["state"], "done") << what << ": " << task.dump();
    EXPECT_EQ(task["report"]["damage_left"], false) << what << ": " << task.dump();
    EXPECT_EQ(task["report"]["total"]["parity_rewrites"], 0) << what << ": " << task.dump();
    EXPECT_EQ(task["report"]["total"]["repaired_blocks"], 0) << what << ": " << task.dump();
    EXPECT_EQ(task["report"]["total"]["checksum_errors"], 0) << what << ": " << task.dump();
  }
};

// Closes the descriptors however the test ends: one left open would keep the daemon from exiting.
struct CloseAll {
  std::vector<int*> fds;
  ~CloseAll() {
    for (int* f : fds)
      if (*f >= 0) ::close(std::exchange(*f, -1));
  }
};

}  // namespace graphfs::testing
