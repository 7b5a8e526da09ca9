// The tools' progress line (striping/progress_line.h): what it says, that it is redrawn in place
// and at most twice a second, and that a final line ends it.
#include "striping/progress_line.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace graphfs {
namespace {

// A FILE* that collects what is written to it.
struct Captured {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* file = ::open_memstream(&data, &size);
  ~Captured() {
    if (file) std::fclose(file);
    std::free(data);
  }
  std::string text() {
    std::fflush(file);
    return std::string(data, size);
  }
};

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ProgressLine, SaysBytesOfTheTotalAndTheFileAtHand) {
  Captured out;
  ProgressLine progress(true, "graphfs-scrub", 4ull << 20, out.file);
  progress.Update(1ull << 20, "/g/column");
  const std::string line = out.text();
  EXPECT_EQ(line.rfind("\rgraphfs-scrub: 1 MiB / 4 MiB (25%) ", 0), 0u) << line;
  EXPECT_NE(line.find(" MB/s, "), std::string::npos) << line;
  EXPECT_NE(line.find(" left  /g/column\033[K"), std::string::npos) << line;  // redrawn in place
}

TEST(ProgressLine, FinishDrawsAndEndsTheLine) {
  Captured out;
  ProgressLine progress(true, "column", 2ull << 20, out.file);
  progress.Update(1ull << 20);
  progress.Finish(2ull << 20);  // at once: drawn all the same
  const std::string text = out.text();
  EXPECT_EQ(Count(text, "\r"), 2u) << text;
  EXPECT_NE(text.find("\rcolumn: 2 MiB / 2 MiB (100%) "), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n') << text;
  EXPECT_EQ(text.find("  \n"), std::string::npos) << "no file: nothing after the time left";
}

TEST(ProgressLine, RedrawnAtMostTwiceASecond) {
  Captured out;
  ProgressLine progress(true, "graphfs-rebuild", 1000, out.file);
  for (uint64_t done = 0; done < 1000; ++done) progress.Update(done, "f");
  // A thousand updates in far less than a few seconds: a handful of lines, not a thousand.
  EXPECT_LE(Count(out.text(), "\r"), 5u);
}

TEST(ProgressLine, OffSaysNothing) {
  Captured out;
  ProgressLine progress(false, "graphfs-stripe", 10, out.file);
  progress.Update(5, "f");
  progress.Finish(10);
  EXPECT_EQ(out.text(), "");
}

TEST(ProgressLine, AResumedRunCountsItsOwnRate) {
  Captured out;
  ProgressLine progress(true, "row", 8ull << 20, out.file);
  progress.Start(6ull << 20);  // a killed run did 6 MiB
  progress.Finish(6ull << 20);
  EXPECT_NE(out.text().find("(75%) 0 MB/s"), std::string::npos) << out.text();
}

}  // namespace
}  // namespace graphfs
