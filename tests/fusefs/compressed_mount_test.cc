// Compressed partition files through the mount (issue 18): whatever the codec, reads at any
// offset and length — pread, O_DIRECT, mmap, short reads at the end — give exactly the original
// bytes, decoded from units the disks serve compressed; stats count both sides; a flipped byte
// on a disk is EIO for the reads that need its unit, never wrong bytes. (Writes:
// striped_mount_test's random operations on a compressed file.)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "common/aligned_buffer.h"
#include "common/unique_fd.h"
#include "tests/fusefs/striped_fixture.h"

namespace graphfs::testing {
namespace {

// Weighted edge records sorted by source, like a preprocessed block: compressible.
std::string EdgeBytes(size_t edges, uint32_t seed) {
  std::string s(edges * 12, '\0');
  std::mt19937_64 rng(seed);
  for (size_t e = 0; e < edges; ++e) {
    const uint32_t source = static_cast<uint32_t>(e / 9), target = static_cast<uint32_t>(rng() % 50000);
    const float weight = static_cast<float>(rng() % 64);
    std::memcpy(&s[e * 12], &source, 4);
    std::memcpy(&s[e * 12 + 4], &target, 4);
    std::memcpy(&s[e * 12 + 8], &weight, 4);
  }
  return s;
}

class CompressedMount : public StripedMount {};

TEST_F(CompressedMount, ReadsGiveTheOriginalBytesAtAnyOffset) {
  const std::string data = EdgeBytes(300000, 1);  // 3.6 MB
  const std::vector<std::string> codecs = {"zstd:1", "lz4", "svb", "shuffle-zstd:1"};
  // Units not a multiple of 4 KiB (nor of the record): reads straddle them everywhere.
  for (size_t k = 0; k < codecs.size(); ++k) {
    ASSERT_NO_FATAL_FAILURE(Compress("f" + std::to_string(k), data, codecs[k], 100000 + 1200 * k));
  }
  DoMount({"cache_size=" + std::to_string(1 << 20)});  // smaller than a file: units are evicted and decoded again
  std::mt19937_64 rng(3);
  for (size_t k = 0; k < codecs.size(); ++k) {
    SCOPED_TRACE(codecs[k]);
    const std::string path = mnt + "/graph/f" + std::to_string(k);
    EXPECT_EQ(std::filesystem::file_size(path), data.size());
    EXPECT_TRUE(ReadFile(path) == data) << "whole-file read differs";
    UniqueFd fd(::open(path.c_str(), O_RDONLY));
    ASSERT_TRUE(fd.valid());
    for (int i = 0; i < 300; ++i) {
      const uint64_t off = rng() % (data.size() + 5000);
      const uint64_t len = rng() % (i % 10 == 0 ? 1 << 20 : 70000) + 1;
      std::string got(len, '\0');
      ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);  // the daemon, not the page cache, serves it
      const ssize_t n = ::pread(fd.get(), got.data(), len, static_cast<off_t>(off));
      const uint64_t want = off >= data.size() ? 0 : std::min<uint64_t>(len, data.size() - off);
      ASSERT_EQ(n, static_cast<ssize_t>(want)) << "pread " << off << "+" << len;
      if (want > 0) {
        ASSERT_TRUE(got.compare(0, want, data, off, want) == 0) << "pread " << off << "+" << len;
      }
    }
    // O_DIRECT: aligned buffers and offsets, the last read short at the end.
    UniqueFd direct(::open(path.c_str(), O_RDONLY | O_DIRECT));
    ASSERT_TRUE(direct.valid());
    AlignedBuffer buf(1 << 20);
    for (uint64_t off = 0; off < data.size(); off += 1 << 20) {
      const ssize_t n = ::pread(direct.get(), buf.data(), 1 << 20, static_cast<off_t>(off));
      const uint64_t want = std::min<uint64_t>(1 << 20, data.size() - off);
      ASSERT_EQ(n, static_cast<ssize_t>(want)) << "O_DIRECT at " << off;
      ASSERT_EQ(std::memcmp(buf.data(), data.data() + off, want), 0) << "O_DIRECT at " << off;
    }
    // mmap.
    void* map = ::mmap(nullptr, data.size(), PROT_READ, MAP_SHARED, fd.get(), 0);
    ASSERT_NE(map, MAP_FAILED);
    EXPECT_EQ(std::memcmp(map, data.data(), data.size()), 0) << "mmap differs";
    ::munmap(map, data.size());
  }
  const nlohmann::json c = Stats()["compressed"];
  EXPECT_GT(c["units_decoded"].get<uint64_t>(), 4u * 36) << c.dump();
  EXPECT_LT(c["bytes_from_disks"].get<uint64_t>(), c["bytes_decoded"].get<uint64_t>()) << c.dump();
  EXPECT_EQ(c["checksum_errors"].get<uint64_t>(), 0u);
  EXPECT_GT(c["decode_seconds"].get<double>(), 0.0);
  // The source directory holds stubs; the bytes are on the disks, compressed.
  for (size_t k = 0; k < codecs.size(); ++k) EXPECT_LT(ReadFile(graph + "/f" + std::to_string(k)).size(), 4096u);
}

TEST_F(CompressedMount, AFlippedByteOnADiskIsEioNeverWrongBytes) {
  const std::string data = EdgeBytes(100000, 2);  // 1.2 MB, units of 120 000 bytes
  ASSERT_NO_FATAL_FAILURE(Compress("column", data, "zstd:1", 120000));
  auto m = ReadManifest(graph + "/column");
  ASSERT_TRUE(m.ok() && m->has_value());
  // Byte 200 of the packed stream lies in the first frame (unit 0), in the first stripe unit.
  const std::string part = disks[(*m)->layout.first_disk] + "/parts/" + (*m)->file_id;
  std::string bytes = ReadFile(part);
  bytes[200] = static_cast<char>(bytes[200] ^ 0x01);
  WriteFile(part, bytes);
  DoMount();
  UniqueFd fd(::open((mnt + "/graph/column").c_str(), O_RDONLY));
  ASSERT_TRUE(fd.valid());
  std::string got(1000, '\0');
  errno = 0;
  EXPECT_EQ(::pread(fd.get(), got.data(), got.size(), 5000), -1) << "read of the damaged unit";
  EXPECT_EQ(errno, EIO);
  // Other units read fine.
  ASSERT_EQ(::pread(fd.get(), got.data(), got.size(), 500000), 1000);
  EXPECT_EQ(got, data.substr(500000, 1000));
  const nlohmann::json c = Stats()["compressed"];
  EXPECT_GE(c["checksum_errors"].get<uint64_t>(), 1u) << c.dump();
  const std::string log = ReadFile(mount.log());
  EXPECT_NE(log.find("compressed unit 0 "), std::string::npos) << log;
  EXPECT_NE(log.find("on disk " + std::to_string((*m)->layout.first_disk)), std::string::npos) << log;
  EXPECT_NE(log.find("checksum"), std::string::npos) << log;
}

}  // namespace
}  // namespace graphfs::testing
