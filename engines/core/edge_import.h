// Edge lists as published -> binary edge list (preprocess's input). Two formats:
//
// kSnap, text edge lists as SNAP and KONECT publish them. One edge per line: "SOURCE TARGET
// [WEIGHT [more columns...]]", separated by spaces, tabs or commas. Lines starting with '#'
// or '%' are comments; blank lines are skipped; columns after the ones used are ignored
// (KONECT adds timestamps). Ids are kept as they are (no relabelling), so the vertex count
// to preprocess with is max id + 1. A file whose first line is a Matrix Market banner is
// refused (read as text, its size line would be an edge).
//
// kMatrixMarket, Matrix Market coordinate files (.mtx): matrix_market.h says what is read.
//
// The output is written to OUTPUT.partial-PID and renamed to OUTPUT only when the whole input
// has been read: a refused input leaves no output file (and an older OUTPUT as it was).
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace graphfs::engine {

enum class ImportFormat { kSnap, kMatrixMarket };

struct ImportOptions {
  std::string input;   // "-" reads standard input
  std::string output;
  ImportFormat format = ImportFormat::kSnap;
  bool weighted = false;       // write 12-byte records (int32 source, int32 target, float32 weight)
  float default_weight = 1.0f; // weight of edges without one (text lines of two columns, pattern matrices)
};

struct ImportStats {
  uint64_t lines = 0;
  uint64_t edges = 0;       // records written
  uint64_t max_vertex = 0;  // meaningful when edges > 0
  uint64_t vertices = 0;    // the vertex count to preprocess with: max id + 1 (text), max(ROWS, COLS) (mtx)
  uint64_t entries = 0;     // mtx: entry lines (a symmetric one off the diagonal is two edges); text: = edges
};

// Errors name the input and the line: "FILE:LINE: why in 'the line'" (EINVAL).
Result<ImportStats> ImportEdges(const ImportOptions& options);

}  // namespace graphfs::engine
