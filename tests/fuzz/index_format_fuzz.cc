// Fuzzes the record decoders of the chunk index (chunkindex/index_format.h). The records
// come from RocksDB files under GRAPH/.graphfs/index/ that may be damaged or foreign: a
// damaged value must decode to an Error, and whatever decodes must satisfy the checks the
// decoder promises and decode the same again from its own encoding.
// Input: a Frame (fuzz_check.h); the kind picks the record type, the payload is the value.
#include <string>
#include <vector>

#include "chunkindex/index_format.h"
#include "tests/fuzz/fuzz_check.h"

namespace graphfs::fuzz {
namespace {

using namespace graphfs::chunkindex;
using ull = unsigned long long;

void FuzzMeta(const std::string& v) {
  auto m = DecodeMeta(v);
  if (!m.ok()) return CheckRefusal(m.error());
  FUZZ_CHECK(m->edge_size == 8 || m->edge_size == 12, "edge size %llu", static_cast<ull>(m->edge_size));
  FUZZ_CHECK(m->vertices > 0 && m->partitions > 0 && m->chunk_size > 0 && m->chunk_size % m->edge_size == 0 &&
                 m->column_chunks == m->row_chunks && m->files.size() <= 64,
             "accepted an inconsistent meta record");
  // build_seconds is stored in whole microseconds: compare the rest exactly.
  IndexMeta copy = *m;
  copy.build_seconds = 0;
  auto again = DecodeMeta(EncodeMeta(copy));
  FUZZ_CHECK(again.ok(), "re-encoded meta refused: %s", again.ok() ? "" : again.error().message().c_str());
  FUZZ_CHECK(again->vertices == m->vertices && again->edges == m->edges && again->partitions == m->partitions &&
                 again->edge_size == m->edge_size && again->chunk_size == m->chunk_size &&
                 again->chunk_size_overridden == m->chunk_size_overridden && again->llc_bytes == m->llc_bytes &&
                 again->cores == m->cores && again->column_chunks == m->column_chunks &&
                 again->row_chunks == m->row_chunks && again->built_unix_s == m->built_unix_s &&
                 again->chunk_size_explanation == m->chunk_size_explanation && again->files == m->files,
             "meta does not round-trip");
}

void FuzzChunk(const std::string& v) {
  auto c = DecodeChunk(v);
  if (!c.ok()) return CheckRefusal(c.error());
  FUZZ_CHECK(c->min_source <= c->max_source && c->num_sources > 0 && c->num_sources <= c->edge_count &&
                 c->max_source - c->min_source + 1ull >= c->num_sources,
             "accepted an inconsistent chunk record");
  auto again = DecodeChunk(EncodeChunk(*c));
  FUZZ_CHECK(again.ok() && again->block_i == c->block_i && again->block_j == c->block_j &&
                 again->edge_count == c->edge_count && again->num_sources == c->num_sources &&
                 again->min_source == c->min_source && again->max_source == c->max_source &&
                 again->source_degree_sum == c->source_degree_sum,
             "chunk does not round-trip");
}

void FuzzFileChunk(const std::string& v) {
  auto c = DecodeFileChunk(v);
  if (!c.ok()) return CheckRefusal(c.error());
  FUZZ_CHECK(c->length > 0, "empty chunk accepted");
  auto again = DecodeFileChunk(EncodeFileChunk(*c));
  FUZZ_CHECK(again.ok() && again->offset == c->offset && again->length == c->length && again->content == c->content,
             "file chunk does not round-trip");
}

void FuzzSources(const std::string& v) {
  std::vector<SourceCount> sources;
  Status s = DecodeSources(v, &sources);
  if (!s.ok()) return CheckRefusal(s.error());
  FUZZ_CHECK(sources.size() <= v.size() / 2, "%zu sources from %zu bytes", sources.size(), v.size());
  for (size_t k = 0; k < sources.size(); ++k) {
    FUZZ_CHECK(sources[k].edges > 0, "source with no edges");
    FUZZ_CHECK(k == 0 || sources[k].vertex > sources[k - 1].vertex, "sources not ascending at %zu", k);
  }
  std::string encoded;
  EncodeSources(sources, &encoded);
  std::vector<SourceCount> again;
  FUZZ_CHECK(DecodeSources(encoded, &again).ok() && again == sources, "sources do not round-trip");
}

void FuzzDegrees(const std::string& v) {
  std::vector<uint32_t> degrees;
  Status s = DecodeDegrees(v, &degrees);
  if (!s.ok()) return CheckRefusal(s.error());
  FUZZ_CHECK(degrees.size() <= kDegreesPerRecord && degrees.size() <= v.size(), "%zu degrees from %zu bytes",
             degrees.size(), v.size());
  std::vector<uint32_t> again;
  FUZZ_CHECK(DecodeDegrees(EncodeDegrees(degrees), &again).ok() && again == degrees, "degrees do not round-trip");
}

}  // namespace
}  // namespace graphfs::fuzz

// Kinds: M meta, C chunk, F file chunk, S sources, D degrees (the key tags).
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphfs::fuzz;
  const Frame f = ParseFrame(data, size);
  switch (f.kind) {
    case 'M': FuzzMeta(f.payload); break;
    case 'C': FuzzChunk(f.payload); break;
    case 'F': FuzzFileChunk(f.payload); break;
    case 'S': FuzzSources(f.payload); break;
    case 'D': FuzzDegrees(f.payload); break;
    default: break;
  }
  return 0;
}
