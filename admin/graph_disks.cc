#include "admin/graph_disks.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "striping/graph_files.h"
#include "striping/packed_stream.h"
#include "striping/part_io.h"
#include "striping/striped_file.h"

namespace graphfs::admin {

namespace {

// A stub's bytes, read from its parts (decoded when it is compressed).
class PartsReader : public grid::StubReader {
 public:
  PartsReader(std::shared_ptr<StripedFile> file, std::shared_ptr<const PackedFileReader> packed, std::string path)
      : file_(std::move(file)), packed_(std::move(packed)), path_(std::move(path)) {}
  uint64_t size() const override { return packed_ ? packed_->size() : file_->size(); }
  Status ReadExact(char* buf, uint64_t length, uint64_t offset) const override {
    while (length > 0) {
      auto n = packed_ ? packed_->Read(offset, length, buf) : file_->Read(offset, length, buf);
      if (!n.ok()) return n.error().Wrap(path_);
      if (*n == 0) return Error(EIO, path_ + ": ends before byte " + std::to_string(offset + length));
      buf += *n;
      offset += *n;
      length -= *n;
    }
    return Status::Ok();
  }

 private:
  std::shared_ptr<StripedFile> file_;
  std::shared_ptr<const PackedFileReader> packed_;
  std::string path_;
};

class DiskStubFiles : public grid::StubFiles {
 public:
  explicit DiskStubFiles(const GraphDisks& disks) : disks_(disks) {}

  Result<std::optional<uint64_t>> StubSize(int fd, const std::string& path) const override {
    auto m = Manifest(fd, path);
    if (!m.ok()) return m.error();
    if (!*m) return std::optional<uint64_t>();
    return std::optional<uint64_t>((*m)->size);
  }

  Result<std::shared_ptr<const grid::StubReader>> OpenStub(UniqueFd fd, const std::string& path) const override {
    auto m = Manifest(fd.get(), path);
    if (!m.ok()) return m.error();
    if (!*m) return Error(EINVAL, path + " is not a striped file");
    StripedFileOptions o;
    o.writable = false;
    o.direct_io = false;  // the tools' reads are small and unaligned as often as not
    auto file = StripedFile::Open(disks_.disks(), disks_.io(), std::move(fd), **m, o);
    if (!file.ok()) return file.error().Wrap(path);
    std::shared_ptr<const PackedFileReader> packed;
    if ((*m)->packed) {
      auto opened = PackedFileReader::Open(*file);
      if (!opened.ok()) return opened.error().Wrap(path);
      packed = std::move(*opened);
    }
    return std::shared_ptr<const grid::StubReader>(std::make_shared<PartsReader>(*file, packed, path));
  }

 private:
  Result<std::optional<StripeManifest>> Manifest(int fd, const std::string& path) const {
    auto m = ReadManifestFd(fd);
    if (!m.ok()) return m.error().Wrap(path);
    if (*m && (*m)->set_id != disks_.disks().set_id())
      return Error(EINVAL, path + " is striped over disk set " + (*m)->set_id + ", not the graph's (" +
                               disks_.disks().set_id() + ")");
    return m;
  }

  const GraphDisks& disks_;
};

}  // namespace

GraphDisks::GraphDisks(DiskSet disks, std::unique_ptr<IoEngine> io)
    : disks_(std::move(disks)), io_(std::move(io)), stubs_(std::make_unique<DiskStubFiles>(*this)) {}
GraphDisks::~GraphDisks() = default;

Result<std::unique_ptr<GraphDisks>> GraphDisks::Open(const std::string& graph_dir) {
  auto set = RegisteredDiskSet(graph_dir);
  if (!set.ok()) return set.error();
  if (!*set) return std::unique_ptr<GraphDisks>();
  IoEngineOptions io;
  io.disks = (*set)->size();
  auto engine = IoEngine::Start(io);
  if (!engine.ok()) return engine.error();
  std::unique_ptr<GraphDisks> g(new GraphDisks(std::move(**set), std::move(*engine)));
  UniqueFd column(::open((graph_dir + "/column").c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (column.valid()) {
    auto m = ReadManifestFd(column.get());
    if (m.ok() && *m) {
      g->unit_ = (*m)->layout.unit;
      if ((*m)->sum_block != 0) g->sum_block_ = (*m)->sum_block;
    }
  }
  g->parity_ = g->disks_.registry().parity;
  // A unit the default block does not tile (a graph striped without parity with an odd
  // --unit): the largest power of two that divides it, from 4 KiB, else no parity.
  while (g->parity_ > 0 && g->unit_ % g->sum_block_ != 0) {
    g->sum_block_ /= 2;
    if (g->sum_block_ < kMinSumBlock) g->parity_ = 0;
  }
  return g;
}

Result<std::unique_ptr<NewGraphFile>> NewGraphFile::Create(const std::string& path, const GraphDisks* disks) {
  std::unique_ptr<NewGraphFile> f(new NewGraphFile());
  f->path_ = path;
  f->disks_ = disks;
  f->fd_.reset(::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!f->fd_.valid()) return Error::FromErrno("create " + path);
  if (disks == nullptr) return f;
  // The stub first, durable: a part never exists that no stub names.
  StripeManifest m;
  m.file_id = NewId();
  m.set_id = disks->disks().set_id();
  const std::string name = path.substr(path.rfind('/') + 1);
  m.layout = {disks->unit(), disks->disks().size(), FirstDiskFor(name, disks->disks().size()), disks->parity()};
  if (disks->parity() > 0) m.sum_block = disks->sum_block();
  auto map = StripeMap::Create(m.layout);
  if (!map.ok()) return map.error();
  GRAPHFS_RETURN_IF_ERROR(WriteAll(f->fd_.get(), kStubText, std::strlen(kStubText), 0, "write " + path));
  GRAPHFS_RETURN_IF_ERROR(WriteManifestFd(f->fd_.get(), m));
  if (::fsync(f->fd_.get()) != 0) return Error::FromErrno("fsync " + path);
  GRAPHFS_RETURN_IF_ERROR(StripedFile::CreateParts(disks->disks(), m.file_id));
  auto parts = OpenParts(disks->disks(), m.file_id, O_WRONLY);
  if (!parts.ok()) return parts.error();
  f->parts_ = std::move(*parts);
  if (disks->parity() > 0) {
    StripeManifest growing = m;  // its size is known at Finish
    growing.size = StripeParityWriter::kSizeUnknown;
    auto w = StripeParityWriter::Open(disks->disks(), growing, /*resume=*/false);
    if (!w.ok()) return w.error().Wrap(path);
    f->parity_ = std::move(*w);
  }
  f->manifest_ = std::move(m);
  f->map_ = std::move(*map);
  return f;
}

// Whole rows from row_start_ (the last one short only at Finish): data units, then parity and sums.
Status NewGraphFile::WriteRows(const char* data, uint64_t length) {
  GRAPHFS_RETURN_IF_ERROR(WriteToParts(disks_->disks(), *map_, parts_, row_start_, length, data));
  GRAPHFS_RETURN_IF_ERROR(parity_->AddRows(row_start_, data, length, parts_));
  row_start_ += length;
  return Status::Ok();
}

Status NewGraphFile::Write(const char* data, uint64_t length, uint64_t offset) {
  if (parity_) {
    if (offset != size_)
      return Error(EINVAL, "write " + path_ + " at " + std::to_string(offset) + ": a file with parity is written in " +
                               "order (its end is " + std::to_string(size_) + ")");
    const uint64_t row = map_->unit() * map_->data_units();
    size_ += length;
    if (!row_.empty()) {  // fill the row begun
      const uint64_t n = std::min<uint64_t>(length, row - row_.size());
      row_.append(data, n);
      data += n;
      length -= n;
      if (row_.size() < row) return Status::Ok();
      GRAPHFS_RETURN_IF_ERROR(WriteRows(row_.data(), row_.size()));
      row_.clear();
    }
    const uint64_t whole = length / row * row;  // straight from the caller's bytes
    if (whole > 0) GRAPHFS_RETURN_IF_ERROR(WriteRows(data, whole));
    row_.assign(data + whole, length - whole);
    return Status::Ok();
  }
  if (manifest_) {
    GRAPHFS_RETURN_IF_ERROR(WriteToParts(disks_->disks(), *map_, parts_, offset, length, data));
  } else {
    GRAPHFS_RETURN_IF_ERROR(WriteAll(fd_.get(), data, length, offset, "write " + path_));
  }
  size_ = std::max(size_, offset + length);
  return Status::Ok();
}

Status NewGraphFile::Finish() {
  if (manifest_) {
    if (parity_) {  // the last, short row, then every part's length in its sums header
      parity_->SetSize(size_);
      if (!row_.empty()) GRAPHFS_RETURN_IF_ERROR(WriteRows(row_.data(), row_.size()));
      row_.clear();
      for (uint32_t d = 0; d < parts_.size(); ++d)
        if (::ftruncate(parts_[d].get(), static_cast<off_t>(map_->PartSize(d, size_))) != 0)
          return Error::FromErrno("truncate " + disks_->disks().PartPath(d, manifest_->file_id));
    }
    for (uint32_t d = 0; d < parts_.size(); ++d) {
      if (::fsync(parts_[d].get()) != 0) return Error::FromErrno("fsync " + disks_->disks().PartPath(d, manifest_->file_id));
    }
    if (parity_) GRAPHFS_RETURN_IF_ERROR(parity_->Finish());
    manifest_->size = size_;
    GRAPHFS_RETURN_IF_ERROR(WriteManifestFd(fd_.get(), *manifest_));
  } else if (::ftruncate(fd_.get(), static_cast<off_t>(size_)) != 0) {
    return Error::FromErrno("truncate " + path_);
  }
  if (::fsync(fd_.get()) != 0) return Error::FromErrno("fsync " + path_);
  return Status::Ok();
}

}  // namespace graphfs::admin
