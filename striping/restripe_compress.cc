// graphfs-stripe --compress: a file's units compressed into a packed stream on the disks
// (packed_stream.h), from a plain file or in place of a striped one; resumable, verified.
#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <functional>
#include <span>

#include "compress/codec.h"
#include "compress/unit_frame.h"
#include "striping/auto_codec.h"
#include "striping/calibrate.h"
#include "striping/packed_stream.h"
#include "striping/part_io.h"
#include "striping/restripe_detail.h"
#include "striping/stripe_parity.h"
#include "striping/stream_rows.h"
#include "striping/striped_file.h"

namespace graphfs::restripe_detail {

// What a killed compression run leaves: besides the stream's id and the source, the striped
// file it replaces and the frames made durable so far (with parity, only frames that end in rows
// whose parity and sums are durable too).
struct CompressRecord : PendingRecord {
  std::string old_id;  // the striped file it replaces; "" for a plain source
  std::string codec;
  uint32_t parity = 0;  // K of the stream's layout; records of before have none: 0
  uint32_t block_bytes = 0;  // of its frames' blocks; 0: version 1 frames (records of before)
  std::vector<std::array<uint64_t, 3>> frames;  // raw length, frame offset, frame length
  json ToJson() const {
    json j = PendingRecord::ToJson();
    j["old_id"] = old_id;
    j["codec"] = codec;
    j["parity"] = parity;
    j["block_bytes"] = block_bytes;
    j["frames"] = frames;
    return j;
  }
  void FromJson(const json& j) {
    PendingRecord::FromJson(j);
    old_id = j.at("old_id");
    codec = j.at("codec");
    parity = j.value("parity", 0u);
    block_bytes = j.value("block_bytes", 0u);
    frames = j.at("frames").get<std::vector<std::array<uint64_t, 3>>>();
  }
  // A run killed with another K laid its frames out in other rows: it is not resumed; nor one
  // that cut its frames into other blocks (one file's frames are all of one kind).
  bool Same(const CompressRecord& o) const {
    return SameSource(o) && old_id == o.old_id && codec == o.codec && parity == o.parity &&
           block_bytes == o.block_bytes;
  }
};

// Where the units of a file of `size` bytes end: the request's cuts (its graph's chunks), or
// fixed units of compress_unit bytes rounded down to whole records.
Result<std::vector<uint64_t>> UnitEnds(const StripeRequest& req, const std::string& name, uint64_t size) {
  std::vector<uint64_t> ends = req.unit_cuts ? req.unit_cuts(name, size) : std::vector<uint64_t>{};
  if (!ends.empty() && ends.back() == size) ends.pop_back();  // the file's end is every unit list's
  if (ends.empty()) {
    const uint64_t record = std::max<uint64_t>(req.record_size, 1);
    const uint64_t unit = std::max(req.compress_unit / record, uint64_t{1}) * record;
    for (uint64_t at = unit; at < size; at += unit) ends.push_back(at);
  }
  uint64_t previous = 0;
  for (uint64_t end : ends) {
    if (end <= previous || end >= size || end - previous > compress::kMaxUnitBytes)
      return Error(EINVAL, name + ": unit boundary " + std::to_string(end) + " is out of order or out of range");
    previous = end;
  }
  if (size > 0) ends.push_back(size);
  if (size - previous > compress::kMaxUnitBytes) return Error(EINVAL, name + ": last unit larger than 1 GiB");
  return ends;
}

// The raw bytes of a frame's block: the request's, rounded down to whole records (so that every
// codec decodes a block alone, svb's records never straddle two); 0: version 1 frames.
uint32_t BlockBytes(const StripeRequest& req) {
  if (req.compress_block == 0) return 0;
  const uint32_t target = static_cast<uint32_t>(std::min<uint64_t>(req.compress_block, compress::kMaxUnitBytes));
  return compress::BlockBytesFor(std::max<uint32_t>(req.record_size, 1), target);
}

// --compress auto: the candidates are the codecs the measurements favour (BENCHMARKS.md, issue
// 18): shuffle-zstd:1 for R-MAT-like graphs, svb-zstd:1 for grids, svb and shuffle-lz4 where the
// CPU is shorter than the disks. Each compresses a sample of kAutoSampleUnits units spread over
// the file, and decodes it again and again for at least kAutoDecodeNs to time its decoding; the
// cost of a pass (auto_codec.h) then decides.
constexpr size_t kAutoSampleUnits = 8;
constexpr double kAutoMinSaving = 0.03;
constexpr int64_t kAutoDecodeNs = 30'000'000;

struct AutoChoice {
  compress::CodecSpec spec;
  std::string table;  // every candidate's ratio, decode speed and estimated cost, for the log
  bool raw_faster = false;  // even the best is estimated slower to deliver than raw bytes
};

// The disks' bandwidth together: the request's, else the calibrations' sum (0: unknown).
double AutoDiskBandwidth(const DiskSet& disks, const StripeRequest& req) {
  if (req.auto_disk_bandwidth > 0) return req.auto_disk_bandwidth;
  double sum = 0;
  for (uint32_t d = 0; d < disks.size(); ++d) {
    auto c = LoadCalibration(disks.path(d));
    if (!c.ok() || c->bytes_per_second <= 0) return 0;
    sum += c->bytes_per_second;
  }
  return sum;
}

Result<AutoChoice> ChooseCodec(const std::vector<uint64_t>& ends,
                               const std::function<Status(uint64_t, uint64_t, char*)>& read,
                               uint32_t record_size, uint32_t block_bytes, AutoCostModel model,
                               std::vector<char>& buf) {
  const uint64_t file_bytes = ends.empty() ? 0 : ends.back();
  std::vector<std::string> names = {"svb", "shuffle-lz4", "shuffle-zstd:1", "svb-zstd:1"};
  if (record_size != 8 && record_size != 12) names = {"shuffle-lz4", "shuffle-zstd:1", "lz4", "zstd:1"};
  struct Candidate {
    std::unique_ptr<compress::Codec> codec;
    std::vector<std::string> frames;  // the sample's
    uint64_t bytes = 0;
    double ratio = 1, decode_bps = 0;
    AutoCost cost;  // estimated seconds per raw byte of a pass (auto_codec.h)
  };
  std::vector<Candidate> candidates;
  for (const std::string& name : names) {
    auto spec = compress::ParseCodecSpec(name, record_size);
    if (!spec.ok()) return spec.error();
    auto codec = compress::NewCodec(*spec);
    if (!codec.ok()) return codec.error();
    candidates.push_back({std::move(*codec), {}, 0, 1, 0, {}});
  }
  const size_t samples = std::min(ends.size(), kAutoSampleUnits);
  std::vector<uint64_t> lengths;
  uint64_t raw = 0;
  for (size_t s = 0; s < samples; ++s) {
    const size_t k = s * ends.size() / samples;
    const uint64_t begin = k == 0 ? 0 : ends[k - 1], len = ends[k] - begin;
    if (buf.size() < len) buf.resize(len);
    GRAPHFS_RETURN_IF_ERROR(read(begin, len, buf.data()));
    lengths.push_back(len);
    raw += len;
    for (Candidate& c : candidates) {
      c.frames.emplace_back();
      GRAPHFS_RETURN_IF_ERROR(
          compress::EncodeUnit(*c.codec, std::span<const char>(buf.data(), len), &c.frames.back(), block_bytes));
      c.bytes += c.frames.back().size();
    }
  }
  std::string table;
  for (Candidate& c : candidates) {
    c.ratio = raw == 0 ? 1.0 : static_cast<double>(c.bytes) / static_cast<double>(raw);
    uint64_t decoded = 0;
    const auto start = std::chrono::steady_clock::now();
    int64_t ns = 0;
    do {
      for (size_t s = 0; s < c.frames.size(); ++s) {
        GRAPHFS_RETURN_IF_ERROR(compress::DecodeUnit(c.frames[s], std::span<char>(buf.data(), lengths[s])));
        decoded += lengths[s];
      }
      ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
    } while (ns < kAutoDecodeNs && raw > 0);
    c.decode_bps = static_cast<double>(decoded) / (static_cast<double>(std::max<int64_t>(ns, 1)) * 1e-9);
    // Without the disks' bandwidth the smallest frames win: the ratio is the cost.
    if (model.disk_bandwidth > 0) {
      c.cost = AutoPassCost(model, c.ratio, c.decode_bps, file_bytes);
    } else {
      c.cost.pass = c.ratio;
    }
    char line[200];
    std::snprintf(line, sizeof line, "%s%s %.3f at %.2f GB/s", table.empty() ? "" : ", ",
                  c.codec->spec().Name().c_str(), c.ratio, c.decode_bps / 1e9);
    table += line;
    if (model.disk_bandwidth > 0 && model.memory == 0) {
      std::snprintf(line, sizeof line, " [a pass %.2f from the disks, %.2f from memory] (%.2f s/GB)",
                    std::max(c.cost.disk, c.cost.decode) * 1e9, c.cost.decode * 1e9, c.cost.pass * 1e9);
      table += line;
    } else if (model.disk_bandwidth > 0) {
      std::snprintf(line, sizeof line, " [%.0f%% from memory: disks %.2f, decoding %.2f] (%.2f s/GB)",
                    c.cost.from_memory * 100, c.cost.disk * 1e9, c.cost.decode * 1e9, c.cost.pass * 1e9);
      table += line;
    }
  }
  // Equal costs (within 2%): the smaller frames.
  size_t best = 0;
  for (size_t i = 1; i < candidates.size(); ++i) {
    const Candidate &c = candidates[i], &b = candidates[best];
    if (c.cost.pass < b.cost.pass * 0.98 || (c.cost.pass <= b.cost.pass * 1.02 && c.bytes < b.bytes)) best = i;
  }
  const AutoCost raw_cost = model.disk_bandwidth > 0 ? AutoPassCost(model, 1.0, 0, file_bytes) : AutoCost{};
  char model_text[240];
  if (model.disk_bandwidth > 0 && model.memory == 0) {
    std::snprintf(model_text, sizeof model_text,
                  "; disks %.0f MB/s, %.2g core(s) decoding, %.2g pass(es) from memory a pass from the disks: raw "
                  "bytes %.2f s/GB",
                  model.disk_bandwidth / 1e6, model.decode_cores, model.memory_passes, 1e9 / model.disk_bandwidth);
  } else if (model.disk_bandwidth > 0) {
    std::snprintf(model_text, sizeof model_text,
                  "; disks %.0f MB/s, %.2g core(s) decoding, %.0f MiB of memory (%.0f MiB of frames): raw bytes "
                  "%.2f s/GB",
                  model.disk_bandwidth / 1e6, model.decode_cores, static_cast<double>(model.memory >> 20),
                  static_cast<double>(model.memory >> 20) * kAutoFramesShareOfMemory, raw_cost.pass * 1e9);
  } else {
    std::snprintf(model_text, sizeof model_text, "; the disks' bandwidth unknown (no calibration): smallest frames");
  }
  std::string verdict;
  // Raw bytes win when the disks deliver them faster than the best codec, and whenever no codec
  // makes the sample smaller by more than kAutoMinSaving (decoding then buys nothing).
  const bool no_saving = candidates[best].ratio > 1.0 - kAutoMinSaving;
  // Raw against the best codec. Memory unknown: on a pass from the disks (raw bytes kept in
  // memory cost no decoding either, but take 1 / ratio times the memory). Memory known: on a pass
  // as the model counts it (equal costs: the frames, smaller on the disks and in memory).
  const double best_pass = model.memory == 0 ? std::max(candidates[best].cost.disk, candidates[best].cost.decode)
                                             : candidates[best].cost.pass;
  const bool raw_faster = no_saving || (model.disk_bandwidth > 0 && best_pass > raw_cost.pass);
  if (no_saving) {
    char line[200];
    std::snprintf(line, sizeof line, "; no codec saves %.0f%% of the sample (the best: %s, %.3f): left raw",
                  kAutoMinSaving * 100, candidates[best].codec->spec().Name().c_str(), candidates[best].ratio);
    verdict = line;
  } else if (raw_faster) {
    char line[200];
    std::snprintf(line, sizeof line,
                  "; even %s is estimated slower to deliver than raw bytes (%.2f against %.2f s/GB): left raw",
                  candidates[best].codec->spec().Name().c_str(), best_pass * 1e9, raw_cost.pass * 1e9);
    verdict = line;
  }
  return AutoChoice{candidates[best].codec->spec(), table + model_text + verdict, raw_faster};
}

// Compresses one file — plain, or striped as it is (`old`) — into a packed stream on the
// disks; the stub then names the new stream, and the old parts (or the plain file) go.
Result<CompressOutcome> CompressOne(const DiskSet& disks, const Target& t, const StripeRequest& req, uint64_t unit,
                                   const std::optional<StripeManifest>& old, std::vector<char>& buf,
                                   ConvertReport& report) {
  const std::string path = t.path();
  const std::string record_path = PendingDir(t.dir, "pending-compress") + "/" + t.name + ".json";
  auto source = ConvertSource::Open(disks, t, old);
  if (!source.ok()) return source.error();
  const UniqueFd& src = source->fd;
  const struct stat& st = source->st;
  const uint64_t size = source->size;
  std::function<Status(uint64_t, uint64_t, char*)> read_source = [&](uint64_t off, uint64_t len, char* to) {
    return source->Read(disks, off, len, to, path);
  };

  auto ends = UnitEnds(req, t.name, size);
  if (!ends.ok()) return ends.error();
  CompressRecord rec;
  static_cast<PendingRecord&>(rec) = {NewId(), size, MtimeNs(st), st.st_ino, unit, FirstDiskFor(t.name, disks.size())};
  rec.old_id = old ? old->file_id : "";
  auto old_text = ReadSmallFile(record_path, kCompressRecordLimit);
  std::optional<CompressRecord> pending = old_text.ok() ? ParseRecord<CompressRecord>(*old_text) : std::nullopt;

  Result<compress::CodecSpec> spec = Error(EINVAL, "no codec");
  if (req.compress == kAutoCodec && pending && pending->SameSource(rec) && pending->old_id == rec.old_id) {
    // A killed run chose already: its choice stands (timing it again could choose another, and
    // the frames made durable would be thrown away).
    spec = compress::ParseCodecSpec(pending->codec, req.record_size);
  } else if (req.compress == kAutoCodec) {
    const AutoCostModel model{AutoDiskBandwidth(disks, req), req.auto_decode_cores, req.auto_memory_passes,
                              req.auto_memory};
    auto choice = ChooseCodec(*ends, read_source, req.record_size, BlockBytes(req), model, buf);
    if (!choice.ok()) return choice.error().Wrap(path + ": choosing a codec");
    if (req.progress) std::fprintf(stderr, "%s: auto: %s\n", t.name.c_str(), choice->table.c_str());
    if (choice->raw_faster) {
      report.notes.push_back(t.name + ": auto: raw bytes deliver faster than " + choice->spec.Name() +
                             " on these disks; " + (old ? "left as it is" : "striped raw"));
      return CompressOutcome::kDeclined;
    }
    spec = choice->spec;
  } else {
    spec = compress::ParseCodecSpec(req.compress, req.record_size);
  }
  if (!spec.ok()) return spec.error().Wrap(path);
  auto codec = compress::NewCodec(*spec);
  if (!codec.ok()) return codec.error();

  rec.codec = spec->Name();
  rec.parity = req.parity;
  rec.block_bytes = BlockBytes(req);
  const bool resuming = pending && pending->Same(rec);
  if (resuming) {
    rec = *pending;
  } else {
    if (pending) RemovePartsOf(disks, pending->id);
    // The record goes first: a part file never exists without a record naming it.
    GRAPHFS_RETURN_IF_ERROR(WriteFileAtomic(record_path, rec.ToJson().dump() + "\n"));
  }
  GRAPHFS_RETURN_IF_ERROR(StripedFile::CreateParts(disks, rec.id));
  auto map = StripeMap::Create({unit, disks.size(), rec.first, rec.parity});
  if (!map.ok()) return map.error();
  auto opened = OpenParts(disks, rec.id, O_RDWR);
  if (!opened.ok()) return opened.error();
  std::vector<UniqueFd>& parts = *opened;
  // The manifest the stub will get; the stream's size, description and checksum once written.
  StripeManifest m;
  m.file_id = rec.id;
  m.set_id = disks.set_id();
  m.size = StripeParityWriter::kSizeUnknown;
  m.layout = map->layout();
  if (rec.parity > 0) m.sum_block = req.sum_block;
  // With parity, the stream is coded a row at a time as its frames fill the rows (StreamRows);
  // a killed run's sums files are kept when they open as this stream's, else it starts over.
  std::unique_ptr<StripeParityWriter> parity;
  if (rec.parity > 0) {
    auto w = StripeParityWriter::Open(disks, m, resuming);
    if (!w.ok()) return w.error();
    parity = std::move(*w);
    if (!parity->resumed()) rec.frames.clear();
  }
  PackedDirectory written;
  for (const auto& f : rec.frames) {
    Status added = f[0] <= UINT32_MAX && f[2] <= UINT32_MAX
                       ? written.Add(static_cast<uint32_t>(f[0]), f[1], static_cast<uint32_t>(f[2]))
                       : Error(EINVAL, "frame too long");
    if (!added.ok()) return added.error().Wrap(record_path + " is damaged; remove it and run again");
  }

  // Units after the last durable one; a frame written after it by a killed run is rewritten.
  size_t next = 0;
  while (next < ends->size() && (next == 0 ? 0 : (*ends)[next - 1]) < written.raw_size()) ++next;
  if (next > 0 && (*ends)[next - 1] != written.raw_size())
    return Error(EINVAL, record_path + " does not end at a unit boundary; remove it and run again");
  std::unique_ptr<StreamRows> rows;
  if (parity) {
    auto opened_rows = StreamRows::Open(disks, *map, parts, *parity, written.frames_end());
    if (!opened_rows.ok()) return opened_rows.error().Wrap(path + ": the interrupted run's last row");
    rows = std::move(*opened_rows);
  }
  PackedStreamWriter writer = rows ? PackedStreamWriter([&rows](uint64_t at, std::span<const char> bytes) {
                                       return rows->Write(at, bytes);
                                     }, std::move(written))
                                   : PackedStreamWriter(disks, *map, parts, std::move(written));
  ProgressLine progress(req.progress, t.name, size);
  progress.Start(writer.directory().raw_size());
  if (!old) ::posix_fadvise(src.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  uint64_t since_checkpoint = 0;
  for (; next < ends->size(); ++next) {
    const uint64_t begin = next == 0 ? 0 : (*ends)[next - 1], len = (*ends)[next] - begin;
    if (buf.size() < len) buf.resize(len);
    GRAPHFS_RETURN_IF_ERROR(read_source(begin, len, buf.data()));
    GRAPHFS_RETURN_IF_ERROR(writer.Append(**codec, std::span<const char>(buf.data(), len), rec.block_bytes));
    since_checkpoint += len;
    if (since_checkpoint >= req.checkpoint || next + 1 == ends->size()) {
      for (uint32_t d = 0; d < disks.size(); ++d)
        if (::fdatasync(parts[d].get()) != 0) return Error::FromErrno("fsync part on disk " + std::to_string(d));
      if (parity) GRAPHFS_RETURN_IF_ERROR(parity->Sync());
      // With parity, the frames still held in an unfinished row are not on the disks yet.
      const uint64_t durable = rows ? rows->done() : UINT64_MAX;
      rec.frames.clear();
      for (const PackedUnit& u : writer.directory().units())
        if (u.frame_offset + u.frame_length <= durable) rec.frames.push_back({u.raw_length, u.frame_offset, u.frame_length});
      GRAPHFS_RETURN_IF_ERROR(WriteFileAtomic(record_path, rec.ToJson().dump() + "\n"));
      since_checkpoint = 0;
    }
    progress.Update((*ends)[next]);
  }
  auto info = writer.Finish(spec->Name());
  if (!info.ok()) return info.error();
  if (rows) GRAPHFS_RETURN_IF_ERROR(rows->Finish(info->stream_size));
  for (uint32_t d = 0; d < disks.size(); ++d) {
    if (::ftruncate(parts[d].get(), static_cast<off_t>(map->PartSize(d, info->stream_size))) != 0 ||
        ::fsync(parts[d].get()) != 0)
      return Error::FromErrno("finish part on disk " + std::to_string(d));
  }
  if (parity) GRAPHFS_RETURN_IF_ERROR(parity->Finish());
  progress.Finish(size);
  m.size = size;
  m.packed = *info;

  // Verify: every frame, read back from the disks, must decode to the source's bytes.
  std::optional<uint64_t> want = old ? old->checksum : std::nullopt;
  if (!want) {
    auto hashed = old ? HashParts(disks, *old, buf) : HashFile(src.get(), size, buf, path);
    if (!hashed.ok()) return hashed.error();
    want = *hashed;
  }
  for (const UniqueFd& fd : parts) ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  auto dir = ReadPackedDirectory(disks, *map, parts, *info);
  if (!dir.ok()) return dir.error().Wrap(path + ": the compressed copy");
  XXH3_state_t* hs = XXH3_createState();
  XXH3_64bits_reset(hs);
  Status read_back = ForEachPackedUnit(disks, *map, parts, *dir, [&](const PackedUnit&, std::span<const char> raw) {
    XXH3_64bits_update(hs, raw.data(), raw.size());
    return Status::Ok();
  });
  const uint64_t got = XXH3_64bits_digest(hs);
  XXH3_freeState(hs);
  if (!read_back.ok()) return read_back.error().Wrap(path + ": the compressed copy; the original is kept");
  if (dir->raw_size() != size || got != *want)
    return Error(EIO, path + ": the compressed copy does not match the original (checksum); the original is kept");
  if (parity) {
    Status checked = VerifyStripeParity(disks, m);
    if (!checked.ok()) return checked.error().Wrap(path + " (the compressed copy's parity or sums; the original is kept)");
  }
  m.checksum = *want;
  GRAPHFS_RETURN_IF_ERROR(SwitchToCopy(disks, t, st, size, old, m, "being compressed"));
  ::unlink(record_path.c_str());
  if (req.progress) {
    std::fprintf(stderr, "%s: %s, %.3f of the bytes\n", t.name.c_str(), spec->Name().c_str(),
                 size > 0 ? static_cast<double>(info->stream_size) / static_cast<double>(size) : 1.0);
  }
  report.converted.push_back(t.name);
  report.units.push_back(unit);
  report.bytes += size;
  report.stored += info->stream_size;
  return CompressOutcome::kCompressed;
}

// Finishes what killed compression runs left behind a file that is now compressed: the
// parts of the striped file it replaced, or of a stream that never got into a manifest.
void FinishPendingCompression(const DiskSet& disks, const Target& t, const StripeManifest& now) {
  const std::string record_path = PendingDir(t.dir, "pending-compress") + "/" + t.name + ".json";
  auto text = ReadSmallFile(record_path, kCompressRecordLimit);
  if (!text.ok()) return;
  std::optional<CompressRecord> rec = ParseRecord<CompressRecord>(*text);
  if (rec && rec->id == now.file_id && !rec->old_id.empty()) RemovePartsOf(disks, rec->old_id);
  if (rec && rec->id != now.file_id) RemovePartsOf(disks, rec->id);
  ::unlink(record_path.c_str());
}

}  // namespace graphfs::restripe_detail
