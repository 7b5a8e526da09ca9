// Frames cut into blocks (version 2, compress/unit_frame.h): round trips of every codec and
// both edge record sizes, a block range decoding to the whole unit's slice, v1 frames read as
// one block, and damage — in any block, in the table, forged tables under valid checksums — is
// EIO naming the block, never wrong bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string_view>

#include "compress/unit_frame.h"
#include "tests/compress/reseal.h"
#include "tests/compress/test_data.h"

namespace graphfs::compress {
namespace {

using testing::AllSpecs;
using testing::DataKind;
using testing::MakeData;
using testing::ResealBlocks;

constexpr size_t kUnit = 2 << 20;  // a column chunk

std::string EncodeBlocks(const CodecSpec& spec, const std::vector<char>& raw, uint32_t block_bytes) {
  auto codec = NewCodec(spec);
  EXPECT_TRUE(codec.ok());
  std::string frame;
  Status st = EncodeUnit(**codec, raw, &frame, block_bytes);
  EXPECT_TRUE(st.ok()) << spec.Name() << ": " << st.error().message();
  return frame;
}

// Refused with EIO; returns the message.
std::string Eio(const Status& st, const std::string& what) {
  EXPECT_FALSE(st.ok()) << what << ": accepted";
  if (st.ok()) return "";
  EXPECT_EQ(st.error().code(), EIO) << what << ": " << st.error().message();
  return st.error().message();
}

Status DecodeRange(const std::string& frame, size_t first, size_t end, std::vector<char>* out) {
  auto layout = ReadFrameLayout(frame);
  if (!layout.ok()) return layout.error();
  out->assign(end > first ? layout->RawOffset(end - 1) + layout->RawBytes(end - 1) - layout->RawOffset(first) : 0, 0);
  return DecodeBlocks(frame, *layout, first, end, *out);
}

TEST(BlockFrame, BlocksAreWholeRecords) {
  EXPECT_EQ(BlockBytesFor(8), 65536u);
  EXPECT_EQ(BlockBytesFor(12), 65532u);  // 5461 records
  EXPECT_EQ(BlockBytesFor(12, 10), 12u);  // at least one record
  auto codec = NewCodec(*ParseCodecSpec("svb", 12));
  std::string frame;
  Status st = EncodeUnit(**codec, MakeData(DataKind::kSortedEdges, 1200, 12, 1), &frame, 65536);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), EINVAL);
}

TEST(BlockFrame, RoundTripsEveryCodecAndRecordSize) {
  std::mt19937_64 rng(2);
  for (uint32_t r : {8u, 12u}) {
    const uint32_t block = BlockBytesFor(r);
    for (const CodecSpec& spec : AllSpecs(r)) {
      for (DataKind kind : {DataKind::kSortedEdges, DataKind::kUnsortedEdges, DataKind::kZeros, DataKind::kRandom}) {
        for (size_t len : {size_t{0}, size_t{r + 1}, size_t{block - 1}, size_t{block}, size_t{block + 5}, kUnit,
                           kUnit + 7, size_t{rng() % (3 << 20)}}) {
          const auto raw = MakeData(kind, len, r, static_cast<uint32_t>(len + r));
          const std::string frame = EncodeBlocks(spec, raw, block);
          auto layout = ReadFrameLayout(frame);
          ASSERT_TRUE(layout.ok()) << spec.Name() << " " << len << ": " << layout.error().message();
          EXPECT_EQ(layout->header.version, kUnitFrameV2);
          EXPECT_EQ(layout->header.frame_bytes(), frame.size());
          EXPECT_EQ(layout->block_count(), (len + block - 1) / block);
          // Random bytes shrink in no block: the frame says none; zeros keep their codec.
          if (len >= 4096 && (kind == DataKind::kRandom || kind == DataKind::kZeros)) {
            EXPECT_EQ(layout->header.codec.id, kind == DataKind::kRandom ? CodecId::kNone : spec.id)
                << spec.Name() << " " << len;
          }
          std::vector<char> out(len, '\x55');
          Status st = DecodeUnit(frame, out);
          ASSERT_TRUE(st.ok()) << spec.Name() << " " << len << ": " << st.error().message();
          ASSERT_TRUE(out == raw) << spec.Name() << " " << testing::KindName(kind) << " " << len;
        }
      }
    }
  }
}

TEST(BlockFrame, ARangeOfBlocksIsTheUnitsSlice) {
  std::mt19937_64 rng(3);
  for (uint32_t r : {8u, 12u}) {
    const auto raw = MakeData(DataKind::kSortedEdges, kUnit + 3 * r + 1, r, 4);  // a short last block, a cut record
    for (const CodecSpec& spec : AllSpecs(r)) {
      const std::string frame = EncodeBlocks(spec, raw, BlockBytesFor(r));
      auto layout = ReadFrameLayout(frame);
      ASSERT_TRUE(layout.ok());
      const size_t n = layout->block_count();
      ASSERT_EQ(n, 33u);
      std::vector<std::pair<size_t, size_t>> ranges = {{0, 1}, {n - 1, n}, {0, n}, {5, 5}, {7, 9}};
      for (int k = 0; k < 6; ++k) {
        const size_t a = rng() % n, b = rng() % n;
        ranges.push_back({std::min(a, b), std::max(a, b) + 1});
      }
      for (auto [first, end] : ranges) {
        std::vector<char> out;
        Status st = DecodeRange(frame, first, end, &out);
        ASSERT_TRUE(st.ok()) << spec.Name() << " [" << first << "," << end << "): " << st.error().message();
        const size_t from = first * layout->block_raw_bytes;
        ASSERT_EQ(out.size(), std::min(raw.size(), end * layout->block_raw_bytes) - std::min(raw.size(), from));
        EXPECT_TRUE(std::equal(out.begin(), out.end(), raw.begin() + static_cast<ptrdiff_t>(from)))
            << spec.Name() << " [" << first << "," << end << ")";
      }
      // BlocksOf: the blocks a run of records lies in.
      const uint64_t b = layout->block_raw_bytes;
      EXPECT_EQ(layout->BlocksOf(0, 1), (std::pair<size_t, size_t>{0, 1}));
      EXPECT_EQ(layout->BlocksOf(b - r, 2 * r), (std::pair<size_t, size_t>{0, 2}));
      EXPECT_EQ(layout->BlocksOf(b, b), (std::pair<size_t, size_t>{1, 2}));
      EXPECT_EQ(layout->BlocksOf(raw.size() - 1, 1), (std::pair<size_t, size_t>{n - 1, n}));
    }
  }
}

TEST(BlockFrame, AVersionOneFrameIsOneBlock) {
  const auto raw = MakeData(DataKind::kSortedEdges, 100000, 12, 5);
  auto codec = NewCodec(*ParseCodecSpec("shuffle-zstd:1", 12));
  std::string frame;
  ASSERT_TRUE(EncodeUnit(**codec, raw, &frame).ok());
  auto layout = ReadFrameLayout(frame);
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout->header.version, kUnitFrameV1);
  ASSERT_EQ(layout->block_count(), 1u);
  EXPECT_EQ(layout->BlocksOf(50000, 12), (std::pair<size_t, size_t>{0, 1}));
  std::vector<char> out(raw.size());
  ASSERT_TRUE(DecodeBlocks(frame, *layout, 0, 1, out).ok());
  EXPECT_TRUE(out == raw);
  frame[frame.size() / 2] ^= 4;
  const std::string message = Eio(DecodeBlocks(frame, *layout, 0, 1, out), "v1 payload changed");
  EXPECT_NE(message.find("checksum mismatch"), std::string::npos) << message;
}

// A byte changed in block b: the unit and any range holding b are EIO naming block b; a range
// without b decodes (only its own blocks are checked).
TEST(BlockFrame, DamageInABlockNamesTheBlock) {
  for (uint32_t r : {8u, 12u}) {
    const auto raw = MakeData(DataKind::kSortedEdges, 10 * BlockBytesFor(r) + 100, r, 6);
    for (const char* name : {"svb", "svb-zstd:1", "shuffle-lz4", "shuffle-zstd:3", "lz4", "zstd:1", "none"}) {
      const std::string frame = EncodeBlocks(*ParseCodecSpec(name, r), raw, BlockBytesFor(r));
      auto layout = ReadFrameLayout(frame);
      ASSERT_TRUE(layout.ok());
      const size_t n = layout->block_count();
      ASSERT_EQ(n, 11u);
      for (size_t b = 0; b < n; ++b) {
        const auto& block = layout->blocks[b];
        for (uint64_t at : {block.frame_offset, block.frame_offset + block.payload_bytes / 2,
                            block.frame_offset + block.payload_bytes - 1}) {
          std::string damaged = frame;
          damaged[at] ^= 0x10;
          const std::string what = std::string(name) + " block " + std::to_string(b) + " byte " + std::to_string(at);
          std::vector<char> out(raw.size());
          const std::string whole = Eio(DecodeUnit(damaged, out), what);
          EXPECT_NE(whole.find("block " + std::to_string(b) + " of 11"), std::string::npos) << whole;
          std::vector<char> part;
          const std::string range = Eio(DecodeRange(damaged, b > 0 ? b - 1 : b, b + 1, &part), what);
          EXPECT_NE(range.find("block " + std::to_string(b) + " of 11"), std::string::npos) << range;
          const size_t other = (b + 5) % n;
          Status st = DecodeRange(damaged, other, other + 1, &part);
          ASSERT_TRUE(st.ok()) << what << ", block " << other << ": " << st.error().message();
          EXPECT_TRUE(std::equal(part.begin(), part.end(),
                                 raw.begin() + static_cast<ptrdiff_t>(layout->RawOffset(other))));
        }
      }
    }
  }
}

// Every bit of the header and the table, and a byte in every block, of a frame of many small
// blocks: EIO from the whole unit and from the layout or any range.
TEST(BlockFrame, EveryFlippedBitOfTheHeaderAndTableIsDetected) {
  const auto raw = MakeData(DataKind::kSortedEdges, 50 * 12 + 5, 12, 7);
  for (const char* name : {"svb", "zstd:3", "none"}) {
    const std::string frame = EncodeBlocks(*ParseCodecSpec(name, 12), raw, 10 * 12);
    auto layout = ReadFrameLayout(frame);
    ASSERT_TRUE(layout.ok());
    ASSERT_EQ(layout->block_count(), 6u);
    for (size_t i = 0; i < layout->table_end(); ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string damaged = frame;
        damaged[i] ^= static_cast<char>(1 << bit);
        const std::string what = std::string(name) + " byte " + std::to_string(i) + " bit " + std::to_string(bit);
        std::vector<char> out(raw.size());
        Eio(DecodeUnit(damaged, out), what);
        auto l = ReadFrameLayout(damaged);
        if (l.ok()) {  // a damaged table must not pass its check
          ADD_FAILURE() << what << ": the layout was read";
        } else {
          EXPECT_EQ(l.error().code(), EIO) << what;
        }
      }
      if (::testing::Test::HasFailure()) return;
    }
    // Without the checksum (a frame verified before), the table's consistency checks still hold.
    std::string lying = frame;
    lying[kUnitHeaderBytes + kBlockTableHeadBytes] ^= 1;  // block 0's length
    EXPECT_FALSE(ReadFrameLayout(lying, /*verify_checksum=*/false).ok()) << name;
    for (size_t b = 0; b < layout->block_count(); ++b) {
      std::string damaged = frame;
      damaged[layout->blocks[b].frame_offset] ^= 1;
      std::vector<char> out(raw.size());
      Eio(DecodeUnit(damaged, out), std::string(name) + " block " + std::to_string(b));
    }
  }
}

TEST(BlockFrame, TruncatedFramesAreDetected) {
  const auto raw = MakeData(DataKind::kSortedEdges, 3 * 65536 + 800, 8, 8);
  const std::string frame = EncodeBlocks(*ParseCodecSpec("svb-zstd:1", 8), raw, BlockBytesFor(8));
  for (size_t len : {size_t{0}, size_t{31}, size_t{32}, size_t{39}, size_t{40}, size_t{100}, frame.size() / 2,
                     frame.size() - 1}) {
    std::vector<char> out(raw.size());
    Eio(DecodeUnit(frame.substr(0, len), out), "prefix of " + std::to_string(len));
  }
  // A prefix holding the header and the table gives the layout; blocks beyond it are refused.
  auto layout = ReadFrameLayout(std::string_view(frame).substr(0, 40 + 4 * 16));
  ASSERT_TRUE(layout.ok()) << layout.error().message();
  const std::string cut = frame.substr(0, layout->blocks[2].frame_offset + 1);
  std::vector<char> out(layout->RawBytes(0) + layout->RawBytes(1));
  ASSERT_TRUE(DecodeBlocks(cut, *layout, 0, 2, out).ok());
  out.resize(layout->RawBytes(2));
  const std::string message = Eio(DecodeBlocks(cut, *layout, 2, 3, out), "block 2 cut");
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  // A range into a buffer of the wrong size, or out of the frame, is the caller's mistake.
  out.resize(layout->RawBytes(3));  // 800 bytes, not block 1's 65536
  Status st = DecodeBlocks(frame, *layout, 1, 2, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), EINVAL);
  st = DecodeBlocks(frame, *layout, 3, 5, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code(), EINVAL);
}

// Tables that lie under valid checksums (a bug elsewhere, or a forger): EIO, never a decoder
// fed lengths it could overrun, never a crash.
TEST(BlockFrame, ForgedTablesWithValidChecksumsAreRefused) {
  std::mt19937_64 rng(9);
  for (uint32_t r : {8u, 12u}) {
    const auto raw = MakeData(DataKind::kSortedEdges, 40 * r * 7 + 3, r, 10);
    for (const CodecSpec& spec : AllSpecs(r)) {
      const std::string frame = EncodeBlocks(spec, raw, 40 * r);
      auto layout = ReadFrameLayout(frame);
      ASSERT_TRUE(layout.ok());
      const auto& block0 = layout->blocks[0];
      auto put = [](std::string* f, size_t at, uint32_t v) { std::memcpy(f->data() + at, &v, 4); };
      const size_t t = kUnitHeaderBytes;
      const std::pair<size_t, uint32_t> lies[] = {
          {t, 40 * r + 1},                               // blocks not a whole number of records
          {t, 0},                                        // blocks of nothing
          {t, 80 * r},                                   // fewer blocks than the count says
          {t + 4, 7},                                    // a block too few
          {t + 4, 9},                                    // a block too many
          {t + 4, 0xffffffffu},                          // a table larger than the frame
          {t + 8, block0.payload_bytes + 1},             // the payloads no longer add up
          {t + 8, block0.payload_bytes - 1},
          {t + 12, 2},                                   // an unknown flag
          {t + 12, block0.stored_raw ? 0u : 1u},         // raw as compressed, compressed as raw
      };
      for (auto [at, value] : lies) {
        std::string f = frame;
        put(&f, at, value);
        ResealBlocks(&f);
        std::vector<char> out(raw.size());
        Eio(DecodeUnit(f, out), spec.Name() + ": " + std::to_string(value) + " at " + std::to_string(at));
      }
      // Block payloads changed and resealed: the codec refuses them or decodes some bytes; in bounds.
      for (int k = 0; k < 20; ++k) {
        std::string f = frame;
        const size_t from = layout->table_end();
        f[from + rng() % (f.size() - from)] ^= static_cast<char>(1 + rng() % 255);
        ResealBlocks(&f);
        std::vector<char> out(raw.size());
        Status st = DecodeUnit(f, out);
        if (!st.ok()) {
          EXPECT_EQ(st.error().code(), EIO) << spec.Name() << ": " << st.error().message();
        }
      }
    }
  }
  // The oracle itself: resealing an unchanged frame keeps it decoding.
  const auto raw = MakeData(DataKind::kSortedEdges, 5000, 8, 11);
  std::string frame = EncodeBlocks(*ParseCodecSpec("svb", 8), raw, 800);
  ResealBlocks(&frame);
  std::vector<char> out(raw.size());
  EXPECT_TRUE(DecodeUnit(frame, out).ok());
  EXPECT_TRUE(out == raw);
}

// A unit half edges, half random bytes: the random blocks are stored raw, the frame keeps its
// codec, and reading it back gives the bytes.
TEST(BlockFrame, IncompressibleBlocksAreStoredRaw) {
  auto raw = MakeData(DataKind::kSortedEdges, 8 * 65536, 8, 12);
  const auto random = MakeData(DataKind::kRandom, 4 * 65536, 8, 13);
  std::copy(random.begin(), random.end(), raw.begin() + 2 * 65536);
  const std::string frame = EncodeBlocks(*ParseCodecSpec("shuffle-zstd:1", 8), raw, BlockBytesFor(8));
  auto layout = ReadFrameLayout(frame);
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout->header.codec.Name(), "shuffle-zstd:1");
  for (size_t b = 0; b < 8; ++b) {
    EXPECT_EQ(layout->blocks[b].stored_raw, b >= 2 && b < 6) << b;
  }
  std::vector<char> out(raw.size());
  ASSERT_TRUE(DecodeUnit(frame, out).ok());
  EXPECT_TRUE(out == raw);
}

}  // namespace
}  // namespace graphfs::compress
