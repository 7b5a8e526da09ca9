#include "common/size_parse.h"

#include <gtest/gtest.h>

namespace graphfs {
namespace {

TEST(ParseSize, PlainAndSuffixed) {
  EXPECT_EQ(*ParseSize("0"), 0u);
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  EXPECT_EQ(*ParseSize("16M"), 16u << 20);
  EXPECT_EQ(*ParseSize("16MiB"), 16u << 20);
  EXPECT_EQ(*ParseSize("512k"), 512u << 10);
  EXPECT_EQ(*ParseSize("1G"), 1ull << 30);
  EXPECT_EQ(*ParseSize("2TB"), 2ull << 40);
}

TEST(ParseSize, RejectsJunkNegativeAndOverflow) {
  EXPECT_FALSE(ParseSize("").ok());
  EXPECT_FALSE(ParseSize("-1").ok());
  EXPECT_FALSE(ParseSize("abc").ok());
  EXPECT_FALSE(ParseSize("12Q").ok());
  EXPECT_FALSE(ParseSize("1MX").ok());
  EXPECT_FALSE(ParseSize("99999999999999999999999").ok());
  EXPECT_FALSE(ParseSize("100000000P").ok());
  EXPECT_EQ(ParseSize("-5").error().code(), EINVAL);
}

TEST(ParseSize, Percent) {
  EXPECT_EQ(*ParseSizeOrPercent("25%", 1000), 250u);
  EXPECT_EQ(*ParseSizeOrPercent("100%", 1000), 1000u);
  EXPECT_EQ(*ParseSizeOrPercent("1K", 1000), 1024u);
  EXPECT_FALSE(ParseSizeOrPercent("101%", 1000).ok());
  EXPECT_FALSE(ParseSizeOrPercent("%", 1000).ok());
  EXPECT_FALSE(ParseSizeOrPercent("-1%", 1000).ok());
}

TEST(FormatSize, Readable) {
  EXPECT_EQ(FormatSize(0), "0 B");
  EXPECT_EQ(FormatSize(16u << 20), "16 MiB");
  EXPECT_EQ(FormatSize(1536), "1.5 KiB");
}

TEST(SizeText, LargestUnitThatDividesAndReadsBack) {
  EXPECT_EQ(SizeText(0), "0");
  EXPECT_EQ(SizeText(4097), "4097");
  EXPECT_EQ(SizeText(64u << 10), "64K");
  EXPECT_EQ(SizeText(512ull << 20), "512M");
  EXPECT_EQ(SizeText(1536ull << 20), "1536M");
  EXPECT_EQ(SizeText(2ull << 40), "2T");
  EXPECT_EQ(SizeText(4096ull << 40), "4096T");
  for (uint64_t v : {0ull, 1ull, 4097ull, 64ull << 10, 1536ull << 20, 1ull << 30, 3ull << 40})
    EXPECT_EQ(*ParseSize(SizeText(v)), v) << SizeText(v);
}

}  // namespace
}  // namespace graphfs

namespace graphfs {
namespace {

TEST(SplitList, KeepsEmptyItems) {
  EXPECT_EQ(SplitList("a,b,c", ','), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(SplitList("a::b", ':'), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(SplitList("", ','), (std::vector<std::string>{""}));
  EXPECT_EQ(SplitList("x", ','), (std::vector<std::string>{"x"}));
}

}  // namespace
}  // namespace graphfs
