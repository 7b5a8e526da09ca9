// A striped mount whose tests drive the daemon's disk tasks through MOUNTPOINT/.graphfs/disks
// (rebuild, scrub): the control file read as JSON, a task awaited, the daemon's scrub expected to
// find nothing. The fixture of the online parity tests.
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/fusefs/control_file.h"
#include "tests/fusefs/striped_fixture.h"

namespace graphfs::testing {

class DiskTasksMount : public StripedMount {
 protected:
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

}  // namespace graphfs::testing
