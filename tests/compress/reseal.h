// The unit frame's checksum as unit_frame.h documents it, computed here independently of
// unit_frame.cc, so that the tests and the fuzzer can forge frames whose checksum matches and
// so reach the codecs with damaged payloads and lying headers.
#pragma once

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "compress/unit_frame.h"

namespace graphfs::testing {

// A version 1 frame: XXH3-64 of the payload seeded with XXH3-64 of the header's first 24 bytes, into bytes 24..31.
inline void Reseal(std::string* frame) {
  const uint64_t seed = XXH3_64bits(frame->data(), 24);
  const uint64_t sum = XXH3_64bits_withSeed(frame->data() + compress::kUnitHeaderBytes,
                                            frame->size() - compress::kUnitHeaderBytes, seed);
  std::memcpy(frame->data() + 24, &sum, 8);
}

// A version 2 frame whose table's count and lengths are taken as they stand (they may lie): each
// block's XXH3-64 seeded with s + its index, over the bytes its length claims (as far as the
// frame reaches), then the header's over the table.
inline void ResealBlocks(std::string* frame) {
  char* h = frame->data();
  const uint64_t seed = XXH3_64bits(h, 24);
  uint32_t n;
  std::memcpy(&n, h + compress::kUnitHeaderBytes + 4, 4);
  const size_t table = compress::kUnitHeaderBytes + compress::kBlockTableHeadBytes + size_t{n} * compress::kBlockEntryBytes;
  if (table > frame->size()) return;
  size_t at = table;
  for (uint32_t b = 0; b < n; ++b) {
    char* e = h + compress::kUnitHeaderBytes + compress::kBlockTableHeadBytes + size_t{b} * compress::kBlockEntryBytes;
    uint32_t length;
    std::memcpy(&length, e, 4);
    const size_t len = std::min<size_t>(length, frame->size() - std::min(at, frame->size()));
    const uint64_t sum = XXH3_64bits_withSeed(at < frame->size() ? h + at : "", len, seed + b);
    std::memcpy(e + 8, &sum, 8);
    at += length;
  }
  const uint64_t sum = XXH3_64bits_withSeed(h + compress::kUnitHeaderBytes, table - compress::kUnitHeaderBytes, seed);
  std::memcpy(h + 24, &sum, 8);
}

}  // namespace graphfs::testing
