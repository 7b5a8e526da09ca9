// Internals shared by the codecs' files: the constructors the factory (codec.cc) calls, and
// the little-endian helpers and error wording they share. Not a public header.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>

#include "compress/codec.h"

namespace graphfs::compress {

// Records are little-endian on disk (grid/edge.h) and the codecs move fields with memcpy.
static_assert(std::endian::native == std::endian::little, "the codecs assume a little-endian host");

// One file each.
std::unique_ptr<Codec> NewNoneCodec(const CodecSpec& spec);
std::unique_ptr<Codec> NewZstdCodec(const CodecSpec& spec);
std::unique_ptr<Codec> NewLz4Codec(const CodecSpec& spec);
// The byte shuffle alone (byte_shuffle.h): a filter of the same length, the first stage of
// shuffle-zstd and shuffle-lz4. It carries the spec of the chain it is a stage of.
std::unique_ptr<Codec> NewShuffleCodec(const CodecSpec& spec);
// `filter`, then `backend` over its output (shuffle-zstd, shuffle-lz4, svb-zstd).
std::unique_ptr<Codec> NewChainCodec(const CodecSpec& spec, std::unique_ptr<Codec> filter,
                                     std::unique_ptr<Codec> backend);

inline void PutU32(std::string* out, uint32_t v) { out->append(reinterpret_cast<const char*>(&v), 4); }
inline uint32_t GetU32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline void PutU64(char* p, uint64_t v) { std::memcpy(p, &v, 8); }
inline uint64_t GetU64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// A valid pointer for an empty span: the C libraries do not all promise to take null.
inline const char* DataOrEmpty(std::span<const char> s) { return s.empty() ? "" : s.data(); }

// EIO for a payload that does not decode: "svb: <what>".
inline Error Corrupt(const CodecSpec& spec, const std::string& what) {
  return Error(EIO, spec.Name() + " payload: " + what);
}

}  // namespace graphfs::compress
