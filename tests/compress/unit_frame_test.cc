// The unit frame (compress/unit_frame.h): round trips through frames, the fallback to none,
// the header, and damage — every flipped byte, truncation, forged headers — is EIO and never
// wrong bytes.
#include "compress/unit_frame.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "tests/compress/reseal.h"
#include "tests/compress/test_data.h"

namespace graphfs::compress {
namespace {

using testing::AllSpecs;
using testing::DataKind;
using testing::MakeData;
using testing::Reseal;

std::string Encode(const CodecSpec& spec, const std::vector<char>& raw) {
  auto codec = NewCodec(spec);
  EXPECT_TRUE(codec.ok());
  std::string frame = "old contents";
  Status st = EncodeUnit(**codec, raw, &frame);
  EXPECT_TRUE(st.ok()) << spec.Name() << ": " << st.error().message();
  return frame;
}

void PutField(std::string* frame, size_t offset, uint64_t value, size_t bytes) {
  std::memcpy(frame->data() + offset, &value, bytes);
}

// DecodeUnit must refuse `frame` with EIO; returns the message.
std::string ExpectEio(const std::string& frame, size_t raw_bytes, const std::string& what) {
  std::vector<char> out(raw_bytes);
  Status st = DecodeUnit(frame, out);
  EXPECT_FALSE(st.ok()) << what << ": accepted";
  if (st.ok()) return "";
  EXPECT_EQ(st.error().code(), EIO) << what << ": " << st.error().message();
  return st.error().message();
}

TEST(UnitFrame, RoundTripsEveryCodecWithItsHeader) {
  std::mt19937_64 rng(1);
  for (uint32_t r : {8u, 12u}) {
    for (const CodecSpec& spec : AllSpecs(r)) {
      for (DataKind kind : {DataKind::kSortedEdges, DataKind::kUnsortedEdges, DataKind::kZeros}) {
        for (size_t len : {size_t{0}, size_t{r + 1}, size_t{rng() % (3 << 20)}, size_t{(3 << 20) + 7}}) {
          const auto raw = MakeData(kind, len, r, static_cast<uint32_t>(len));
          const std::string frame = Encode(spec, raw);
          auto header = PeekUnitHeader(frame);
          ASSERT_TRUE(header.ok()) << header.error().message();
          EXPECT_EQ(header->raw_bytes, len);
          EXPECT_EQ(header->frame_bytes(), frame.size());
          EXPECT_EQ(header->codec.record_size, r);
          // The codec is kept when it shrank the unit, none otherwise.
          if (header->codec.id != CodecId::kNone) {
            EXPECT_EQ(header->codec, spec);
            EXPECT_LT(header->payload_bytes, len);
          } else {
            EXPECT_EQ(header->payload_bytes, len);
          }
          std::vector<char> out(len, '\x77');
          Status st = DecodeUnit(frame, out);
          ASSERT_TRUE(st.ok()) << spec.Name() << " " << len << ": " << st.error().message();
          ASSERT_TRUE(out == raw) << spec.Name() << " " << len;
        }
      }
    }
  }
}

TEST(UnitFrame, IncompressibleUnitsAreStoredRaw) {
  const auto random = MakeData(DataKind::kRandom, 1 << 20, 8, 2);
  for (const CodecSpec& spec : AllSpecs(8)) {
    const std::string frame = Encode(spec, random);
    auto header = PeekUnitHeader(frame);
    ASSERT_TRUE(header.ok());
    EXPECT_EQ(header->codec.id, CodecId::kNone) << spec.Name();
    EXPECT_EQ(header->codec.level, 0);
    EXPECT_EQ(frame.size(), kUnitHeaderBytes + random.size()) << spec.Name();
    EXPECT_EQ(std::memcmp(frame.data() + kUnitHeaderBytes, random.data(), random.size()), 0);
  }
  // Zeros keep their codec, and cost a small fraction.
  const auto zeros = MakeData(DataKind::kZeros, 1 << 20, 8, 2);
  const std::string frame = Encode(*ParseCodecSpec("zstd:1", 8), zeros);
  EXPECT_EQ(PeekUnitHeader(frame)->codec.id, CodecId::kZstd);
  EXPECT_LT(frame.size(), zeros.size() / 100);
}

// Small frames of three kinds (a compressed edge block, a raw fallback, an empty unit):
// every byte changed, at every position, in every bit, is EIO.
TEST(UnitFrame, EveryFlippedBitIsDetected) {
  struct Case {
    const char* codec;
    DataKind kind;
    size_t bytes;
  } cases[] = {{"svb", DataKind::kSortedEdges, 40 * 12 + 5},
               {"zstd:3", DataKind::kSortedEdges, 600},
               {"shuffle-lz4", DataKind::kRandom, 64},
               {"svb-zstd:1", DataKind::kZeros, 0}};
  for (const Case& c : cases) {
    const auto raw = MakeData(c.kind, c.bytes, 12, 3);
    const std::string frame = Encode(*ParseCodecSpec(c.codec, 12), raw);
    std::vector<char> out(raw.size());
    ASSERT_TRUE(DecodeUnit(frame, out).ok()) << c.codec;
    for (size_t i = 0; i < frame.size(); ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string damaged = frame;
        damaged[i] ^= static_cast<char>(1 << bit);
        ExpectEio(damaged, raw.size(), std::string(c.codec) + " byte " + std::to_string(i) + " bit " + std::to_string(bit));
      }
      std::string damaged = frame;
      damaged[i] = static_cast<char>(~damaged[i]);
      ExpectEio(damaged, raw.size(), std::string(c.codec) + " byte " + std::to_string(i) + " inverted");
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(UnitFrame, RandomFlipsInALargeFrameAreDetected) {
  std::mt19937_64 rng(5);
  for (const char* name : {"svb-zstd:1", "shuffle-zstd:2", "lz4"}) {
    const auto raw = MakeData(DataKind::kSortedEdges, (3 << 20) + 3, 8, 6);
    const std::string frame = Encode(*ParseCodecSpec(name, 8), raw);
    for (int k = 0; k < 60; ++k) {
      std::string damaged = frame;
      const size_t i = k < 32 ? static_cast<size_t>(k) : rng() % frame.size();  // the header, then anywhere
      damaged[i] ^= static_cast<char>(1 << (rng() % 8));
      ExpectEio(damaged, raw.size(), std::string(name) + " byte " + std::to_string(i));
    }
  }
}

TEST(UnitFrame, TruncatedAndExtendedFramesAreDetected) {
  const auto raw = MakeData(DataKind::kSortedEdges, 3000, 8, 7);
  const std::string frame = Encode(*ParseCodecSpec("svb", 8), raw);
  for (size_t len = 0; len < frame.size(); ++len) {
    const std::string message = ExpectEio(frame.substr(0, len), raw.size(), "prefix of " + std::to_string(len));
    if (len >= kUnitHeaderBytes) {
      EXPECT_NE(message.find("truncated"), std::string::npos) << message;
    }
  }
  ExpectEio(frame + '\0', raw.size(), "one byte more");
  const auto big = MakeData(DataKind::kSortedEdges, 3 << 20, 12, 8);
  const std::string big_frame = Encode(*ParseCodecSpec("svb-zstd:2", 12), big);
  for (size_t cut : {size_t{1}, size_t{4096}, big_frame.size() / 2, big_frame.size() - kUnitHeaderBytes}) {
    ExpectEio(big_frame.substr(0, big_frame.size() - cut), big.size(), "cut by " + std::to_string(cut));
  }
}

TEST(UnitFrame, ErrorsNameWhatMismatched) {
  const auto raw = MakeData(DataKind::kSortedEdges, 1200, 12, 9);
  const std::string frame = Encode(*ParseCodecSpec("zstd:1", 12), raw);
  auto with = [&](size_t offset, uint64_t value, size_t bytes) {
    std::string f = frame;
    PutField(&f, offset, value, bytes);
    return f;
  };
  auto says = [&](const std::string& f, const std::string& text) {
    const std::string message = ExpectEio(f, raw.size(), text);
    EXPECT_NE(message.find(text), std::string::npos) << message;
  };
  says(with(0, 'X', 1), "magic");
  says(with(4, 3, 1), "version 3");
  says(with(5, 99, 1), "codec id 99");
  says(with(6, 40, 1), "level 40");
  says(with(7, 0, 1), "record size 0");
  says(with(7, 16, 1), "checksum");  // a record size zstd takes: only the checksum can tell
  says(with(8, kMaxUnitBytes + 1, 8), "raw length");
  says(with(16, raw.size(), 8), "payload length");  // zstd's payload must be smaller than raw
  says(with(16, frame.size() - kUnitHeaderBytes + 1, 8), "truncated");
  says(with(16, frame.size() - kUnitHeaderBytes - 1, 8), "its header says");
  says(with(24, 0, 8), "checksum");
  says(with(40, frame[40] ^ 1, 1), "checksum");
  says(frame.substr(0, 10), "shorter than the 32-byte header");
  // A sound frame into a buffer of the wrong size is the caller's mistake, not damage.
  std::vector<char> small(raw.size() - 1);
  Status st = DecodeUnit(frame, small);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), EINVAL);
}

TEST(UnitFrame, PeekNeedsOnlyTheHeader) {
  const auto raw = MakeData(DataKind::kUnsortedEdges, 5000, 8, 10);
  const std::string frame = Encode(*ParseCodecSpec("shuffle-zstd:3", 8), raw);
  auto header = PeekUnitHeader(std::string_view(frame).substr(0, kUnitHeaderBytes));
  ASSERT_TRUE(header.ok()) << header.error().message();
  EXPECT_EQ(header->raw_bytes, raw.size());
  EXPECT_EQ(header->frame_bytes(), frame.size());
  EXPECT_EQ(header->codec.Name(), "shuffle-zstd:3");
  auto short_header = PeekUnitHeader(std::string_view(frame).substr(0, kUnitHeaderBytes - 1));
  ASSERT_FALSE(short_header.ok());
  EXPECT_EQ(short_header.error().code(), EIO);
}

// Headers that lie but carry a matching checksum (a bug elsewhere, or a forger) still never
// reach a decoder with lengths it could overrun, and damaged payloads under a valid checksum
// fail inside the codec or decode to some bytes of the right length — never a crash.
TEST(UnitFrame, ForgedFramesWithValidChecksumsStayInBounds) {
  std::mt19937_64 rng(14);
  for (uint32_t r : {8u, 12u}) {
    const auto raw = MakeData(DataKind::kSortedEdges, 200 * r + 3, r, 15);
    for (const CodecSpec& spec : AllSpecs(r)) {
      const std::string frame = Encode(spec, raw);
      std::vector<char> out(raw.size());
      // The raw length one record more or less: the codec's lengths no longer add up.
      for (int64_t delta : {-static_cast<int64_t>(r), static_cast<int64_t>(r), int64_t{-1}}) {
        std::string f = frame;
        const uint64_t raw_bytes = raw.size() + delta;
        PutField(&f, 8, raw_bytes, 8);
        Reseal(&f);
        std::vector<char> other(raw_bytes);
        Status st = DecodeUnit(f, other);
        ASSERT_FALSE(st.ok()) << spec.Name() << " decoded as " << raw_bytes << " bytes";
        EXPECT_EQ(st.error().code(), EIO) << spec.Name() << ": " << st.error().message();
      }
      // Another codec id on the same payload.
      for (int id = 1; id < kCodecCount; ++id) {
        std::string f = frame;
        PutField(&f, 5, id, 1);
        PutField(&f, 6, CodecHasLevel(static_cast<CodecId>(id)) ? 1 : 0, 1);
        Reseal(&f);
        Status st = DecodeUnit(f, out);
        if (!st.ok()) {
          EXPECT_EQ(st.error().code(), EIO) << spec.Name() << " as id " << id;
        }
      }
      // Payload bytes changed and resealed.
      for (int k = 0; k < 40 && frame.size() > kUnitHeaderBytes; ++k) {
        std::string f = frame;
        f[kUnitHeaderBytes + rng() % (frame.size() - kUnitHeaderBytes)] ^= static_cast<char>(1 + rng() % 255);
        Reseal(&f);
        Status st = DecodeUnit(f, out);
        if (!st.ok()) {
          EXPECT_EQ(st.error().code(), EIO) << spec.Name() << ": " << st.error().message();
        }
      }
    }
  }
  // The oracle itself: a resealed, unchanged frame decodes.
  const auto raw = MakeData(DataKind::kSortedEdges, 999, 8, 16);
  std::string frame = Encode(*ParseCodecSpec("svb", 8), raw);
  Reseal(&frame);
  std::vector<char> out(raw.size());
  EXPECT_TRUE(DecodeUnit(frame, out).ok());
  EXPECT_TRUE(out == raw);
}

TEST(UnitFrame, DecodeUnitFromManyThreadsAtOnce) {
  std::vector<std::vector<char>> raws;
  std::vector<std::string> frames;
  const char* names[] = {"zstd:1", "svb-zstd:3", "shuffle-lz4", "svb", "lz4", "shuffle-zstd:2"};
  for (size_t i = 0; i < std::size(names); ++i) {
    raws.push_back(MakeData(DataKind::kSortedEdges, 300000 + i, 12, static_cast<uint32_t>(i)));
    frames.push_back(Encode(*ParseCodecSpec(names[i], 12), raws.back()));
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<char> out;
      for (int k = 0; k < 30; ++k) {
        const size_t i = static_cast<size_t>(t + k) % frames.size();
        out.assign(raws[i].size(), 0);
        if (!DecodeUnit(frames[i], out).ok() || out != raws[i]) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace graphfs::compress
