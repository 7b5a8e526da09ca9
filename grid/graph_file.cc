#include "grid/graph_file.h"

#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>

#include "grid/grid_layout.h"
#include "grid/posix_io.h"

namespace graphfs::grid {

namespace {

constexpr std::string_view kMagic = "graphfs extent map 1";

// Splits off the next line of `text` (without its '\n'); false at the end.
bool NextLine(std::string_view& text, std::string_view& line) {
  if (text.empty()) return false;
  const size_t nl = text.find('\n');
  if (nl == std::string_view::npos) {
    line = text;
    text = {};
  } else {
    line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
  }
  return true;
}

bool ParseNumber(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 20) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

// "KEY N" with the given key.
bool ParseKeyed(std::string_view line, std::string_view key, uint64_t& out) {
  if (line.size() <= key.size() + 1 || line.substr(0, key.size()) != key || line[key.size()] != ' ') return false;
  return ParseNumber(line.substr(key.size() + 1), out);
}

std::string Dir(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

}  // namespace

bool ExtentMap::ValidPieceName(const std::string& name) {
  if (IsGridFileName(name)) return name.rfind("block-", 0) == 0;
  const std::string prefix = std::string(kPiecesDir) + "/";
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return false;
  const std::string rest = name.substr(prefix.size());
  if (rest == "." || rest == ".." || rest.size() > 200) return false;
  return std::all_of(rest.begin(), rest.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.' || c == '@';
  });
}

uint32_t ExtentMap::PieceIndex(const std::string& name) {
  for (size_t k = 0; k < pieces_.size(); ++k)
    if (pieces_[k] == name) return static_cast<uint32_t>(k);
  pieces_.push_back(name);
  return static_cast<uint32_t>(pieces_.size() - 1);
}

void ExtentMap::Append(const std::string& piece, uint64_t offset, uint64_t length) {
  if (length == 0) return;
  const uint32_t k = PieceIndex(piece);
  if (!extents_.empty()) {
    MapExtent& last = extents_.back();
    if (last.piece == k && last.offset + last.length == offset) {
      last.length += length;
      size_ += length;
      return;
    }
  }
  extents_.push_back({k, offset, length});
  size_ += length;
}

Status ExtentMap::AppendRange(const ExtentMap& from, uint64_t offset, uint64_t length) {
  if (offset > from.size_ || length > from.size_ - offset)
    return Error(EINVAL, "range [" + std::to_string(offset) + ", +" + std::to_string(length) +
                             ") is not inside the map (" + std::to_string(from.size_) + " bytes)");
  uint64_t at = 0;
  for (const MapExtent& e : from.extents_) {
    if (length == 0) break;
    const uint64_t end = at + e.length;
    if (end > offset) {
      const uint64_t skip = offset - at;
      const uint64_t take = std::min(e.length - skip, length);
      Append(from.pieces_[e.piece], e.offset + skip, take);
      offset += take;
      length -= take;
    }
    at = end;
  }
  return Status::Ok();
}

std::string ExtentMap::Encode() const {
  std::string out(kMagic);
  out += "\nsize " + std::to_string(size_) + "\npieces " + std::to_string(pieces_.size()) + "\n";
  for (const std::string& p : pieces_) out += p + "\n";
  out += "extents " + std::to_string(extents_.size()) + "\n";
  for (const MapExtent& e : extents_)
    out += std::to_string(e.piece) + " " + std::to_string(e.offset) + " " + std::to_string(e.length) + "\n";
  return out;
}

Result<ExtentMap> ExtentMap::Decode(std::string_view text, const std::string& where) {
  auto bad = [&](const std::string& why) { return Error(EINVAL, "extent map " + where + " is damaged: " + why); };
  std::string_view line;
  if (!NextLine(text, line) || line != kMagic) return bad("no \"graphfs extent map 1\" header");
  uint64_t size = 0, pieces = 0, extents = 0;
  if (!NextLine(text, line) || !ParseKeyed(line, "size", size)) return bad("no size line");
  if (!NextLine(text, line) || !ParseKeyed(line, "pieces", pieces)) return bad("no pieces line");
  if (pieces > text.size()) return bad("more pieces than lines");
  ExtentMap m;
  for (uint64_t k = 0; k < pieces; ++k) {
    if (!NextLine(text, line)) return bad("fewer pieces than " + std::to_string(pieces));
    std::string name(line);
    if (!ValidPieceName(name)) return bad("piece name \"" + name.substr(0, 80) + "\" is not a block file or under " +
                                          kPiecesDir);
    if (std::find(m.pieces_.begin(), m.pieces_.end(), name) != m.pieces_.end()) return bad("piece " + name + " twice");
    m.pieces_.push_back(std::move(name));
  }
  if (!NextLine(text, line) || !ParseKeyed(line, "extents", extents)) return bad("no extents line");
  if (extents > text.size()) return bad("more extents than lines");
  m.extents_.reserve(extents);
  for (uint64_t k = 0; k < extents; ++k) {
    if (!NextLine(text, line)) return bad("fewer extents than " + std::to_string(extents));
    const size_t a = line.find(' '), b = a == std::string_view::npos ? a : line.find(' ', a + 1);
    MapExtent e;
    uint64_t piece = 0;
    if (b == std::string_view::npos || !ParseNumber(line.substr(0, a), piece) ||
        !ParseNumber(line.substr(a + 1, b - a - 1), e.offset) || !ParseNumber(line.substr(b + 1), e.length))
      return bad("extent line " + std::to_string(k) + " is not \"PIECE OFFSET LENGTH\"");
    if (piece >= m.pieces_.size()) return bad("extent " + std::to_string(k) + " names piece " + std::to_string(piece));
    if (e.length == 0) return bad("extent " + std::to_string(k) + " is empty");
    if (e.offset > UINT64_MAX - e.length || m.size_ > UINT64_MAX - e.length)
      return bad("extent " + std::to_string(k) + " overflows");
    e.piece = static_cast<uint32_t>(piece);
    m.size_ += e.length;
    m.extents_.push_back(e);
  }
  if (!text.empty()) return bad("bytes after the last extent");
  if (m.size_ != size) return bad("the extents add up to " + std::to_string(m.size_) + " bytes, not " + std::to_string(size));
  return m;
}

Result<bool> IsExtentMap(const std::string& path) {
  char value[16];
  const ssize_t n = ::getxattr(path.c_str(), kExtentMapXattr, value, sizeof value);
  if (n >= 0) {
    if (std::string_view(value, static_cast<size_t>(n)) != kExtentMapVersion)
      return Error(EINVAL, path + ": extent map of an unknown format version (" + kExtentMapXattr + ")");
    return true;
  }
  if (errno == ENODATA || errno == ENOTSUP) return false;
  if (errno == ERANGE) return Error(EINVAL, path + ": extent map of an unknown format version");
  return Error::FromErrno("read " + std::string(kExtentMapXattr) + " of " + path);
}

Result<std::optional<ExtentMap>> ReadExtentMap(const std::string& path) {
  auto is = IsExtentMap(path);
  if (!is.ok()) return is.error();
  if (!*is) return std::optional<ExtentMap>();
  auto text = ReadRegularFile(path, kMaxExtentMapBytes);
  if (!text.ok()) return text.error();
  auto m = ExtentMap::Decode(*text, path);
  if (!m.ok()) return m.error();
  return std::optional<ExtentMap>(std::move(*m));
}

Result<uint64_t> GraphFileSize(const std::string& path, const StubFiles* stubs) {
  auto size = RegularFileSize(path);
  if (!size.ok()) return size.error();
  if (*size > kMaxExtentMapBytes) return size;  // too large to be a map or a stub
  auto map = ReadExtentMap(path);
  if (!map.ok()) return map.error();
  if (*map) return (*map)->size();
  if (stubs != nullptr) {
    auto fd = OpenRegularFile(path, O_RDONLY);
    if (!fd.ok()) return fd.error();
    auto stub = stubs->StubSize(fd->get(), path);
    if (!stub.ok()) return stub.error();
    if (*stub) return **stub;
  }
  return *size;
}

Status WriteExtentMap(const std::string& path, const ExtentMap& map) {
  auto fd = OpenFile(path, O_WRONLY | O_CREAT | O_EXCL);
  if (!fd.ok()) return fd.error();
  const std::string text = map.Encode();
  GRAPHFS_RETURN_IF_ERROR(WriteAll(fd->get(), text.data(), text.size(), path));
  if (::fsetxattr(fd->get(), kExtentMapXattr, kExtentMapVersion, std::strlen(kExtentMapVersion), 0) != 0)
    return Error::FromErrno("mark " + path + " as an extent map (" + kExtentMapXattr + ")");
  if (::fsync(fd->get()) != 0) return Error::FromErrno("fsync " + path);
  return Status::Ok();
}

namespace {

// A plain file's size, or a stub's reader and size.
Status OpenBytes(UniqueFd fd, const struct stat& st, const std::string& path, const StubFiles* stubs,
                 std::vector<UniqueFd>& fds, std::vector<std::shared_ptr<const StubReader>>& readers,
                 std::vector<uint64_t>& sizes) {
  if (stubs != nullptr && static_cast<uint64_t>(st.st_size) <= kMaxExtentMapBytes) {
    auto stub = stubs->StubSize(fd.get(), path);
    if (!stub.ok()) return stub.error();
    if (*stub) {
      auto reader = stubs->OpenStub(std::move(fd), path);
      if (!reader.ok()) return reader.error();
      if ((*reader)->size() != **stub) return Error(EIO, path + ": its stub changed while it was opened");
      fds.emplace_back();
      readers.push_back(std::move(*reader));
      sizes.push_back(**stub);
      return Status::Ok();
    }
  }
  fds.push_back(std::move(fd));
  readers.emplace_back();
  sizes.push_back(static_cast<uint64_t>(st.st_size));
  return Status::Ok();
}

}  // namespace

Result<GraphFile> GraphFile::Open(const std::string& path, const StubFiles* stubs) {
  GraphFile f;
  f.path_ = path;
  auto fd = OpenRegularFile(path, O_RDONLY);
  if (!fd.ok()) return fd.error();
  if (::fstat(fd->get(), &f.st_) != 0) return Error::FromErrno("stat " + path);
  auto map = ReadExtentMap(path);
  if (!map.ok()) return map.error();
  if (!*map) {
    f.piece_st_.push_back(f.st_);
    GRAPHFS_RETURN_IF_ERROR(OpenBytes(std::move(*fd), f.st_, path, stubs, f.fds_, f.stubs_, f.piece_size_));
    f.size_ = f.piece_size_[0];
    return f;
  }
  f.map_ = std::move(*map);
  const std::string dir = Dir(path);
  for (const std::string& name : f.map_->pieces()) {
    const std::string piece = dir + "/" + name;
    auto pfd = OpenRegularFile(piece, O_RDONLY);
    if (!pfd.ok()) return pfd.error().Wrap("extent map " + path);
    struct stat st;
    if (::fstat(pfd->get(), &st) != 0) return Error::FromErrno("stat " + piece);
    auto nested = IsExtentMap(piece);
    if (!nested.ok()) return nested.error();
    if (*nested) return Error(EINVAL, "extent map " + path + ": its piece " + piece + " is a map itself");
    f.piece_st_.push_back(st);
    Status opened = OpenBytes(std::move(*pfd), st, piece, stubs, f.fds_, f.stubs_, f.piece_size_);
    if (!opened.ok()) return opened.error().Wrap("extent map " + path);
  }
  uint64_t at = 0;
  for (const MapExtent& e : f.map_->extents()) {
    if (e.offset + e.length > f.piece_size_[e.piece])
      return Error(EINVAL, "extent map " + path + ": an extent reaches byte " + std::to_string(e.offset + e.length) +
                               " of " + dir + "/" + f.map_->pieces()[e.piece] + ", which has " +
                               std::to_string(f.piece_size_[e.piece]));
    f.starts_.push_back(at);
    at += e.length;
  }
  f.starts_.push_back(at);
  f.size_ = at;
  return f;
}

std::vector<GraphFile::Piece> GraphFile::Pieces(uint64_t offset, uint64_t length) const {
  std::vector<Piece> out;
  if (offset >= size_) return out;
  length = std::min(length, size_ - offset);
  if (!map_) {
    if (length > 0) out.push_back({fds_[0].get(), offset, length, stubs_[0].get()});
    return out;
  }
  // The extent holding `offset`: the last start at or before it.
  size_t k = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end() - 1, offset) - starts_.begin()) - 1;
  const auto& extents = map_->extents();
  while (length > 0 && k < extents.size()) {
    const MapExtent& e = extents[k];
    const uint64_t skip = offset - starts_[k];
    const uint64_t take = std::min(e.length - skip, length);
    out.push_back({fds_[e.piece].get(), e.offset + skip, take, stubs_[e.piece].get()});
    offset += take;
    length -= take;
    ++k;
  }
  return out;
}

Result<uint64_t> GraphFile::Read(char* buf, uint64_t length, uint64_t offset) const {
  uint64_t done = 0;
  for (const Piece& p : Pieces(offset, length)) {
    if (p.stub != nullptr) {
      Status s = p.stub->ReadExact(buf + done, p.length, p.offset);
      if (!s.ok()) return s.error().Wrap(path_);
    } else {
      GRAPHFS_RETURN_IF_ERROR(PreadExact(p.fd, buf + done, p.length, p.offset, path_));
    }
    done += p.length;
  }
  return done;
}

Status GraphFile::ReadExact(char* buf, uint64_t length, uint64_t offset) const {
  auto n = Read(buf, length, offset);
  if (!n.ok()) return n.error();
  if (*n != length)
    return Error(EIO, path_ + ": " + std::to_string(length) + " bytes at " + std::to_string(offset) +
                          " wanted, the file has " + std::to_string(size_));
  return Status::Ok();
}

}  // namespace graphfs::grid
