// Text edge lists as published by SNAP and KONECT -> binary edge list.
//
// One edge per line: "SOURCE TARGET [WEIGHT [more columns...]]", separated
// by spaces, tabs or commas. Lines starting with '#' or '%' are comments;
// blank lines are skipped; columns after the ones used are ignored (KONECT
// adds timestamps). Ids are kept as they are (no relabelling), so the vertex
// count to preprocess with is max id + 1.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace graphfs::engine {

struct ImportOptions {
  std::string input;   // "-" reads standard input
  std::string output;
  bool weighted = false;       // write 12-byte records with the third column as weight
  float default_weight = 1.0f; // weight of lines without a third column
};

struct ImportStats {
  uint64_t lines = 0;
  uint64_t edges = 0;
  uint64_t max_vertex = 0;  // meaningful when edges > 0
};

Result<ImportStats> ImportEdges(const ImportOptions& options);

}  // namespace graphfs::engine
