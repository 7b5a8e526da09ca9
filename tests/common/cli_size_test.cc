// The tools' size options (common/cli_size.h): a size read into its field, the field's value shown
// as the default, and a bad value a usage error (status 2) that names the option and the value.
#include "common/cli_size.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace graphfs {
namespace {

// Runs ParseCommandLine on `args` (after a program name); stderr in `err`.
std::optional<int> Parse(CLI::App& app, std::vector<std::string> args, std::string* err = nullptr) {
  args.insert(args.begin(), "tool");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  auto status = ParseCommandLine(app, static_cast<int>(argv.size()), argv.data());
  const std::string e = ::testing::internal::GetCapturedStderr();
  ::testing::internal::GetCapturedStdout();
  if (err) *err = e;
  return status;
}

TEST(CliSize, ReadsASizeIntoItsField) {
  CLI::App app;
  uint64_t checkpoint = 256ull << 20, rate = 0;
  AddSizeOption(app, "--checkpoint", checkpoint, "bytes between records", SizeRule{1});
  AddRateOption(app, "--rate", rate, "bytes per second");
  EXPECT_EQ(Parse(app, {"--checkpoint", "1G", "--rate", "100M"}), std::nullopt);
  EXPECT_EQ(checkpoint, 1ull << 30);
  EXPECT_EQ(rate, 100ull << 20);
}

TEST(CliSize, LeavesTheFieldAloneWhenNotGiven) {
  CLI::App app;
  uint64_t checkpoint = 256ull << 20, rate = 0;
  AddSizeOption(app, "--checkpoint", checkpoint, "bytes between records");
  AddRateOption(app, "--rate", rate, "bytes per second");
  EXPECT_EQ(Parse(app, {}), std::nullopt);
  EXPECT_EQ(checkpoint, 256ull << 20);
  EXPECT_EQ(rate, 0u);
}

TEST(CliSize, ShowsTheFieldsValueAsTheDefault) {
  CLI::App app;
  uint64_t checkpoint = 256ull << 20, unit = 16ull << 20, rate = 0;
  CLI::Option* c = AddSizeOption(app, "--checkpoint", checkpoint, "bytes between records");
  CLI::Option* u = AddSizeOption(app, "--unit", unit, "default: chosen per file", {}, /*show_default=*/false);
  CLI::Option* r = AddRateOption(app, "--rate", rate, "default: as fast as the disks go");
  EXPECT_EQ(c->get_default_str(), "256M");
  EXPECT_EQ(c->get_type_name(), "SIZE");
  EXPECT_EQ(u->get_default_str(), "");
  EXPECT_EQ(r->get_default_str(), "");
  EXPECT_NE(app.help().find("--checkpoint SIZE=256M"), std::string::npos) << app.help();
}

TEST(CliSize, ABadSizeIsAUsageErrorNamingTheOptionAndTheValue) {
  for (const char* bad : {"10X", "", "1MX", "99999999999999999999999"}) {
    CLI::App app;
    uint64_t rate = 0;
    AddRateOption(app, "-r,--rate", rate, "bytes per second");
    std::string err;
    EXPECT_EQ(Parse(app, {"--rate", bad}, &err), 2) << bad;
    EXPECT_NE(err.find("--rate " + std::string(bad) + ": expected bytes per second such as 100M"), std::string::npos)
        << err;
    EXPECT_EQ(rate, 0u);
  }
}

TEST(CliSize, ARuleBrokenIsAUsageError) {
  CLI::App app;
  uint64_t rate = 0, probe = 256ull << 20;
  AddRateOption(app, "--rate", rate, "bytes per second");
  AddSizeOption(app, "--probe-size", probe, "bytes per disk", SizeRule{4u << 20, 4096});
  std::string err;
  EXPECT_EQ(Parse(app, {"--rate", "0"}, &err), 2);
  EXPECT_NE(err.find("--rate 0: more than 0"), std::string::npos) << err;
  CLI::App app2;
  AddSizeOption(app2, "--probe-size", probe, "bytes per disk", SizeRule{4u << 20, 4096});
  EXPECT_EQ(Parse(app2, {"--probe-size", "1M"}, &err), 2);
  EXPECT_NE(err.find("--probe-size 1M: at least 4M"), std::string::npos) << err;
  CLI::App app3;
  AddSizeOption(app3, "--probe-size", probe, "bytes per disk", SizeRule{4u << 20, 4096});
  EXPECT_EQ(Parse(app3, {"--probe-size", "4097K"}, &err), 2);
  EXPECT_NE(err.find("--probe-size 4097K: a multiple of 4K"), std::string::npos) << err;
  EXPECT_EQ(probe, 256ull << 20);
}

TEST(CliSize, HelpIsStatusZeroAndOtherRefusalsStatusTwo) {
  CLI::App app;
  uint64_t rate = 0;
  AddRateOption(app, "--rate", rate, "bytes per second");
  EXPECT_EQ(Parse(app, {"--help"}), 0);
  CLI::App app2;
  AddRateOption(app2, "--rate", rate, "bytes per second");
  EXPECT_EQ(Parse(app2, {"--no-such-option"}), 2);
}

}  // namespace
}  // namespace graphfs
