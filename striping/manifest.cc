#include "striping/manifest.h"

#include <sys/xattr.h>

#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "striping/json_fields.h"

namespace graphfs {

namespace {

using json = nlohmann::json;

Result<std::optional<StripeManifest>> DecodeXattr(ssize_t n, const char* buf, const std::string& what) {
  if (n < 0) {
    if (errno == ENODATA || errno == ENOTSUP) return std::optional<StripeManifest>();
    return Error::FromErrno("read manifest of " + what);
  }
  auto m = StripeManifest::Decode(std::string(buf, static_cast<size_t>(n)));
  if (!m.ok()) return m.error().Wrap(what);
  return std::optional<StripeManifest>(std::move(*m));
}

}  // namespace

std::string StripeManifest::Encode() const {
  json j = {{"v", version()},
            {"id", file_id},
            {"set", set_id},
            {"size", size},
            {"unit", layout.unit},
            {"disks", layout.disks},
            {"first", layout.first_disk}};
  if (version() >= 2) {
    j["parity"] = layout.parity;
    j["sum_block"] = sum_block;
  }
  if (packed) {
    j["packed"] = {{"codec", packed->codec}, {"stream", packed->stream_size}, {"dir", packed->directory_offset}};
  }
  if (checksum) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(*checksum));
    j["xxh3"] = hex;
  }
  return j.dump();
}

Result<StripeManifest> StripeManifest::Decode(const std::string& text) {
  auto damaged = [](const Error& e) { return Error(EINVAL, "damaged stripe manifest: " + e.message()); };
  auto parsed = ParseJson(text);
  if (!parsed.ok()) return damaged(parsed.error());
  const json& j = *parsed;
  auto version = UnsignedField(j, "v", UINT32_MAX);
  if (!version.ok()) return damaged(version.error());
  if (*version != 1 && *version != 2)
    return Error(EINVAL, "unsupported stripe manifest version " + std::to_string(*version) +
                             " (this graphfs reads versions 1 and 2)");
  StripeManifest m;
  auto id = StringField(j, "id");
  if (!id.ok()) return damaged(id.error());
  auto set = StringField(j, "set");
  if (!set.ok()) return damaged(set.error());
  // The size becomes st_size, an off_t.
  auto size = UnsignedField(j, "size", INT64_MAX);
  if (!size.ok()) return damaged(size.error());
  auto unit = UnsignedField(j, "unit", UINT64_MAX);
  if (!unit.ok()) return damaged(unit.error());
  auto disks = UnsignedField(j, "disks", UINT32_MAX);
  if (!disks.ok()) return damaged(disks.error());
  auto first = UnsignedField(j, "first", UINT32_MAX);
  if (!first.ok()) return damaged(first.error());
  m.file_id = std::move(*id);
  m.set_id = std::move(*set);
  m.size = *size;
  m.layout.unit = *unit;
  m.layout.disks = static_cast<uint32_t>(*disks);
  m.layout.first_disk = static_cast<uint32_t>(*first);
  if (*version == 1) {
    // Version 1 never carried them: a file with parity read as version 1 would be mapped with
    // the parity-blind layout.
    for (const char* key : {"parity", "sum_block"})
      if (j.contains(key)) return damaged(Error(EINVAL, std::string("field '") + key + "' in a version 1 manifest"));
  } else {
    auto parity = UnsignedField(j, "parity", UINT32_MAX);
    if (!parity.ok()) return damaged(parity.error());
    auto block = UnsignedField(j, "sum_block", UINT64_MAX);
    if (!block.ok()) return damaged(block.error());
    m.layout.parity = static_cast<uint32_t>(*parity);
    m.sum_block = *block;
    // Blocks tile every unit exactly, so a row's sums sit at fixed offsets of the sums file.
    const uint64_t b = *block;
    if (b < kMinSumBlock || (b & (b - 1)) != 0 || *unit % b != 0)
      return Error(EINVAL, "stripe manifest: sum_block " + std::to_string(b) + " is not a power of two from " +
                               std::to_string(kMinSumBlock) + " that divides the unit (" + std::to_string(*unit) +
                               ")");
  }
  if (j.contains("xxh3")) {
    // Encode writes 16 hex digits; std::stoull also took "-1", " 12" and "12junk".
    auto hex = StringField(j, "xxh3");
    if (!hex.ok()) return damaged(hex.error());
    uint64_t sum = 0;
    auto [ptr, ec] = std::from_chars(hex->data(), hex->data() + hex->size(), sum, 16);
    if (hex->size() != 16 || ec != std::errc() || ptr != hex->data() + hex->size())
      return damaged(Error(EINVAL, "field 'xxh3' is not 16 hex digits"));
    m.checksum = sum;
  }
  if (j.contains("packed")) {
    const json& p = j["packed"];
    auto codec = StringField(p, "codec");
    if (!codec.ok()) return damaged(codec.error().Wrap("packed"));
    auto stream = UnsignedField(p, "stream", INT64_MAX);
    if (!stream.ok()) return damaged(stream.error().Wrap("packed"));
    auto dir = UnsignedField(p, "dir", *stream);
    if (!dir.ok()) return damaged(dir.error().Wrap("packed"));
    // The directory is 4 KiB-aligned after the frames and holds 16 bytes a unit: a bound
    // that keeps a damaged length from asking for gigabytes.
    if (*dir % 4096 != 0 || *stream - *dir < 40 || *stream - *dir > (uint64_t{1} << 30))
      return damaged(Error(EINVAL, "packed directory at " + std::to_string(*dir) + " of a " +
                                       std::to_string(*stream) + "-byte stream"));
    m.packed = PackedInfo{std::move(*codec), *stream, *dir};
  }
  if (m.file_id.empty() || m.file_id.find('/') != std::string::npos || m.file_id.find("..") != std::string::npos)
    return Error(EINVAL, "stripe manifest has an invalid file id");
  auto map = StripeMap::Create(m.layout);
  if (!map.ok()) return map.error().Wrap("stripe manifest");
  return m;
}

Result<std::optional<StripeManifest>> ReadManifest(const std::string& path, bool follow) {
  char buf[4096];
  ssize_t n = follow ? ::getxattr(path.c_str(), kManifestXattr, buf, sizeof buf)
                     : ::lgetxattr(path.c_str(), kManifestXattr, buf, sizeof buf);
  return DecodeXattr(n, buf, path);
}

Result<std::optional<StripeManifest>> ReadManifestFd(int fd) {
  char buf[4096];
  ssize_t n = ::fgetxattr(fd, kManifestXattr, buf, sizeof buf);
  return DecodeXattr(n, buf, "fd " + std::to_string(fd));
}

Status WriteManifestFd(int fd, const StripeManifest& manifest) {
  const std::string text = manifest.Encode();
  if (::fsetxattr(fd, kManifestXattr, text.data(), text.size(), 0) != 0)
    return Error::FromErrno("write stripe manifest of " + manifest.file_id);
  return Status::Ok();
}

}  // namespace graphfs
