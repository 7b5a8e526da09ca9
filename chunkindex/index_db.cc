#include "chunkindex/index_db.h"

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <cstdarg>
#include <filesystem>

namespace graphfs::chunkindex {

namespace {

// Keeps RocksDB from writing LOG files into the index directory.
class NullLogger : public rocksdb::Logger {
 public:
  NullLogger() : rocksdb::Logger(rocksdb::InfoLogLevel::HEADER_LEVEL) {}
  using rocksdb::Logger::Logv;
  void Logv(const char* /*format*/, va_list /*ap*/) override {}
};

Error FromRocks(const rocksdb::Status& s, const std::string& what) {
  int code = s.IsNotFound() ? ENOENT : s.IsCorruption() ? EIO : s.IsIOError() ? EIO : EINVAL;
  return Error(code, what + ": " + s.ToString());
}

rocksdb::Options BaseOptions() {
  rocksdb::Options o;
  o.info_log = std::make_shared<NullLogger>();
  o.paranoid_checks = true;
  o.allow_fallocate = false;  // FUSE filesystems may not support it
  o.max_open_files = 64;
  o.keep_log_file_num = 1;
  o.compression = rocksdb::kLZ4Compression;
  rocksdb::BlockBasedTableOptions t;
  t.block_size = 64 << 10;
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  return o;
}

}  // namespace

IndexBatch::IndexBatch() : rep_(std::make_unique<rocksdb::WriteBatch>()) {}
IndexBatch::~IndexBatch() = default;
IndexBatch::IndexBatch(IndexBatch&&) noexcept = default;
IndexBatch& IndexBatch::operator=(IndexBatch&&) noexcept = default;
void IndexBatch::Put(std::string_view key, std::string_view value) {
  // WriteBatch::Put only fails for keys/values over 4 GiB, which we never write.
  (void)rep_->Put(rocksdb::Slice(key.data(), key.size()), rocksdb::Slice(value.data(), value.size()));
}
void IndexBatch::Delete(std::string_view key) { (void)rep_->Delete(rocksdb::Slice(key.data(), key.size())); }
size_t IndexBatch::bytes() const { return rep_->GetDataSize(); }

IndexDb::IndexDb(std::string path, rocksdb::DB* db) : path_(std::move(path)), db_(db) {}
IndexDb::~IndexDb() {
  if (db_) (void)db_->Close();
}

Result<std::unique_ptr<IndexDb>> IndexDb::OpenReadOnly(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    return Error(ENOENT, "no chunk index at " + path);
  }
  rocksdb::Options o = BaseOptions();
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::OpenForReadOnly(o, path, &db);
  if (!s.ok()) return FromRocks(s, "opening chunk index " + path);
  return std::unique_ptr<IndexDb>(new IndexDb(path, db));
}

Result<std::unique_ptr<IndexDb>> IndexDb::Create(const std::string& path) {
  rocksdb::Options o = BaseOptions();
  o.create_if_missing = true;
  o.error_if_exists = true;
  o.write_buffer_size = 64 << 20;
  o.max_background_jobs = 2;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(o, path, &db);
  if (!s.ok()) return FromRocks(s, "creating chunk index " + path);
  return std::unique_ptr<IndexDb>(new IndexDb(path, db));
}

Result<std::unique_ptr<IndexDb>> IndexDb::CreateSharing(const std::string& path, const std::string& from) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::create_directory(path, ec)) return Error(ec ? ec.value() : EEXIST, "creating chunk index " + path);
  for (const auto& e : fs::directory_iterator(from, ec)) {
    const std::string name = e.path().filename().string();
    const std::string to = path + "/" + name;
    if (name == "LOCK" || name.rfind("LOG", 0) == 0) continue;  // the new database's own
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".sst") == 0) {
      fs::create_hard_link(e.path(), to, ec);
    } else {
      fs::copy_file(e.path(), to, ec);
    }
    if (ec) return Error(ec.value(), "sharing " + e.path().string() + " with " + path + ": " + ec.message());
  }
  if (ec) return Error(ec.value(), "listing chunk index " + from + ": " + ec.message());
  rocksdb::Options o = BaseOptions();
  o.write_buffer_size = 64 << 20;
  o.max_background_jobs = 2;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(o, path, &db);
  if (!s.ok()) return FromRocks(s, "opening chunk index " + path + " (shared with " + from + ")");
  return std::unique_ptr<IndexDb>(new IndexDb(path, db));
}

Result<std::optional<std::string>> IndexDb::Get(std::string_view key) const {
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  std::string value;
  rocksdb::Status s = db_->Get(ro, rocksdb::Slice(key.data(), key.size()), &value);
  if (s.IsNotFound()) return std::optional<std::string>();
  if (!s.ok()) return FromRocks(s, "reading chunk index " + path_);
  return std::optional<std::string>(std::move(value));
}

Status IndexDb::Scan(char tag, const std::function<Status(std::string_view, std::string_view)>& visit) const {
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  const std::string prefix(1, tag);
  for (it->Seek(prefix); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key();
    if (k.empty() || k[0] != tag) break;
    rocksdb::Slice v = it->value();
    GRAPHFS_RETURN_IF_ERROR(visit(std::string_view(k.data(), k.size()), std::string_view(v.data(), v.size())));
  }
  if (!it->status().ok()) return FromRocks(it->status(), "reading chunk index " + path_);
  return Status::Ok();
}

Status IndexDb::Write(IndexBatch* batch) {
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;  // Finish() flushes; a build that dies is discarded anyway
  // One writer at a time: batches are few and large (one per source range), so
  // nothing is lost, and the uninstrumented RocksDB write group (one thread
  // inserting other threads' batches) does not show up as a race under TSan.
  std::lock_guard<std::mutex> lock(write_mu_);
  rocksdb::Status s = db_->Write(wo, batch->rep());
  if (!s.ok()) return FromRocks(s, "writing chunk index " + path_);
  return Status::Ok();
}

Status IndexDb::Finish() {
  rocksdb::Status s = db_->Flush(rocksdb::FlushOptions());
  if (!s.ok()) return FromRocks(s, "flushing chunk index " + path_);
  // Workers wrote their ranges interleaved, so level-0 files overlap; a few
  // are fine for readers, many are merged into one sorted run.
  uint64_t level0 = 0;
  if (db_->GetIntProperty("rocksdb.num-files-at-level0", &level0) && level0 > 4) {
    rocksdb::CompactRangeOptions c;
    c.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
    s = db_->CompactRange(c, nullptr, nullptr);
    if (!s.ok()) return FromRocks(s, "compacting chunk index " + path_);
  }
  return Status::Ok();
}

uint64_t DirectoryBytes(const std::string& path) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code ec2;
    if (it->is_regular_file(ec2)) total += it->file_size(ec2);
  }
  return total;
}

uint64_t UnsharedBytes(const std::string& path) {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
    std::error_code ec2;
    if (e.is_regular_file(ec2) && e.hard_link_count(ec2) == 1) total += e.file_size(ec2);
  }
  return total;
}

}  // namespace graphfs::chunkindex
