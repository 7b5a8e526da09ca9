// graphfs_client.hpp: a header-only client for graphfs's control directory
// MOUNT/.graphfs/jobs/ (the protocol table is in graphfs's README.md, "The
// control directory"). An engine registers a job on a graph, says which
// vertices are active, and reads logical partitions (LPs): files holding only
// the chunks of `column` that some active vertex of some job needs, handed out
// in the order that serves all concurrent jobs with one load per chunk.
//
// Self-contained on purpose (POSIX, the C++17 standard library and one graphfs
// header, common/jobs_protocol.h: the protocol's defaults, shared with the daemon
// and as self-contained), so an outside engine can copy these two files (the
// package installs both, graphfs/common/ beside this one). Expected
// errors are values (Status, Result<T>), never exceptions, and every message
// names the job, the control file and the errno text, the daemon's reason
// when it gave one (status's last_error), and where to look further:
//   graphfs job bfs-123-0: write active: Invalid argument: active: ... (see /mnt/.graphfs/jobs/bfs-123-0/status)
//
// Use, one Job per process and graph:
//   auto job = graphfs_client::Job::Init("/mnt/graphs/twitter", Job::kDefaultPartitionBytes);
//   if (!job.ok()) fail(job.error().message);
//   each iteration:
//     job->SetActive(words, job->vertices());   // or job->SetAllActive()
//     for (;;) {
//       auto lp = job->Next();                  // blocks until an LP for us is ready
//       if (!lp.ok()) fail(...);
//       if (lp->end) break;                     // every active chunk was handed out
//       for (const Piece& p : lp->pieces)       // the view's bytes, in memory shared by
//         use(p.data, p.length);                //   every job: no copy. Concatenated they are
//                                               //   edge records; a record may be cut between
//                                               //   two pieces (where the daemon's blocks meet)
//       if (!lp->mapped()) pread(lp->fd(), ...) over [0, lp->bytes) instead;
//         chunks hold edges of inactive sources too: filter by your own active set
//       job->Done();                            // others may be waiting for this LP
//                                               // (`next` is held open read-write: its answer
//                                               //  carries the LP's pieces and it takes "done",
//                                               //  two requests an LP)
//
// The pieces point into the graph's LP memory (MOUNT/.graphfs/jobs/NAME/memory, mapped
// read-only once per job): valid until the next Next() or Done(). Where it cannot be mapped
// (no FUSE passthrough: an older kernel, a daemon without CAP_SYS_ADMIN, passthrough=off),
// or with GRAPHFS_LP_READ=1 in the environment, Next() opens lp-SEQ instead, which the
// daemon serves with one copy per read.
//     }
//   ~Job() removes the job; so does the daemon when the process dies (lease).
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/jobs_protocol.h"  // found beside this file first: graphfs/common/ when installed

namespace graphfs_client {

// ---- errors as values ----

struct Error {
  int code = 0;         // errno value (EPROTO for answers the client cannot parse)
  std::string message;  // says which job, which file and why
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), failed_(true) {}
  static Status Ok() { return Status(); }
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool failed_ = false;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// ---- an owned file descriptor ----

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  bool valid() const { return fd_ >= 0; }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// ---- what Next() hands out ----

// One line of lp-SEQ.map: `length` bytes of `column` at `column_offset` (in chunk
// CHUNK_ID: all of it, or a run of its sources' edges), stored at `lp_offset` in the LP.
struct ChunkExtent {
  uint64_t chunk_id = 0;
  uint64_t column_offset = 0;
  uint64_t length = 0;
  uint64_t lp_offset = 0;
};

// Bytes of the job's view of an LP in shared memory: `length` bytes of `column` at
// `column_offset`.
struct Piece {
  const char* data = nullptr;
  uint64_t length = 0;
  uint64_t column_offset = 0;
};

struct Partition {
  bool end = false;  // the iteration is over: no LP, nothing to read
  uint64_t seq = 0;  // lp-SEQ
  std::string path;  // MOUNT/.graphfs/jobs/NAME/lp-SEQ
  uint64_t bytes = 0;
  // A turn at the cores (Job::TakeTurns): call Job::Yield once done computing on this LP.
  bool turn = false;
  std::vector<ChunkExtent> chunks;
  std::vector<Piece> pieces;  // the view in shared memory, in view order (mapped())
  Fd file;  // otherwise: the LP opened read-only; closed with the Partition

  bool mapped() const { return !end && !file.valid(); }
  int fd() const { return file.get(); }
};

// lp-SEQ.pieces, as the daemon writes it (little-endian u64s): "GFSPIEC1", the piece
// count, the id of the shared memory (0: this LP is not in it), the view's bytes; then
// per piece its offset in `memory`, its length and its offset in `column`.
struct PiecesFile {
  uint64_t memory_id = 0;
  uint64_t view_bytes = 0;
  struct Entry {
    uint64_t memory_offset = 0;
    uint64_t length = 0;
    uint64_t column_offset = 0;
  };
  std::vector<Entry> entries;
};

// ---- pure helpers (no I/O; exposed for tests and for engines with their own I/O) ----

namespace detail {

inline bool ParseU64(std::string_view digits, uint64_t* out) {
  if (digits.empty() || digits.size() > 20) return false;
  uint64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - d) / 10) return false;
    value = value * 10 + d;
  }
  *out = value;
  return true;
}

inline std::string Quote(std::string_view text) {
  std::string out = "'";
  for (char c : text.substr(0, 80)) {
    if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", static_cast<unsigned char>(c));
      out += hex;
    } else {
      out += c;
    }
  }
  if (text.size() > 80) out += "...";
  return out + "'";
}

inline bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace detail

// The answer of a read of `next`: "lp-SEQ\n" or "end\n" (the newline is
// optional). Fills end and seq only.
inline Result<Partition> ParseNext(std::string_view answer) {
  std::string_view text = answer;
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  Partition p;
  if (text == "end") {
    p.end = true;
    return Result<Partition>(std::move(p));
  }
  if (text.substr(0, 3) == "lp-" && detail::ParseU64(text.substr(3), &p.seq)) return Result<Partition>(std::move(p));
  return Error{EPROTO, "unexpected answer " + detail::Quote(answer) + " (want lp-SEQ or end)"};
}

namespace detail {

// The answer of a read of `next` opened read-write: "lp-SEQ BYTES\n", or "lp-SEQ BYTES turn\n" for
// a job that takes turns (Job::TakeTurns), and then the BYTES of lp-SEQ.pieces. *header becomes
// "lp-SEQ", *carried those bytes, *turn whether it is a turn; false when the answer is not of that
// form (as "end\n" is not) or its length is not what it says.
inline bool SplitNextAnswer(std::string_view answer, std::string_view* header, std::string_view* carried,
                            bool* turn = nullptr) {
  const size_t eol = answer.find('\n');
  if (eol == std::string_view::npos) return false;
  std::string_view line = answer.substr(0, eol);
  const bool is_turn = line.size() > 5 && line.substr(line.size() - 5) == " turn";
  if (is_turn) line.remove_suffix(5);
  const size_t space = line.find(' ');
  uint64_t bytes = 0;
  if (space == std::string_view::npos || !ParseU64(line.substr(space + 1), &bytes) || bytes != answer.size() - eol - 1)
    return false;
  *header = line.substr(0, space);
  *carried = answer.substr(eol + 1);
  if (turn != nullptr) *turn = is_turn;
  return true;
}

}  // namespace detail

// lp-SEQ.map: one extent per line, "CHUNK_ID COLUMN_OFFSET LENGTH LP_OFFSET",
// decimal, separated by blanks: a whole chunk, or a run of it holding only this job's
// active sources' edges (a chunk may have several lines). Blank lines are ignored.
inline Result<std::vector<ChunkExtent>> ParseMap(std::string_view text) {
  std::vector<ChunkExtent> chunks;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    uint64_t field[4];
    size_t fields = 0;
    bool bad = false;
    size_t i = 0;
    while (i < line.size()) {
      if (detail::IsSpace(line[i])) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < line.size() && !detail::IsSpace(line[j])) ++j;
      if (fields == 4 || !detail::ParseU64(line.substr(i, j - i), &field[fields])) {
        bad = true;
        break;
      }
      ++fields;
      i = j;
    }
    if (fields == 0 && !bad) continue;  // blank line
    if (bad || fields != 4) {
      return Error{EPROTO, "line " + std::to_string(line_no) + ": want CHUNK_ID COLUMN_OFFSET LENGTH LP_OFFSET, got " +
                               detail::Quote(line)};
    }
    chunks.push_back(ChunkExtent{field[0], field[1], field[2], field[3]});
  }
  return Result<std::vector<ChunkExtent>>(std::move(chunks));
}

// Whether every piece lies in the `memory_bytes` of shared memory (a file whose LP is not in
// shared memory, memory_id 0, always does: its offsets are not used).
inline Status CheckPiecesInMemory(const PiecesFile& pieces, uint64_t memory_bytes) {
  if (pieces.memory_id == 0) return Status::Ok();
  for (size_t i = 0; i < pieces.entries.size(); ++i) {
    const PiecesFile::Entry& e = pieces.entries[i];
    if (e.memory_offset > memory_bytes || e.length > memory_bytes - e.memory_offset)
      return Error{EPROTO, "piece " + std::to_string(i) + " at " + std::to_string(e.memory_offset) + "+" +
                               std::to_string(e.length) + " lies past the " + std::to_string(memory_bytes) +
                               "-byte shared memory"};
  }
  return Status::Ok();
}

// lp-SEQ.pieces (the layout is at PiecesFile); with `memory_bytes`, every piece checked to lie
// in that much shared memory (CheckPiecesInMemory).
inline Result<PiecesFile> ParsePieces(std::string_view raw, uint64_t memory_bytes = ~uint64_t{0}) {
  auto word = [&](size_t k) {
    uint64_t w = 0;
    for (int b = 7; b >= 0; --b) w = (w << 8) | static_cast<unsigned char>(raw[k * 8 + static_cast<size_t>(b)]);
    return w;
  };
  if (raw.size() < 32 || raw.substr(0, 8) != "GFSPIEC1")
    return Error{EPROTO, "not a pieces file (" + std::to_string(raw.size()) + " bytes, want the GFSPIEC1 header)"};
  PiecesFile out;
  const uint64_t count = word(1);
  out.memory_id = word(2);
  out.view_bytes = word(3);
  if (raw.size() % 8 != 0 || (raw.size() / 8 - 4) / 3 != count || (raw.size() / 8 - 4) % 3 != 0)
    return Error{EPROTO, "pieces file of " + std::to_string(raw.size()) + " bytes does not hold the " +
                             std::to_string(count) + " pieces its header counts"};
  uint64_t total = 0;
  out.entries.reserve(static_cast<size_t>(count));
  for (size_t i = 0; i < count; ++i) {
    PiecesFile::Entry e{word(4 + 3 * i), word(5 + 3 * i), word(6 + 3 * i)};
    total += e.length;
    out.entries.push_back(e);
  }
  if (total != out.view_bytes)
    return Error{EPROTO, "pieces add up to " + std::to_string(total) + " bytes, the header says " +
                             std::to_string(out.view_bytes)};
  if (Status inside = CheckPiecesInMemory(out, memory_bytes); !inside.ok()) return inside.error();
  return Result<PiecesFile>(std::move(out));
}

// What `active` must receive: exactly ceil(V/8) bytes, bit v = byte[v/8] >>
// (v%8) & 1, i.e. the little-endian bytes of the words (whatever the host's
// byte order), truncated, with the bits past V cleared (the daemon refuses them).
inline std::string ActiveBitmapBytes(const uint64_t* words, uint64_t vertices) {
  std::string bytes(static_cast<size_t>((vertices + 7) / 8), '\0');
  for (size_t k = 0; k < bytes.size(); ++k) {
    bytes[k] = static_cast<char>((words[k / 8] >> (8 * (k % 8))) & 0xff);
  }
  if (vertices % 8 != 0) bytes.back() = static_cast<char>(bytes.back() & ((1u << (vertices % 8)) - 1));
  return bytes;
}

namespace detail {

// Where the value of top-level field `key` starts in a JSON object, or npos.
// A minimal scan, not a JSON parser: it skips strings and tracks nesting so
// that a nested field of the same name (say, active.vertices) is not taken.
inline size_t FindTopLevel(std::string_view json, std::string_view key) {
  int depth = 0;
  size_t i = 0;
  while (i < json.size()) {
    const char c = json[i];
    if (c == '"') {
      size_t j = i + 1;
      while (j < json.size() && json[j] != '"') j += json[j] == '\\' ? 2 : 1;
      if (j >= json.size()) return std::string_view::npos;  // unterminated string
      const std::string_view name = json.substr(i + 1, j - i - 1);
      i = j + 1;
      size_t k = i;
      while (k < json.size() && IsSpace(json[k])) ++k;
      if (depth != 1 || name != key || k >= json.size() || json[k] != ':') continue;
      ++k;
      while (k < json.size() && IsSpace(json[k])) ++k;
      return k;
    }
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    ++i;
  }
  return std::string_view::npos;
}

}  // namespace detail

// The top-level "vertices" field of `status` (JSON): the graph's V.
inline Result<uint64_t> ParseStatusVertices(std::string_view json) {
  const size_t k = detail::FindTopLevel(json, "vertices");
  if (k == std::string_view::npos) return Error{EPROTO, "no top-level \"vertices\" field"};
  size_t end = k;
  while (end < json.size() && json[end] >= '0' && json[end] <= '9') ++end;
  size_t after = end;
  while (after < json.size() && detail::IsSpace(json[after])) ++after;
  uint64_t value = 0;
  if (!detail::ParseU64(json.substr(k, end - k), &value) ||
      (after < json.size() && json[after] != ',' && json[after] != '}')) {
    return Error{EPROTO, "\"vertices\" is not a non-negative integer"};
  }
  return value;
}

// A top-level string field of `status`, e.g. "last_error"; empty if absent
// or not a string. Escapes are decoded; non-ASCII \u escapes become '?'.
inline std::string ParseStatusString(std::string_view json, std::string_view key) {
  size_t k = detail::FindTopLevel(json, key);
  if (k == std::string_view::npos || k >= json.size() || json[k] != '"') return "";
  std::string out;
  for (++k; k < json.size() && json[k] != '"'; ++k) {
    if (json[k] != '\\' || k + 1 >= json.size()) {
      out += json[k];
      continue;
    }
    const char e = json[++k];
    if (e == 'n') {
      out += '\n';
    } else if (e == 't') {
      out += '\t';
    } else if (e == 'r' || e == 'b' || e == 'f') {
      out += ' ';
    } else if (e == 'u' && k + 4 < json.size()) {
      const unsigned long code = std::strtoul(std::string(json.substr(k + 1, 4)).c_str(), nullptr, 16);
      out += code < 0x80 ? static_cast<char>(code) : '?';
      k += 4;
    } else {
      out += e;  // \" \\ \/
    }
  }
  return out;
}

// The mount root above an absolute directory: the nearest ancestor (or the
// directory itself) that has .graphfs/jobs/.
inline Result<std::string> FindMount(const std::string& dir) {
  if (dir.empty() || dir[0] != '/') return Error{EINVAL, "graphfs: " + dir + " is not an absolute path"};
  std::string current = dir;
  while (current.size() > 1 && current.back() == '/') current.pop_back();
  for (;;) {
    const std::string probe = (current == "/" ? std::string() : current) + "/.graphfs/jobs";
    struct stat st;
    if (::stat(probe.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return current;
    if (current == "/") break;
    const size_t slash = current.rfind('/');
    current = slash == 0 ? std::string("/") : current.substr(0, slash);
  }
  return Error{ENOENT, "graphfs: " + dir + " is not on a graphfs mount (no .graphfs/jobs/ in it or any parent)"};
}

// ---- the job ----

class Job {
 public:
  // The LP size the protocol's users ask for unless told otherwise: the protocol's default, which
  // the daemon gives a job that writes no partition_size too (common/jobs_protocol.h). The
  // engines' apps start from it (AppConfig::partition_bytes); a test checks the READMEs say it.
  static constexpr uint64_t kDefaultPartitionBytes = graphfs::jobs_protocol::kDefaultPartitionBytes;

  // Registers a job on `graph_dir` (a directory inside a graphfs mount, made
  // absolute and resolved here) with LPs of `partition_bytes`. An empty name
  // means "<program>-<pid>-<counter>". The graph must be indexed
  // (graphfs-index): the daemon refuses it otherwise, and Init says so.
  static Result<Job> Init(const std::string& graph_dir, uint64_t partition_bytes, std::string name = "") {
    if (partition_bytes == 0) return Error{EINVAL, "graphfs: the partition size must be > 0"};
    char* real = ::realpath(graph_dir.c_str(), nullptr);
    if (real == nullptr) {
      const int code = errno;
      return Error{code, "graphfs: " + graph_dir + ": " + std::strerror(code)};
    }
    const std::string dir(real);
    std::free(real);
    Result<std::string> mount = FindMount(dir);
    if (!mount.ok()) return mount.error();

    Job job;
    job.mount_ = *mount;
    job.graph_ = dir == *mount ? std::string(".") : dir.substr(mount->size() == 1 ? 1 : mount->size() + 1);
    const bool default_name = name.empty();
    // A default name can collide with a job of a process that had our pid
    // (and died with its directory still there): take the next counter.
    for (int attempt = 0;; ++attempt) {
      if (default_name) name = DefaultName();
      const std::string path = *mount + "/.graphfs/jobs/" + name;
      if (::mkdir(path.c_str(), 0755) == 0) {
        job.name_ = name;
        job.dir_ = path;
        break;
      }
      const int code = errno;
      if (code == EEXIST && default_name && attempt < 1000) continue;
      return Error{code, "graphfs: mkdir " + path + ": " + std::strerror(code)};
    }
    // From here on an error return destroys `job`, which removes the directory.
    Status s = job.WriteControl("graph", job.graph_ + "\n");
    if (s.ok()) s = job.WriteControl("partition_size", std::to_string(partition_bytes) + "\n");
    if (!s.ok()) return s.error();
    // Held open for the job's life: if the process dies, the kernel closes it
    // and the daemon drops the job, so no other job waits on a dead one.
    Result<Fd> lease = job.OpenControl("lease");
    if (!lease.ok()) return lease.error();
    job.lease_ = std::move(*lease);
    Result<std::string> status = job.ReadControl("status");
    if (!status.ok()) return status.error();
    Result<uint64_t> vertices = ParseStatusVertices(*status);
    if (!vertices.ok()) return job.Fail(vertices.error().code, "read status: " + vertices.error().message);
    job.vertices_ = *vertices;
    // Read-write, `next` answers with the LP's pieces and takes "done": two requests an LP. A
    // daemon older than that lets it be opened read-only alone (EACCES).
    Result<Fd> next = job.OpenControl("next", O_RDWR);
    job.next_carries_pieces_ = next.ok();
    if (!next.ok() && next.error().code == EACCES) next = job.OpenControl("next");
    if (!next.ok()) return next.error();
    job.next_ = std::move(*next);
    const char* read_lps = std::getenv("GRAPHFS_LP_READ");
    job.read_lps_ = read_lps != nullptr && std::string_view(read_lps) == "1";
    return Result<Job>(std::move(job));
  }

  Job(Job&& other) noexcept { *this = std::move(other); }
  Job& operator=(Job&& other) noexcept {
    if (this != &other) {
      Remove();
      name_ = std::move(other.name_);
      dir_ = std::exchange(other.dir_, std::string());
      mount_ = std::move(other.mount_);
      graph_ = std::move(other.graph_);
      vertices_ = other.vertices_;
      lease_ = std::move(other.lease_);
      next_ = std::move(other.next_);
      next_carries_pieces_ = other.next_carries_pieces_;
      read_lps_ = other.read_lps_;
      memory_ = std::move(other.memory_);
      memory_base_ = std::exchange(other.memory_base_, nullptr);
      memory_bytes_ = std::exchange(other.memory_bytes_, 0);
      memory_id_ = std::exchange(other.memory_id_, 0);
    }
    return *this;
  }
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  ~Job() { Remove(); }

  const std::string& name() const { return name_; }
  const std::string& dir() const { return dir_; }      // MOUNT/.graphfs/jobs/NAME
  const std::string& mount() const { return mount_; }  // the mount root
  const std::string& graph() const { return graph_; }  // relative to the mount root
  uint64_t vertices() const { return vertices_; }      // V of the graph, from `status`

  // The active vertices of the coming iteration: bit v = words[v/64] >> (v%64) & 1.
  // `vertices` must be the graph's V. Committed by the daemon at close.
  Status SetActive(const uint64_t* words, uint64_t vertices) {
    if (vertices != vertices_) {
      return Fail(EINVAL, "write active: a bitmap of " + std::to_string(vertices) + " vertices, the graph has " +
                              std::to_string(vertices_));
    }
    return WriteControl("active", ActiveBitmapBytes(words, vertices));
  }

  // Every vertex active (PageRank-style iterations).
  Status SetAllActive() { return WriteControl("active.list", "all\n"); }

  // What the job's LPs hold from now on (from its next active set): only its active sources'
  // edges (false, the default), or the whole chunks that have an active source (true) — for
  // an engine that applies loaded edges again (reentry) and so has use for the other sources'
  // edges of a chunk.
  Status SetWholeChunks(bool whole) { return WriteControl("granularity", whole ? "chunk\n" : "vertex\n"); }

  // How many LPs the job may hold at once: 1 (the default) or 2. With 2, Next() ends the job's
  // use of the LP returned before the last one, not of the last: a caller may ask for LP k+1 on
  // one thread while others still read LP k (keep both Partitions). A daemon older than this
  // has no `hold` file (ENOENT).
  Status SetHold(unsigned lps) { return WriteControl("hold", std::to_string(lps) + "\n"); }

  // Takes turns at the cores with the mount's other jobs that do (`compute_slots=`): when more
  // of them would compute than the mount has turns, an LP is answered only when a turn is free,
  // marked Partition::turn, and the job calls Yield() when it is done computing on it. Only for
  // a caller that does: a turn never yielded holds the others back until the daemon takes it
  // back (seconds). Off on a mount without `compute_slots=`; a daemon older than turns refuses
  // the word (EINVAL): nothing changes then.
  Status TakeTurns() {
    if (!next_carries_pieces_) return Error{EINVAL, "turns need `next` opened read-write"};
    return WriteNext("turns\n");
  }

  // Done computing on the LP Next() answered as a turn (Partition::turn): the turn goes to the
  // job that has waited longest. Safe while another thread waits in Next().
  Status Yield() { return WriteNext("yield\n"); }

  // Blocks until the next LP holding chunks active for this job is ready
  // (or the iteration is over: Partition::end). Reading `next` again also
  // ends the job's use of the LP it held (with SetHold(2): of the one before it). `read_map` false leaves
  // Partition::chunks empty: a vertex-granular LP's map has a line per run, and
  // an engine that only streams the LP need not read it.
  Result<Partition> Next(bool read_map = true) {
    Result<std::string> answer = ReadNextAnswer();
    if (!answer.ok()) return answer.error();
    std::string_view header = *answer, carried;
    bool turn = false;
    const bool carries = next_carries_pieces_ && detail::SplitNextAnswer(*answer, &header, &carried, &turn);
    if (next_carries_pieces_ && !carries && header.substr(0, 3) == "lp-")
      return Fail(EPROTO, "read next: " + detail::Quote(*answer) + " carries no pieces (want lp-SEQ BYTES)");
    Result<Partition> lp = ParseNext(header);
    if (!lp.ok()) return Fail(lp.error().code, "read next: " + lp.error().message);
    if (lp->end) return lp;
    lp->turn = turn;
    const std::string name = "lp-" + std::to_string(lp->seq);
    lp->path = dir_ + "/" + name;
    if (!read_lps_) {
      // (Carried empty: the daemon had no pieces for it, as an older one has no pieces file.)
      Result<std::string> raw = !carries       ? ReadControl(name + ".pieces")
                                : carried.empty() ? Result<std::string>(Error{ENOENT, "no pieces"})
                                                  : Result<std::string>(std::string(carried));
      if (!raw.ok() && raw.error().code != ENOENT) return raw.error();
      if (!raw.ok()) read_lps_ = true;  // a daemon older than shared LP memory: read lp-SEQ
      if (raw.ok()) {
        Result<PiecesFile> pieces = ParsePieces(*raw);
        if (!pieces.ok()) return Fail(pieces.error().code, "read " + name + ".pieces: " + pieces.error().message);
        if (pieces->memory_id != 0 && MapMemory(pieces->memory_id)) {
          // Checked against what is mapped.
          if (Status inside = CheckPiecesInMemory(*pieces, memory_bytes_); !inside.ok())
            return Fail(inside.error().code, "read " + name + ".pieces: " + inside.error().message);
          lp->bytes = pieces->view_bytes;
          lp->pieces.reserve(pieces->entries.size());
          for (const PiecesFile::Entry& e : pieces->entries)
            lp->pieces.push_back(Piece{memory_base_ + e.memory_offset, e.length, e.column_offset});
          if (!read_map) return lp;
          return ReadMap(std::move(*lp), name);
        }
      }
    }
    Result<Fd> file = OpenControl(name);
    if (!file.ok()) return file.error();
    lp->file = std::move(*file);
    struct stat st;
    if (::fstat(lp->fd(), &st) != 0) {
      const int code = errno;
      return Fail(code, "stat " + name);
    }
    lp->bytes = static_cast<uint64_t>(st.st_size);
    if (!read_map) return lp;
    return ReadMap(std::move(*lp), name);
  }

  // Whether Next() hands out LPs as pieces of mapped shared memory (else as lp-SEQ files):
  // known after the first LP.
  bool maps_lps() const { return memory_base_ != nullptr; }

  // Done with the LP last returned by Next (optional: Next implies it, but
  // saying so early lets the daemon move on while this job computes).
  Status Done() {
    if (!next_carries_pieces_) return WriteControl("done", "\n");
    return WriteNext("done\n");
  }

 private:
  Job() = default;

  static std::string DefaultName() {
    static std::atomic<unsigned> counter{0};
    return ProgramName() + "-" + std::to_string(static_cast<long>(::getpid())) + "-" + std::to_string(counter++);
  }

  // The program's name in the characters a job name allows.
  static std::string ProgramName() {
    std::string name;
    if (FILE* f = std::fopen("/proc/self/comm", "r")) {
      char buffer[64] = {};
      if (std::fgets(buffer, sizeof(buffer), f) != nullptr) name = buffer;
      std::fclose(f);
    }
    std::string clean;
    for (char c : name) {
      if (c == '\n') break;
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-';
      clean += ok ? c : '_';
    }
    while (!clean.empty() && clean[0] == '.') clean.erase(0, 1);
    if (clean.size() > 32) clean.resize(32);
    return clean.empty() ? std::string("job") : clean;
  }

  // Callers copy errno before building `what`: string operations may change it.
  Error Fail(int code, const std::string& what, const std::string& reason = "") const {
    return Error{code, "graphfs job " + name_ + ": " + what +
                           (code != EPROTO ? std::string(": ") + std::strerror(code) : std::string()) +
                           (reason.empty() ? std::string() : ": " + reason) + " (see " + dir_ + "/status)"};
  }

  // For errors the daemon explains in status's last_error (a refused commit,
  // a failed `next`): the message carries the explanation too.
  Error FailExplained(int code, const std::string& what) const {
    std::string status;
    const int fd = ::open((dir_ + "/status").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      char buffer[4096];
      ssize_t n;
      while ((n = ::read(fd, buffer, sizeof(buffer))) > 0 || (n < 0 && errno == EINTR)) {
        if (n > 0) status.append(buffer, static_cast<size_t>(n));
      }
      ::close(fd);
    }
    return Fail(code, what, ParseStatusString(status, "last_error"));
  }

  // One word to `next` (opened read-write).
  Status WriteNext(std::string_view word) const {
    ssize_t n;
    do {
      n = ::pwrite(next_.get(), word.data(), word.size(), 0);
    } while (n < 0 && errno == EINTR);
    if (n != static_cast<ssize_t>(word.size())) {
      const int code = n < 0 ? errno : EIO;
      return FailExplained(code, "write " + std::string(word.substr(0, word.size() - 1)) + " to next");
    }
    return Status::Ok();
  }

  // The whole answer of a read of `next`: the read at offset 0 asks for the LP (and blocks); an
  // answer longer than it is read on from where it stopped, until a read comes back short.
  Result<std::string> ReadNextAnswer() const {
    std::string answer(next_carries_pieces_ ? kNextReadBytes : 128, '\0');
    size_t have = 0;
    for (;;) {
      const size_t want = answer.size() - have;
      const ssize_t n = ::pread(next_.get(), answer.data() + have, want, static_cast<off_t>(have));
      if (n < 0 && errno == EINTR) continue;  // at offset 0 the ask again: the daemon dropped it
      if (n < 0) {
        const int code = errno;
        return FailExplained(code, "read next");
      }
      have += static_cast<size_t>(n);
      if (static_cast<size_t>(n) < want) break;
      answer.resize(answer.size() * 2);
    }
    answer.resize(have);
    return Result<std::string>(std::move(answer));
  }
  static constexpr size_t kNextReadBytes = 64 << 10;  // within one FUSE request (max_read)

  Result<Fd> OpenControl(const std::string& file, int mode = O_RDONLY) const {
    const int fd = ::open((dir_ + "/" + file).c_str(), mode | O_CLOEXEC);
    if (fd < 0) {
      const int code = errno;
      return Fail(code, "open " + file);
    }
    return Fd(fd);
  }

  // Control files may report any size (FUSE): read to EOF.
  Result<std::string> ReadControl(const std::string& file) const {
    Result<Fd> fd = OpenControl(file);
    if (!fd.ok()) return fd.error();
    std::string text;
    std::string buffer(256 << 10, '\0');  // a pieces file can be long: few reads
    for (;;) {
      const ssize_t n = ::read(fd->get(), buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int code = errno;
        return Fail(code, "read " + file);
      }
      if (n == 0) return text;
      text.append(buffer.data(), static_cast<size_t>(n));
    }
  }

  // One open, the data (in one write unless the kernel takes less), one
  // close. The daemon checks and commits at close, so close's error is the
  // answer.
  Status WriteControl(const std::string& file, const std::string& data) const {
    const int fd = ::open((dir_ + "/" + file).c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      const int code = errno;
      return Fail(code, "open " + file);
    }
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int code = n < 0 ? errno : EIO;
        ::close(fd);
        return FailExplained(code, "write " + file);
      }
      done += static_cast<size_t>(n);
    }
    if (::close(fd) != 0) {
      const int code = errno;
      return FailExplained(code, "write " + file);
    }
    return Status::Ok();
  }

  Result<Partition> ReadMap(Partition lp, const std::string& name) const {
    Result<std::string> map = ReadControl(name + ".map");
    if (!map.ok()) return map.error();
    Result<std::vector<ChunkExtent>> chunks = ParseMap(*map);
    if (!chunks.ok()) return Fail(chunks.error().code, "read " + name + ".map: " + chunks.error().message);
    for (const ChunkExtent& c : *chunks) {
      if (c.lp_offset > lp.bytes || c.length > lp.bytes - c.lp_offset) {
        return Fail(EPROTO, "read " + name + ".map: chunk " + std::to_string(c.chunk_id) + " at " +
                                std::to_string(c.lp_offset) + "+" + std::to_string(c.length) + " lies past the " +
                                std::to_string(lp.bytes) + "-byte LP");
      }
    }
    lp.chunks = std::move(*chunks);
    return Result<Partition>(std::move(lp));
  }

  // Maps the graph's LP memory (once per job): false where it cannot be (no passthrough),
  // and from then on the job reads lp-SEQ files.
  bool MapMemory(uint64_t id) {
    if (memory_base_ != nullptr && memory_id_ == id) return true;
    UnmapMemory();
    Result<Fd> fd = OpenControl("memory");
    struct stat st;
    if (!fd.ok() || ::fstat(fd->get(), &st) != 0 || st.st_size <= 0) {
      read_lps_ = true;
      return false;
    }
    void* base = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd->get(), 0);
    if (base == MAP_FAILED) {
      read_lps_ = true;
      return false;
    }
    memory_ = std::move(*fd);
    memory_base_ = static_cast<const char*>(base);
    memory_bytes_ = static_cast<uint64_t>(st.st_size);
    memory_id_ = id;
    return true;
  }

  void UnmapMemory() {
    if (memory_base_ != nullptr) ::munmap(const_cast<char*>(memory_base_), static_cast<size_t>(memory_bytes_));
    memory_base_ = nullptr;
    memory_bytes_ = memory_id_ = 0;
    memory_.Reset();
  }

  // Best effort: the job may already be gone (the daemon drops it when the
  // lease closes), and a destructor has nobody to tell.
  void Remove() {
    UnmapMemory();
    next_.Reset();
    if (!dir_.empty()) (void)::rmdir(dir_.c_str());
    dir_.clear();
    lease_.Reset();
  }

  std::string name_;
  std::string dir_;
  std::string mount_;
  std::string graph_;
  uint64_t vertices_ = 0;
  Fd lease_;
  Fd next_;
  bool next_carries_pieces_ = false;  // next opened read-write: answers carry the pieces
  bool read_lps_ = false;  // GRAPHFS_LP_READ=1, or `memory` could not be mapped
  Fd memory_;              // MOUNT/.graphfs/jobs/NAME/memory, mapped at memory_base_
  const char* memory_base_ = nullptr;
  uint64_t memory_bytes_ = 0;
  uint64_t memory_id_ = 0;
};

}  // namespace graphfs_client
