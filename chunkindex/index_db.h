// The RocksDB database behind the chunk index, behind a small interface so
// that nothing else includes RocksDB headers. Every RocksDB status becomes a
// graphfs::Error naming the database path.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace rocksdb {
class DB;
class WriteBatch;
}  // namespace rocksdb

namespace graphfs::chunkindex {

class IndexBatch {
 public:
  IndexBatch();
  ~IndexBatch();
  IndexBatch(IndexBatch&&) noexcept;
  IndexBatch& operator=(IndexBatch&&) noexcept;
  void Put(std::string_view key, std::string_view value);
  void Delete(std::string_view key);
  size_t bytes() const;
  rocksdb::WriteBatch* rep() { return rep_.get(); }

 private:
  std::unique_ptr<rocksdb::WriteBatch> rep_;
};

class IndexDb {
 public:
  // An existing database, read-only (several processes may hold it open).
  static Result<std::unique_ptr<IndexDb>> OpenReadOnly(const std::string& path);
  // A new database; fails if `path` exists.
  static Result<std::unique_ptr<IndexDb>> Create(const std::string& path);
  // A new database at `path` (must not exist) that starts as the closed database `from`, which
  // is never written again (a graph version's index): its table files hard-linked — shared, not
  // copied; RocksDB never changes a table file, it only makes new ones and drops old ones —, the
  // small files (manifest, options, current) copied. Writes then add table files of its own.
  static Result<std::unique_ptr<IndexDb>> CreateSharing(const std::string& path, const std::string& from);
  ~IndexDb();

  const std::string& path() const { return path_; }
  Result<std::optional<std::string>> Get(std::string_view key) const;
  // Every key starting with `tag`, in key order; stops at the first error.
  Status Scan(char tag, const std::function<Status(std::string_view key, std::string_view value)>& visit) const;
  Status Write(IndexBatch* batch);
  // Flushes the memtable and compacts into a minimal set of files (after a build).
  Status Finish();

 private:
  IndexDb(std::string path, rocksdb::DB* db);
  std::string path_;
  std::unique_ptr<rocksdb::DB> db_;
  std::mutex write_mu_;
};

// Bytes of all files in a directory (the index size).
uint64_t DirectoryBytes(const std::string& path);
// Bytes of the files in a directory that have no other link (what a shared index wrote itself).
uint64_t UnsharedBytes(const std::string& path);

}  // namespace graphfs::chunkindex
