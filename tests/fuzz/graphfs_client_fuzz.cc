// Fuzzes the parsers of engines/graphfs_client.hpp, which read the daemon's answers
// (next, lp-SEQ.map, lp-SEQ.pieces, status): an engine must survive a daemon of another version or a
// file that is not what it expects. Checks: round trips through the documented formats,
// agreement with nlohmann::json where the input is JSON, and that the bitmap the client
// writes is one the daemon's parser (fusefs/control_parse.h) accepts unchanged.
// Input: a Frame (fuzz_check.h); kinds at the bottom.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "engines/graphfs_client.hpp"
#include "fusefs/control_parse.h"
#include "tests/fuzz/fuzz_check.h"

namespace graphfs::fuzz {
namespace {

namespace gc = graphfs_client;

void CheckClientError(const gc::Error& e) {
  FUZZ_CHECK(e.code == EPROTO, "errno %d", e.code);
  FUZZ_CHECK(!e.message.empty(), "empty message");
}

void FuzzNext(const std::string& text) {
  auto p = gc::ParseNext(text);
  if (!p.ok()) return CheckClientError(p.error());
  std::string body = text;
  if (!body.empty() && body.back() == '\n') body.pop_back();
  if (p->end) {
    FUZZ_CHECK(body == "end", "'%s' read as end", Shown(text).c_str());
    return;
  }
  FUZZ_CHECK(StartsWith(body, "lp-"), "'%s' read as lp-%llu", Shown(text).c_str(),
             static_cast<unsigned long long>(p->seq));
  const std::string digits = body.substr(3);
  FUZZ_CHECK(!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos,
             "'%s' read as lp-%llu", Shown(text).c_str(), static_cast<unsigned long long>(p->seq));
  auto again = gc::ParseNext("lp-" + std::to_string(p->seq) + "\n");
  FUZZ_CHECK(again.ok() && !again->end && again->seq == p->seq, "does not round-trip");
}

void FuzzMap(const std::string& text) {
  auto chunks = gc::ParseMap(text);
  if (!chunks.ok()) return CheckClientError(chunks.error());
  size_t lines = 1;
  for (char c : text) lines += c == '\n';
  FUZZ_CHECK(chunks->size() <= lines, "%zu chunks from %zu lines", chunks->size(), lines);
  std::string canonical;
  for (const gc::ChunkExtent& c : *chunks)
    canonical += std::to_string(c.chunk_id) + " " + std::to_string(c.column_offset) + " " + std::to_string(c.length) +
                 " " + std::to_string(c.lp_offset) + "\n";
  auto again = gc::ParseMap(canonical);
  FUZZ_CHECK(again.ok() && again->size() == chunks->size(), "canonical form does not parse back");
  for (size_t k = 0; k < chunks->size(); ++k) {
    const gc::ChunkExtent &a = (*chunks)[k], &b = (*again)[k];
    FUZZ_CHECK(a.chunk_id == b.chunk_id && a.column_offset == b.column_offset && a.length == b.length &&
                   a.lp_offset == b.lp_offset,
               "chunk %zu differs after a round trip", k);
  }
}

// lp-SEQ.pieces against a shared memory of `memory_bytes`: accepted pieces lie inside it and add
// up to the view, and the file re-encoded from them parses back the same.
void FuzzPieces(uint64_t memory_bytes, const std::string& raw) {
  auto pieces = gc::ParsePieces(raw, memory_bytes);
  if (!pieces.ok()) return CheckClientError(pieces.error());
  uint64_t total = 0;
  for (const gc::PiecesFile::Entry& e : pieces->entries) {
    if (pieces->memory_id != 0)
      FUZZ_CHECK(e.memory_offset <= memory_bytes && e.length <= memory_bytes - e.memory_offset, "piece outside memory");
    total += e.length;
  }
  FUZZ_CHECK(total == pieces->view_bytes, "pieces add up to %llu, not the view's %llu",
             static_cast<unsigned long long>(total), static_cast<unsigned long long>(pieces->view_bytes));
  std::string canonical = "GFSPIEC1";
  auto put = [&](uint64_t w) {
    for (int b = 0; b < 8; ++b) canonical.push_back(static_cast<char>((w >> (8 * b)) & 0xff));
  };
  put(pieces->entries.size());
  put(pieces->memory_id);
  put(pieces->view_bytes);
  for (const gc::PiecesFile::Entry& e : pieces->entries) {
    put(e.memory_offset);
    put(e.length);
    put(e.column_offset);
  }
  FUZZ_CHECK(canonical == raw, "an accepted pieces file is not its own canonical form");
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void FuzzStatus(const std::string& text) {
  auto vertices = gc::ParseStatusVertices(text);
  if (!vertices.ok()) CheckClientError(vertices.error());
  const std::string last_error = gc::ParseStatusString(text, "last_error");
  // Where the text is a JSON object that names each field once and spells it without
  // escapes, the client's minimal scan must agree with a real JSON parser.
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || text.find('\\') != std::string::npos) return;
  if (Count(text, "\"vertices\"") == 1 && j.contains("vertices")) {
    const nlohmann::json& v = j["vertices"];
    if (v.is_number_unsigned()) {
      FUZZ_CHECK(vertices.ok() && *vertices == v.get<uint64_t>(), "client read vertices %s, JSON says %s",
                 vertices.ok() ? std::to_string(*vertices).c_str() : vertices.error().message.c_str(),
                 v.dump().c_str());
    } else {
      FUZZ_CHECK(!vertices.ok(), "client read vertices %llu from %s", static_cast<unsigned long long>(*vertices),
                 v.dump().c_str());
    }
  }
  if (Count(text, "\"last_error\"") == 1 && j.contains("last_error")) {
    const nlohmann::json& v = j["last_error"];
    FUZZ_CHECK(last_error == (v.is_string() ? v.get<std::string>() : ""), "client read last_error '%s', JSON: %s",
               Shown(last_error).c_str(), Shown(v.dump()).c_str());
  }
}

void FuzzBitmap(uint64_t vertices, const std::string& bytes) {
  // The words an engine holds: the payload, zero-padded, garbage past V included.
  std::vector<uint64_t> words((vertices + 63) / 64, 0);
  for (size_t k = 0; k < bytes.size() && k / 8 < words.size(); ++k)
    words[k / 8] |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[k])) << (8 * (k % 8));
  const std::string written = gc::ActiveBitmapBytes(words.data(), vertices);
  auto parsed = ParseActiveBitmap(written, vertices);
  FUZZ_CHECK(parsed.ok(), "the daemon refuses the client's bitmap: %s",
             parsed.ok() ? "" : parsed.error().message().c_str());
  for (uint64_t w = 0; w < words.size(); ++w) {
    const uint64_t keep = (w + 1) * 64 <= vertices ? ~uint64_t{0} : (uint64_t{1} << (vertices % 64)) - 1;
    FUZZ_CHECK((*parsed)[w] == (words[w] & keep), "word %llu differs", static_cast<unsigned long long>(w));
  }
}

}  // namespace
}  // namespace graphfs::fuzz

// Kinds: n next, m lp-SEQ.map, p lp-SEQ.pieces (PARAM = the memory's size), s status JSON,
// b the active bitmap (PARAM = V).
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphfs::fuzz;
  const Frame f = ParseFrame(data, size);
  switch (f.kind) {
    case 'n': FuzzNext(f.payload); break;
    case 'm': FuzzMap(f.payload); break;
    case 'p': FuzzPieces(f.param, f.payload); break;
    case 's': FuzzStatus(f.payload); break;
    case 'b': FuzzBitmap(f.param % ((1u << 20) + 1), f.payload); break;
    default: break;
  }
  return 0;
}
