// graphfs-stripe [--unit SIZE | --engine-request SIZE] [--min-size SIZE] [--compress auto|CODEC|none
//                 [--disk-bandwidth RATE] [--decode-cores N]] [--parity K] --disks D0,D1,... GRAPH_DIR|FILE
// --parity defaults to 1 with 3 disks or more, else 0 (docs/parity.md, "The default K").
// Without --unit, each file's unit is chosen from its size, the number of disks, the engines'
// request and the disks' calibrations (striping/stripe_unit.h). Files are compressed with `auto`
// unless told `--compress none`: per file the codec that delivers its bytes fastest, or raw bytes
// where no codec would (issue 31: compressed by default).
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "chunkindex/chunk_index.h"
#include "common/cli_manpage.h"
#include "common/cli_size.h"
#include "common/size_parse.h"
#include "compress/codec.h"
#include "grid/graph_file.h"
#include "grid/grid_layout.h"
#include "striping/restripe.h"
#include "striping/restripe_crash_points.h"
#include "striping/stripe_unit.h"

namespace {

// A graph directory's record size (meta's edge type: 8 or 12 bytes per edge) and, when its
// chunk index is up to date, the chunks of `column` and `row`: the compressed units, so that a
// unit is what the cache and the logical partitions read. Anything else: fixed units.
struct GraphUnits {
  uint32_t record_size = 1;
  std::map<std::string, std::vector<uint64_t>> cuts;  // file name -> unit ends
  std::string note;
};

GraphUnits FindGraphUnits(const std::string& path) {
  GraphUnits units;
  struct stat st;
  std::string dir = path;
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    const size_t slash = path.find_last_of('/');
    dir = slash == std::string::npos ? "." : path.substr(0, slash);
  }
  auto layout = graphfs::grid::GridLayout::Open(dir);
  if (!layout.ok()) {
    units.note = "not a graph directory (" + layout.error().message() + ")";
    return units;
  }
  units.record_size = static_cast<uint32_t>(layout->edge_size());
  auto table = graphfs::chunkindex::ChunkTable::Open(dir);
  if (!table.ok()) {
    units.note = "no usable chunk index (" + table.error().message() + ")";
    return units;
  }
  for (auto file : {graphfs::chunkindex::ChunkFile::kColumn, graphfs::chunkindex::ChunkFile::kRow}) {
    std::vector<uint64_t>& ends = units.cuts[graphfs::chunkindex::ChunkFileName(file)];
    for (const auto& chunk : table->chunks(file)) ends.push_back(chunk.offset + chunk.length);
  }
  units.note = "column and row cut at their index chunks (" + graphfs::FormatSize(table->chunk_size()) + ")";
  return units;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Stripes the large files of a graph directory over disk directories (resumable, crash-safe)."};
  std::string disks;
  graphfs::StripeRequest req;
  req.compress = graphfs::kAutoCodec;
  uint64_t engine_request = graphfs::kDefaultEngineRequest, bandwidth = 0;
  bool quiet = false;
  // The rule's numbers are ChooseStripeUnit's own constants (striping/stripe_unit.h).
  const std::string unit_rule =
      "a power of two from " + graphfs::SizeText(graphfs::kMinStripeUnit) + " to " +
      graphfs::SizeText(graphfs::kMaxStripeUnit) + ": at most --engine-request, at least " +
      std::to_string(graphfs::kUnitsPerDisk) +
      " units per disk, and large enough that a request's cost (the disks' graphfs-calibrate records) is within " +
      std::to_string(static_cast<int>(graphfs::kRequestCostShare * 100 + 0.5)) + "% of its transfer";
  graphfs::AddSizeOption(app, "--unit", req.unit,
                         "stripe unit of every file (a multiple of 4K); default: chosen per file (ChooseStripeUnit, "
                         "striping/stripe_unit.h), " + unit_rule,
                         {}, /*show_default=*/false);
  graphfs::AddSizeOption(app, "--engine-request", engine_request,
                         "without --unit: the engines' largest read (GridGraph's); the unit is no larger",
                         graphfs::SizeRule{1});
  graphfs::AddSizeOption(app, "--min-size", req.min_size, "files smaller than this stay plain");
  app.add_option("--disks", disks, "disk directories, comma-separated, in order")->required();
  app.add_option("--compress", req.compress,
                 "compress each unit on its own with CODEC (" + [] {
                   std::string names;
                   for (auto n : graphfs::compress::CodecNames()) names += (names.empty() ? "" : ", ") + std::string(n);
                   return names;
                 }() + "; a level for zstd stages: zstd:1); auto (the default): per file, the codec that delivers "
                       "a sample of its units fastest — its frames read at the disks' bandwidth, its decoding timed "
                       "here —, or raw bytes where none is estimated faster than the disks; none: raw bytes. Striped "
                       "files are compressed in place");
  graphfs::AddRateOption(app, "--disk-bandwidth", bandwidth,
                         "for --compress auto: bytes/s of all the disks together (e.g. 400M; default: the sum of "
                         "graphfs-calibrate's records on the disks; with none, the smallest frames win)");
  app.add_option("--decode-cores", req.auto_decode_cores, "for --compress auto: cores left for decoding while jobs run, at the speed timed here on one "
                 "(the default, half, is what the daemon's decoders achieved beside W1's jobs: "
                 "striping/auto_codec.h)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  CLI::Option* memory_passes =
      app.add_option("--memory-passes", req.auto_memory_passes,
                     "for --compress auto without --memory: passes jobs make over a file's frames kept in memory "
                     "for each pass from the disks, each costing the decoding alone (graph jobs iterate; 0: a file "
                     "read once — the smallest frames the disks deliver fastest win)")
          ->capture_default_str()
          ->check(CLI::NonNegativeNumber);
  graphfs::AddSizeOption(app, "--memory", req.auto_memory,
                         "for --compress auto: the memory= budget of the mount the graph will be read under (e.g. "
                         "192M). The frames it can hold serve their share of every pass and the disks the rest, "
                         "so with little memory the smallest frames win, with much the fastest decoder "
                         "(striping/auto_codec.h)")
      ->excludes(memory_passes);
  graphfs::AddSizeOption(app, "--compress-unit", req.compress_unit,
                         "unit of files without an up-to-date chunk index (column and row of an indexed graph are cut "
                         "at its chunks)");
  graphfs::AddSizeOption(app, "--compress-block", req.compress_block,
                         "raw bytes per block of a compressed unit's frame, rounded down to whole records: each block "
                         "compressed and checksummed alone, so a reader of a few records decodes only their blocks "
                         "(frame version 2, docs/block-frames.md); 0: one block per unit (frame version 1, what "
                         "builds before it wrote)");
  int parity = -1;  // not given: kDefaultParity's rule
  app.add_option("--parity", parity,
                 "K parity units per stripe row (0, 1 or 2), rotated over the disks, and a checksum "
                 "of every 64K block of every unit (docs/parity.md): the mount reads through up to K lost or failing "
                 "disks (rebuilding what they held), graphfs-rebuild and graphfs-scrub repair, and writes go "
                 "through a row journal. A compressed file's parity and checksums are its packed stream's. "
                 "Given, it also applies to raw files striped already with another K: each gets a new copy with "
                 "K (in its own unit), verified, then switched to in place; a killed run resumes. "
                 "Default: 1 with 3 disks or more (one disk fails at a time: 1/N of the space), else 0 (on 2 disks "
                 "parity is a mirror); 2 is worth it from 8 disks, or for disks whose rebuild takes many hours");
  app.add_flag("-q,--quiet", quiet, "no progress output");
  graphfs::AddSizeOption(app, "--checkpoint", req.checkpoint, "bytes copied between durable progress records");
  app.add_option("path", req.path, "graph directory (or one file in it)")->required();
  graphfs::AddManPageFlag(app);  // --help-man: the manual page (packaging/)
  // --help exits 0; anything CLI11 refuses (a bad size among it) is a usage error, status 2.
  if (auto status = graphfs::ParseCommandLine(app, argc, argv)) return *status;
  // Tests stop a parity change at a named point (striping/restripe_crash_points.h); a name it does
  // not have is a usage error, not a run that never stops.
  if (auto status = graphfs::ArmCrashPointOrUsageError("graphfs-stripe", graphfs::kStripeCrashPoints)) return *status;
  const bool parity_given = app.count("--parity") > 0;
  if (parity_given && (parity < 0 || parity > 2)) {
    std::fprintf(stderr, "graphfs-stripe: --parity %d: 0, 1 or 2\n", parity);
    return 2;
  }
  if (req.compress == "none") req.compress.clear();
  if (bandwidth > 0) req.auto_disk_bandwidth = static_cast<double>(bandwidth);
  req.progress = !quiet;
  for (const auto& d : graphfs::SplitList(disks, ','))
    if (!d.empty()) req.disks.push_back(d);
  // docs/parity.md, "The default K": one parity unit survives the failure that happens (one disk
  // at a time) at 1/N of the space; on 2 disks it would be a mirror, asked for or not at all.
  req.parity = parity_given ? static_cast<uint32_t>(parity) : (req.disks.size() >= 3 ? 1u : 0u);
  req.change_parity = parity_given;  // files striped already: only when asked for
  if (!parity_given && req.parity > 0 && app.count("--unit") > 0 && req.unit % req.sum_block != 0) {
    std::fprintf(stderr,
                 "graphfs-stripe: --unit %s is not a multiple of the %s checksum block that parity (the default "
                 "with 3 disks or more) needs: a larger unit, or --parity 0\n",
                 graphfs::SizeText(req.unit).c_str(), graphfs::SizeText(req.sum_block).c_str());
    return 2;
  }
  if (req.parity > 0 && req.parity >= req.disks.size()) {
    std::fprintf(stderr, "graphfs-stripe: --parity %u needs at least %u disks (got %zu): every row must keep a data unit\n",
                 req.parity, req.parity + 1, req.disks.size());
    return 2;
  }
  if (req.parity > 0 && !quiet) {
    const double n = static_cast<double>(req.disks.size()), k = req.parity;
    std::fprintf(stderr, "graphfs-stripe: parity %u over %zu disks: %.0f%% of the disks' space (%.0f%% of the data)\n",
                 req.parity, req.disks.size(), 100 * k / n, 100 * k / (n - k));
  }
  if (app.count("--unit") == 0) {
    // Per file (stripe_unit.h). A file a killed run left half-striped keeps that run's unit
    // (StripeRequest::unit_for).
    const graphfs::DiskRequestCost cost = graphfs::MedianRequestCost(req.disks);
    if (!quiet)
      std::fprintf(stderr, "graphfs-stripe: choosing each file's unit (engines' request %s; %s)\n",
                   graphfs::FormatSize(engine_request).c_str(), cost.Describe().c_str());
    // A grid's column and row are read a block at a time: a block is the engines' typical request.
    uint64_t blocks = 0;
    {
      std::error_code ec;
      const std::string dir = std::filesystem::is_directory(req.path, ec)
                                  ? req.path
                                  : std::filesystem::path(req.path).parent_path().string();
      auto grid = graphfs::grid::GridLayout::Open(dir.empty() ? "." : dir);
      if (grid.ok()) blocks = grid->partitions() * grid->partitions();
    }
    req.unit_for = [cost, request = engine_request, quiet, blocks, n = req.disks.size()](const std::string& name,
                                                                                       uint64_t size) {
      const std::string base = std::filesystem::path(name).filename().string();
      const bool partition_file = base == graphfs::grid::kColumnFile || base == graphfs::grid::kRowFile;
      graphfs::StripeUnitInputs in{size, static_cast<uint32_t>(n), request, cost.bytes_per_second,
                                   cost.seconds_per_request};
      if (partition_file && blocks > 0) in.typical_request = size / blocks;
      const graphfs::StripeUnitChoice choice = graphfs::ChooseStripeUnit(in);
      if (!quiet) std::fprintf(stderr, "%s: unit %s\n", name.c_str(), choice.reason.c_str());
      return choice.unit;
    };
  }
  // A graph version's extent maps read other files by name, and its unchanged files are other
  // versions' too: stripe a graph before its first update (its versions then stay striped).
  {
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::is_directory(req.path, ec)
                                          ? std::filesystem::path(req.path)
                                          : std::filesystem::path(req.path).parent_path();
    for (const char* name : {graphfs::grid::kColumnFile, graphfs::grid::kRowFile}) {
      const std::string file = (dir.empty() ? std::filesystem::path(".") : dir) / name;
      auto mapped = graphfs::grid::IsExtentMap(file);
      if (mapped.ok() && *mapped) {
        std::fprintf(stderr,
                     "graphfs-stripe: %s is an extent map (a graph version made by graphfs-update): a version "
                     "is not striped after the fact; stripe a graph before its first update (graphfs-update "
                     "keeps its versions striped), or copy it through the mount (cp -r MOUNT/GRAPH NEW) and "
                     "stripe the copy\n",
                     file.c_str());
        return 1;
      }
    }
  }
  GraphUnits units;
  if (!req.compress.empty()) {
    units = FindGraphUnits(req.path);
    req.record_size = units.record_size;
    req.unit_cuts = [&units](const std::string& name, uint64_t) {
      auto it = units.cuts.find(name);
      return it == units.cuts.end() ? std::vector<uint64_t>{} : it->second;
    };
    if (!quiet) std::fprintf(stderr, "graphfs-stripe: compressing with %s; units: %s\n", req.compress.c_str(), units.note.c_str());
  }
  auto report = graphfs::StripeFiles(req);
  if (!report.ok()) {
    std::fprintf(stderr, "\ngraphfs-stripe: %s\n", report.error().message().c_str());
    return 1;
  }
  for (const auto& s : report->skipped) std::fprintf(stderr, "graphfs-stripe: skipped %s\n", s.c_str());
  for (const auto& s : report->notes) std::fprintf(stderr, "graphfs-stripe: %s\n", s.c_str());
  // The unit of the files striped: one, or the range of the ones chosen per file.
  std::string unit_text = req.unit_for ? "chosen per file" : graphfs::FormatSize(req.unit);
  if (!report->units.empty()) {
    const auto [lo, hi] = std::minmax_element(report->units.begin(), report->units.end());
    unit_text = graphfs::FormatSize(*lo) + (*lo == *hi ? "" : " to " + graphfs::FormatSize(*hi) + " (per file)");
  }
  std::printf("graphfs-stripe: striped %zu file(s), %s, unit %s over %zu disk(s)", report->converted.size(),
              graphfs::FormatSize(report->bytes).c_str(), unit_text.c_str(), req.disks.size());
  if (!req.compress.empty() && report->bytes > 0) {
    std::printf("; %s with %s: %s on the disks (%.3f of the bytes)",
                report->notes.empty() ? "compressed" : "compressed where it pays", req.compress.c_str(),
                graphfs::FormatSize(report->stored).c_str(),
                static_cast<double>(report->stored) / static_cast<double>(report->bytes));
  }
  std::printf("\n");
  return 0;
}
