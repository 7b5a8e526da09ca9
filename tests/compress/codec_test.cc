// The codecs alone (compress/codec.h): names and specs, round trips of every codec over every
// kind of data and length, the shuffle's layout, the graph codec's choices and branches, the
// StreamVByte decoder against libstreamvbyte's, and damaged payloads.
#include "compress/codec.h"

#include <gtest/gtest.h>
#include <streamvbyte.h>
#include <sys/mman.h>
#include <unistd.h>

#include <random>

#include "compress/byte_shuffle.h"
#include "compress/stream_vbyte.h"
#include "compress/svb_codec.h"
#include "tests/compress/test_data.h"

namespace graphfs::compress {
namespace {

using testing::AllSpecs;
using testing::DataKind;
using testing::KindName;
using testing::MakeData;

std::unique_ptr<Codec> Make(const CodecSpec& spec) {
  auto codec = NewCodec(spec);
  EXPECT_TRUE(codec.ok()) << spec.Name() << ": " << codec.error().message();
  return codec.ok() ? std::move(codec.value()) : nullptr;
}

// Compresses and decompresses `raw`; returns the payload size (or -1 after a failure).
long RoundTrip(Codec& codec, const std::vector<char>& raw, const std::string& what) {
  std::string payload;
  Status st = codec.Compress(raw, &payload);
  EXPECT_TRUE(st.ok()) << what << ": " << st.error().message();
  if (!st.ok()) return -1;
  EXPECT_LE(payload.size(), codec.MaxCompressedSize(raw.size())) << what;
  std::vector<char> back(raw.size(), '\x55');
  st = codec.Decompress(payload, back);
  EXPECT_TRUE(st.ok()) << what << ": " << st.error().message();
  if (!st.ok()) return -1;
  EXPECT_TRUE(back == raw) << what << ": decoded bytes differ";
  return back == raw ? static_cast<long>(payload.size()) : -1;
}

TEST(CodecSpec, ParsesNamesAndLevels) {
  auto spec = ParseCodecSpec("zstd", 8);
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  EXPECT_EQ(spec->id, CodecId::kZstd);
  EXPECT_EQ(spec->level, kDefaultZstdLevel);
  spec = ParseCodecSpec("shuffle-zstd:1", 12);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->id, CodecId::kShuffleZstd);
  EXPECT_EQ(spec->level, 1);
  EXPECT_EQ(spec->record_size, 12u);
  spec = ParseCodecSpec("lz4", 8);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->level, 0);
  EXPECT_EQ(spec->Name(), "lz4");
  // Every spec's name parses back to it.
  for (uint32_t r : {8u, 12u}) {
    for (const CodecSpec& s : AllSpecs(r)) {
      auto again = ParseCodecSpec(s.Name(), r);
      ASSERT_TRUE(again.ok()) << s.Name();
      EXPECT_EQ(*again, s) << s.Name();
    }
  }
}

TEST(CodecSpec, IdsAreStable) {
  // Frames on disk store these numbers: changing one makes old units undecodable.
  const std::vector<std::string_view> want = {"none", "zstd", "lz4", "shuffle-zstd", "shuffle-lz4", "svb", "svb-zstd"};
  EXPECT_EQ(CodecNames(), want);
  for (size_t i = 0; i < want.size(); ++i) {
    auto spec = ParseCodecSpec(want[i], 8);
    ASSERT_TRUE(spec.ok()) << want[i];
    EXPECT_EQ(static_cast<size_t>(spec->id), i) << want[i];
  }
  EXPECT_EQ(static_cast<int>(CodecId::kSvbZstd), 6);
}

TEST(CodecSpec, RefusesBadNamesLevelsAndRecordSizes) {
  const struct {
    const char* text;
    uint32_t record_size;
    const char* says;
  } bad[] = {
      {"gzip", 8, "unknown codec 'gzip'"},
      {"", 8, "unknown codec"},
      {"ZSTD", 8, "unknown codec"},
      {"zstd:0", 8, "level 0 is out of range"},
      {"zstd:23", 8, "level 23 is out of range"},
      {"zstd:-1", 8, "out of range"},
      {"zstd:", 8, "is not a number"},
      {"zstd:x", 8, "'x' is not a number"},
      {"zstd:1x", 8, "is not a number"},
      {"zstd:99999999999", 8, "is not a number"},
      {"lz4:1", 8, "takes no level"},
      {"svb:3", 8, "takes no level"},
      {"none:0", 8, "takes no level"},
      {"svb", 16, "record size 16"},
      {"svb-zstd:1", 4, "record size 4"},
      {"zstd:1", 0, "record size 0"},
      {"shuffle-lz4", 256, "record size 256"},
  };
  for (const auto& b : bad) {
    auto spec = ParseCodecSpec(b.text, b.record_size);
    ASSERT_FALSE(spec.ok()) << b.text;
    EXPECT_EQ(spec.error().code(), EINVAL) << b.text;
    EXPECT_NE(spec.error().message().find(b.says), std::string::npos) << b.text << ": " << spec.error().message();
  }
  // The unknown-name message lists the known ones.
  EXPECT_NE(ParseCodecSpec("gzip", 8).error().message().find("shuffle-lz4"), std::string::npos);
  // NewCodec checks a hand-made spec the same way.
  CodecSpec spec;
  spec.id = CodecId::kZstd;
  spec.level = 0;
  EXPECT_FALSE(NewCodec(spec).ok());
  spec.id = static_cast<CodecId>(kCodecCount);
  EXPECT_FALSE(NewCodec(spec).ok());
}

TEST(Codec, EveryCodecRoundTripsEveryKindAndLength) {
  std::mt19937_64 rng(18);
  for (uint32_t r : {8u, 12u}) {
    for (const CodecSpec& spec : AllSpecs(r)) {
      auto codec = Make(spec);
      ASSERT_NE(codec, nullptr);
      for (DataKind kind : testing::kAllKinds) {
        // The edges of the record size, and random lengths up to 3 MiB (most of them not a
        // multiple of the record size), the last one above 3 MiB.
        std::vector<size_t> lengths = {0, 1, r - 1, r, r + 1, 5 * r + 3, 4096};
        for (int i = 0; i < 2; ++i) lengths.push_back(rng() % (3 << 20));
        lengths.push_back((3 << 20) + 5);
        for (size_t len : lengths) {
          const auto raw = MakeData(kind, len, r, static_cast<uint32_t>(len));
          RoundTrip(*codec, raw, spec.Name() + " r" + std::to_string(r) + " " + KindName(kind) + " " +
                                     std::to_string(len) + " bytes");
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  }
}

TEST(Codec, CompressibleDataShrinksAndCompressAppends) {
  for (uint32_t r : {8u, 12u}) {
    const auto zeros = MakeData(DataKind::kZeros, 1 << 20, r, 1);
    const auto edges = MakeData(DataKind::kSortedEdges, 1 << 20, r, 2);
    for (const CodecSpec& spec : AllSpecs(r)) {
      if (spec.id == CodecId::kNone) continue;
      auto codec = Make(spec);
      ASSERT_NE(codec, nullptr);
      std::string out = "prefix";
      ASSERT_TRUE(codec->Compress(zeros, &out).ok());
      EXPECT_EQ(out.substr(0, 6), "prefix") << spec.Name();
      // svb spends a control byte per 4 values and keeps weights raw; the others crush zeros.
      EXPECT_LT(out.size() - 6, zeros.size() / (spec.id == CodecId::kSvb ? 2 : 100)) << spec.Name();
      std::vector<char> back(zeros.size(), 1);
      ASSERT_TRUE(codec->Decompress(std::span<const char>(out).subspan(6), back).ok()) << spec.Name();
      EXPECT_TRUE(back == zeros) << spec.Name();
      // A sorted edge block shrinks with every codec (LZ4 and zstd alone find least).
      const long size = RoundTrip(*codec, edges, spec.Name() + " sorted edges");
      EXPECT_LT(size, static_cast<long>(edges.size() * 9 / 10)) << spec.Name();
    }
  }
}

TEST(ByteShuffle, PutsEachByteOfTheRecordsInItsOwnPlane) {
  // Three records of 4 bytes and a 2-byte tail.
  const std::string in = "ABCDabcd0123xy";
  std::string out(in.size(), '?');
  ShuffleBytes(in, 4, out.data());
  EXPECT_EQ(out, "Aa0Bb1Cc2Dd3xy");
  std::string back(in.size(), '?');
  UnshuffleBytes(out, 4, back.data());
  EXPECT_EQ(back, in);
  // Any record size, including the generic path and sizes larger than the input.
  std::mt19937_64 rng(3);
  for (size_t r : {1, 2, 3, 5, 7, 8, 12, 13, 255}) {
    for (size_t len : {0, 1, 100, 1001}) {
      std::string data(len, 0);
      for (char& c : data) c = static_cast<char>(rng());
      std::string planes(len, 0), again(len, 0);
      ShuffleBytes(data, r, planes.data());
      const size_t n = len / r;
      for (size_t i = 0; i < n && r > 1; ++i) {
        ASSERT_EQ(planes[1 * n + i], data[i * r + 1]) << "r " << r << " len " << len;
      }
      UnshuffleBytes(planes, r, again.data());
      ASSERT_EQ(again, data) << "r " << r << " len " << len;
    }
  }
}

TEST(ByteShuffle, UnshufflesTheEdgeRecordSizesSixteenAtATimeAsTheByteLoopDoes) {
  // 4, 8 and 12 take the vector path, 16 records a step, the rest byte by byte: every count
  // of records around the step (and a 2 MiB unit's), a tail, and buffers off any alignment.
  std::mt19937_64 rng(5);
  for (size_t r : {4, 8, 12}) {
    for (size_t n : {0, 1, 15, 16, 17, 31, 32, 33, 47, 100, 174762}) {
      for (size_t tail : {0, 3}) {
        const size_t len = n * r + (tail % r);
        std::string planes(len + 1, 0);
        for (char& c : planes) c = static_cast<char>(rng());
        const std::span<const char> in(planes.data() + 1, len);  // off alignment
        std::string want(len, 0);
        for (size_t i = 0; i < n; ++i)
          for (size_t b = 0; b < r; ++b) want[i * r + b] = in[b * n + i];
        for (size_t k = n * r; k < len; ++k) want[k] = in[k];
        std::string got(len + 5, '\x5a');  // guard bytes after the end must stay
        UnshuffleBytes(in, r, got.data() + 2);
        ASSERT_EQ(got.substr(2, len), want) << "r " << r << " n " << n << " tail " << tail;
        ASSERT_EQ(got.substr(0, 2), "\x5a\x5a") << "r " << r << " n " << n;
        ASSERT_EQ(got.substr(2 + len), "\x5a\x5a\x5a") << "wrote past the end: r " << r << " n " << n;
      }
    }
  }
}

TEST(Codec, ShuffleCodecsTakeAnyRecordSize) {
  for (uint32_t r : {1u, 3u, 7u, 13u, 255u}) {
    for (const char* name : {"shuffle-zstd:1", "shuffle-lz4", "zstd:1", "lz4", "none"}) {
      auto spec = ParseCodecSpec(name, r);
      ASSERT_TRUE(spec.ok()) << name << " " << r;
      auto codec = Make(*spec);
      ASSERT_NE(codec, nullptr);
      for (size_t len : {0u, 1u, 1000u, 70001u}) {
        RoundTrip(*codec, MakeData(DataKind::kSortedEdges, len, 8, 9), spec->Name() + " r" + std::to_string(r));
      }
    }
  }
}

// Every combination of forced choices in the graph codec, on data that needs the wrapping
// arithmetic (ids at the int32 extremes, descending runs).
TEST(SvbCodec, EveryCodingRoundTrips) {
  using Enc = SvbOptions::Encoding;
  using Ref = SvbOptions::TargetRef;
  std::mt19937_64 rng(7);
  for (uint32_t r : {8u, 12u}) {
    std::vector<std::vector<char>> inputs;
    for (DataKind kind : testing::kAllKinds) inputs.push_back(MakeData(kind, 100003, r, 5));
    std::vector<char> extremes(r * 1000 + 3);
    const int32_t values[] = {INT32_MIN, INT32_MAX, 0, -1, 1, INT32_MIN + 1};
    for (size_t i = 0; i < extremes.size() / 4; ++i) {
      const int32_t v = values[rng() % std::size(values)];
      std::memcpy(extremes.data() + 4 * i, &v, 4);
    }
    inputs.push_back(extremes);
    // Short units: the decoder takes records four at a time, then one at a time for the rest.
    for (size_t k = 0; k < 11; ++k)
      inputs.push_back(MakeData(testing::kAllKinds[k % std::size(testing::kAllKinds)], r * k + k % 3, r, 11 + k));
    for (Ref ref : {Ref::kBest, Ref::kPrevious, Ref::kSource}) {
      for (Enc se : {Enc::kBest, Enc::k1234, Enc::k0124}) {
        for (Enc te : {Enc::kBest, Enc::k1234, Enc::k0124}) {
          for (bool shuffle : {false, true}) {
            SvbOptions o;
            o.target_ref = ref;
            o.source_encoding = se;
            o.target_encoding = te;
            o.shuffle_weights = shuffle;
            CodecSpec spec;
            spec.id = CodecId::kSvb;
            spec.record_size = r;
            auto codec = NewSvbCodec(spec, o);
            for (const auto& raw : inputs) {
              RoundTrip(*codec, raw,
                        "svb r" + std::to_string(r) + " ref " + std::to_string(static_cast<int>(ref)) + " enc " +
                            std::to_string(static_cast<int>(se)) + "/" + std::to_string(static_cast<int>(te)) +
                            (shuffle ? " shuffled" : ""));
              if (::testing::Test::HasFailure()) return;
            }
          }
        }
      }
    }
  }
}

// The encoder's per-unit choice is never worse than a forced one, and picks the reference
// the data favours.
TEST(SvbCodec, PicksTheSmallestCoding) {
  using Enc = SvbOptions::Encoding;
  using Ref = SvbOptions::TargetRef;
  CodecSpec spec;
  spec.id = CodecId::kSvb;
  spec.record_size = 8;
  auto size_with = [&](const std::vector<char>& raw, Ref ref, Enc se, Enc te) {
    SvbOptions o;
    o.target_ref = ref;
    o.source_encoding = se;
    o.target_encoding = te;
    std::string out;
    EXPECT_TRUE(NewSvbCodec(spec, o)->Compress(raw, &out).ok());
    return out.size();
  };
  // Targets just above their source: one byte against the source, three at every new source
  // against the previous target (sources jump). Sources repeat: zero deltas, free in 0-1-2-4.
  std::vector<char> near(8 * 10000);
  std::mt19937_64 rng(11);
  for (int i = 0; i < 10000; ++i) {
    const int32_t s = (i / 4) * 100000, t = s + 1 + i % 4;
    std::memcpy(near.data() + 8 * i, &s, 4);
    std::memcpy(near.data() + 8 * i + 4, &t, 4);
  }
  // Ascending targets in steps of 1 from an unrelated base: small against the previous target.
  std::vector<char> runs(8 * 10000);
  for (int i = 0; i < 10000; ++i) {
    const int32_t s = static_cast<int32_t>(rng() % 1000000), t = 5000000 + i;
    std::memcpy(runs.data() + 8 * i, &s, 4);
    std::memcpy(runs.data() + 8 * i + 4, &t, 4);
  }
  for (const auto* raw : {&near, &runs}) {
    const size_t best = size_with(*raw, Ref::kBest, Enc::kBest, Enc::kBest);
    for (Ref ref : {Ref::kPrevious, Ref::kSource}) {
      for (Enc se : {Enc::k1234, Enc::k0124}) {
        for (Enc te : {Enc::k1234, Enc::k0124}) EXPECT_LE(best, size_with(*raw, ref, se, te));
      }
    }
  }
  EXPECT_EQ(size_with(near, Ref::kBest, Enc::kBest, Enc::kBest), size_with(near, Ref::kSource, Enc::k0124, Enc::kBest));
  EXPECT_LT(size_with(near, Ref::kSource, Enc::kBest, Enc::kBest),
            size_with(near, Ref::kPrevious, Enc::kBest, Enc::kBest));
  EXPECT_EQ(size_with(runs, Ref::kBest, Enc::kBest, Enc::kBest), size_with(runs, Ref::kPrevious, Enc::kBest, Enc::kBest));
  EXPECT_LT(size_with(runs, Ref::kPrevious, Enc::kBest, Enc::kBest),
            size_with(runs, Ref::kSource, Enc::kBest, Enc::kBest));
}

// A buffer of `bytes` whose end touches an inaccessible page: reading one byte past it faults.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t bytes) {
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    pages_ = (bytes + page - 1) / page * page + page;
    base_ = static_cast<char*>(::mmap(nullptr, pages_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    EXPECT_NE(base_, MAP_FAILED);
    EXPECT_EQ(::mprotect(base_ + pages_ - page, page, PROT_NONE), 0);
    data_ = base_ + pages_ - page - bytes;
  }
  ~GuardedBuffer() { ::munmap(base_, pages_); }
  char* data() { return data_; }

 private:
  char* base_;
  size_t pages_;
  char* data_;
};

TEST(StreamVByte, DecoderAgreesWithTheLibraryAndStopsAtTheEnd) {
  std::mt19937_64 rng(4);
  for (bool zero124 : {false, true}) {
    for (uint32_t n : {0u, 1u, 3u, 4u, 5u, 15u, 16u, 17u, 31u, 32u, 33u, 1000u, 100003u}) {
      std::vector<uint32_t> values(n);
      for (auto& v : values) {
        const int bytes = static_cast<int>(rng() % 5);  // 0..4 significant bytes
        v = bytes == 0 ? 0 : static_cast<uint32_t>(rng()) >> (32 - 8 * bytes);
      }
      std::vector<uint8_t> stream(streamvbyte_max_compressedbytes(n));
      const size_t length = zero124 ? streamvbyte_encode_0124(values.data(), n, stream.data())
                                    : streamvbyte_encode(values.data(), n, stream.data());
      ASSERT_EQ(StreamVByteBytes(stream.data(), n, zero124), length) << n;
      // The stream flush against a page nobody may read: the decoder must stop at its end.
      GuardedBuffer guarded(length);
      if (length > 0) std::memcpy(guarded.data(), stream.data(), length);
      const auto* in = reinterpret_cast<const uint8_t*>(guarded.data());
      std::vector<uint32_t> ours(n + 1, 0xdeadbeef), theirs(n + 1, 0xdeadbeef);
      EXPECT_EQ(StreamVByteDecode(in, n, zero124, in + length, ours.data()), length) << n;
      EXPECT_EQ(ours.back(), 0xdeadbeef) << "wrote past n=" << n;
      // Control bytes that announce 4 data bytes a value: past the end for any stream that had a
      // shorter value. The decoder stops at the guard page's edge and says so.
      if (n > 0) {
        std::vector<uint32_t> scratch(n);
        GuardedBuffer lying(length);
        std::memcpy(lying.data(), stream.data(), length);
        std::memset(lying.data(), 0xff, StreamVByteControlBytes(n));
        const auto* bad = reinterpret_cast<const uint8_t*>(lying.data());
        const uint64_t got = StreamVByteDecode(bad, n, zero124, bad + length, scratch.data());
        if (StreamVByteBytes(bad, n, zero124) > length) {
          EXPECT_EQ(got, kStreamVByteOverrun) << n;
        } else {
          EXPECT_EQ(got, StreamVByteBytes(bad, n, zero124)) << n;
        }
      }
      ours.pop_back();
      EXPECT_EQ(ours, values) << "n=" << n << (zero124 ? " 0124" : "");
      const size_t used = zero124 ? streamvbyte_decode_0124(stream.data(), theirs.data(), n)
                                  : streamvbyte_decode(stream.data(), theirs.data(), n);
      theirs.pop_back();
      EXPECT_EQ(used, length);
      EXPECT_EQ(theirs, values) << "library, n=" << n;
    }
  }
}

TEST(SvbCodec, DecodesPayloadsThatEndTheBuffer) {
  for (uint32_t r : {8u, 12u}) {
    for (const char* name : {"svb", "svb-zstd:1"}) {
      auto codec = Make(*ParseCodecSpec(name, r));
      for (size_t records : {0u, 1u, 4u, 31u, 32u, 1000u, 4096u}) {
        const auto raw = MakeData(DataKind::kUnsortedEdges, records * r, r, 8);
        std::string payload;
        ASSERT_TRUE(codec->Compress(raw, &payload).ok());
        GuardedBuffer guarded(payload.size());
        std::memcpy(guarded.data(), payload.data(), payload.size());
        std::vector<char> back(raw.size());
        ASSERT_TRUE(codec->Decompress({guarded.data(), payload.size()}, back).ok()) << name << " " << records;
        EXPECT_TRUE(back == raw) << name << " " << records;
      }
    }
  }
}

// Without a frame's checksum a codec may decode damaged bytes into other bytes; what it must
// never do is crash, overrun, or accept a payload of the wrong length for the raw size.
TEST(Codec, DamagedPayloadsFailOrStayInBounds) {
  std::mt19937_64 rng(12);
  for (uint32_t r : {8u, 12u}) {
    const auto raw = MakeData(DataKind::kSortedEdges, 50 * r + 5, r, 13);
    for (const CodecSpec& spec : AllSpecs(r)) {
      auto codec = Make(spec);
      std::string payload;
      ASSERT_TRUE(codec->Compress(raw, &payload).ok());
      std::vector<char> back(raw.size());
      // One byte short or one byte too many.
      Status st = codec->Decompress(std::span<const char>(payload).first(payload.size() - 1), back);
      EXPECT_FALSE(st.ok()) << spec.Name() << " took a truncated payload";
      if (!st.ok()) {
        EXPECT_EQ(st.error().code(), EIO) << st.error().message();
      }
      std::string longer = payload + '\0';
      st = codec->Decompress(longer, back);
      EXPECT_FALSE(st.ok()) << spec.Name() << " took a payload with a byte too many";
      // The wrong raw length.
      std::vector<char> other(raw.size() + r);
      EXPECT_FALSE(codec->Decompress(payload, other).ok()) << spec.Name();
      // Every byte flipped in turn, then random garbage: an EIO or some output, never a crash
      // (ASan builds check the bounds).
      for (size_t i = 0; i < payload.size(); ++i) {
        std::string damaged = payload;
        damaged[i] ^= static_cast<char>(1 + rng() % 255);
        st = codec->Decompress(damaged, back);
        if (!st.ok()) {
          ASSERT_EQ(st.error().code(), EIO) << spec.Name() << ": " << st.error().message();
        }
      }
      for (int k = 0; k < 50; ++k) {
        std::string garbage(rng() % 2000, 0);
        for (char& c : garbage) c = static_cast<char>(rng());
        st = codec->Decompress(garbage, back);
        if (!st.ok()) {
          ASSERT_EQ(st.error().code(), EIO) << spec.Name() << ": " << st.error().message();
        }
      }
    }
  }
}

}  // namespace
}  // namespace graphfs::compress
