// "svb": a codec for blocks of edge records (grid/edge.h). The records are split into columns.
// Sources are coded as zigzag deltas from the previous source: in a block sorted by source
// most deltas are 0 (the same source again) or small, and zigzag keeps an unsorted block
// (negative deltas) correct, only larger. Targets are zigzag deltas either from the previous
// target or from the record's own source, whichever codes smaller in this unit (graphs with
// locality have targets near their source; a source's sorted adjacency list has small steps
// between targets). Both columns go through StreamVByte (libstreamvbyte's encoders, the
// 1-2-3-4 or the 0-1-2-4 byte codes, again the smaller per unit: 0-1-2-4 stores a zero delta
// in no data byte, which is what repeated sources are; decoded by stream_vbyte.h). The
// remaining fields (the weight) are kept as they are, byte-shuffled when a zstd stage follows
// (svb-zstd).
//
// Payload, little-endian:
//   u8  flags: 1 sources in 0-1-2-4 codes, 2 targets in 0-1-2-4 codes, 4 targets against the
//       source (else against the previous target), 8 remaining fields byte-shuffled
//   u32 bytes of the source stream, u32 bytes of the target stream
//   the two StreamVByte streams (control bytes, then data bytes, for n = raw / record values)
//   n × (record size − 8) bytes of the remaining fields
//   raw % record size trailing bytes, as they are
// The decoder knows n from the raw length the frame stores. A StreamVByte stream does not
// delimit itself, so each stream's length is recomputed from its control bytes and must
// match the stored one before anything is decoded.
#include "compress/svb_codec.h"

#include <streamvbyte.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <vector>

#include "compress/byte_shuffle.h"
#include "compress/codec_impl.h"
#include "compress/stream_vbyte.h"

namespace graphfs::compress {
namespace {

constexpr uint8_t kSources0124 = 1;
constexpr uint8_t kTargets0124 = 2;
constexpr uint8_t kTargetsFromSource = 4;
constexpr uint8_t kRestShuffled = 8;
constexpr uint8_t kKnownFlags = 15;
constexpr size_t kHeaderBytes = 9;

// Wrapping uint32 arithmetic: any int32 pair has a delta, and the decoder's sum wraps back.
inline uint32_t ZigZag(uint32_t d) { return (d << 1) ^ (0u - (d >> 31)); }
inline uint32_t UnZigZag(uint32_t z) { return (z >> 1) ^ (0u - (z & 1)); }

// Data bytes of one value in each code set.
inline uint32_t Bytes1234(uint32_t v) { return v < (1u << 8) ? 1 : v < (1u << 16) ? 2 : v < (1u << 24) ? 3 : 4; }
inline uint32_t Bytes0124(uint32_t v) { return v == 0 ? 0 : v < (1u << 8) ? 1 : v < (1u << 16) ? 2 : 4; }

// Columns back into records: prefix sums of the deltas, interleaved with the other fields.
// Four records at a time with SSE2 (x86-64's baseline): the scalar loop's one-add-per-record
// dependency chain and its per-field stores were ~90% of the decoder's time (perf annotate of
// the daemon at the demo's f = 1/2, where every pass decodes the column again); the prefix sum
// within four lanes is two shifted adds and a carry, and a record group is three stores.
#if defined(__SSE2__)
inline __m128i UnZigZag4(__m128i z) {
  const __m128i low = _mm_and_si128(z, _mm_set1_epi32(1));
  return _mm_xor_si128(_mm_srli_epi32(z, 1), _mm_sub_epi32(_mm_setzero_si128(), low));
}
// Inclusive prefix sum of four lanes plus `carry` (every lane the sum so far); the new carry
// is the last lane, broadcast.
inline __m128i PrefixSum4(__m128i x, __m128i* carry) {
  x = _mm_add_epi32(x, _mm_slli_si128(x, 4));
  x = _mm_add_epi32(x, _mm_slli_si128(x, 8));
  x = _mm_add_epi32(x, *carry);
  *carry = _mm_shuffle_epi32(x, _MM_SHUFFLE(3, 3, 3, 3));
  return x;
}
inline __m128 AsPs(__m128i v) { return _mm_castsi128_ps(v); }
#endif

template <size_t R, bool kFromSource>
void Interleave(const uint32_t* sources, const uint32_t* targets, const char* rest, size_t n, char* out) {
  uint32_t s = 0, t = 0;
  size_t i = 0;
#if defined(__SSE2__)
  if constexpr (R == 8 || R == 12) {
    __m128i s_carry = _mm_setzero_si128(), t_carry = _mm_setzero_si128();
    for (; i + 4 <= n; i += 4) {
      const __m128i sv = PrefixSum4(UnZigZag4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sources + i))), &s_carry);
      const __m128i dt = UnZigZag4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(targets + i)));
      const __m128i tv = kFromSource ? _mm_add_epi32(sv, dt) : PrefixSum4(dt, &t_carry);
      const __m128i st_lo = _mm_unpacklo_epi32(sv, tv);  // s0 t0 s1 t1
      const __m128i st_hi = _mm_unpackhi_epi32(sv, tv);  // s2 t2 s3 t3
      char* record = out + i * R;
      if constexpr (R == 8) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(record), st_lo);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(record + 16), st_hi);
      } else {
        const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rest + i * 4));  // w0 w1 w2 w3
        const __m128i ws_lo = _mm_unpacklo_epi32(w, sv);  // w0 s0 w1 s1
        const __m128i tw_lo = _mm_unpacklo_epi32(tv, w);  // t0 w0 t1 w1
        const __m128i ws_hi = _mm_unpackhi_epi32(w, sv);  // w2 s2 w3 s3
        const __m128i tw_hi = _mm_unpackhi_epi32(tv, w);  // t2 w2 t3 w3
        // s0 t0 w0 s1 | t1 w1 s2 t2 | w2 s3 t3 w3
        const __m128 a = _mm_shuffle_ps(AsPs(st_lo), AsPs(ws_lo), _MM_SHUFFLE(3, 0, 1, 0));
        const __m128 b = _mm_shuffle_ps(AsPs(tw_lo), AsPs(st_hi), _MM_SHUFFLE(1, 0, 3, 2));
        const __m128 c = _mm_shuffle_ps(AsPs(ws_hi), AsPs(tw_hi), _MM_SHUFFLE(3, 2, 3, 0));
        _mm_storeu_ps(reinterpret_cast<float*>(record), a);
        _mm_storeu_ps(reinterpret_cast<float*>(record + 16), b);
        _mm_storeu_ps(reinterpret_cast<float*>(record + 32), c);
      }
    }
    s = static_cast<uint32_t>(_mm_cvtsi128_si32(s_carry));
    if constexpr (!kFromSource) t = static_cast<uint32_t>(_mm_cvtsi128_si32(t_carry));
    // With targets against the source, t is taken from s below.
  }
#endif
  for (; i < n; ++i) {
    s += UnZigZag(sources[i]);
    t = (kFromSource ? s : t) + UnZigZag(targets[i]);
    char* record = out + i * R;
    std::memcpy(record, &s, 4);
    std::memcpy(record + 4, &t, 4);
    if constexpr (R > 8) std::memcpy(record + 8, rest + i * (R - 8), R - 8);
  }
}

template <size_t R>
void Interleave(bool from_source, const uint32_t* sources, const uint32_t* targets, const char* rest, size_t n,
                char* out) {
  if (from_source) {
    Interleave<R, true>(sources, targets, rest, n, out);
  } else {
    Interleave<R, false>(sources, targets, rest, n, out);
  }
}

class SvbCodec final : public Codec {
 public:
  SvbCodec(const CodecSpec& spec, const SvbOptions& options) : Codec(spec), options_(options) {}

  Status Compress(std::span<const char> raw, std::string* out) override {
    if (raw.size() > kMaxUnitBytes) {
      return Error(EFBIG, spec().Name() + ": " + std::to_string(raw.size()) + " bytes is more than a unit takes");
    }
    const size_t r = spec().record_size, n = raw.size() / r, rest = r - 8;
    const size_t tail = raw.size() - n * r;
    // Three candidate columns: sources, targets against the previous target, targets against
    // the source; and what each costs in either code set.
    sources_.resize(n);
    targets_.resize(n);
    targets_src_.resize(n);
    uint64_t bytes[3][2] = {};  // [column][0: 1-2-3-4, 1: 0-1-2-4] data bytes
    uint32_t prev_s = 0, prev_t = 0;
    for (size_t i = 0; i < n; ++i) {
      uint32_t s, t;
      std::memcpy(&s, raw.data() + i * r, 4);
      std::memcpy(&t, raw.data() + i * r + 4, 4);
      const uint32_t zs = ZigZag(s - prev_s), zp = ZigZag(t - prev_t), zq = ZigZag(t - s);
      sources_[i] = zs;
      targets_[i] = zp;
      targets_src_[i] = zq;
      bytes[0][0] += Bytes1234(zs);
      bytes[0][1] += Bytes0124(zs);
      bytes[1][0] += Bytes1234(zp);
      bytes[1][1] += Bytes0124(zp);
      bytes[2][0] += Bytes1234(zq);
      bytes[2][1] += Bytes0124(zq);
      prev_s = s;
      prev_t = t;
    }
    using Enc = SvbOptions::Encoding;
    using Ref = SvbOptions::TargetRef;
    auto pick = [&](int column, Enc forced) {  // true: 0-1-2-4
      if (forced != Enc::kBest) return forced == Enc::k0124;
      return bytes[column][1] < bytes[column][0];
    };
    const bool sources_0124 = pick(0, options_.source_encoding);
    bool from_source;
    if (options_.target_ref != Ref::kBest) {
      from_source = options_.target_ref == Ref::kSource;
    } else {
      const uint64_t via_prev = bytes[1][pick(1, options_.target_encoding)];
      const uint64_t via_source = bytes[2][pick(2, options_.target_encoding)];
      from_source = via_source < via_prev;
    }
    const int target_column = from_source ? 2 : 1;
    const bool targets_0124 = pick(target_column, options_.target_encoding);
    const std::vector<uint32_t>& targets = from_source ? targets_src_ : targets_;
    const uint64_t source_stream = StreamVByteControlBytes(n) + bytes[0][sources_0124];
    const uint64_t target_stream = StreamVByteControlBytes(n) + bytes[target_column][targets_0124];

    const uint8_t flags = (sources_0124 ? kSources0124 : 0) | (targets_0124 ? kTargets0124 : 0) |
                          (from_source ? kTargetsFromSource : 0) | (options_.shuffle_weights ? kRestShuffled : 0);
    const size_t start = out->size();
    out->resize(start + kHeaderBytes + source_stream + target_stream + n * rest + tail);
    char* p = out->data() + start;
    p[0] = static_cast<char>(flags);
    // Both below 5 × 2^28: a unit is at most 2^30 bytes.
    const uint32_t lengths[2] = {static_cast<uint32_t>(source_stream), static_cast<uint32_t>(target_stream)};
    std::memcpy(p + 1, lengths, 8);
    p += kHeaderBytes;
    p += Encode(sources_, sources_0124, p);
    p += Encode(targets, targets_0124, p);
    if (rest > 0) {
      char* fields = p;
      if (options_.shuffle_weights) {
        rest_.resize(n * rest);
        fields = rest_.data();
      }
      for (size_t i = 0; i < n; ++i) std::memcpy(fields + i * rest, raw.data() + i * r + 8, rest);
      if (options_.shuffle_weights) ShuffleBytes({rest_.data(), n * rest}, rest, p);
      p += n * rest;
    }
    if (tail > 0) std::memcpy(p, raw.data() + n * r, tail);
    return Status::Ok();
  }

  Status Decompress(std::span<const char> compressed, std::span<char> raw_out) override {
    if (raw_out.size() > kMaxUnitBytes) return Corrupt(spec(), "larger than a unit");
    const size_t r = spec().record_size, n = raw_out.size() / r, rest = r - 8;
    const size_t tail = raw_out.size() - n * r;
    if (compressed.size() < kHeaderBytes) return Corrupt(spec(), "shorter than its header");
    const auto flags = static_cast<uint8_t>(compressed[0]);
    if ((flags & ~kKnownFlags) != 0) return Corrupt(spec(), "unknown flags " + std::to_string(flags));
    const uint64_t source_stream = GetU32(compressed.data() + 1);
    const uint64_t target_stream = GetU32(compressed.data() + 5);
    const uint64_t want = kHeaderBytes + source_stream + target_stream + uint64_t{n} * rest + tail;
    if (want != compressed.size()) {
      return Corrupt(spec(), std::to_string(compressed.size()) + " bytes, but its lengths add up to " +
                                 std::to_string(want));
    }
    const char* p = compressed.data() + kHeaderBytes;
    const char* end = compressed.data() + compressed.size();
    GRAPHFS_RETURN_IF_ERROR(Decode(p, source_stream, n, flags & kSources0124, end, "source", &sources_));
    p += source_stream;
    GRAPHFS_RETURN_IF_ERROR(Decode(p, target_stream, n, flags & kTargets0124, end, "target", &targets_));
    p += target_stream;
    const char* fields = p;
    if (rest > 0 && (flags & kRestShuffled) != 0) {
      rest_.resize(n * rest);
      UnshuffleBytes({p, n * rest}, rest, rest_.data());
      fields = rest_.data();
    }
    const bool from_source = flags & kTargetsFromSource;
    if (r == 8) {
      Interleave<8>(from_source, sources_.data(), targets_.data(), fields, n, raw_out.data());
    } else {
      Interleave<12>(from_source, sources_.data(), targets_.data(), fields, n, raw_out.data());
    }
    p += n * rest;
    if (tail > 0) std::memcpy(raw_out.data() + n * r, p, tail);
    return Status::Ok();
  }

  size_t MaxCompressedSize(size_t raw_bytes) const override {
    const size_t r = spec().record_size, n = raw_bytes / r;
    return kHeaderBytes + 2 * (StreamVByteControlBytes(n) + 4 * n) + n * (r - 8) + raw_bytes % r;
  }

 private:
  // Writes the StreamVByte stream of `values` at `out`; returns its length.
  static size_t Encode(const std::vector<uint32_t>& values, bool zero124, char* out) {
    if (values.empty()) return 0;
    auto* o = reinterpret_cast<uint8_t*>(out);
    const auto count = static_cast<uint32_t>(values.size());
    return zero124 ? streamvbyte_encode_0124(values.data(), count, o) : streamvbyte_encode(values.data(), count, o);
  }

  // Decodes the stream of `n` values at `in` (in a buffer ending at `end`) into *values; its
  // control bytes must announce exactly `length` bytes (checked by the decoding itself: a
  // separate walk over them cost a fifth of the decoding).
  Status Decode(const char* in, uint64_t length, size_t n, bool zero124, const char* end, const char* column,
                std::vector<uint32_t>* values) {
    const auto* keys = reinterpret_cast<const uint8_t*>(in);
    auto mismatch = [&] {
      return Corrupt(spec(), std::string(column) + " stream of " + std::to_string(length) +
                                 " bytes does not match its control bytes");
    };
    if (length < StreamVByteControlBytes(n)) return mismatch();
    values->resize(n);
    if (StreamVByteDecode(keys, n, zero124, reinterpret_cast<const uint8_t*>(end), values->data()) != length) {
      return mismatch();
    }
    return Status::Ok();
  }

  SvbOptions options_;
  // Scratch, reused: the columns (targets_: against the previous target when encoding, and
  // the decoded targets of either kind; targets_src_: against the source, encoding only) and
  // the remaining fields.
  std::vector<uint32_t> sources_, targets_, targets_src_;
  std::vector<char> rest_;
};

}  // namespace

std::unique_ptr<Codec> NewSvbCodec(const CodecSpec& spec, const SvbOptions& options) {
  return std::make_unique<SvbCodec>(spec, options);
}

}  // namespace graphfs::compress
