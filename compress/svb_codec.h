// The graph codec "svb" (svb_codec.cc) and the knobs it exposes to the factory, the tests and
// the measurements. Not a public header: users name codecs through codec.h.
#pragma once

#include <memory>

#include "compress/codec.h"

namespace graphfs::compress {

struct SvbOptions {
  // The fields after source and target (a weighted graph's float weight) byte-shuffled, for a
  // zstd stage behind (svb-zstd), or raw (svb: with nothing behind, shuffling gains nothing).
  bool shuffle_weights = false;

  // The encoder picks per unit whichever coding is smallest; these force one choice, so that
  // tests reach every branch of the decoder and measurements can compare them.
  enum class TargetRef { kBest, kPrevious, kSource };  // delta of a target against ...
  enum class Encoding { kBest, k1234, k0124 };         // StreamVByte's 1-2-3-4 or 0-1-2-4 byte codes
  TargetRef target_ref = TargetRef::kBest;
  Encoding source_encoding = Encoding::kBest;
  Encoding target_encoding = Encoding::kBest;
};

// spec.record_size must be 8 or 12 (ValidateCodecSpec).
std::unique_ptr<Codec> NewSvbCodec(const CodecSpec& spec, const SvbOptions& options);

}  // namespace graphfs::compress
