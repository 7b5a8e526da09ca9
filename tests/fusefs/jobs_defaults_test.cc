// The jobs protocol's default LP size is one number, common/jobs_protocol.h's: the daemon gives
// it to a job that writes no partition_size, the C++ client's users ask for it (the engines' apps
// start from it and their --help shows it). README.md says it in words and the Python client,
// which cannot read a C++ header, writes it again; this checks those against the constant.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/jobs_protocol.h"
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

TEST(JobsDefaults, TheDaemonsPartitionSizeIsTheClients) {
  EXPECT_EQ(ControlJob().partition_bytes, kClientDefault);
  EXPECT_EQ(kClientDefault, jobs_protocol::kDefaultPartitionBytes);
}

TEST(JobsDefaults, ThePythonClientsPartitionSizeIsTheProtocols) {
  ASSERT_EQ(kClientDefault % (1u << 20), 0u);
  const std::string line = "DEFAULT_PARTITION_BYTES = " + std::to_string(kClientDefault >> 20) + " << 20\n";
  EXPECT_NE(Read("clients/python/graphfs/protocol.py").find(line), std::string::npos)
      << "clients/python/graphfs/protocol.py should say: " << line;
}

TEST(JobsDefaults, TheReadmesSayTheClientsPartitionSize) {
  const std::string size = SizeText(kClientDefault);
  const std::string protocol_row = "| bytes per logical partition (LP), suffixes K/M/G; default " + size + " |";
  EXPECT_NE(Read("README.md").find(protocol_row), std::string::npos)
      << "README.md's jobs protocol table should say: " << protocol_row;
  // engines/README.md gives it in its defaults table, which tests/engines/defaults_test.cc checks.
}

}  // namespace
}  // namespace graphfs
