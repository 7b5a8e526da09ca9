// The unit frame's checksum as unit_frame.h documents it, computed here independently of
// unit_frame.cc, so that the tests and the fuzzer can forge frames whose checksum matches and
// so reach the codecs with damaged payloads and lying headers.
#pragma once

#include <xxhash.h>

#include <cstring>
#include <string>

#include "compress/unit_frame.h"

namespace graphfs::testing {

// XXH3-64 of the payload seeded with XXH3-64 of the header's first 24 bytes, into bytes 24..31.
inline void Reseal(std::string* frame) {
  const uint64_t seed = XXH3_64bits(frame->data(), 24);
  const uint64_t sum = XXH3_64bits_withSeed(frame->data() + compress::kUnitHeaderBytes,
                                            frame->size() - compress::kUnitHeaderBytes, seed);
  std::memcpy(frame->data() + 24, &sum, 8);
}

}  // namespace graphfs::testing
