#include "engines/core/edge_import.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "grid/posix_io.h"

namespace graphfs::engine {

namespace {

bool IsSeparator(char c) { return c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\n'; }

std::vector<std::string_view> Split(std::string_view line) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && IsSeparator(line[i])) ++i;
    size_t start = i;
    while (i < line.size() && !IsSeparator(line[i])) ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
  return tokens;
}

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

bool ParseWeight(std::string_view token, float* out) {
  std::string text(token);
  char* end = nullptr;
  errno = 0;
  float value = std::strtof(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value)) return false;
  *out = value;
  return true;
}

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

}  // namespace

Result<ImportStats> ImportEdges(const ImportOptions& options) {
  const bool from_stdin = options.input == "-";
  std::unique_ptr<FILE, int (*)(FILE*)> in(from_stdin ? stdin : std::fopen(options.input.c_str(), "r"),
                                           from_stdin ? [](FILE*) { return 0; } : &std::fclose);
  if (!in) return Error::FromErrno("open " + options.input);
  auto out_fd = grid::OpenFile(options.output, O_WRONLY | O_CREAT | O_TRUNC);
  if (!out_fd.ok()) return out_fd.error();
  OutputBuffer out(out_fd->get(), options.output);

  ImportStats stats;
  struct LineBuffer {
    char* data = nullptr;
    size_t capacity = 0;
    ~LineBuffer() { std::free(data); }
  } buffer;
  const std::string name = from_stdin ? "<stdin>" : options.input;
  while (true) {
    errno = 0;
    ssize_t length = ::getline(&buffer.data, &buffer.capacity, in.get());
    if (length < 0) {
      if (errno != 0 && !std::feof(in.get())) return Error::FromErrno("read " + name);
      break;
    }
    ++stats.lines;
    std::string_view text(buffer.data, static_cast<size_t>(length));
    size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) continue;
    if (text[first] == '#' || text[first] == '%') continue;
    const auto tokens = Split(text);
    auto fail = [&](const std::string& why) {
      std::string shown(text.substr(0, std::min<size_t>(text.size(), 80)));
      while (!shown.empty() && (shown.back() == '\n' || shown.back() == '\r')) shown.pop_back();
      return Error(EINVAL, name + ":" + std::to_string(stats.lines) + ": " + why + " in '" + shown + "'");
    };
    if (tokens.size() < 2) return fail("expected 'SOURCE TARGET [WEIGHT]'");
    int32_t source, target;
    if (!ParseVertex(tokens[0], &source)) return fail("bad source vertex id '" + std::string(tokens[0]) + "' (want 0.." + std::to_string(INT_MAX) + ")");
    if (!ParseVertex(tokens[1], &target)) return fail("bad target vertex id '" + std::string(tokens[1]) + "' (want 0.." + std::to_string(INT_MAX) + ")");
    GRAPHFS_RETURN_IF_ERROR(out.Append(&source, 4));
    GRAPHFS_RETURN_IF_ERROR(out.Append(&target, 4));
    if (options.weighted) {
      float weight = options.default_weight;
      if (tokens.size() >= 3 && !ParseWeight(tokens[2], &weight)) {
        return fail("bad weight '" + std::string(tokens[2]) + "'");
      }
      GRAPHFS_RETURN_IF_ERROR(out.Append(&weight, 4));
    }
    stats.max_vertex = std::max<uint64_t>(stats.max_vertex, static_cast<uint64_t>(std::max(source, target)));
    ++stats.edges;
  }
  GRAPHFS_RETURN_IF_ERROR(out.Flush());
  if (::close(out_fd->release()) != 0) return Error::FromErrno("close " + options.output);
  return stats;
}

}  // namespace graphfs::engine
