#include "engines/core/matrix_market.h"

#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <string>

namespace graphfs::engine {

namespace {

constexpr uint64_t kMaxVertices = uint64_t{1} << 31;  // ids 0..INT32_MAX
constexpr char kBannerForm[] = "'%%MatrixMarket matrix coordinate FIELD SYMMETRY'";

Error Refuse(const std::string& why) { return Error(EINVAL, why); }

std::string Lower(std::string_view word) {
  std::string lower(word);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

// An integer value: decimal digits after an optional '-' (none for unsigned-integer; a '+' is
// refused, as by mmread), within int64 (mmread's integer type).
bool ParseInteger(std::string_view token, bool allow_sign, int64_t* out) {
  const size_t digits = allow_sign && !token.empty() && token[0] == '-' ? 1 : 0;
  if (digits == token.size()) return false;
  for (size_t i = digits; i < token.size(); ++i) {
    if (token[i] < '0' || token[i] > '9') return false;
  }
  std::string text(token);
  errno = 0;
  long long value = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return false;
  *out = value;
  return true;
}

// A real value: a decimal floating-point number as strtod reads it (inf and nan included,
// hexadecimal not: neither mmread nor the Matrix Market format has it).
bool ParseReal(std::string_view token, double* out) {
  if (token.empty() || token.find_first_of("xX") != std::string_view::npos) return false;
  std::string text(token);
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);  // ERANGE: an overflow is inf, an underflow ~0
  if (end != text.c_str() + text.size()) return false;
  *out = value;
  return true;
}

}  // namespace

Status MatrixMarketReader::ReadLine(std::string_view line, std::vector<ImportedEdge>* edges) {
  ++line_;
  if (next_ == Next::kBanner) return ReadBanner(line);
  const size_t first = line.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || line[first] == '%') return Status::Ok();
  const auto fields = SplitFields(line);
  if (next_ == Next::kSize) return ReadSize(fields);
  return ReadEntry(fields, edges);
}

Status MatrixMarketReader::ReadBanner(std::string_view line) {
  const auto words = SplitFields(line);
  if (words.empty() || words[0] != "%%MatrixMarket") {
    return Refuse(std::string("not a Matrix Market file: line 1 must be the banner ") + kBannerForm);
  }
  if (words.size() != 5) {
    return Refuse("the banner has " + std::to_string(words.size()) + " words, want 5: " + kBannerForm);
  }
  const std::string object = Lower(words[1]), format = Lower(words[2]), field = Lower(words[3]),
                    symmetry = Lower(words[4]);
  if (object != "matrix") {
    return Refuse("unsupported Matrix Market object '" + std::string(words[1]) + "' (only 'matrix' is read)");
  }
  if (format == "array") {
    return Refuse("unsupported Matrix Market format 'array' (a dense matrix): only 'coordinate' is read");
  }
  if (format != "coordinate") {
    return Refuse("unknown Matrix Market format '" + std::string(words[2]) + "' (only 'coordinate' is read)");
  }
  if (field == "pattern") {
    field_ = Field::kPattern;
  } else if (field == "integer" || field == "unsigned-integer") {
    field_ = Field::kInteger;
    unsigned_ = field == "unsigned-integer";
  } else if (field == "real" || field == "double") {
    field_ = Field::kReal;
  } else if (field == "complex") {
    return Refuse("unsupported Matrix Market field 'complex': pattern, integer and real are read");
  } else {
    return Refuse("unknown Matrix Market field '" + std::string(words[3]) + "' (pattern, integer and real are read)");
  }
  if (symmetry == "general") {
    symmetric_ = false;
  } else if (symmetry == "symmetric") {
    symmetric_ = true;
  } else if (symmetry == "skew-symmetric" || symmetry == "hermitian") {
    return Refuse("unsupported Matrix Market symmetry '" + symmetry + "': general and symmetric are read");
  } else {
    return Refuse("unknown Matrix Market symmetry '" + std::string(words[4]) +
                  "' (general and symmetric are read)");
  }
  next_ = Next::kSize;
  return Status::Ok();
}

Status MatrixMarketReader::ReadSize(const std::vector<std::string_view>& fields) {
  if (fields.size() != 3) return Refuse("expected the size line 'ROWS COLS NNZ'");
  const char* names[] = {"ROWS", "COLS", "NNZ"};
  uint64_t values[3];
  for (int k = 0; k < 3; ++k) {
    if (!ParseUnsignedField(fields[k], UINT64_MAX, &values[k])) {
      return Refuse(std::string("bad ") + names[k] + " '" + std::string(fields[k]) + "' in the size line 'ROWS COLS NNZ'");
    }
    if (k < 2 && values[k] > kMaxVertices) {
      return Refuse(std::string(names[k]) + " " + std::to_string(values[k]) + " above " + std::to_string(kMaxVertices) +
                    " (vertex ids are int32)");
    }
  }
  rows_ = values[0];
  cols_ = values[1];
  entries_ = values[2];
  if (symmetric_ && rows_ != cols_) {
    return Refuse("a symmetric matrix must be square, this one is " + std::to_string(rows_) + " x " + std::to_string(cols_));
  }
  size_line_ = line_;
  next_ = Next::kEntries;
  return Status::Ok();
}

Status MatrixMarketReader::ReadEntry(const std::vector<std::string_view>& fields, std::vector<ImportedEdge>* edges) {
  if (entries_read_ == entries_) {
    return Refuse("one entry more than the " + std::to_string(entries_) + " of the size line (line " +
                  std::to_string(size_line_) + ")");
  }
  const bool has_value = field_ != Field::kPattern;
  if (fields.size() < (has_value ? 3u : 2u)) {
    return Refuse(has_value ? "expected an entry 'ROW COL VALUE'" : "expected an entry 'ROW COL' (pattern matrix)");
  }
  uint64_t index[2];
  const uint64_t limit[2] = {rows_, cols_};
  const char* names[2] = {"row", "column"};
  for (int k = 0; k < 2; ++k) {
    if (!ParseUnsignedField(fields[k], UINT64_MAX, &index[k])) {
      return Refuse(std::string("bad ") + names[k] + " index '" + std::string(fields[k]) + "'");
    }
    if (index[k] == 0 || index[k] > limit[k]) {
      return Refuse(std::string(names[k]) + " index " + std::to_string(index[k]) + " outside 1.." +
                    std::to_string(limit[k]) + (index[k] == 0 ? " (Matrix Market indices are 1-based)" : ""));
    }
  }
  float weight = default_weight_;
  if (has_value) GRAPHFS_RETURN_IF_ERROR(ReadValue(fields[2], &weight));
  const auto row = static_cast<int32_t>(index[0] - 1), col = static_cast<int32_t>(index[1] - 1);
  edges->push_back({row, col, weight});
  if (symmetric_ && row != col) edges->push_back({col, row, weight});
  ++entries_read_;
  return Status::Ok();
}

Status MatrixMarketReader::ReadValue(std::string_view token, float* weight) const {
  if (field_ == Field::kInteger) {
    int64_t value;
    if (!ParseInteger(token, !unsigned_, &value)) {
      return Refuse(std::string("bad ") + (unsigned_ ? "unsigned " : "") + "integer value '" + std::string(token) + "'");
    }
    if (weighted_) *weight = static_cast<float>(value);
    return Status::Ok();
  }
  double value;
  if (!ParseReal(token, &value)) return Refuse("bad real value '" + std::string(token) + "'");
  if (!weighted_) return Status::Ok();
  if (!std::isfinite(value) || std::fabs(value) > FLT_MAX) {
    return Refuse("weight '" + std::string(token) + "' is not a finite float32");
  }
  *weight = static_cast<float>(value);
  return Status::Ok();
}

Status MatrixMarketReader::Finish() const {
  switch (next_) {
    case Next::kBanner:
      return Refuse(std::string("empty file: no Matrix Market banner ") + kBannerForm);
    case Next::kSize:
      return Refuse("the file ends before the size line 'ROWS COLS NNZ'");
    case Next::kEntries:
      if (entries_read_ < entries_) {
        return Refuse("the file ends after " + std::to_string(entries_read_) + " of the " + std::to_string(entries_) +
                      " entries of the size line (line " + std::to_string(size_line_) + ")");
      }
      return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace graphfs::engine
