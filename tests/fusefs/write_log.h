// What a writer killed with its daemon may have left: a log of its writes and fsyncs through the
// mount, and the check that every fsync'ed byte survived (crash tests of plain, striped,
// compressed and parity files).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <random>
#include <string>
#include <vector>

#include "tests/testutil/file_bytes.h"

namespace graphfs::testing {

// Writes `bytes` at `at` through the mount's descriptor `fd` and, written whole, to the plain
// twin's `plain` (tests that compare a file on the mount with a plain one given the same writes).
// The errno of the mount's write, or 0 (EBADF: the plain write failed).
inline int WriteBoth(int fd, int plain, uint64_t at, const std::string& bytes) {
  const ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(at));
  if (n < 0) return errno;
  if (static_cast<size_t>(n) != bytes.size()) return EIO;
  if (::pwrite(plain, bytes.data(), bytes.size(), static_cast<off_t>(at)) != static_cast<ssize_t>(bytes.size()))
    return EBADF;
  return 0;
}

inline constexpr uint64_t kSpan = 3 << 20;  // writes land in [0, kSpan): overwrites and appends

// One writer's view of its file: what fsync has made durable, and the writes since.
struct WriteLog {
  struct Pending {
    uint64_t offset;
    std::string bytes;
  };
  std::string durable;           // content as of the last successful fsync
  std::string current;           // content including later writes
  std::vector<Pending> pending;  // writes after that fsync (may or may not have survived)
  int acked = 0;                 // successful fsyncs
};

// Writes random blocks to `path` and fsyncs every few writes until a call fails (the
// daemon died) or `stop` is set. `log` ends up describing what must have survived.
// `known`: the file's content, when the caller knows it (else read through the mount first).
inline void WriteUntilFailure(const std::string& path, uint32_t seed, const std::atomic<bool>& stop, WriteLog* log,
                       const std::string* known = nullptr) {
  // What the caller knows is the log's start even when the open fails (the daemon killed before
  // it returned — under TSan an open of a degraded file can outlast the kill's delay): the file
  // is then as known, not empty.
  if (known != nullptr) log->durable = log->current = *known;
  int fd = ::open(path.c_str(), O_RDWR);
  if (fd < 0) return;
  if (known == nullptr) log->durable = log->current = ReadFile(path);
  std::mt19937 rng(seed);
  for (int i = 0; !stop.load(); ++i) {
    const uint64_t len = 4096 + rng() % (256 << 10);
    const uint64_t off = rng() % (kSpan - len);
    // Recorded before the call: a write the kill interrupts may have landed in part.
    log->pending.push_back({off, RandomBytes(len, rng())});
    const std::string& bytes = log->pending.back().bytes;
    if (log->current.size() < off + len) log->current.resize(off + len, '\0');
    log->current.replace(off, len, bytes);
    if (::pwrite(fd, bytes.data(), len, static_cast<off_t>(off)) != static_cast<ssize_t>(len)) break;
    if (i % 4 == 3) {
      if (::fsync(fd) != 0) break;
      log->durable = log->current;
      log->pending.clear();
      ++log->acked;
    }
  }
  ::close(fd);
}

// Every byte is the durable one or one a later write put there; the size is at least the
// durable size and no more than the writes reached.
inline void ExpectSurvived(const std::string& what, const std::string& now, const WriteLog& log) {
  ASSERT_GE(now.size(), log.durable.size()) << what << ": an fsync'ed size was lost";
  ASSERT_LE(now.size(), log.current.size()) << what << ": larger than anything written";
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; i < log.durable.size(); ++i) {
    if (now[i] == log.durable[i]) continue;
    bool later = false;
    for (const auto& p : log.pending)
      later |= i >= p.offset && i < p.offset + p.bytes.size() && p.bytes[i - p.offset] == now[i];
    if (!later && bad++ == 0) first_bad = i;
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " fsync'ed bytes differ, the first at offset " << first_bad;
}

}  // namespace graphfs::testing
