// The jobs protocol's default LP size is one number: the client header's constant, which the
// engines' apps start from and their --help shows. The daemon's own default (a job that writes
// no partition_size) lives in fusefs, which may not include the engines' header, and the READMEs
// say it in words; this checks both against the client's constant, so none can drift alone.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/size_parse.h"
#include "engines/graphfs_client.hpp"
#include "fusefs/jobs_dir.h"

namespace graphfs {
namespace {

std::string Read(const std::string& relative) {
  std::ifstream in(std::string(GRAPHFS_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(in) << relative << " not found";
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr uint64_t kClientDefault = graphfs_client::Job::kDefaultPartitionBytes;

TEST(JobsDefaults, TheDaemonsPartitionSizeIsTheClients) { EXPECT_EQ(kDefaultPartitionBytes, kClientDefault); }

TEST(JobsDefaults, TheReadmesSayTheClientsPartitionSize) {
  const std::string size = SizeText(kClientDefault);
  const std::string protocol_row = "| bytes per logical partition (LP), suffixes K/M/G; default " + size + " |";
  EXPECT_NE(Read("README.md").find(protocol_row), std::string::npos)
      << "README.md's jobs protocol table should say: " << protocol_row;
  const std::string engines = "(K/M/G suffixes, default " + size + ": the client's `Job::kDefaultPartitionBytes`)";
  EXPECT_NE(Read("engines/README.md").find(engines), std::string::npos)
      << "engines/README.md should say: " << engines;
}

}  // namespace
}  // namespace graphfs
