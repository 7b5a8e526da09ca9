// What a graph file looks like now: size, mtime (ns) and an XXH3 over sampled
// windows — 16 windows of 64 KiB at fixed, evenly spaced, 4 KiB-aligned
// positions (the whole file if it is at most 1 MiB). Reading 1 MiB per file
// keeps the staleness check cheap, also through the mount.
#pragma once

#include <functional>
#include <string>

#include "chunkindex/index_format.h"
#include "common/result.h"
#include "grid/graph_file.h"

namespace graphfs::chunkindex {

inline constexpr int kSampleWindows = 16;
inline constexpr uint64_t kSampleWindowBytes = 64 << 10;

// `stubs` reads a striped graph's files through their parts (null: ordinary files).
Result<FileFingerprint> TakeFingerprint(const std::string& graph_dir, const std::string& name,
                                        const grid::StubFiles* stubs = nullptr);

// The same of a graph file open already (an ordinary file, a stub or an extent map: its bytes, the
// mtime of the file itself).
Result<FileFingerprint> FingerprintOf(const std::string& name, const grid::GraphFile& file);

// The same from any reader of the file's bytes (the daemon reads striped files through its
// own stripe map: the backing directory only holds their stubs).
using ReadAtFn = std::function<Status(uint64_t offset, uint64_t length, char* buf)>;
Result<FileFingerprint> FingerprintFrom(const std::string& name, uint64_t size, int64_t mtime_ns,
                                        const ReadAtFn& read_at);

// Empty if `now` matches `then`, else what changed ("column: size 100 -> 90").
std::string DescribeChange(const FileFingerprint& then, const FileFingerprint& now);

}  // namespace graphfs::chunkindex
