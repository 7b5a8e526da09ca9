// Converting a graph directory's large files to striped files and back.
//
// Both directions are crash-safe and resumable: the original bytes are removed only after
// the new copy is durable and verified (XXH3 of every byte), and a pending record in
// GRAPH/.graphfs/ lets a rerun continue, or clean up, whatever a killed run left.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"

namespace graphfs {

struct StripeRequest {
  std::string path;                 // a graph directory, or one file in it
  std::vector<std::string> disks;   // disk directories, in order
  uint64_t unit = 16ull << 20;
  uint64_t min_size = 64ull << 20;  // smaller files stay plain
  bool progress = true;             // progress lines on stderr
  uint64_t checkpoint = 1ull << 30; // copied bytes between durable progress records
};

struct ConvertReport {
  std::vector<std::string> converted;
  std::vector<std::string> skipped;  // with the reason, "name: why"
  uint64_t bytes = 0;
};

Result<ConvertReport> StripeFiles(const StripeRequest& request);

struct UnstripeRequest {
  std::string path;                // a graph directory, or one striped file in it
  std::vector<std::string> disks;  // overrides the registered disk paths (same order); empty: registry
  bool progress = true;
};

Result<ConvertReport> UnstripeFiles(const UnstripeRequest& request);

}  // namespace graphfs
