// Internals shared by the files of the offline conversion tools (restripe.cc: striping and
// unstriping; restripe_compress.cc: compressing): the file being converted (its progress line is
// progress_line.h's), the pending records that make a killed run resumable, and the checks and
// steps both use. Not a public header.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/size_parse.h"
#include "common/unique_fd.h"
#include "striping/disk_set.h"
#include "striping/manifest.h"
#include "striping/progress_line.h"
#include "striping/restripe.h"
#include "striping/stripe_map.h"

namespace graphfs::restripe_detail {

using json = nlohmann::json;

struct Target {
  std::string dir;   // graph directory
  std::string name;  // file name inside it
  std::string path() const { return dir + "/" + name; }
};

// What a killed run of graphfs-stripe leaves for the next one (GRAPH/.graphfs/pending-*/NAME.json):
// the id of the parts it writes, the source it read (size, mtime, inode: a changed source makes
// the record stale) and the stripe layout. The kinds below add what they need to resume.
struct PendingRecord {
  std::string id;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t ino = 0;
  uint64_t unit = 0;
  uint32_t first = 0;
  json ToJson() const {
    return {{"id", id}, {"size", size}, {"mtime_ns", mtime_ns}, {"ino", ino}, {"unit", unit}, {"first", first}};
  }
  void FromJson(const json& j) {  // throws on a missing or mistyped field
    id = j.at("id");
    size = j.at("size");
    mtime_ns = j.at("mtime_ns");
    ino = j.at("ino");
    unit = j.at("unit");
    first = j.at("first");
  }
  bool SameSource(const PendingRecord& o) const {
    return size == o.size && mtime_ns == o.mtime_ns && ino == o.ino && unit == o.unit;
  }
};

// A pending-compress record lists every frame made durable: 16 bytes of JSON per unit, and then some.
inline constexpr size_t kCompressRecordLimit = 256u << 20;

// Parses a record of kind R (its FromJson), or nullopt if it is damaged or of another kind.
template <typename R>
std::optional<R> ParseRecord(const std::string& text) {
  try {
    R r;
    r.FromJson(json::parse(text));
    return r;
  } catch (...) {
    return std::nullopt;
  }
}

// Splits PATH into the graph directory and the files to look at (restripe.cc).
Result<std::pair<std::string, std::vector<std::string>>> ListTargets(const std::string& path);
int64_t MtimeNs(const struct stat& st);
Status FsyncDir(const std::string& dir);
// Copies ownership, mode, user xattrs (not ours) and times from `from` to `to_fd`.
Status CopyMetadata(const std::string& from, const struct stat& st, int to_fd);
// GRAPH/.graphfs/pending-KIND: the records of killed runs.
std::string PendingDir(const std::string& graph_dir, const char* kind);
// Creates a pending-record directory, and removes the temporary files that atomic record
// writes of a killed run left in it.
Status EnsurePendingDir(const std::string& dir);
// Hash of a striped file, read back from its parts after dropping them from the page cache.
Result<uint64_t> HashParts(const DiskSet& disks, const StripeManifest& m, std::vector<char>& buf);
Result<uint64_t> HashFile(int fd, uint64_t size, std::vector<char>& buf, const std::string& what);
// The stub carrying `m` replaces the plain file of `t` (whose stat was `st`) in one rename,
// after it is durable.
Status ReplaceWithStub(const Target& t, const struct stat& st, const StripeManifest& m);
// The bytes of a file being converted: its plain file, or, for a striped file converted in place
// (`old`), the data units of its parts.
struct ConvertSource {
  UniqueFd fd;  // the plain file, or the stub
  struct stat st {};
  uint64_t size = 0;
  std::optional<StripeMap> map;  // a striped source's
  std::vector<UniqueFd> parts;
  static Result<ConvertSource> Open(const DiskSet& disks, const Target& t, const std::optional<StripeManifest>& old);
  // [off, off + len) into `to`; EIO when a plain file shrank meanwhile.
  Status Read(const DiskSet& disks, uint64_t off, uint64_t len, char* to, const std::string& path) const;
};

// The new copy `m` takes the place of `t` (`size` bytes; `st` the stat of its source when it was
// opened): a plain source by ReplaceWithStub; a striped one (`old`, converted in place) by its
// stub's manifest switched in one fsetxattr, made durable, then its old parts removed. EAGAIN
// ("PATH changed while DOING; run again") when the source changed meanwhile: the original is kept.
// In place, CrashPoint(`switched`) once the stub names the copy and CrashPoint(`old_removed`) once
// the old parts are gone (common/crash_point.h; empty: none).
Status SwitchToCopy(const DiskSet& disks, const Target& t, const struct stat& st, uint64_t size,
                    const std::optional<StripeManifest>& old, const StripeManifest& m, const std::string& doing,
                    std::string_view switched = {}, std::string_view old_removed = {});

// restripe_compress.cc: compresses one file — plain, or striped as it is (`old`) — into a
// packed stream; and finishes what killed compression runs left behind a compressed file.
// `unit`: the stripe unit of the packed stream. kDeclined: `auto` found raw bytes faster to
// deliver than any codec (the reason is in report.notes); nothing was written.
enum class CompressOutcome { kCompressed, kDeclined };
Result<CompressOutcome> CompressOne(const DiskSet& disks, const Target& t, const StripeRequest& req, uint64_t unit,
                                   const std::optional<StripeManifest>& old, std::vector<char>& buf,
                                   ConvertReport& report);
void FinishPendingCompression(const DiskSet& disks, const Target& t, const StripeManifest& now);

// Receives a file's bytes in order: `len` bytes at file offset `off`.
using DataSink = std::function<Status(uint64_t off, const char* data, uint64_t len)>;
// unstripe_parity.cc: the data of a file with sums, read row by row from its parts with every
// block verified and what is bad or on a missing disk rebuilt from parity (up to K units per
// block); `rebuilt_blocks` counts the data blocks rebuilt. EIO naming the row and disks beyond K.
Status CopyThroughParity(const DiskSet& disks, const StripeManifest& m, const DataSink& out, uint64_t& rebuilt_blocks);
// The same for a compressed file: its packed stream read so (the directory, then every frame in
// order), each unit decoded after its frame's own checksum matched, and handed to `out` whole.
Status CopyPackedThroughParity(const DiskSet& disks, const StripeManifest& m, const DataSink& out,
                               uint64_t& rebuilt_blocks);

}  // namespace graphfs::restripe_detail
