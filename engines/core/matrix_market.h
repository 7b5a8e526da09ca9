// Matrix Market coordinate files (.mtx, as the SuiteSparse Matrix Collection and Network
// Repository publish graphs) read as edges, line by line, with scipy.io.mmread's meaning:
//
//   %%MatrixMarket matrix coordinate FIELD SYMMETRY   line 1, the banner (the words after
//                                                     %%MatrixMarket are case-insensitive)
//   % comments                                        skipped, as blank lines
//   ROWS COLS NNZ                                     the size line
//   ROW COL [VALUE]                                   exactly NNZ entry lines, 1-based indices
//
// Entry (i, j) is the edge i-1 -> j-1. FIELD pattern (no value), integer (also unsigned-integer)
// or real (also double): the value is the edge's weight when weighted (converted to float32; a
// real one must then be finite and within float32's range), else it is checked and dropped; a
// pattern matrix's edges get the default weight. SYMMETRY general, or symmetric: the file holds
// one triangle, and each entry off the diagonal gives both directions (i-1 -> j-1, then
// j-1 -> i-1), one on the diagonal a single self-loop (mmread mirrors an entry in whichever
// triangle it is, and so does this). Entries are kept as they are: duplicates stay parallel
// edges, explicit zeros stay edges (of weight 0). Columns after the ones used are ignored. The
// vertex count is max(ROWS, COLS): a rectangular matrix is a graph whose edges go from row ids
// to column ids. Refused, each with its reason: array (dense) format, the complex field,
// skew-symmetric and hermitian symmetry, a vector object, ROWS or COLS above 2^31 (int32 ids),
// indices outside [1, ROWS] x [1, COLS], malformed numbers, and fewer or more than NNZ entries.
// Where this differs from mmread: it also refuses a non-square symmetric matrix (mmread reads
// one as if the missing part of its square were not there) and an integer value written with a
// fraction (mmread cuts it off); it skips '%' lines among the entries too (mmread refuses them)
// and, as the text format, takes commas as separators too.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engines/core/edge_text.h"

namespace graphfs::engine {

class MatrixMarketReader {
 public:
  enum class Field { kPattern, kInteger, kReal };

  MatrixMarketReader(bool weighted, float default_weight) : weighted_(weighted), default_weight_(default_weight) {}

  // The file's next line (its line end may be included; the first call gets line 1). Appends
  // the edges it holds (none, one, or two for a symmetric entry off the diagonal). A refused
  // line's error (EINVAL) says why, without file or line number: the caller knows them.
  Status ReadLine(std::string_view line, std::vector<ImportedEdge>* edges);
  // After the last line: refuses a file that ended before its banner, its size line or its
  // NNZ-th entry.
  Status Finish() const;

  // max(ROWS, COLS) once the size line is read, else 0.
  uint64_t vertices() const { return rows_ > cols_ ? rows_ : cols_; }
  uint64_t entries() const { return entries_read_; }
  bool symmetric() const { return symmetric_; }

 private:
  Status ReadBanner(std::string_view line);
  Status ReadSize(const std::vector<std::string_view>& fields);
  Status ReadEntry(const std::vector<std::string_view>& fields, std::vector<ImportedEdge>* edges);
  Status ReadValue(std::string_view token, float* weight) const;

  enum class Next { kBanner, kSize, kEntries };
  const bool weighted_;
  const float default_weight_;
  Next next_ = Next::kBanner;
  Field field_ = Field::kPattern;
  bool unsigned_ = false;  // field unsigned-integer: integer values without a sign
  bool symmetric_ = false;
  uint64_t line_ = 0;       // lines read so far
  uint64_t size_line_ = 0;  // its number
  uint64_t rows_ = 0, cols_ = 0, entries_ = 0;
  uint64_t entries_read_ = 0;
};

}  // namespace graphfs::engine
