// Graph versions through the mount (fusefs/graph_versions.h): after graphfs-update, the kept
// version GRAPH@0 reads as the old graph and cannot change; graph files shared by the two
// versions cannot be written through either name; everything else behaves as before, and a kept
// version can be removed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>

#include "tests/fusefs/striped_fixture.h"

namespace graphfs::testing {
namespace {

class GraphVersionsMount : public StripedMount {
 protected:
  void SetUp() override {
    StripedMount::SetUp();
    // A small unweighted graph, P = 4, and a batch touching only block (0, 0) (ids < V/4).
    std::string edges, add;
    std::mt19937 rng(3);
    auto put = [](std::string& to, int32_t s, int32_t t) {
      to.append(reinterpret_cast<const char*>(&s), 4);
      to.append(reinterpret_cast<const char*>(&t), 4);
    };
    for (int k = 0; k < 20000; ++k) put(edges, static_cast<int32_t>(rng() % 4000), static_cast<int32_t>(rng() % 4000));
    for (int k = 0; k < 50; ++k) put(add, k % 40, (k * 3) % 40);
    WriteFile(tmp.path() + "/edges", edges);
    WriteFile(tmp.path() + "/add", add);
    auto pre = RunCommand({BinDir() + "/preprocess", "-i", tmp.path() + "/edges", "-o", src + "/g", "-v", "4000", "-p",
                           "4", "-t", "0", "--sort-sources"});
    ASSERT_EQ(pre.status, 0) << pre.output;
    old_column = ReadFile(src + "/g/column");
    old_block = ReadFile(src + "/g/block-2-3");
    auto up = RunCommand({BinDir() + "/graphfs-update", src + "/g", "--add", tmp.path() + "/add"});
    ASSERT_EQ(up.status, 0) << up.output;
    new_column = ReadFile(src + "/g/column");
    ASSERT_NE(old_column, new_column);
    DoMount();
  }
  int OpenErrno(const std::string& path, int flags) {
    int fd = ::open(path.c_str(), flags, 0644);
    if (fd >= 0) {
      ::close(fd);
      return 0;
    }
    return errno;
  }
  std::string old_column, new_column, old_block;
};

TEST_F(GraphVersionsMount, AKeptVersionReadsAsTheOldGraphAndCannotChange) {
  const std::string kept = mnt + "/g@0";
  EXPECT_EQ(ReadFile(kept + "/column"), old_column);
  EXPECT_EQ(ReadFile(mnt + "/g/column"), new_column);
  EXPECT_EQ(OpenErrno(kept + "/column", O_WRONLY), EROFS);
  EXPECT_EQ(OpenErrno(kept + "/meta", O_RDONLY | O_TRUNC), EROFS);
  EXPECT_EQ(OpenErrno(kept + "/column", O_RDONLY), 0);
  EXPECT_EQ(::truncate((kept + "/column").c_str(), 0), -1);
  EXPECT_EQ(errno, EROFS);
  EXPECT_EQ(OpenErrno(kept + "/new-file", O_CREAT | O_WRONLY), EROFS);
  EXPECT_EQ(::mkdir((kept + "/d").c_str(), 0755), -1);
  EXPECT_EQ(errno, EROFS);
  WriteFile(mnt + "/g/notes", "x");
  EXPECT_EQ(::rename((mnt + "/g/notes").c_str(), (kept + "/notes").c_str()), -1);
  EXPECT_EQ(errno, EROFS);
  EXPECT_EQ(::link((mnt + "/g/notes").c_str(), (kept + "/notes").c_str()), -1);
  EXPECT_EQ(errno, EROFS);
  EXPECT_EQ(ReadFile(kept + "/column"), old_column) << "a refused change changed something";
}

TEST_F(GraphVersionsMount, SharedGraphFilesCannotBeWrittenThroughEitherName) {
  // block-2-3 is one file with two names (g and g@0); block-0-0 was rebuilt (g's own).
  EXPECT_EQ(OpenErrno(mnt + "/g/block-2-3", O_RDWR), EROFS);
  EXPECT_EQ(OpenErrno(mnt + "/g/block-2-3", O_WRONLY | O_CREAT | O_TRUNC), EROFS);
  EXPECT_EQ(::truncate((mnt + "/g/block-2-3").c_str(), 0), -1);
  EXPECT_EQ(errno, EROFS);
  EXPECT_EQ(ReadFile(mnt + "/g/block-2-3"), old_block);
  EXPECT_EQ(ReadFile(mnt + "/g@0/block-2-3"), old_block);
  EXPECT_EQ(OpenErrno(mnt + "/g/block-0-0", O_RDWR), 0) << "the newest version's own files stay writable";
  // Ordinary files of the graph directory are not affected.
  WriteFile(mnt + "/g/bfs.level", "levels");
  EXPECT_EQ(ReadFile(mnt + "/g/bfs.level"), "levels");
  EXPECT_EQ(OpenErrno(mnt + "/g/bfs.level", O_WRONLY | O_TRUNC), 0);
}

TEST_F(GraphVersionsMount, AKeptVersionCanBeRemovedAndTheNewOneStaysWhole) {
  std::error_code ec;
  std::filesystem::remove_all(mnt + "/g@0", ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_FALSE(std::filesystem::exists(src + "/g@0"));
  EXPECT_EQ(ReadFile(mnt + "/g/column"), new_column);
  EXPECT_EQ(ReadFile(mnt + "/g/block-2-3"), old_block);
  // No longer shared: the newest version's block is its own again.
  EXPECT_EQ(OpenErrno(mnt + "/g/block-2-3", O_RDWR), 0);
}

}  // namespace
}  // namespace graphfs::testing
