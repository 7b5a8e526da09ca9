// The shared cache in the read path of striped files, through a real mount: one disk
// read for several processes, eviction policy, no double caching, no stale bytes.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "striping/striped_file.h"
#include "tests/fusefs/striped_fixture.h"

namespace graphfs::testing {
namespace {

constexpr uint64_t kUnit = 64 << 10;

uint64_t DiskBytesRead(const nlohmann::json& stats) {
  uint64_t total = 0;
  for (const auto& d : stats["disks"]) total += d["bytes_read"].get<uint64_t>();
  return total;
}

// Reads a whole file with O_DIRECT (the kernel's page cache is not involved), in `block` requests.
std::string ReadDirect(const std::string& path, size_t block = kUnit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT);
  if (fd < 0) return "open failed: " + std::string(std::strerror(errno));
  AlignedBuffer buf(block);
  std::string out;
  for (off_t off = 0;; off += static_cast<off_t>(block)) {
    ssize_t n = ::pread(fd, buf.data(), block, off);
    if (n <= 0) break;
    out.append(buf.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

// `dd` as a separate process: the cache tells processes apart.
void DdDirect(const std::string& path, uint64_t bytes) {
  CommandResult r = RunCommand({"dd", "if=" + path, "of=/dev/null", "bs=64K", "iflag=direct",
                                "count=" + std::to_string(bytes / kUnit), "status=none"});
  ASSERT_EQ(r.status, 0) << r.output;
}

// Pages of `path` in the page cache.
size_t ResidentPages(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return SIZE_MAX;
  struct stat st;
  ::fstat(fd, &st);
  size_t resident = 0;
  if (st.st_size > 0) {
    void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
    if (p != MAP_FAILED) {
      const size_t pages = (static_cast<size_t>(st.st_size) + 4095) / 4096;
      std::vector<unsigned char> vec(pages);
      if (::mincore(p, static_cast<size_t>(st.st_size), vec.data()) == 0)
        for (unsigned char v : vec) resident += v & 1;
      ::munmap(p, static_cast<size_t>(st.st_size));
    }
  }
  ::close(fd);
  return resident;
}

using CacheMount = StripedMount;

TEST_F(CacheMount, SecondProcessIsServedFromTheCache) {
  const std::string data = RandomBytes(4 << 20, 11);
  Stripe("column", data);
  DoMount({"cache_size=64M"});
  const std::string file = mnt + "/graph/column";
  EXPECT_TRUE(ReadDirect(file) == data);
  const uint64_t first = DiskBytesRead(Stats());
  EXPECT_GE(first, data.size());
  EXPECT_LE(first, data.size() + 4096);
  DdDirect(file, data.size());
  auto s = Stats();
  EXPECT_EQ(DiskBytesRead(s), first) << "the second reader went to the disks";
  const auto& c = s["cache"];
  EXPECT_EQ(c["policy"], "priority");
  EXPECT_EQ(c["used"].get<uint64_t>(), data.size());
  EXPECT_GE(c["hits"].get<uint64_t>(), data.size() / kUnit);
  ASSERT_GE(c["processes"].size(), 2u);
  bool dd_seen = false, test_seen = false;
  for (const auto& p : c["processes"]) {
    if (p["pid"].get<uint32_t>() == static_cast<uint32_t>(::getpid())) {
      test_seen = true;
      EXPECT_EQ(p["bytes_loaded"].get<uint64_t>(), data.size());
      uint64_t per_disk = 0;
      for (const auto& d : p["bytes_loaded_per_disk"]) per_disk += d.get<uint64_t>();
      EXPECT_EQ(per_disk, data.size());
    } else if (p["bytes_from_cache"].get<uint64_t>() == data.size()) {
      dd_seen = true;
      EXPECT_EQ(p["misses"].get<uint64_t>(), 0u);
    }
  }
  EXPECT_TRUE(test_seen && dd_seen) << c.dump(2);
}

// Two processes read the first 4 units, a third scans the file once, a fourth rereads the
// first 4 units: with priority they are still cached, with LRU the scan flushed them.
class CachePolicy : public StripedMount, public ::testing::WithParamInterface<const char*> {};

TEST_P(CachePolicy, AScanDoesNotFlushUnitsSeveralProcessesRead) {
  const std::string policy = GetParam();
  const std::string data = RandomBytes(16 * kUnit, 12);
  Stripe("column", data);
  DoMount({"cache_size=256K", "readahead=0", "cache_policy=" + policy});
  const std::string file = mnt + "/graph/column";
  DdDirect(file, 4 * kUnit);
  DdDirect(file, 4 * kUnit);
  DdDirect(file, 16 * kUnit);
  const uint64_t before = DiskBytesRead(Stats());
  DdDirect(file, 4 * kUnit);
  auto s = Stats();
  const uint64_t reread = DiskBytesRead(s) - before;
  EXPECT_EQ(s["cache"]["policy"], policy);
  EXPECT_LE(s["cache"]["used"].get<uint64_t>(), 4 * kUnit);
  if (policy == "priority") {
    EXPECT_EQ(reread, 0u) << s["cache"].dump(2);
    EXPECT_EQ(s["cache"]["evictions"].get<uint64_t>(), 0u);
  } else {
    EXPECT_EQ(reread, 4 * kUnit) << s["cache"].dump(2);
    EXPECT_GT(s["cache"]["evictions"].get<uint64_t>(), 0u);
  }
  EXPECT_TRUE(ReadDirect(file) == data);
}

INSTANTIATE_TEST_SUITE_P(Policies, CachePolicy, ::testing::Values("priority", "lru"));

TEST_F(CacheMount, DirectReadsFillNoPageCache) {
  const std::string data = RandomBytes(2 << 20, 13);
  Stripe("column", data);
  Stripe("row", data);
  // Striping wrote the parts through the page cache: drop them to start clean.
  std::vector<std::string> parts;
  for (const auto& d : disks)
    for (const auto& e : std::filesystem::directory_iterator(d + "/parts")) parts.push_back(e.path());
  for (const auto& p : parts) {
    int fd = ::open(p.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
  int probe = ::open(parts[0].c_str(), O_RDONLY | O_DIRECT);
  const bool parts_direct = probe >= 0;
  if (probe >= 0) ::close(probe);
  DoMount();
  EXPECT_TRUE(ReadDirect(mnt + "/graph/column") == data);
  EXPECT_EQ(ResidentPages(mnt + "/graph/column"), 0u) << "O_DIRECT reader filled the mount's page cache";
  if (parts_direct) {
    for (const auto& p : parts) EXPECT_EQ(ResidentPages(p), 0u) << p << " went through the page cache";
  }
  // The probe works: a buffered reader does fill the page cache of the mount.
  EXPECT_EQ(ReadFile(mnt + "/graph/row"), data);
  EXPECT_GT(ResidentPages(mnt + "/graph/row"), 0u);
}

TEST_F(CacheMount, WritesAreNeverServedStaleFromTheCache) {
  std::string data = RandomBytes(1 << 20, 14);
  Stripe("column", data);
  DoMount();
  const std::string file = mnt + "/graph/column";
  ASSERT_TRUE(ReadDirect(file) == data);  // every unit cached
  const std::string patch = RandomBytes(100000, 15);
  int fd = ::open(file.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, patch.data(), patch.size(), 200000), static_cast<ssize_t>(patch.size()));
  const std::string tail = RandomBytes(5000, 16);  // and grow the file
  ASSERT_EQ(::pwrite(fd, tail.data(), tail.size(), static_cast<off_t>(data.size())), static_cast<ssize_t>(tail.size()));
  ::close(fd);
  data.replace(200000, patch.size(), patch);
  data += tail;
  EXPECT_TRUE(ReadDirect(file) == data);
  ASSERT_EQ(::truncate(file.c_str(), 300000), 0);
  data.resize(300000);
  EXPECT_TRUE(ReadDirect(file) == data);
}

TEST_F(CacheMount, SmallRandomReadsGoAroundTheCache) {
  const std::string data = RandomBytes(24 << 20, 17);
  Stripe("column", data);
  DoMount({"readahead=0"});
  // Far apart (more than the 8 MiB a stream may jump, see ReadStreams) and not at 0.
  const std::string file = mnt + "/graph/column";
  int fd = ::open(file.c_str(), O_RDONLY | O_DIRECT);
  ASSERT_GE(fd, 0);
  AlignedBuffer buf(4096);
  for (off_t off : {20 << 20, 4096 * 7, 10 << 20}) {
    ASSERT_EQ(::pread(fd, buf.data(), 4096, off), 4096);
    EXPECT_EQ(std::memcmp(buf.data(), data.data() + off, 4096), 0);
  }
  ::close(fd);
  auto s = Stats();
  EXPECT_EQ(DiskBytesRead(s), 3u * 4096) << "4 KiB random reads loaded whole units";
  EXPECT_EQ(s["cache"]["bypassed"].get<uint64_t>(), 3u);
}

}  // namespace
}  // namespace graphfs::testing
