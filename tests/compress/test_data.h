// Inputs for the codec and frame tests: the kinds of bytes partition files hold (edge blocks
// sorted by source or not, weighted or not) and the extremes (zeros, random bytes), at any
// length, and the codecs to run them through.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compress/codec.h"

namespace graphfs::testing {

enum class DataKind { kZeros, kRandom, kSortedEdges, kUnsortedEdges };

inline const char* KindName(DataKind k) {
  switch (k) {
    case DataKind::kZeros: return "zeros";
    case DataKind::kRandom: return "random";
    case DataKind::kSortedEdges: return "sorted edges";
    case DataKind::kUnsortedEdges: return "unsorted edges";
  }
  return "?";
}

// `bytes` bytes of `kind` in records of `record_size` (8: source, target; 12: + weight). Edge
// blocks look like one GridGraph block: sources from one range of ids, targets from another
// with some near their source; sorted blocks hold runs of one source (degrees 1..40). A
// length that is not a multiple of the record size ends in a cut record.
inline std::vector<char> MakeData(DataKind kind, size_t bytes, uint32_t record_size, uint32_t seed) {
  std::vector<char> out(bytes, 0);
  std::mt19937_64 rng(seed);
  if (kind == DataKind::kZeros) return out;
  if (kind == DataKind::kRandom) {
    for (char& c : out) c = static_cast<char>(rng());
    return out;
  }
  const int32_t source_base = static_cast<int32_t>(rng() % 1000000), target_base = static_cast<int32_t>(rng() % 1000000);
  int32_t source = source_base;
  uint32_t left_in_run = 0;
  std::vector<char> record(record_size);
  for (size_t at = 0; at < bytes; at += record_size) {
    if (kind == DataKind::kSortedEdges) {
      if (left_in_run == 0) {
        source += 1 + static_cast<int32_t>(rng() % 3);
        left_in_run = 1 + static_cast<uint32_t>(rng() % 40);
      }
      --left_in_run;
    } else {
      source = source_base + static_cast<int32_t>(rng() % 65536);
    }
    const int32_t target = rng() % 4 == 0 ? source + static_cast<int32_t>(rng() % 64) - 32
                                          : target_base + static_cast<int32_t>(rng() % 65536);
    const float weight = static_cast<float>(rng() % 100000) / 1000.0f;
    std::memcpy(record.data(), &source, 4);
    std::memcpy(record.data() + 4, &target, 4);
    if (record_size >= 12) std::memcpy(record.data() + 8, &weight, 4);
    std::memcpy(out.data() + at, record.data(), std::min<size_t>(record_size, bytes - at));
  }
  return out;
}

inline constexpr DataKind kAllKinds[] = {DataKind::kZeros, DataKind::kRandom, DataKind::kSortedEdges,
                                         DataKind::kUnsortedEdges};

// Every codec, with each of the levels 1..3 where it has a zstd stage.
inline std::vector<compress::CodecSpec> AllSpecs(uint32_t record_size) {
  std::vector<compress::CodecSpec> specs;
  for (int id = 0; id < compress::kCodecCount; ++id) {
    compress::CodecSpec spec;
    spec.id = static_cast<compress::CodecId>(id);
    spec.record_size = record_size;
    if (compress::CodecHasLevel(spec.id)) {
      for (int level = 1; level <= 3; ++level) {
        spec.level = level;
        specs.push_back(spec);
      }
    } else {
      specs.push_back(spec);
    }
  }
  return specs;
}

}  // namespace graphfs::testing
