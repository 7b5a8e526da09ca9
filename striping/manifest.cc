#include "striping/manifest.h"

#include <sys/xattr.h>

#include <cstdio>
#include <nlohmann/json.hpp>

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
  json j = {{"v", 1},
            {"id", file_id},
            {"set", set_id},
            {"size", size},
            {"unit", layout.unit},
            {"disks", layout.disks},
            {"first", layout.first_disk}};
  if (checksum) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(*checksum));
    j["xxh3"] = hex;
  }
  return j.dump();
}

Result<StripeManifest> StripeManifest::Decode(const std::string& text) {
  try {
    json j = json::parse(text);
    if (j.at("v").get<int>() != 1) return Error(EINVAL, "unsupported stripe manifest version");
    StripeManifest m;
    m.file_id = j.at("id").get<std::string>();
    m.set_id = j.at("set").get<std::string>();
    m.size = j.at("size").get<uint64_t>();
    m.layout.unit = j.at("unit").get<uint64_t>();
    m.layout.disks = j.at("disks").get<uint32_t>();
    m.layout.first_disk = j.at("first").get<uint32_t>();
    if (j.contains("xxh3")) m.checksum = std::stoull(j.at("xxh3").get<std::string>(), nullptr, 16);
    if (m.file_id.empty() || m.file_id.find('/') != std::string::npos || m.file_id.find("..") != std::string::npos)
      return Error(EINVAL, "stripe manifest has an invalid file id");
    auto map = StripeMap::Create(m.layout);
    if (!map.ok()) return map.error().Wrap("stripe manifest");
    return m;
  } catch (const std::exception& e) {
    return Error(EINVAL, std::string("damaged stripe manifest: ") + e.what());
  }
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
