// graphfs-codec-bench FILE [--record-size 8|12] [--unit-size BYTES] [--codecs "none zstd:1 ..."]
//                     [--max-bytes SIZE] [--passes 3] [--block-size SIZE]
// Cuts FILE (a graph's `column`, `row` or a block file) into units of --unit-size (rounded
// down to whole records; the last unit may be shorter), takes all of them or --max-bytes worth
// spread evenly over the file, encodes each unit independently into a frame (unit_frame.h:
// the codec, then the fallback to none and the checksum) and decodes it back, one thread.
// --block-size (not 0): version 2 frames, each unit cut into blocks of that many raw bytes
// (rounded down to whole records, as graphfs-stripe cuts them), each compressed alone, so the
// ratio includes the blocks' loss and the block table. Prints per codec the frames' bytes / raw bytes,
// compress MB/s (of raw input) and decode MB/s (of raw output, checksum included): the median
// of --passes timed passes each (steady_clock); MB = 10^6 bytes. Every decoded unit is then
// compared with the original (exit 1 on a difference). A table for people, then TSV lines
// starting with "tsv" for scripts.
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/cli_manpage.h"
#include "common/cli_size.h"
#include "common/size_parse.h"
#include "compress/codec.h"
#include "compress/unit_frame.h"

namespace {

using graphfs::compress::CodecId;
using graphfs::compress::CodecSpec;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The units to measure: all of the file's units of `unit` bytes (the last one may be
// shorter), or when `max_bytes` (not 0) is less than the file, that many bytes of whole units
// spread evenly over the file. (A prefix of `column` would be its first block only: the
// hubs' rows of R-MAT, the first rows of a grid.) Returns their bytes, back to back, each
// unit's length in *lengths and the file's size in *file_bytes.
graphfs::Result<std::vector<char>> ReadUnits(const std::string& path, uint64_t unit, uint64_t max_bytes,
                                             std::vector<uint64_t>* lengths, uint64_t* file_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return graphfs::Error::FromErrno("open " + path);
  const off_t end = ::lseek(fd, 0, SEEK_END);
  if (end < 0) {
    auto e = graphfs::Error::FromErrno("seek " + path);
    ::close(fd);
    return e;
  }
  const uint64_t size = static_cast<uint64_t>(end);
  *file_bytes = size;
  const uint64_t file_units = (size + unit - 1) / unit;
  uint64_t take = file_units;
  if (max_bytes != 0 && max_bytes < size) take = std::max<uint64_t>(1, max_bytes / unit);
  std::vector<char> data;
  for (uint64_t k = 0; k < take; ++k) {
    const uint64_t offset = k * file_units / take * unit;
    const uint64_t length = std::min(unit, size - offset);
    const size_t at = data.size();
    data.resize(at + length);
    uint64_t done = 0;
    while (done < length) {
      const ssize_t n = ::pread(fd, data.data() + at + done, length - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        auto e = n < 0 ? graphfs::Error::FromErrno("read " + path)
                       : graphfs::Error(EIO, "read " + path + ": the file shrank");
        ::close(fd);
        return e;
      }
      done += static_cast<uint64_t>(n);
    }
    lengths->push_back(length);
  }
  ::close(fd);
  return data;
}

struct Row {
  std::string codec;
  uint64_t frame_bytes = 0;
  size_t raw_units = 0;  // units the frame stored with codec none
  double compress_mbps = 0, decode_mbps = 0;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Compression ratio and single-thread speed of each codec on units of a graph file."};
  std::string file, codecs_text = "none zstd:1 zstd:3 lz4 shuffle-zstd:1 shuffle-lz4 svb svb-zstd";
  std::string unit_text = "2M", max_text = "0", block_text = "0";
  uint32_t record_size = 8;
  int passes = 3;
  app.add_option("file", file, "a graph's column or row file, or a block file")->required();
  app.add_option("--record-size", record_size, "bytes per edge record: 8 unweighted, 12 weighted")
      ->check(CLI::IsMember({8, 12}));
  app.add_option("--unit-size", unit_text, "bytes per unit, rounded down to whole records (the chunk size)");
  app.add_option("--codecs", codecs_text, "codecs to compare, separated by spaces");
  app.add_option("--max-bytes", max_text, "measure this much of the file in whole units spread over it (0: all)");
  app.add_option("--block-size", block_text,
                 "cut each unit into blocks of this many raw bytes (rounded down to whole records), each "
                 "compressed alone: frame version 2 (0: one frame per unit, version 1)");
  app.add_option("--passes", passes, "timed passes per codec and direction (the median is reported)")
      ->check(CLI::PositiveNumber);
  graphfs::AddManPageFlag(app);  // --help-man: the manual page (packaging/)
  // --help: 0; a usage error: 2 (common/cli_size.h).
  if (auto status = graphfs::ParseCommandLine(app, argc, argv)) return *status;
  auto unit_size = graphfs::ParseSize(unit_text);
  auto max_bytes = graphfs::ParseSize(max_text);
  auto block_size = graphfs::ParseSize(block_text);
  for (const auto* parsed : {&unit_size, &max_bytes, &block_size}) {
    if (!parsed->ok()) {
      std::fprintf(stderr, "graphfs-codec-bench: %s\n", parsed->error().message().c_str());
      return 2;
    }
  }
  const uint64_t block = *block_size / record_size * record_size;
  if (*block_size != 0 && (block == 0 || block > UINT32_MAX)) {
    std::fprintf(stderr, "graphfs-codec-bench: --block-size must hold a record and be below 4 GiB\n");
    return 2;
  }
  const uint64_t unit = *unit_size / record_size * record_size;
  if (unit == 0 || unit > graphfs::compress::kMaxUnitBytes) {
    std::fprintf(stderr, "graphfs-codec-bench: --unit-size must hold a record and be at most %llu bytes\n",
                 static_cast<unsigned long long>(graphfs::compress::kMaxUnitBytes));
    return 2;
  }
  std::vector<CodecSpec> specs;
  for (const std::string& name : graphfs::SplitList(codecs_text, ' ')) {
    if (name.empty()) continue;
    auto spec = graphfs::compress::ParseCodecSpec(name, record_size);
    if (!spec.ok()) {
      std::fprintf(stderr, "graphfs-codec-bench: %s\n", spec.error().message().c_str());
      return 2;
    }
    specs.push_back(*spec);
  }

  std::vector<uint64_t> lengths;
  uint64_t file_bytes = 0;
  auto data = ReadUnits(file, unit, *max_bytes, &lengths, &file_bytes);
  if (!data.ok()) {
    std::fprintf(stderr, "graphfs-codec-bench: %s\n", data.error().message().c_str());
    return 1;
  }
  if (data->empty()) {
    std::fprintf(stderr, "graphfs-codec-bench: %s is empty\n", file.c_str());
    return 1;
  }
  std::vector<std::span<const char>> units;
  uint64_t at = 0;
  for (uint64_t length : lengths) {
    units.emplace_back(data->data() + at, length);
    at += length;
  }
  const double raw_mb = static_cast<double>(data->size()) / 1e6;
  const std::string blocks_note =
      block == 0 ? "" : ", cut into blocks of " + std::to_string(block) + " bytes (frame version 2)";
  std::printf("%s: %s of %s in %zu units of %llu bytes%s%s, record size %u, median of %d passes, one thread\n",
              file.c_str(), graphfs::FormatSize(data->size()).c_str(), graphfs::FormatSize(file_bytes).c_str(),
              units.size(), static_cast<unsigned long long>(unit),
              data->size() < file_bytes ? " spread over the file" : "", blocks_note.c_str(), record_size, passes);

  std::vector<Row> rows;
  std::vector<std::string> frames(units.size());
  std::vector<char> out(unit);
  for (const CodecSpec& spec : specs) {
    auto codec = graphfs::compress::NewCodec(spec);
    if (!codec.ok()) {
      std::fprintf(stderr, "graphfs-codec-bench: %s\n", codec.error().message().c_str());
      return 1;
    }
    Row row;
    row.codec = spec.Name();
    std::vector<double> encode_s, decode_s;
    for (int p = 0; p < passes; ++p) {
      const double t0 = Now();
      for (size_t u = 0; u < units.size(); ++u) {
        graphfs::Status st = graphfs::compress::EncodeUnit(**codec, units[u], &frames[u], static_cast<uint32_t>(block));
        if (!st.ok()) {
          std::fprintf(stderr, "graphfs-codec-bench: %s unit %zu: %s\n", row.codec.c_str(), u,
                       st.error().message().c_str());
          return 1;
        }
      }
      encode_s.push_back(Now() - t0);
    }
    for (int p = 0; p < passes; ++p) {
      const double t0 = Now();
      for (size_t u = 0; u < units.size(); ++u) {
        graphfs::Status st = graphfs::compress::DecodeUnit(frames[u], std::span<char>(out.data(), units[u].size()));
        if (!st.ok()) {
          std::fprintf(stderr, "graphfs-codec-bench: %s unit %zu: %s\n", row.codec.c_str(), u,
                       st.error().message().c_str());
          return 1;
        }
      }
      decode_s.push_back(Now() - t0);
    }
    // Untimed: every unit must come back exactly.
    for (size_t u = 0; u < units.size(); ++u) {
      graphfs::Status st = graphfs::compress::DecodeUnit(frames[u], std::span<char>(out.data(), units[u].size()));
      if (!st.ok() || std::memcmp(out.data(), units[u].data(), units[u].size()) != 0) {
        std::fprintf(stderr, "graphfs-codec-bench: %s: unit %zu does not decode to its bytes\n", row.codec.c_str(), u);
        return 1;
      }
      row.frame_bytes += frames[u].size();
      auto header = graphfs::compress::PeekUnitHeader(frames[u]);
      if (header.ok() && header->codec.id == CodecId::kNone) ++row.raw_units;
    }
    row.compress_mbps = raw_mb / Median(encode_s);
    row.decode_mbps = raw_mb / Median(decode_s);
    rows.push_back(row);
  }

  std::printf("\n%-16s %8s %14s %12s %10s %14s\n", "codec", "ratio", "compress MB/s", "decode MB/s", "raw units",
              "frame bytes");
  for (const Row& r : rows) {
    std::printf("%-16s %8.4f %14.1f %12.1f %10zu %14llu\n", r.codec.c_str(),
                static_cast<double>(r.frame_bytes) / static_cast<double>(data->size()), r.compress_mbps, r.decode_mbps,
                r.raw_units, static_cast<unsigned long long>(r.frame_bytes));
  }
  std::printf("\ntsv\tfile\trecord_size\tunit_bytes\tcodec\traw_bytes\tframe_bytes\tratio\tcompress_MBps\tdecode_"
              "MBps\traw_units\tunits\tblock_bytes\n");
  for (const Row& r : rows) {
    std::printf("tsv\t%s\t%u\t%llu\t%s\t%zu\t%llu\t%.4f\t%.1f\t%.1f\t%zu\t%zu\t%llu\n", file.c_str(), record_size,
                static_cast<unsigned long long>(unit), r.codec.c_str(), data->size(),
                static_cast<unsigned long long>(r.frame_bytes),
                static_cast<double>(r.frame_bytes) / static_cast<double>(data->size()), r.compress_mbps, r.decode_mbps,
                r.raw_units, units.size(), static_cast<unsigned long long>(block));
  }
  return 0;
}
