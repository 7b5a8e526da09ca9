#include "chunkindex/fingerprint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <vector>

#include "common/unique_fd.h"
#include "grid/graph_file.h"

namespace graphfs::chunkindex {

Result<FileFingerprint> TakeFingerprint(const std::string& graph_dir, const std::string& name,
                                        const grid::StubFiles* stubs) {
  const std::string path = graph_dir + "/" + name;
  // A FIFO or device in a graph file's place must not block the staleness check; an extent
  // map (a graph version's `column`) is fingerprinted by its bytes, with the map's mtime.
  auto file = grid::GraphFile::Open(path, stubs);
  if (!file.ok()) return file.error();
  return FingerprintOf(name, *file);
}

Result<FileFingerprint> FingerprintOf(const std::string& name, const grid::GraphFile& file) {
  const struct stat& st = file.st();
  return FingerprintFrom(name, file.size(), static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                         [&](uint64_t offset, uint64_t length, char* buf) { return file.ReadExact(buf, length, offset); });
}

Result<FileFingerprint> FingerprintFrom(const std::string& name, uint64_t size, int64_t mtime_ns,
                                        const ReadAtFn& read_at) {
  FileFingerprint f;
  f.name = name;
  f.size = size;
  f.mtime_ns = mtime_ns;

  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) return Error(ENOMEM, "XXH3_createState");
  XXH3_64bits_reset(state);
  std::vector<char> buffer(kSampleWindowBytes);
  auto hash_range = [&](uint64_t offset, uint64_t length) -> Status {
    while (length > 0) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(length, buffer.size()));
      GRAPHFS_RETURN_IF_ERROR(read_at(offset, n, buffer.data()));
      XXH3_64bits_update(state, buffer.data(), n);
      offset += n;
      length -= n;
    }
    return Status::Ok();
  };
  Status s;
  if (f.size <= kSampleWindows * kSampleWindowBytes) {
    s = hash_range(0, f.size);
  } else {
    const uint64_t last = f.size - kSampleWindowBytes;
    for (int k = 0; k < kSampleWindows && s.ok(); ++k) {
      uint64_t at = last / (kSampleWindows - 1) * static_cast<uint64_t>(k);
      at = at / 4096 * 4096;
      if (k == kSampleWindows - 1) at = last;  // always cover the tail
      s = hash_range(at, kSampleWindowBytes);
    }
  }
  f.sample_hash = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  if (!s.ok()) return s.error();
  return f;
}

std::string DescribeChange(const FileFingerprint& then, const FileFingerprint& now) {
  if (then.size != now.size) {
    return then.name + ": size was " + std::to_string(then.size) + " B, is " + std::to_string(now.size) + " B";
  }
  if (then.mtime_ns != now.mtime_ns) return then.name + ": modification time changed";
  if (then.sample_hash != now.sample_hash) return then.name + ": checksum of sampled blocks changed";
  return "";
}

}  // namespace graphfs::chunkindex
