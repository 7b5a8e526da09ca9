// Fuzzes the parsers of striping's metadata (striping/manifest.h, striping/disk_set.h,
// striping/unit_sums.h): the manifest xattr of a stub, GRAPH/.graphfs/disks.json, a disk's
// .graphfs-disk and the header of a part's sums file.
// They sit on disks that may be damaged or swapped, so a bad value must be refused with
// an Error; what is accepted must round-trip through the writer's encoding, and an
// accepted manifest's layout must map every byte of the file inside the disks' parts, its
// parity included (version 2), and a version 2 manifest's sum blocks must tile its units.
// Input: a Frame (fuzz_check.h); kinds at the bottom.
#include <climits>
#include <string>

#include "striping/disk_set.h"
#include "striping/manifest.h"
#include "striping/packed_directory.h"
#include "striping/stripe_map.h"
#include "striping/unit_sums.h"
#include "tests/fuzz/fuzz_check.h"

namespace graphfs::fuzz {
namespace {

using ull = unsigned long long;

bool Same(const StripeManifest& a, const StripeManifest& b) {
  return a.file_id == b.file_id && a.set_id == b.set_id && a.size == b.size && a.layout.unit == b.layout.unit &&
         a.layout.disks == b.layout.disks && a.layout.first_disk == b.layout.first_disk &&
         a.layout.parity == b.layout.parity && a.sum_block == b.sum_block && a.checksum == b.checksum &&
         a.packed.has_value() == b.packed.has_value() &&
         (!a.packed || (a.packed->codec == b.packed->codec && a.packed->stream_size == b.packed->stream_size &&
                        a.packed->directory_offset == b.packed->directory_offset));
}

void CheckLayout(const StripeManifest& m) {
  auto map = StripeMap::Create(m.layout);
  FUZZ_CHECK(map.ok(), "accepted a layout StripeMap refuses");
  // The size becomes st_size (off_t): it must fit.
  FUZZ_CHECK(m.size <= static_cast<uint64_t>(INT64_MAX), "size %llu does not fit off_t", static_cast<ull>(m.size));
  const uint64_t n = m.layout.disks, s = m.layout.unit, k = m.layout.parity;
  FUZZ_CHECK(k <= StripeLayout::kMaxParity && k < n, "parity %llu over %llu disks", static_cast<ull>(k),
             static_cast<ull>(n));
  if (m.sum_block != 0)
    FUZZ_CHECK((m.sum_block & (m.sum_block - 1)) == 0 && m.sum_block >= kMinSumBlock && s % m.sum_block == 0,
               "sum block %llu of a %llu-byte unit", static_cast<ull>(m.sum_block), static_cast<ull>(s));
  if (n <= 64) {
    // The parts hold the file and K parity units per row, each as long as its row's first data
    // unit: counted here from the file's size alone.
    const unsigned __int128 d = n - k;
    const unsigned __int128 units = (static_cast<unsigned __int128>(m.size) + s - 1) / s, rows = (units + d - 1) / d;
    unsigned __int128 parity = 0;
    if (rows > 0) parity = k * ((rows - 1) * s + std::min<unsigned __int128>(s, m.size - (rows - 1) * d * s));
    unsigned __int128 sum = 0;
    for (uint32_t i = 0; i < n; ++i) sum += map->PartSize(i, m.size);
    FUZZ_CHECK(sum == m.size + parity, "parts hold %llu bytes of a %llu-byte file with %llu bytes of parity",
               static_cast<ull>(sum), static_cast<ull>(m.size), static_cast<ull>(parity));
  }
  if (m.size == 0) return;
  const DiskLocation last = map->Locate(m.size - 1);
  FUZZ_CHECK(last.disk < n, "disk %u of %llu", last.disk, static_cast<ull>(n));
  // The last byte's row and column name the same disk, and its row is the file's last.
  const uint64_t row = map->RowOf(m.size - 1);
  FUZZ_CHECK(row + 1 == map->Rows(m.size), "last byte in row %llu of %llu", static_cast<ull>(row),
             static_cast<ull>(map->Rows(m.size)));
  FUZZ_CHECK(map->SlotDisk(row, static_cast<uint32_t>((m.size - 1) / s % (n - k))) == last.disk,
             "row %llu's column of the last byte is not on disk %u", static_cast<ull>(row), last.disk);
  FUZZ_CHECK(last.disk_offset < map->PartSize(last.disk, m.size), "last byte at %llu past its part of %llu bytes",
             static_cast<ull>(last.disk_offset), static_cast<ull>(map->PartSize(last.disk, m.size)));
  // The file's tail, up to three units of it: pieces in order, within one unit each.
  const uint64_t length = std::min<uint64_t>(m.size, s <= m.size / 3 ? 3 * s : m.size);
  uint64_t at = m.size - length;
  for (const StripeExtent& e : map->Split(at, length)) {
    FUZZ_CHECK(e.file_offset == at && e.length > 0 && e.length <= s && e.disk < n, "bad piece at %llu",
               static_cast<ull>(at));
    FUZZ_CHECK(e.file_offset / s == (e.file_offset + e.length - 1) / s, "piece crosses a unit boundary");
    at += e.length;
  }
  FUZZ_CHECK(at == m.size, "pieces end at %llu, the file at %llu", static_cast<ull>(at), static_cast<ull>(m.size));
}

void FuzzManifest(const std::string& text) {
  auto m = StripeManifest::Decode(text);
  if (!m.ok()) {
    CheckRefusal(m.error(), EINVAL);
    return;
  }
  FUZZ_CHECK(!m->file_id.empty() && m->file_id.find('/') == std::string::npos &&
                 m->file_id.find("..") == std::string::npos,
             "file id '%s' names a path", Shown(m->file_id).c_str());
  CheckLayout(*m);
  auto again = StripeManifest::Decode(m->Encode());
  FUZZ_CHECK(again.ok() && Same(*m, *again), "Encode() does not decode to the same manifest: %s",
             Shown(m->Encode()).c_str());
}

// A compressed file's directory (packed_directory.h): damage is EIO; what is accepted covers
// the file without gaps, its frames aligned and in order, and re-encodes to the same bytes.
void FuzzPackedDirectory(const std::string& bytes) {
  auto d = PackedDirectory::Decode(bytes);
  if (!d.ok()) {
    CheckRefusal(d.error(), EIO);
    return;
  }
  uint64_t raw = 0, frames = 0;
  for (const PackedUnit& u : d->units()) {
    FUZZ_CHECK(u.raw_offset == raw && u.raw_length > 0, "unit at %llu, expected %llu", static_cast<ull>(u.raw_offset),
               static_cast<ull>(raw));
    FUZZ_CHECK(u.frame_offset % PackedDirectory::kFrameAlign == 0 && u.frame_offset >= frames && u.frame_length > 0,
               "frame at %llu", static_cast<ull>(u.frame_offset));
    raw += u.raw_length;
    frames = u.frame_offset + u.frame_length;
  }
  FUZZ_CHECK(raw == d->raw_size(), "units hold %llu of %llu bytes", static_cast<ull>(raw), static_cast<ull>(d->raw_size()));
  FUZZ_CHECK(d->Encode() == bytes, "directory does not re-encode to its bytes");
}

void FuzzRegistry(const std::string& text) {
  auto r = DecodeRegistry(text);
  if (!r.ok()) {
    CheckRefusal(r.error(), EINVAL);
    return;
  }
  const std::string encoded = EncodeRegistry(*r);
  auto again = DecodeRegistry(encoded);
  FUZZ_CHECK(again.ok() && again->set_id == r->set_id && again->disks == r->disks, "registry does not round-trip");
  FUZZ_CHECK(EncodeRegistry(*again) == encoded, "encoding is not stable");
}

void FuzzIdentity(const std::string& text) {
  auto id = DecodeDiskIdentity(text);
  if (!id.ok()) {
    CheckRefusal(id.error(), EINVAL);
    return;
  }
  const std::string encoded = EncodeDiskIdentity(*id);
  auto again = DecodeDiskIdentity(encoded);
  FUZZ_CHECK(again.ok() && again->set_id == id->set_id && again->index == id->index && again->count == id->count,
             "identity does not round-trip");
  FUZZ_CHECK(EncodeDiskIdentity(*again) == encoded, "encoding is not stable");
}

bool Same(const SumsHeader& a, const SumsHeader& b) {
  return a.file_id == b.file_id && a.disk == b.disk && a.layout.unit == b.layout.unit &&
         a.layout.disks == b.layout.disks && a.layout.first_disk == b.layout.first_disk &&
         a.layout.parity == b.layout.parity && a.sum_block == b.sum_block && a.part_length == b.part_length;
}

// A sums file's header as read from a disk: damage is EIO; what is accepted is a valid header
// that encodes to the same bytes.
void FuzzSumsHeader(const std::string& bytes) {
  auto h = DecodeSumsHeader(bytes);
  if (!h.ok()) {
    CheckRefusal(h.error(), EIO);
    return;
  }
  FUZZ_CHECK(CheckSumsHeader(*h).ok(), "accepted a header CheckSumsHeader refuses");
  FUZZ_CHECK(EncodeSumsHeader(*h) == bytes, "sums header does not re-encode to its bytes");
}

// A header made of the payload's fields (u64 unit, block, part length; u32 disk, disks, first,
// parity; the rest the file id): refused with EINVAL, or encoded into bytes that decode to it.
// (Random bytes almost never carry a matching header checksum, so FuzzSumsHeader alone would
// seldom see an accepted header.)
void FuzzSumsHeaderFields(const std::string& payload) {
  if (payload.size() < 40) return;
  auto u64 = [&](size_t at) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(payload[at + i]);
    return v;
  };
  auto u32 = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(payload[at + i]);
    return v;
  };
  SumsHeader h;
  h.layout.unit = u64(0);
  h.sum_block = u64(8);
  h.part_length = u64(16);
  h.disk = u32(24);
  h.layout.disks = u32(28) & 0xff;  // keep small disk counts likely
  h.layout.first_disk = u32(32) & 0xff;
  h.layout.parity = u32(36) & 0xff;
  h.file_id = payload.substr(40);
  Status valid = CheckSumsHeader(h);
  if (!valid.ok()) {
    CheckRefusal(valid.error(), EINVAL);
    return;
  }
  const std::string bytes = EncodeSumsHeader(h);
  FUZZ_CHECK(bytes.size() == kSumsHeaderSize, "header of %zu bytes", bytes.size());
  auto back = DecodeSumsHeader(bytes);
  FUZZ_CHECK(back.ok(), "encoded header refused: %s", back.ok() ? "" : back.error().message().c_str());
  FUZZ_CHECK(Same(h, *back), "sums header does not round-trip");
  FuzzSumsHeader(bytes);
}

}  // namespace
}  // namespace graphfs::fuzz

// Kinds: m manifest xattr, r disks.json, i .graphfs-disk, p a compressed file's directory,
// s a sums file's header (its 4096 bytes), S a sums header built from fields.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphfs::fuzz;
  const Frame f = ParseFrame(data, size);
  switch (f.kind) {
    case 'm': FuzzManifest(f.payload); break;
    case 'r': FuzzRegistry(f.payload); break;
    case 'i': FuzzIdentity(f.payload); break;
    case 'p': FuzzPackedDirectory(f.payload); break;
    case 's': FuzzSumsHeader(f.payload); break;
    case 'S': FuzzSumsHeaderFields(f.payload); break;
    default: break;
  }
  return 0;
}
