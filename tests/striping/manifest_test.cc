// Manifest version 2 (parity and block sums, docs/parity.md "The manifest") beside version 1,
// which must read as before. Version 1's own damage cases are in striped_file_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "striping/manifest.h"

namespace graphfs {
namespace {

StripeManifest Plain() {
  StripeManifest m;
  m.file_id = "abc123";
  m.set_id = "set";
  m.size = 10'000'000;
  m.layout = {1u << 20, 4, 2};
  return m;
}

std::string Message(const Result<StripeManifest>& r) { return r.ok() ? "(accepted)" : r.error().message(); }

TEST(ManifestV2, FileWithoutParityOrSumsStaysVersion1) {
  const StripeManifest m = Plain();
  EXPECT_EQ(m.version(), 1u);
  const std::string text = m.Encode();
  EXPECT_NE(text.find("\"v\":1"), std::string::npos) << text;
  EXPECT_EQ(text.find("parity"), std::string::npos) << text;
  EXPECT_EQ(text.find("sum_block"), std::string::npos) << text;
  auto d = StripeManifest::Decode(text);
  ASSERT_TRUE(d.ok()) << Message(d);
  EXPECT_EQ(d->layout.parity, 0u);
  EXPECT_EQ(d->sum_block, 0u);
}

// What a daemon of before wrote, byte for byte, still reads the same.
TEST(ManifestV2, ReadsVersion1Unchanged) {
  auto d = StripeManifest::Decode(
      R"({"v":1,"id":"abc","set":"0123456789abcdef","size":1000000,"unit":1048576,"disks":4,"first":1,)"
      R"("packed":{"codec":"zstd:1","stream":409656,"dir":409600},"xxh3":"00000000000000ff"})");
  ASSERT_TRUE(d.ok()) << Message(d);
  EXPECT_EQ(d->layout.unit, 1048576u);
  EXPECT_EQ(d->layout.disks, 4u);
  EXPECT_EQ(d->layout.first_disk, 1u);
  EXPECT_EQ(d->layout.parity, 0u);
  EXPECT_EQ(d->sum_block, 0u);
  ASSERT_TRUE(d->packed.has_value());
  EXPECT_EQ(d->packed->stream_size, 409656u);
  EXPECT_EQ(*d->checksum, 255u);
  EXPECT_EQ(d->version(), 1u);
}

TEST(ManifestV2, RoundTripsParityAndSumBlock) {
  for (uint32_t k : {0u, 1u, 2u}) {
    StripeManifest m = Plain();
    m.layout.parity = k;
    m.sum_block = kDefaultSumBlock;
    m.checksum = 0x0123456789abcdefull;
    m.packed = PackedInfo{"zstd:1", 409656, 409600};
    EXPECT_EQ(m.version(), 2u);
    const std::string text = m.Encode();
    EXPECT_NE(text.find("\"v\":2"), std::string::npos) << text;
    auto d = StripeManifest::Decode(text);
    ASSERT_TRUE(d.ok()) << Message(d);
    EXPECT_EQ(d->layout.parity, k);
    EXPECT_EQ(d->sum_block, kDefaultSumBlock);
    EXPECT_EQ(d->layout.first_disk, 2u);
    EXPECT_EQ(d->size, m.size);
    EXPECT_EQ(*d->checksum, *m.checksum);
    EXPECT_EQ(d->packed->directory_offset, 409600u);
    EXPECT_EQ(d->Encode(), text);
  }
}

TEST(ManifestV2, RefusesParityThatLeavesNoDataUnit) {
  const std::string head = R"({"v":2,"id":"f","set":"s","size":100,"unit":65536,"first":0,"sum_block":65536,)";
  auto two_of_two = StripeManifest::Decode(head + R"("disks":2,"parity":2})");
  ASSERT_FALSE(two_of_two.ok());
  EXPECT_EQ(two_of_two.error().code(), EINVAL);
  EXPECT_NE(Message(two_of_two).find("parity 2 needs at least 3 disks (got 2)"), std::string::npos)
      << Message(two_of_two);
  EXPECT_FALSE(StripeManifest::Decode(head + R"("disks":1,"parity":1})").ok());
  auto three = StripeManifest::Decode(head + R"("disks":8,"parity":3})");
  ASSERT_FALSE(three.ok());
  EXPECT_NE(Message(three).find("parity 3"), std::string::npos) << Message(three);
  EXPECT_FALSE(StripeManifest::Decode(head + R"("disks":8,"parity":-1})").ok());
  EXPECT_FALSE(StripeManifest::Decode(head + R"("disks":8,"parity":4294967297})").ok());
  EXPECT_TRUE(StripeManifest::Decode(head + R"("disks":3,"parity":2})").ok());
  EXPECT_TRUE(StripeManifest::Decode(head + R"("disks":2,"parity":1})").ok());
}

TEST(ManifestV2, RefusesUnknownVersionsNamingThem) {
  const std::string rest = R"(,"id":"f","set":"s","size":100,"unit":65536,"disks":4,"first":0,"parity":1,"sum_block":65536})";
  for (const char* v : {"0", "3", "99"}) {
    auto d = StripeManifest::Decode(std::string(R"({"v":)") + v + rest);
    ASSERT_FALSE(d.ok()) << v;
    EXPECT_EQ(d.error().code(), EINVAL);
    EXPECT_NE(Message(d).find(std::string("unsupported stripe manifest version ") + v), std::string::npos)
        << Message(d);
  }
}

TEST(ManifestV2, RefusesBadSumBlocks) {
  const std::string head = R"({"v":2,"id":"f","set":"s","size":100,"unit":1048576,"disks":4,"first":0,"parity":1)";
  for (const char* block : {"0", "2048", "3000", "98304", "2097152", "-65536", "65536.0", "\"65536\""}) {
    auto d = StripeManifest::Decode(head + R"(,"sum_block":)" + block + "}");
    EXPECT_FALSE(d.ok()) << block;
    if (!d.ok()) {
      EXPECT_EQ(d.error().code(), EINVAL) << block;
    }
  }
  auto bad = StripeManifest::Decode(head + R"(,"sum_block":3000})");
  EXPECT_NE(Message(bad).find("sum_block 3000"), std::string::npos) << Message(bad);
  EXPECT_FALSE(StripeManifest::Decode(head + "}").ok());  // version 2 needs it
  EXPECT_TRUE(StripeManifest::Decode(head + R"(,"sum_block":4096})").ok());
  EXPECT_TRUE(StripeManifest::Decode(head + R"(,"sum_block":1048576})").ok());
  // A unit that is not a multiple of 4 KiB cannot have sums.
  EXPECT_FALSE(StripeManifest::Decode(
                   R"({"v":2,"id":"f","set":"s","size":100,"unit":5000,"disks":4,"first":0,"parity":1,"sum_block":4096})")
                   .ok());
}

// Version 1 never carried parity: one that does is damaged, not a parity-blind file.
TEST(ManifestV2, RefusesParityInVersion1) {
  const std::string head = R"({"v":1,"id":"f","set":"s","size":100,"unit":65536,"disks":4,"first":0,)";
  auto d = StripeManifest::Decode(head + R"("parity":1})");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(Message(d).find("'parity' in a version 1 manifest"), std::string::npos) << Message(d);
  EXPECT_FALSE(StripeManifest::Decode(head + R"("sum_block":65536})").ok());
}

}  // namespace
}  // namespace graphfs
