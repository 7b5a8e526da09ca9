// The control-directory client without a mount: parsing of the daemon's
// answers, the active bitmap's bytes, and Init's errors (mount discovery, a
// job the daemon refuses). Runs through a real mount are in tests/fusefs/.
#include "engines/graphfs_client.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <random>

#include "engine_test_util.h"

namespace graphfs_client {
namespace {

using graphfs::engine::testing::TempDir;

std::string Real(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  std::string out = real != nullptr ? real : path;
  std::free(real);
  return out;
}

TEST(GraphfsClientParse, NextAnswers) {
  struct Good {
    const char* text;
    bool end;
    uint64_t seq;
  };
  for (const Good& g : {Good{"lp-0\n", false, 0}, Good{"lp-17\n", false, 17}, Good{"lp-42", false, 42},
                        Good{"lp-18446744073709551615\n", false, UINT64_MAX}, Good{"end\n", true, 0},
                        Good{"end", true, 0}}) {
    auto p = ParseNext(g.text);
    ASSERT_TRUE(p.ok()) << g.text << ": " << p.error().message;
    EXPECT_EQ(p->end, g.end) << g.text;
    EXPECT_EQ(p->seq, g.seq) << g.text;
    EXPECT_EQ(p->fd(), -1);
  }
  for (const char* bad : {"", "\n", "lp-", "lp-\n", "lp-x\n", "lp--1\n", "lp-1 \n", " lp-1\n", "LP-1\n", "end\n\n",
                          "ending\n", "lp-18446744073709551616\n", "lp-1\nlp-2\n"}) {
    auto p = ParseNext(bad);
    ASSERT_FALSE(p.ok()) << "'" << bad << "'";
    EXPECT_EQ(p.error().code, EPROTO);
    EXPECT_NE(p.error().message.find("unexpected answer '"), std::string::npos) << p.error().message;
  }
  EXPECT_NE(ParseNext("lp-1\tx").error().message.find("\\x09"), std::string::npos) << "control bytes are shown";
}

TEST(GraphfsClientParse, MapLines) {
  auto chunks = ParseMap("7 0 4096 0\n9 8192\t\t12288 4096\n\n12 1099511627776 24 16384\n");
  ASSERT_TRUE(chunks.ok()) << chunks.error().message;
  ASSERT_EQ(chunks->size(), 3u);
  EXPECT_EQ((*chunks)[0].chunk_id, 7u);
  EXPECT_EQ((*chunks)[1].column_offset, 8192u);
  EXPECT_EQ((*chunks)[1].length, 12288u);
  EXPECT_EQ((*chunks)[1].lp_offset, 4096u);
  EXPECT_EQ((*chunks)[2].column_offset, uint64_t{1} << 40);
  EXPECT_EQ((*chunks)[2].lp_offset, 16384u);
  EXPECT_TRUE(ParseMap("")->empty());
  EXPECT_EQ(ParseMap("1 2 3 4")->size(), 1u) << "no final newline";

  for (const char* bad : {"1 2 3\n", "1 2 3 4 5\n", "1 2 -3 4\n", "1 2 3 x\n", "1 2 3 4x\n",
                          "1 2 3 18446744073709551616\n", "0 0 8 0\n1 8 8\n"}) {
    auto c = ParseMap(bad);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.error().code, EPROTO);
    EXPECT_NE(c.error().message.find("want CHUNK_ID COLUMN_OFFSET LENGTH LP_OFFSET"), std::string::npos);
  }
  EXPECT_EQ(ParseMap("0 0 8 0\n1 8 8\n").error().message.rfind("line 2:", 0), 0u) << "the bad line is named";
}

TEST(GraphfsClientParse, ActiveBitmapIsCeilVOver8BytesWithBitsPastVCleared) {
  const std::vector<uint64_t> ones(4, ~uint64_t{0});
  for (uint64_t v : {0u, 1u, 7u, 8u, 9u, 63u, 64u, 65u, 130u, 256u}) {
    const std::string bytes = ActiveBitmapBytes(ones.data(), v);
    ASSERT_EQ(bytes.size(), (v + 7) / 8) << v;
    for (uint64_t bit = 0; bit < bytes.size() * 8; ++bit) {
      const bool set = (static_cast<unsigned char>(bytes[bit / 8]) >> (bit % 8)) & 1;
      EXPECT_EQ(set, bit < v) << "V " << v << " bit " << bit;
    }
  }
  // Random words: byte k bit b is vertex 8k+b, whatever the host byte order.
  std::mt19937_64 rng(3);
  std::vector<uint64_t> words(5);
  for (uint64_t& w : words) w = rng();
  const uint64_t v = 5 * 64 - 13;
  const std::string bytes = ActiveBitmapBytes(words.data(), v);
  ASSERT_EQ(bytes.size(), 39u);
  for (uint64_t bit = 0; bit < v; ++bit) {
    EXPECT_EQ((static_cast<unsigned char>(bytes[bit / 8]) >> (bit % 8)) & 1, (words[bit / 64] >> (bit % 64)) & 1)
        << bit;
  }
  EXPECT_EQ(static_cast<unsigned char>(bytes.back()) >> (v % 8), 0) << "bits past V are cleared";
  EXPECT_EQ(ActiveBitmapBytes(nullptr, 0), "");
}

TEST(GraphfsClientParse, StatusVerticesIsTheTopLevelField) {
  EXPECT_EQ(*ParseStatusVertices(R"({"graph":"g","vertices":1048576,"state":"idle"})"), 1048576u);
  EXPECT_EQ(*ParseStatusVertices("{\n  \"active\": {\"vertices\": 3, \"chunks\": [1, {\"vertices\": 4}]},\n"
                                 "  \"vertices\" : 77 \n}"),
            77u);
  EXPECT_EQ(*ParseStatusVertices(R"({"note":"\"vertices\": 5, {","vertices":7,"state":"vertices"})"), 7u);
  EXPECT_EQ(*ParseStatusVertices(R"({"vertices":0})"), 0u);
  for (const char* bad : {"", "{}", R"({"active":{"vertices":3}})", R"({"vertices":-1})", R"({"vertices":1.5})",
                          R"({"vertices":"12"})", R"({"vertices":})", R"({"state":"vertices"})", R"({"vertices)"}) {
    auto v = ParseStatusVertices(bad);
    EXPECT_FALSE(v.ok()) << bad;
  }
}

TEST(GraphfsClientParse, StatusLastErrorIsDecoded) {
  EXPECT_EQ(ParseStatusString(R"({"name":"j","last_error":"active: 3 bytes, want \"1\"\\n\u0041\u00e9","x":{"last_error":"no"}})",
                              "last_error"),
            "active: 3 bytes, want \"1\"\\nA?");
  EXPECT_EQ(ParseStatusString(R"({"x":{"last_error":"nested"},"last_error":""})", "last_error"), "");
  EXPECT_EQ(ParseStatusString(R"({"last_error":5})", "last_error"), "");
  EXPECT_EQ(ParseStatusString("{}", "last_error"), "");
}

TEST(GraphfsClientInit, RefusesADirectoryNotOnAMount) {
  TempDir tmp;
  std::filesystem::create_directories(tmp.File("graph"));
  auto job = Job::Init(tmp.File("graph"), 64 << 20);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.error().message.find("not on a graphfs mount"), std::string::npos) << job.error().message;
  EXPECT_NE(job.error().message.find(Real(tmp.File("graph"))), std::string::npos) << job.error().message;
  // .graphfs/ alone (stats but no jobs/) is not enough either.
  std::filesystem::create_directories(tmp.File(".graphfs"));
  EXPECT_FALSE(Job::Init(tmp.File("graph"), 64 << 20).ok());

  auto missing = Job::Init(tmp.File("nonexistent"), 64 << 20);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ENOENT);
  EXPECT_NE(missing.error().message.find(tmp.File("nonexistent") + ": No such file or directory"), std::string::npos)
      << missing.error().message;
  EXPECT_FALSE(Job::Init(tmp.path(), 0).ok()) << "partition size 0";
}

TEST(GraphfsClientInit, FindsTheMountAboveTheGraph) {
  TempDir tmp;
  const std::string mnt = Real(tmp.path()) + "/mnt";
  std::filesystem::create_directories(mnt + "/.graphfs/jobs");
  std::filesystem::create_directories(mnt + "/graphs/g1");
  EXPECT_EQ(*FindMount(mnt + "/graphs/g1"), mnt);
  EXPECT_EQ(*FindMount(mnt + "/graphs/g1/"), mnt);
  EXPECT_EQ(*FindMount(mnt), mnt);
  EXPECT_FALSE(FindMount("relative/path").ok());
}

// A plain directory that looks like a mount: mkdir works, but the control
// files do not exist, as when the daemon refuses to serve a job. The error
// names the job, the file and errno, and the job's directory is removed.
TEST(GraphfsClientInit, FailedRegistrationSaysWhyAndRemovesTheJob) {
  TempDir tmp;
  const std::string mnt = Real(tmp.path()) + "/mnt";
  std::filesystem::create_directories(mnt + "/.graphfs/jobs");
  std::filesystem::create_directories(mnt + "/graphs/g1");
  auto job = Job::Init(mnt + "/graphs/g1", 1 << 20);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().code, ENOENT);
  const std::string& m = job.error().message;
  EXPECT_EQ(m.rfind("graphfs job engines_test-" + std::to_string(::getpid()) + "-", 0), 0u)
      << "default name <program>-<pid>-<n>: " << m;
  EXPECT_NE(m.find(": open graph: No such file or directory (see " + mnt + "/.graphfs/jobs/"), std::string::npos) << m;
  EXPECT_TRUE(std::filesystem::is_empty(mnt + "/.graphfs/jobs")) << "the failed job is removed";

  auto named = Job::Init(mnt + "/graphs/g1", 1 << 20, "my-job.1");
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(named.error().message.rfind("graphfs job my-job.1: open graph:", 0), 0u) << named.error().message;
  EXPECT_TRUE(std::filesystem::is_empty(mnt + "/.graphfs/jobs"));

  // An explicit name that exists is an error, not another name.
  std::filesystem::create_directories(mnt + "/.graphfs/jobs/taken");
  auto taken = Job::Init(mnt + "/graphs/g1", 1 << 20, "taken");
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().code, EEXIST);
  EXPECT_NE(taken.error().message.find("mkdir " + mnt + "/.graphfs/jobs/taken: File exists"), std::string::npos)
      << taken.error().message;
  EXPECT_TRUE(std::filesystem::exists(mnt + "/.graphfs/jobs/taken")) << "someone else's job is left alone";
}

}  // namespace
}  // namespace graphfs_client
