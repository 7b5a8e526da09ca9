#include "engines/core/edge_import.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <vector>

#include "engines/core/edge_text.h"
#include "engines/core/matrix_market.h"
#include "engines/core/replace_file.h"
#include "grid/posix_io.h"

namespace graphfs::engine {

namespace {

// Parses a vertex id: decimal digits only, in [0, INT_MAX].
bool ParseVertex(std::string_view token, int32_t* out) {
  if (token.empty() || token.size() > 10) return false;
  int64_t value = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  if (value > INT_MAX) return false;
  *out = static_cast<int32_t>(value);
  return true;
}

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != std::tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

// SNAP/KONECT text, line by line (the interface of MatrixMarketReader).
class SnapReader {
 public:
  SnapReader(bool weighted, float default_weight) : weighted_(weighted), default_weight_(default_weight) {}

  Status ReadLine(std::string_view text, std::vector<ImportedEdge>* edges) {
    ++line_;
    size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return Status::Ok();
    if (line_ == 1 && StartsWithNoCase(text.substr(first), "%%MatrixMarket")) {
      return Error(EINVAL, "a Matrix Market banner: import .mtx files with --format mtx");
    }
    if (text[first] == '#' || text[first] == '%') return Status::Ok();
    const auto tokens = SplitFields(text);
    if (tokens.size() < 2) return Error(EINVAL, "expected 'SOURCE TARGET [WEIGHT]'");
    ImportedEdge edge{0, 0, default_weight_};
    if (!ParseVertex(tokens[0], &edge.source)) {
      return Error(EINVAL, "bad source vertex id '" + std::string(tokens[0]) + "' (want 0.." + std::to_string(INT_MAX) + ")");
    }
    if (!ParseVertex(tokens[1], &edge.target)) {
      return Error(EINVAL, "bad target vertex id '" + std::string(tokens[1]) + "' (want 0.." + std::to_string(INT_MAX) + ")");
    }
    if (weighted_ && tokens.size() >= 3 && !ParseWeightField(tokens[2], &edge.weight)) {
      return Error(EINVAL, "bad weight '" + std::string(tokens[2]) + "'");
    }
    edges->push_back(edge);
    return Status::Ok();
  }
  Status Finish() const { return Status::Ok(); }

 private:
  const bool weighted_;
  const float default_weight_;
  uint64_t line_ = 0;
};

class OutputBuffer {
 public:
  OutputBuffer(int fd, std::string path) : fd_(fd), path_(std::move(path)) { data_.reserve(kCapacity); }
  Status Append(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    data_.insert(data_.end(), c, c + n);
    if (data_.size() >= kCapacity) return Flush();
    return Status::Ok();
  }
  Status Flush() {
    GRAPHFS_RETURN_IF_ERROR(grid::WriteAll(fd_, data_.data(), data_.size(), path_));
    data_.clear();
    return Status::Ok();
  }

 private:
  static constexpr size_t kCapacity = 4 << 20;
  int fd_;
  std::string path_;
  std::vector<char> data_;
};

// Reads every line of `in` through `reader` into `out`; errors are "NAME:LINE: why".
template <typename Reader>
Status ReadLines(FILE* in, const std::string& name, bool weighted, Reader& reader, OutputBuffer& out,
                 ImportStats& stats) {
  struct LineBuffer {
    char* data = nullptr;
    size_t capacity = 0;
    ~LineBuffer() { std::free(data); }
  } buffer;
  std::vector<ImportedEdge> edges;
  while (true) {
    errno = 0;
    ssize_t length = ::getline(&buffer.data, &buffer.capacity, in);
    if (length < 0) {
      if (errno != 0 && !std::feof(in)) return Error::FromErrno("read " + name);
      break;
    }
    ++stats.lines;
    std::string_view text(buffer.data, static_cast<size_t>(length));
    edges.clear();
    if (Status read = reader.ReadLine(text, &edges); !read.ok()) {
      return Error(read.error().code(), name + ":" + std::to_string(stats.lines) + ": " + read.error().message() +
                                            " in '" + ShownLine(text) + "'");
    }
    for (const ImportedEdge& edge : edges) {
      GRAPHFS_RETURN_IF_ERROR(out.Append(&edge.source, 4));
      GRAPHFS_RETURN_IF_ERROR(out.Append(&edge.target, 4));
      if (weighted) GRAPHFS_RETURN_IF_ERROR(out.Append(&edge.weight, 4));
      stats.max_vertex = std::max<uint64_t>(stats.max_vertex, static_cast<uint64_t>(std::max(edge.source, edge.target)));
      ++stats.edges;
    }
  }
  if (Status end = reader.Finish(); !end.ok()) {
    return Error(end.error().code(),
                 name + ":" + std::to_string(std::max<uint64_t>(stats.lines, 1)) + ": " + end.error().message());
  }
  return Status::Ok();
}

}  // namespace

Result<ImportStats> ImportEdges(const ImportOptions& options) {
  const bool from_stdin = options.input == "-";
  std::unique_ptr<FILE, int (*)(FILE*)> in(from_stdin ? stdin : std::fopen(options.input.c_str(), "r"),
                                           from_stdin ? [](FILE*) { return 0; } : &std::fclose);
  if (!in) return Error::FromErrno("open " + options.input);
  // Dropped without Commit() (any error below), the partial file is removed.
  auto output = FileReplacement::Create(options.output);
  if (!output.ok()) return output.error();
  OutputBuffer out(output->fd(), options.output);

  ImportStats stats;
  const std::string name = from_stdin ? "<stdin>" : options.input;
  if (options.format == ImportFormat::kMatrixMarket) {
    MatrixMarketReader reader(options.weighted, options.default_weight);
    GRAPHFS_RETURN_IF_ERROR(ReadLines(in.get(), name, options.weighted, reader, out, stats));
    stats.vertices = reader.vertices();
    stats.entries = reader.entries();
  } else {
    SnapReader reader(options.weighted, options.default_weight);
    GRAPHFS_RETURN_IF_ERROR(ReadLines(in.get(), name, options.weighted, reader, out, stats));
    stats.vertices = stats.edges == 0 ? 0 : stats.max_vertex + 1;
    stats.entries = stats.edges;
  }
  GRAPHFS_RETURN_IF_ERROR(out.Flush());
  GRAPHFS_RETURN_IF_ERROR(output->Commit());
  return stats;
}

}  // namespace graphfs::engine
