// The mount option table (fusefs/mount_options.h) without a mount: each option lands in the
// field that uses it, choices stay choices, budgets resolve once, every text that lists the
// options (--help, README.md's table) comes from the table, and the defaults it shows are the
// fields' own.
#include "fusefs/mount_options.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace graphfs {
namespace {

MountOptions Parsed(const std::vector<std::string>& list) {
  MountOptions o;
  for (const std::string& opt : list) {
    auto ours = ApplyMountOption(o, opt);
    EXPECT_TRUE(ours.ok() && *ours) << opt << ": " << (ours.ok() ? "left to libfuse" : ours.error().message());
  }
  return o;
}

// A value other than the default for every option.
const std::vector<std::string> kNonDefaults = {
    "io=shared",         "io_workers=3",       "queue_depth=7",        "lp=chunk",           "lp_loader=cache",
    "lp_diagonal=0",     "lp_memory=64M",      "readahead=0",          "readahead_mem=32M",  "direct=0",
    "disks=/a:/b",       "cache_policy=lru",   "cache_window=30",      "disk_bandwidth=200M", "request_cost_us=250",
    "threads=9",         "passthrough=off",    "nice=3",               "timeout=5",          "kernel_readahead=1M",
    "log=/tmp/x.log",    "compute_slots=3"};

TEST(MountOptions, EachLandsInTheFieldThatUsesIt) {
  MountOptions o = Parsed(kNonDefaults);
  const volume::VolumeOptions& v = o.volume;
  EXPECT_EQ(v.io_queues, volume::IoQueues::kShared);
  EXPECT_EQ(v.io_workers, 3u);
  EXPECT_EQ(v.queue_depth, 7u);
  EXPECT_EQ(v.lp_granularity, volume::LpGranularity::kChunk);
  EXPECT_EQ(v.lp_loading, volume::LpLoading::kThroughCache);
  EXPECT_FALSE(v.lp_diagonal);
  EXPECT_EQ(v.lp_memory, 64ull << 20);
  EXPECT_TRUE(v.read_ahead.off);
  EXPECT_EQ(v.read_ahead.staging_limit, 32ull << 20);
  EXPECT_FALSE(v.direct);
  EXPECT_EQ(v.disks, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_EQ(v.cache_policy, "lru");
  EXPECT_EQ(v.cache_window, 30u);
  EXPECT_DOUBLE_EQ(v.seq_bytes_per_second, 200.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(v.seconds_per_request, 250e-6);
  EXPECT_EQ(o.threads, 9u);
  EXPECT_EQ(o.passthrough, PassthroughMode::kOff);
  EXPECT_EQ(o.nice, 3);
  EXPECT_EQ(o.timeout, 5.0);
  EXPECT_EQ(o.kernel_readahead, 1ull << 20);
  EXPECT_EQ(o.log_file, "/tmp/x.log");
  EXPECT_EQ(o.compute_slots, std::optional<unsigned>(3));
}

TEST(MountOptions, ComputeSlotsAreAutoUnlessANumberIsGiven) {
  MountOptions o;
  EXPECT_FALSE(o.compute_slots.has_value()) << "auto by default";
  EXPECT_EQ(MountOptionValue(o, "compute_slots"), "`auto`");
  ASSERT_TRUE(ApplyMountOption(o, "compute_slots=0").ok());
  EXPECT_EQ(o.compute_slots, std::optional<unsigned>(0));
  ASSERT_TRUE(ApplyMountOption(o, "compute_slots=auto").ok());
  EXPECT_FALSE(o.compute_slots.has_value());
  auto r = ApplyMountOption(o, "compute_slots=many");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("auto or a whole number"), std::string::npos) << r.error().message();
}

TEST(MountOptions, DefaultsAreTheVolumesOwn) {
  // Nothing given: the volume gets its own defaults, untouched by the parser.
  const MountOptions o;
  const volume::VolumeOptions v;
  EXPECT_EQ(o.volume.lp_granularity, v.lp_granularity);
  EXPECT_EQ(o.volume.lp_memory, v.lp_memory);
  EXPECT_EQ(o.volume.cache_policy, volume::CachePolicyNames().front());
  EXPECT_LT(o.volume.seconds_per_request, 0) << "calibrated unless given";
}

// The table shows an option's value from the field its parser writes: what was given reads back.
TEST(MountOptions, TheTableShowsTheFieldItsParserWrites) {
  const MountOptions o = Parsed(kNonDefaults);
  int shown = 0;
  for (const std::string& given : kNonDefaults) {
    const std::string key = given.substr(0, given.find('='));
    const std::string value = MountOptionValue(o, key);
    if (value.empty()) continue;  // a default that is a rule (readahead, disks, ...)
    EXPECT_EQ(value, "`" + given.substr(given.find('=') + 1) + "`") << key;
    ++shown;
  }
  EXPECT_GE(shown, 15);
}

// Each default is written once, as its field's initial value; the table (and so --help, the
// manual page and README.md) shows that value, and it reads back as the same value.
TEST(MountOptions, TheTablesDefaultsAreTheFieldsOwn) {
  int values = 0;
  for (const MountOptionDoc& doc : MountOptionDocs()) {
    if (!doc.default_is_value) continue;
    ++values;
    EXPECT_EQ(doc.default_value, MountOptionValue(MountOptions(), doc.key)) << doc.key;
    ASSERT_GE(doc.default_value.size(), 3u) << doc.key;
    ASSERT_EQ(doc.default_value.front(), '`') << doc.key << ": " << doc.default_value;
    const std::string literal = doc.default_value.substr(1, doc.default_value.size() - 2);
    MountOptions o;
    auto ours = ApplyMountOption(o, doc.key + "=" + literal);
    ASSERT_TRUE(ours.ok() && *ours) << doc.key << "=" << literal;
    EXPECT_EQ(MountOptionValue(o, doc.key), doc.default_value) << doc.key << " does not read back";
  }
  EXPECT_GE(values, 14);
  // The volume's named defaults are the ones shown.
  const MountOptions defaults;
  EXPECT_EQ(defaults.volume.lp_memory, volume::kDefaultLpMemory);
  EXPECT_EQ(defaults.volume.queue_depth, volume::DefaultQueueDepth());
  EXPECT_EQ(defaults.threads, kDefaultThreads);
  EXPECT_EQ(defaults.nice, kDefaultNice);
  // memory= is unset until ResolveMountOptions applies kDefaultMemory, which the table names.
  for (const MountOptionDoc& doc : MountOptionDocs()) {
    if (doc.key != "memory") continue;
    EXPECT_EQ(doc.default_value, "`" + kDefaultMemory.text + "`");
  }
}

// The shares the volume applies (the largest LP, staging under a budget, the cache's floors) are
// the code's to state: the help names the rule and where it is, never its numbers.
TEST(MountOptions, HelpNamesTheVolumesSharesWithoutRestatingThem) {
  const std::string help = MountOptionsHelp();
  for (const char* share : {"a quarter", "half of", "an eighth", "1/4", "1/8"})
    EXPECT_EQ(help.find(share), std::string::npos) << share;
  for (const char* code : {"volume/internal/graph_schedule.cc", "volume/internal/memory_budget.h"})
    EXPECT_NE(help.find(code), std::string::npos) << code;
}

TEST(MountOptions, BudgetsResolveAgainstRamOnce) {
  MountOptions o = Parsed({"cache_size=10%"});
  ASSERT_TRUE(ResolveMountOptions(o).ok());
  const uint64_t ram = static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  EXPECT_EQ(o.volume.cache_bytes, ram / 10);
  EXPECT_EQ(o.volume.memory_bytes, 0u);

  MountOptions m = Parsed({"memory=256M"});
  ASSERT_TRUE(ResolveMountOptions(m).ok());
  EXPECT_EQ(m.volume.memory_bytes, 256ull << 20);

  MountOptions both = Parsed({"memory=256M", "cache_size=1G"});
  Status s = ResolveMountOptions(both);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("memory= and cache_size="), std::string::npos) << s.error().message();
}

TEST(MountOptions, BadValuesAreRefusedWithTheOptionsName) {
  for (const char* bad : {"io=fast", "lp=edge", "cache_policy=fifo", "threads=0", "nice=-21", "lp_memory=1K",
                          "cache_size=101%", "memory=0", "disks=/a::/b", "direct=maybe", "timeout=-1", "lp",
                          "compute_slots=-1", "compute_slots=4097"}) {
    MountOptions o;
    auto r = ApplyMountOption(o, bad);
    ASSERT_FALSE(r.ok()) << bad;
    const std::string key = std::string(bad).substr(0, std::string(bad).find('='));
    EXPECT_EQ(r.error().message().rfind("option " + key, 0), 0u) << r.error().message();
  }
  MountOptions o;
  auto r = ApplyMountOption(o, "cache_policy=fifo");
  for (const std::string& name : volume::CachePolicyNames())
    EXPECT_NE(r.error().message().find("cache_policy=" + name), std::string::npos) << r.error().message();
  auto fuse = ApplyMountOption(o, "allow_other");
  ASSERT_TRUE(fuse.ok());
  EXPECT_FALSE(*fuse) << "libfuse's option claimed";
}

TEST(MountOptions, HelpListsEveryKeyAndThePoliciesTheFactoryKnows) {
  const std::string help = MountOptionsHelp();
  for (const std::string& key : MountOptionKeys()) EXPECT_NE(help.find("-o " + key + "="), std::string::npos) << key;
  for (const std::string& name : volume::CachePolicyNames()) EXPECT_NE(help.find(name), std::string::npos) << name;
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u + 2) << line;  // µ, ≥ are 2 bytes
}

TEST(MountOptions, ReadmesTableIsTheGeneratedOne) {
  std::ifstream in(std::string(GRAPHFS_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(in) << "README.md not found";
  std::stringstream readme;
  readme << in.rdbuf();
  const std::string table = MountOptionsMarkdown();
  EXPECT_NE(readme.str().find(table), std::string::npos)
      << "README.md's option table differs from the table in fusefs/mount_options.cc; paste the output of "
         "`build/bin/graphfs --help-markdown` under \"Mount options\". It is:\n"
      << table;
}

}  // namespace
}  // namespace graphfs
