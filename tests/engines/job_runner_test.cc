#include "engines/jobs/job_runner.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine_test_util.h"
#include "engines/core/preprocess.h"
#include "engines/apps/app_registry.h"
#include "engines/jobs/arrivals.h"

namespace graphfs::engine {
namespace {

using testing::TempDir;

TEST(ParseJobList, DefaultsArgumentsAndErrors) {
  auto jobs = ParseJobList("pagerank-delta,wcc,sssp:12,bfs:3,pagerank,spmv,bfs");
  ASSERT_TRUE(jobs.ok()) << jobs.error().message();
  ASSERT_EQ(jobs->size(), 7u);
  EXPECT_EQ((*jobs)[0].app, "pagerank-delta");
  EXPECT_EQ((*jobs)[0].arg, "0.01");
  EXPECT_EQ((*jobs)[1].arg, "");
  EXPECT_EQ((*jobs)[2].arg, "12");
  EXPECT_EQ((*jobs)[4].arg, "10");
  EXPECT_EQ((*jobs)[6].arg, "0");
  EXPECT_EQ(JobArgv((*jobs)[2], "/g", "1.5"), (std::vector<std::string>{"sssp", "/g", "12", "1.5"}));
  EXPECT_EQ(JobArgv((*jobs)[1], "/g", "8"), (std::vector<std::string>{"wcc", "/g", "8"}));
  for (const char* bad : {"", "wcc,", "bogus", "wcc:3", "bfs:x", "bfs:-1", "pagerank-delta:0", "bfs:", ",bfs"}) {
    EXPECT_FALSE(ParseJobList(bad).ok()) << bad;
  }
}

// The texts the app registry now generates, pinned as they were written out before it.
TEST(ParseJobList, HelpAndErrorsNameTheRegisteredApps) {
  EXPECT_EQ(JobListHelp(),
            "comma-separated APP[:ARG]: bfs:START sssp:START pagerank:ITERATIONS pagerank-delta:EPSILON wcc spmv wcc-uf; "
            "without ARG: START 0, ITERATIONS 10, EPSILON 0.01");
  const std::string five = std::to_string(kDefaultReentry);
  EXPECT_EQ(ReentryDefaults(), "bfs " + five + ", wcc " + five + ", sssp " + five + ", pagerank-delta " +
                                   std::to_string(kDefaultPageRankDeltaReentry));
  EXPECT_EQ(ParseJobList("wcc,bogus").error().message(),
            "--jobs: unknown app 'bogus' (bfs, wcc, sssp, pagerank, pagerank-delta, spmv, wcc-uf)");
  EXPECT_EQ(ParseJobList("spmv:1").error().message(), "--jobs: spmv takes no argument");
  EXPECT_EQ(ParseJobList("pagerank:1.5").error().message(), "--jobs: bad argument '1.5' for pagerank");
  EXPECT_EQ(ParseJobList("pagerank-delta:-1").error().message(), "--jobs: bad argument '-1' for pagerank-delta");
}

TEST(ParseJobList, IntegratedModeFlagsFollowMemGb) {
  RunJobsOptions options;
  EXPECT_TRUE(ModeFlags(options).empty());
  options.partition_bytes = 1 << 20;
  EXPECT_TRUE(ModeFlags(options).empty()) << "a partition size alone does not switch modes";
  options.integrated = true;
  EXPECT_EQ(ModeFlags(options), (std::vector<std::string>{"--graphfs", "--graphfs-partition", "1048576"}));
  options.partition_bytes.reset();
  EXPECT_EQ(ModeFlags(options), (std::vector<std::string>{"--graphfs"}));
  EXPECT_EQ(JobArgv(JobSpec{"bfs", "3"}, "/g", "1", ModeFlags(options)),
            (std::vector<std::string>{"bfs", "/g", "3", "1", "--graphfs"}));
}

// MEM_GB's default is the apps' (kDefaultMemGb): run-jobs passes that one unless told.
// (engines/README.md's defaults table is checked against the constants in defaults_test.cc.)
TEST(ParseJobList, MemGbDefaultIsTheAppsOwn) {
  EXPECT_EQ(RunJobsOptions().mem_gb, MemGbText(AppConfig().mem_gb));
  EXPECT_EQ(MemGbText(0.25), "0.25");
  EXPECT_EQ(MemGbText(2.0), "2");
}

TEST(GraphfsStats, ParsesDisksAndToleratesMissingKeys) {
  auto disks = ParseGraphfsStats(
      R"({"disks":[{"index":0,"path":"/d0","bytes_read":4096,"bytes_written":12},)"
      R"({"index":3,"path":"/d3"},{"bytes_read":7}],"cache":{"hits":1}})");
  ASSERT_TRUE(disks.ok());
  ASSERT_EQ(disks->size(), 3u);
  EXPECT_EQ((*disks)[0].path, "/d0");
  EXPECT_EQ((*disks)[0].bytes_read, 4096u);
  EXPECT_EQ((*disks)[0].bytes_written, 12u);
  EXPECT_EQ((*disks)[1].index, 3);
  EXPECT_FALSE((*disks)[1].bytes_read.has_value());
  EXPECT_EQ((*disks)[2].index, 2);  // position when no index is given
  EXPECT_EQ((*disks)[2].bytes_read, 7u);
  EXPECT_TRUE(ParseGraphfsStats("{}")->empty());
  EXPECT_TRUE(ParseGraphfsStats(R"({"disks":5})")->empty());
  EXPECT_FALSE(ParseGraphfsStats("{not json").ok());
}

TEST(GraphfsStats, FindsMountByWalkingUp) {
  TempDir tmp;
  std::filesystem::create_directories(tmp.File("mnt/.graphfs"));
  std::filesystem::create_directories(tmp.File("mnt/graphs/g1"));
  testing::WriteFile(tmp.File("mnt/.graphfs/stats"), "{}");
  EXPECT_EQ(FindGraphfsMount(tmp.File("mnt/graphs/g1")), tmp.File("mnt"));
  EXPECT_EQ(FindGraphfsMount(tmp.File("mnt")), tmp.File("mnt"));
  std::filesystem::create_directories(tmp.File("plain/g"));
  EXPECT_EQ(FindGraphfsMount(tmp.File("plain/g")), std::nullopt);
}

TEST(DiskStats, ResolvesDevicesAndPartitionsThroughSysfs) {
  TempDir tmp;
  struct stat st;
  ASSERT_EQ(::stat(tmp.path().c_str(), &st), 0);
  const std::string sys = tmp.File("sys");
  const std::string dev = std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  // A fake sysfs where our filesystem is partition 1 of "fakedisk".
  std::filesystem::create_directories(sys + "/dev/block");
  std::filesystem::create_directories(sys + "/devices/virtual/block/fakedisk/fakedisk1");
  testing::WriteFile(sys + "/devices/virtual/block/fakedisk/fakedisk1/partition", "1\n");
  std::filesystem::create_directory_symlink(sys + "/devices/virtual/block/fakedisk/fakedisk1",
                                            sys + "/dev/block/" + dev);
  EXPECT_EQ(BlockDeviceOf(tmp.path(), sys), "fakedisk");
  std::filesystem::create_directories(sys + "/block/loop7");
  testing::WriteFile(sys + "/block/loop7/stat", "     120        3     2048      55        0        0        0        0\n");
  EXPECT_EQ(*DeviceBytesRead("loop7", sys), 2048u * 512);
  EXPECT_FALSE(DeviceBytesRead("loop8", sys).ok());
  EXPECT_EQ(BlockDeviceOf(tmp.File("missing"), sys), std::nullopt);
}

class RunJobsBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    // The graph sits under a directory that looks like a graphfs mount.
    std::filesystem::create_directories(tmp_.File("mnt/.graphfs"));
    testing::WriteFile(tmp_.File("mnt/.graphfs/stats"),
                       R"({"disks":[{"index":0,"path":"/d0","bytes_read":100,"bytes_written":5},{"index":1}]})");
    testing::TestGraph g = testing::RandomGraph(300, 250, 3000, true, 8);
    testing::WriteFile(tmp_.File("edges"), testing::EdgeBytes(g));
    PreprocessOptions options;
    options.input = tmp_.File("edges");
    options.output_dir = tmp_.File("mnt/graph");
    options.vertices = g.vertices;
    options.partitions = 3;
    options.edge_type = 1;
    ASSERT_TRUE(Preprocess(options).ok());
  }
  testing::CommandResult Run(const std::string& args) {
    return testing::RunCommand(testing::Bin("run-jobs") + " --graph " + tmp_.File("mnt/graph") + " " + args +
                               " 2>&1");
  }
  static std::vector<std::string> Lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  TempDir tmp_;
};

TEST_F(RunJobsBinary, RunsTheMixConcurrentlyAndPrintsTheTable) {
  auto r = Run("--jobs pagerank-delta,wcc,sssp:1,bfs:1 --mem-gb 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto lines = Lines(r.output);
  ASSERT_GE(lines.size(), 8u) << r.output;
  EXPECT_EQ(lines[0].rfind("job  app", 0), 0u) << lines[0];
  const char* apps[] = {"pagerank-delta", "wcc", "sssp", "bfs"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(lines[1 + i].rfind(std::to_string(i) + "    " + apps[i], 0), 0u) << lines[1 + i];
    EXPECT_NE(lines[1 + i].find(" ok "), std::string::npos) << lines[1 + i];
    EXPECT_NE(lines[1 + i].find(std::string(apps[i]) + ": "), std::string::npos) << lines[1 + i];
  }
  EXPECT_NE(lines[3].find("1 1"), std::string::npos) << "sssp args: START MEM_GB";
  EXPECT_EQ(lines[5].rfind("total wall time: ", 0), 0u);
  EXPECT_EQ(lines[6], "mode: unmodified (the apps read column and row)");
  EXPECT_NE(r.output.find("graphfs disk 0 /d0 bytes read 0 (0 B), bytes written 0 (0 B)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("graphfs disk 1 - bytes read ?"), std::string::npos) << r.output;
}

// Two instances of one app on one graph keep separate state: run-jobs tags them, and each
// gets the result the app alone gives.
TEST_F(RunJobsBinary, InstancesOfOneAppGetTheirOwnStateFiles) {
  auto r = Run("--jobs bfs:1,bfs:7,wcc --mem-gb 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string a = testing::ReadFile(tmp_.File("mnt/graph/job0.bfs.level"));
  const std::string b = testing::ReadFile(tmp_.File("mnt/graph/job1.bfs.level"));
  ASSERT_EQ(a.size(), 300u * 4);
  ASSERT_EQ(b.size(), 300u * 4);
  EXPECT_NE(a, b) << "different starts, different levels";
  EXPECT_EQ(testing::ReadFile(tmp_.File("mnt/graph/wcc.label")).size(), 300u * 4) << "a single instance is not tagged";
  auto alone = testing::RunCommand(testing::Bin("bfs") + " " + tmp_.File("mnt/graph") + " 7 1 2>&1");
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  EXPECT_EQ(testing::ReadFile(tmp_.File("mnt/graph/bfs.level")), b);
  EXPECT_NE(testing::RunCommand(testing::Bin("bfs") + " " + tmp_.File("mnt/graph") + " 1 1 --state-tag ../x 2>&1").exit_code,
            0);
}

TEST_F(RunJobsBinary, FailingJobMeansNonZeroExit) {
  auto r = Run("--jobs wcc,bfs:300");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("exit 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("out of range"), std::string::npos) << "the app's stderr passes through";
  EXPECT_EQ(Run("--jobs nosuchapp").exit_code, 2);
  EXPECT_EQ(Run("--jobs wcc --bin-dir /nonexistent").exit_code, 1);
}

// --integrated passes --graphfs (and the partition size) to every job; this
// fake mount has no .graphfs/jobs/, so the apps say so and fail.
TEST_F(RunJobsBinary, IntegratedModePassesGraphfsToEveryJob) {
  auto r = Run("--jobs wcc,bfs:1 --integrated --partition 64M --mem-gb 1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("\n0    wcc             1                "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\n1    bfs             1 1              "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("wcc: error: graphfs: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("bfs: error: graphfs: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("is not on a graphfs mount"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("mode: integrated (--graphfs: the apps read graphfs's logical partitions of 64 MiB)"),
            std::string::npos)
      << r.output;
  for (const std::string& line : Lines(r.output)) {
    EXPECT_EQ(line.find("--graphfs-partition"), std::string::npos) << "the args column holds the app's own: " << line;
  }
  auto plain_size = Run("--jobs wcc --integrated --mem-gb 1");
  EXPECT_NE(plain_size.output.find("logical partitions of the apps' default size"), std::string::npos)
      << plain_size.output;
  EXPECT_EQ(Run("--jobs wcc --integrated --partition 0").exit_code, 2);
  EXPECT_EQ(Run("--jobs wcc --integrated --partition lots").exit_code, 2);
  EXPECT_EQ(Run("--jobs wcc --partition 64M").exit_code, 2) << "--partition needs --integrated";
}

TEST_F(RunJobsBinary, SequentialAndStaggeredStarts) {
  auto seq = Run("--jobs wcc,bfs:2,spmv --sequential");
  ASSERT_EQ(seq.exit_code, 0) << seq.output;
  auto lines = Lines(seq.output);
  double previous_end = 0;
  for (int i = 1; i <= 3; ++i) {
    std::istringstream in(lines[static_cast<size_t>(i)]);
    std::string job, app, arg, planned;
    double start, wall;
    in >> job >> app;
    if (app != "wcc" && app != "spmv") in >> arg;
    in >> arg >> planned >> start >> wall;
    EXPECT_EQ(planned, "-") << "sequential: no planned time";
    EXPECT_GE(start + 1e-3, previous_end) << lines[static_cast<size_t>(i)];
    previous_end = start + wall;
  }
  auto staggered = Run("--jobs wcc,wcc --stagger 0.3");
  ASSERT_EQ(staggered.exit_code, 0) << staggered.output;
  std::istringstream second(Lines(staggered.output)[2]);
  std::string job, app, mem, planned;
  double start = 0;
  second >> job >> app >> mem >> planned >> start;
  EXPECT_EQ(planned, "0.30");
  EXPECT_GE(start, 0.3);
  EXPECT_EQ(staggered.output.find("arrivals:"), std::string::npos) << "said only for --arrivals";
}

// 16 jobs (GraphM's largest mix) arriving as a Poisson process: every job runs, and
// each starts at (or just after) the time ArrivalTimes drew for it, which the table shows.
TEST_F(RunJobsBinary, SixteenJobsWithPoissonArrivals) {
  std::string jobs;
  const char* mix[] = {"wcc", "bfs:1", "pagerank:2", "sssp:3"};
  for (int i = 0; i < 16; ++i) jobs += std::string(i ? "," : "") + mix[i % 4];
  auto r = Run("--jobs " + jobs + " --arrivals poisson:0.05 --seed 7 --mem-gb 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto lines = Lines(r.output);
  ASSERT_GE(lines.size(), 19u) << r.output;
  EXPECT_NE(lines[0].find("planned_s  start_s"), std::string::npos) << lines[0];
  const std::vector<double> planned = ArrivalTimes(PoissonArrivals{0.05}, 16, 7);
  for (size_t i = 0; i < 16; ++i) {
    std::istringstream in(lines[1 + i]);
    std::string job, app, arg, mem, shown;
    double start = 0;
    in >> job >> app;
    if (app != "wcc") in >> arg;
    in >> mem >> shown >> start;
    EXPECT_EQ(job, std::to_string(i)) << lines[1 + i];
    char want[32];
    std::snprintf(want, sizeof(want), "%.2f", planned[i]);
    EXPECT_EQ(shown, want) << lines[1 + i];
    EXPECT_GE(start + 0.006, planned[i]) << lines[1 + i];  // the table rounds to 0.01
    EXPECT_NE(lines[1 + i].find(" ok "), std::string::npos) << lines[1 + i];
  }
  EXPECT_NE(r.output.find("\narrivals: poisson, mean gap 0.05 s, seed 7"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(tmp_.File("mnt/graph/job15.sssp.distance"))) << "each instance tagged";
}

TEST_F(RunJobsBinary, ArrivalsUsageErrors) {
  for (const char* bad : {"poisson:-1", "poisson:x", "uniform:3", "poisson", "poisson:0"}) {
    auto r = Run(std::string("--jobs wcc --arrivals ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("run-jobs: error: --arrivals: "), std::string::npos) << r.output;
  }
  auto both = Run("--jobs wcc,wcc --arrivals poisson:1 --stagger 1");
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("excludes"), std::string::npos) << both.output;
  EXPECT_EQ(Run("--jobs wcc,wcc --arrivals poisson:1 --sequential").exit_code, 2);
  EXPECT_EQ(Run("--jobs wcc --seed 3").exit_code, 2) << "--seed needs --arrivals";
}

TEST(RunJobsOptions, PlannedStartsMustFitTheJobs) {
  RunJobsOptions options;
  options.graph_dir = "/nonexistent";
  options.bin_dir = "/nonexistent";
  options.jobs = {JobSpec{"wcc", ""}, JobSpec{"wcc", ""}};
  options.start_offsets = {0.0};
  EXPECT_NE(RunJobs(options).error().message().find("1 planned start times for 2 jobs"), std::string::npos);
  options.start_offsets = {1.0, 0.5};
  EXPECT_NE(RunJobs(options).error().message().find("non-decreasing"), std::string::npos);
  options.start_offsets = {0.0, 1.0};
  options.sequential = true;
  EXPECT_NE(RunJobs(options).error().message().find("exclude each other"), std::string::npos);
}

bool CgroupV1MemoryWritable() {
  return ::access("/sys/fs/cgroup/memory/cgroup.procs", W_OK) == 0 && ::geteuid() == 0;
}

int CountJobCgroups() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/sys/fs/cgroup/memory")) {
    n += e.path().filename().string().rfind("graphfs-job-", 0) == 0;
  }
  return n;
}

TEST_F(RunJobsBinary, MemoryCapRunsInCgroupsAndRemovesThem) {
  if (!CgroupV1MemoryWritable()) GTEST_SKIP() << "needs root and the cgroup-v1 memory controller";
  const int before = CountJobCgroups();
  auto r = Run("--jobs wcc,bfs:1 --mem-cap 256M");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  auto lines = Lines(r.output);
  ASSERT_GE(lines.size(), 5u) << r.output;
  EXPECT_NE(lines[1].find(" 0.25 "), std::string::npos) << "MEM_GB follows the cap: " << lines[1];
  EXPECT_NE(r.output.find("job 1 memory cgroup /sys/fs/cgroup/memory/graphfs-job-"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("limit 256 MiB, peak "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("peak 0 B"), std::string::npos) << "the job ran inside its cgroup\n" << r.output;
  EXPECT_EQ(CountJobCgroups(), before);
}

TEST(RunJobsCgroup, JobOverItsCapIsKilledAndReported) {
  if (!CgroupV1MemoryWritable()) GTEST_SKIP() << "needs root and the cgroup-v1 memory controller";
  // 8 M vertices: wcc's two active bitmaps alone are 2 MiB of anonymous memory.
  TempDir tmp;
  testing::TestGraph g{1u << 23, false, {{0, 1}, {5, 7}}};
  testing::WriteFile(tmp.File("edges"), testing::EdgeBytes(g));
  PreprocessOptions options;
  options.input = tmp.File("edges");
  options.output_dir = tmp.File("graph");
  options.vertices = g.vertices;
  options.partitions = 2;
  ASSERT_TRUE(Preprocess(options).ok());
  const int before = CountJobCgroups();
  auto r = testing::RunCommand(testing::Bin("run-jobs") + " --graph " + tmp.File("graph") +
                               " --jobs wcc --mem-cap 1M 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("signal 9"), std::string::npos) << r.output;
  EXPECT_EQ(CountJobCgroups(), before);
}

}  // namespace
}  // namespace graphfs::engine
